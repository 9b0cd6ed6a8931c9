from __future__ import annotations

from django.urls import path

from notify import link_views, views

app_name = "notify"

urlpatterns = [
    path("integrations/slack/actions", views.slack_actions, name="slack-actions"),
    path("q/<str:token>/", link_views.link_page, name="link"),
    path("q/<str:token>/answer", link_views.link_answer, name="link-answer"),
]
