from __future__ import annotations

from django.urls import path

from hooks import views

app_name = "hooks"

urlpatterns = [
    path("hooks/runs/", views.hook_runs, name="runs"),
    path("hooks/runs/<uuid:run_id>/", views.hook_run, name="run"),
]
