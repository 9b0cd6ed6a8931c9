from __future__ import annotations

from django.urls import path

from notify import views

app_name = "notify"

urlpatterns = [
    path("integrations/slack/actions", views.slack_actions, name="slack-actions"),
]
