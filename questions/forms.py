"""The history page's filters, as a Django Form: the same query serves the page, its HTMX table and the exports."""

from __future__ import annotations

from datetime import datetime, time
from typing import Any

from django import forms
from django.conf import settings
from django.db.models import Q, QuerySet
from django.utils import timezone

from projects.access import Access
from questions.models import Kind, Question, Status

OUTCOMES = [("", "Any outcome")] + [(value, label) for value, label in Status.choices if value != Status.PENDING]


class HistoryFilter(forms.Form):
    q = forms.CharField(required=False, max_length=200, label="Search", strip=True)
    status = forms.ChoiceField(required=False, choices=OUTCOMES, label="Outcome")
    asker = forms.CharField(required=False, max_length=100, label="Asker")
    project = forms.CharField(required=False, max_length=200, label="Project")
    since = forms.DateField(required=False, label="From", widget=forms.DateInput(attrs={"type": "date"}))
    until = forms.DateField(required=False, label="To", widget=forms.DateInput(attrs={"type": "date"}))

    def questions(self) -> QuerySet[Question]:
        """Resolved questions matching the filters (all of them when the filters are invalid), newest first."""
        found = Question.objects.resolved().select_related("answer", "session")
        if not self.is_valid():
            return found
        data: dict[str, Any] = self.cleaned_data
        if data["q"]:
            # Words of the question or of its answer, anywhere in them.
            found = found.filter(Q(text__icontains=data["q"]) | Q(answer__text__icontains=data["q"]))
        if data["status"]:
            found = found.filter(status=data["status"])
        if data["asker"]:
            found = found.filter(asker_name__icontains=data["asker"])
        if data["project"]:
            # The project a person is a member of, or the one its agent named.
            found = found.filter(Q(project__name=data["project"]) | Q(session__project_name=data["project"]))
        if data["since"]:
            found = found.filter(created_at__gte=timezone.make_aware(datetime.combine(data["since"], time.min)))
        if data["until"]:
            found = found.filter(created_at__lte=timezone.make_aware(datetime.combine(data["until"], time.max)))
        return found


class BatchDecision(forms.Form):
    """Several approvals allowed or denied in one deliberate step (issue 42): which ones, what, and for a deny why."""

    question = forms.ModelMultipleChoiceField(
        queryset=Question.objects.none(),
        error_messages={
            "required": "Choose at least one approval.",
            "invalid_choice": "%(value)s is not an approval you can see.",
        },
    )
    behavior = forms.ChoiceField(choices=[("allow", "Allow"), ("deny", "Deny")])
    message = forms.CharField(required=False, strip=True, max_length=settings.HOOKBRIDGE_MAX_ANSWER_LENGTH)

    def __init__(self, *args: Any, seen: Access, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        # Any status: one decided meanwhile is reported as such, not refused as unknown.
        field = self.fields["question"]
        assert isinstance(field, forms.ModelMultipleChoiceField)
        field.queryset = seen.visible(Question.objects.filter(kind=Kind.APPROVAL))

    def decision(self) -> dict[str, str]:
        """The answer each approval gets, as the approval kind parses it."""
        if self.cleaned_data["behavior"] == "deny":
            return {"behavior": "deny", "message": self.cleaned_data["message"]}
        return {"behavior": "allow"}
