from __future__ import annotations

from django.urls import path

from lifecycle import consumers

websocket_urlpatterns = [
    path("ws/sessions/", consumers.SessionsOverviewConsumer.as_asgi()),
    path("ws/sessions/<uuid:guid>/", consumers.SessionConsumer.as_asgi()),
    path("ws/sessions/<uuid:guid>/page/", consumers.SessionPageConsumer.as_asgi()),
    # The progress channel's original address, for UIs written against it.
    path("ws/<uuid:guid>", consumers.SessionConsumer.as_asgi()),
]
