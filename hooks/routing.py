from __future__ import annotations

from django.urls import path

from hooks import consumers

websocket_urlpatterns = [
    path("ws/hooks/runs/<uuid:run_id>/", consumers.HookRunPageConsumer.as_asgi()),
]
