"""The history page's filters, as a Django Form: the same query serves the page, its HTMX table and the exports."""

from __future__ import annotations

from datetime import datetime, time
from typing import Any

from django import forms
from django.db.models import Q, QuerySet
from django.utils import timezone

from questions.models import Question, Status

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
