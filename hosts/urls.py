from __future__ import annotations

from django.urls import path

from hosts import views

app_name = "hosts"

urlpatterns = [
    path("approvals/<uuid:question_id>/rule", views.propose_rule, name="propose-rule"),
]
