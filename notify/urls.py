from __future__ import annotations

from django.urls import path

from notify import chat_views, link_views, push_views, views

app_name = "notify"

urlpatterns = [
    path("integrations/slack/actions", views.slack_actions, name="slack-actions"),
    path("integrations/telegram/webhook", chat_views.telegram_webhook, name="telegram-webhook"),
    path("integrations/discord/interactions", chat_views.discord_interactions, name="discord-interactions"),
    path("integrations/teams/messages", chat_views.teams_messages, name="teams-messages"),
    path("notifications/chat/<str:platform>/code", push_views.link_code, name="link-code"),
    path("notifications/chat/<str:platform>/unlink", push_views.unlink, name="unlink"),
    path("q/<str:token>/", link_views.link_page, name="link"),
    path("q/<str:token>/answer", link_views.link_answer, name="link-answer"),
    path("notifications/", push_views.push_page, name="push"),
    path("push/subscriptions", push_views.subscribe, name="push-subscribe"),
    path("push/subscriptions/<int:pk>/delete", push_views.unsubscribe, name="push-unsubscribe"),
    path("push/act", push_views.act, name="push-act"),
]
