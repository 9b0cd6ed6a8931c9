from __future__ import annotations

import json

from django.contrib import admin
from django.http import HttpRequest
from django.utils.html import format_html

from questions.models import Answer, Question

ANSWER_FIELDS = (
    "text", "structured", "option", "answered_by", "answered_by_user", "answered_by_token", "source", "created_at",
)  # fmt: skip
QUESTION_FIELDS = (
    "id", "kind", "text", "options", "allow_free_text", "details", "asker", "asker_name", "status",
    "cancel_reason", "dismissed_by", "timeout_seconds", "created_at", "resolved_at", "delivered_at",
)  # fmt: skip


def pretty_json(value: object) -> str:
    return format_html("<pre>{}</pre>", json.dumps(value, indent=2, ensure_ascii=False))


class StructuredAnswer:
    @admin.display(description="Structured answer (as the agent got it)")
    def structured(self, obj: Answer) -> str:
        return pretty_json(obj.data)


class AnswerInline(StructuredAnswer, admin.StackedInline):
    model = Answer
    extra = 0
    can_delete = False
    fields = readonly_fields = ANSWER_FIELDS

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(Question)
class QuestionAdmin(admin.ModelAdmin):
    list_display = ["__str__", "kind", "asker_name", "status", "answered_by", "created_at", "resolved_at"]
    list_filter = ["status", "kind", "asker_name", "created_at"]
    search_fields = ["text", "answer__text", "asker_name", "answer__answered_by"]
    date_hierarchy = "created_at"
    fields = readonly_fields = QUESTION_FIELDS
    inlines = [AnswerInline]
    list_select_related = ["answer"]

    @admin.display(description="Answered by", ordering="answer__answered_by")
    def answered_by(self, obj: Question) -> str:
        answer = getattr(obj, "answer", None)
        return answer.answered_by if answer else "—"

    @admin.display(description="Details (by kind)")
    def details(self, obj: Question) -> str:
        return pretty_json(obj.payload)

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(Answer)
class AnswerAdmin(StructuredAnswer, admin.ModelAdmin):
    list_display = ["question", "text", "answered_by", "source", "created_at"]
    list_filter = ["source", "answered_by", "created_at"]
    search_fields = ["text", "question__text", "answered_by"]
    date_hierarchy = "created_at"
    fields = readonly_fields = ("question", *ANSWER_FIELDS)
    list_select_related = ["question"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
