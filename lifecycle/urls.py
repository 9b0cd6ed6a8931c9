from __future__ import annotations

from django.urls import path

from lifecycle import api, views

app_name = "lifecycle"

urlpatterns = [
    path("sessions/", views.overview, name="sessions"),
    path("sessions/new", views.session_new, name="session-new"),
    path("sessions/<uuid:guid>/", views.session_page, name="session"),
    path("sessions/<uuid:guid>/messages", views.send_message, name="send-message"),
    path("api/sessions", api.session_create, name="api-sessions"),
    path("api/sessions/<uuid:guid>", api.session_detail, name="api-session"),
    path("api/sessions/<uuid:guid>/messages", api.session_message, name="api-session-messages"),
]
