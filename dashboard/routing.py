from __future__ import annotations

from django.urls import path

from dashboard import consumers

websocket_urlpatterns = [
    path("ws/dashboard/", consumers.DashboardConsumer.as_asgi()),
    path("ws/events/", consumers.EventsConsumer.as_asgi()),
]
