from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from questions.models import Answer, Question


class AnswerInline(admin.StackedInline):
    model = Answer
    extra = 0
    can_delete = False
    readonly_fields = [
        "text",
        "option",
        "answered_by",
        "answered_by_user",
        "answered_by_token",
        "source",
        "created_at",
    ]

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(Question)
class QuestionAdmin(admin.ModelAdmin):
    list_display = ["__str__", "asker_name", "status", "answered_by", "created_at", "resolved_at"]
    list_filter = ["status", "kind", "asker_name", "created_at"]
    search_fields = ["text", "answer__text", "asker_name", "answer__answered_by"]
    date_hierarchy = "created_at"
    readonly_fields = [
        "id", "kind", "text", "options", "allow_free_text", "asker", "asker_name", "fingerprint",
        "status", "cancel_reason", "created_at", "resolved_at", "delivered_at",
    ]  # fmt: skip
    inlines = [AnswerInline]
    list_select_related = ["answer"]

    @admin.display(description="Answered by", ordering="answer__answered_by")
    def answered_by(self, obj: Question) -> str:
        answer = getattr(obj, "answer", None)
        return answer.answered_by if answer else "—"

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False


@admin.register(Answer)
class AnswerAdmin(admin.ModelAdmin):
    list_display = ["question", "text", "answered_by", "source", "created_at"]
    list_filter = ["source", "answered_by", "created_at"]
    search_fields = ["text", "question__text", "answered_by"]
    date_hierarchy = "created_at"
    list_select_related = ["question"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False
