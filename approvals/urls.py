from __future__ import annotations

from django.urls import path

from approvals import views

app_name = "approvals"

urlpatterns = [
    path("sessions/<uuid:guid>/grants", views.session_grants, name="session-grants"),
    path("grants/<int:grant_id>/revoke", views.revoke, name="revoke-grant"),
]
