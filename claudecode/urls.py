from __future__ import annotations

from django.urls import path

from claudecode import views

app_name = "claudecode"

urlpatterns = [
    path("approvals/<uuid:question_id>/rule", views.propose_rule, name="propose-rule"),
]
