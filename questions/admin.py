from __future__ import annotations

import json

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.utils.html import format_html, format_html_join

from audit.models import Entry
from core.admin import RecordAdmin
from core.formatting import duration
from projects.admin import ProjectScoped, ScopedValuesFilter
from questions import exports
from questions.models import Answer, AnswerImage, Question, SavedReply

ANSWER_FIELDS = (
    "text", "structured", "option", "image_count", "answered_by", "answered_by_user", "answered_by_token", "source",
    "remote_addr", "created_at",
)  # fmt: skip
QUESTION_FIELDS = (
    "id", "kind", "text", "options", "allow_free_text", "details", "asker", "asker_name", "session", "status",
    "cancel_reason", "dismissed_by", "timeout_seconds", "asked_in_background", "offered_in_client", "created_at",
    "resolved_at", "delivered_at", "audit_record",
)  # fmt: skip


def pretty_json(value: object) -> str:
    return format_html("<pre>{}</pre>", json.dumps(value, indent=2, ensure_ascii=False))


class StructuredAnswer:
    @admin.display(description="Structured answer (as the agent got it)")
    def structured(self, obj: Answer) -> str:
        return pretty_json(obj.data)


class AnswerInline(RecordAdmin, StructuredAnswer, admin.StackedInline[Answer, Question]):
    model = Answer
    extra = 0
    fields = readonly_fields = ANSWER_FIELDS


@admin.register(Question)
class QuestionAdmin(ProjectScoped, RecordAdmin, admin.ModelAdmin[Question]):
    list_display = ["__str__", "kind", "project", "asker_name", "status", "answered_by", "time_to_answer", "created_at"]
    list_filter = [
        ("project", admin.RelatedOnlyFieldListFilter),
        "status",
        "kind",
        ("asker_name", ScopedValuesFilter),
        ("answer__answered_by", ScopedValuesFilter),
        ("session__project_name", ScopedValuesFilter),
        ("session", admin.RelatedOnlyFieldListFilter),
        "asked_in_background",
        "created_at",
    ]
    actions = ["export_csv", "export_json"]
    search_fields = ["text", "answer__text", "asker_name", "answer__answered_by"]
    date_hierarchy = "created_at"
    fields = readonly_fields = QUESTION_FIELDS
    inlines = [AnswerInline]
    list_select_related = ["answer", "session"]

    @admin.display(description="Audit record")
    def audit_record(self, obj: Question) -> str:
        """The question's own entries in the audit record (audit), oldest first, each linked to its page."""
        found = Entry.objects.filter(target_id=str(obj.pk)).order_by("seq")
        if not found:
            return "—"
        return format_html_join(
            "\n",
            '<p><a href="{}">#{}</a> {} {} by {}</p>',
            (
                (reverse("admin:audit_entry_change", args=[e.pk]), e.seq, e.at.strftime("%Y-%m-%d %H:%M:%S"),
                 e.action, e.actor)
                for e in found
            ),
        )  # fmt: skip

    @admin.display(description="Time to answer")
    def time_to_answer(self, obj: Question) -> str:
        waited = obj.time_to_answer
        if waited is None:
            return "—"
        seconds = waited.total_seconds()
        # A team rule decides in microseconds: "0s" would hide how fast, and that it was not a person.
        if seconds < 0.001:
            return f"{seconds * 1e6:.0f} µs"
        if seconds < 1:
            return f"{seconds * 1000:.0f} ms"
        return duration(seconds)

    @admin.action(description="Export selected questions with their answers as CSV")
    def export_csv(self, request: HttpRequest, queryset: QuerySet[Question]) -> HttpResponse:
        body = exports.download(queryset.select_related("answer", "session", "project"), "csv", "admin")
        response = HttpResponse(body, content_type="text/csv")
        response["Content-Disposition"] = 'attachment; filename="hookbridge-questions.csv"'
        return response

    @admin.action(description="Export selected questions with their answers as JSON")
    def export_json(self, request: HttpRequest, queryset: QuerySet[Question]) -> HttpResponse:
        body = exports.download(queryset.select_related("answer", "session", "project"), "json", "admin")
        response = HttpResponse(body, content_type="application/json")
        response["Content-Disposition"] = 'attachment; filename="hookbridge-questions.json"'
        return response

    @admin.display(description="Answered by", ordering="answer__answered_by")
    def answered_by(self, obj: Question) -> str:
        answer = getattr(obj, "answer", None)
        return answer.answered_by if answer else "—"

    @admin.display(description="Details (by kind)")
    def details(self, obj: Question) -> str:
        return pretty_json(obj.payload)


class AnswerImageInline(RecordAdmin, admin.TabularInline[AnswerImage, Answer]):
    """The images given with the answer, each shown (served by questions.views.answer_image, to staff who log in)."""

    model = AnswerImage
    fields = readonly_fields = ("position", "mime_type", "size", "shown")
    extra = 0

    @admin.display(description="Image")
    def shown(self, obj: AnswerImage) -> str:
        url = reverse("questions:answer-image", args=[obj.answer_id, obj.position + 1])
        # A width attribute, not a style: the admin's pages keep the Content-Security-Policy too.
        return format_html('<a href="{}"><img src="{}" alt="Image {}" width="96"></a>', url, url, obj.position + 1)


@admin.register(Answer)
class AnswerAdmin(ProjectScoped, RecordAdmin, StructuredAnswer, admin.ModelAdmin[Answer]):
    project_path = "question__project"
    inlines = [AnswerImageInline]
    list_display = ["question", "text", "answered_by", "source", "remote_addr", "created_at"]
    list_filter = ["source", "answered_by", "created_at"]
    search_fields = ["text", "question__text", "answered_by"]
    date_hierarchy = "created_at"
    fields = readonly_fields = ("question", *ANSWER_FIELDS)
    list_select_related = ["question"]


@admin.register(SavedReply)
class SavedReplyAdmin(admin.ModelAdmin[SavedReply]):
    list_display = ["text", "user", "created_at"]
    list_filter = ["user"]
    search_fields = ["text", "user__username"]
