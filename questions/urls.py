from __future__ import annotations

from django.urls import path

from questions import api, views

app_name = "questions"

urlpatterns = [
    path("questions/<uuid:question_id>/", views.detail, name="detail"),
    path("questions/<uuid:question_id>/answer", views.answer, name="answer"),
    path("questions/<uuid:question_id>/dismiss", views.dismiss, name="dismiss"),
    path("questions/<uuid:question_id>/claim", views.claim, name="claim"),
    path("questions/pending", views.pending_page, name="pending-page"),
    path("questions/batch", views.decide_batch, name="batch"),
    path("questions/sample", views.sample, name="sample"),
    path("history/", views.history, name="history"),
    path("analytics/", views.analytics_page, name="analytics"),
    path("answers/<int:answer_id>/images/<int:number>", views.answer_image, name="answer-image"),
    path("replies/", views.saved_replies, name="replies"),
    path("replies/add", views.save_reply, name="save-reply"),
    path("replies/<int:reply_id>/delete", views.delete_reply, name="delete-reply"),
    path("api/questions", api.question_list, name="api-questions"),
    path("api/mcp-answer", api.mcp_answer, name="api-answer"),
    path("api/questions/<uuid:question_id>/dismiss", api.dismiss, name="api-dismiss"),
]
