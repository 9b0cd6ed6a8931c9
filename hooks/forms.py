"""The hook runs page's filters, as a Django Form: the same query serves the page and its HTMX list."""

from __future__ import annotations

from typing import Any

from django import forms
from django.db.models import QuerySet

from hooks.models import HookRun, RunStatus


class RunFilter(forms.Form):
    hook = forms.ChoiceField(required=False, label="Hook")
    status = forms.ChoiceField(required=False, choices=[("", "Any status"), *RunStatus.choices], label="Status")
    agent = forms.ChoiceField(required=False, label="Agent")

    def __init__(self, *args: Any, within: QuerySet[HookRun] | None = None, **kwargs: Any) -> None:
        """`within`: the runs a person may see (their projects'); every run when not given."""
        super().__init__(*args, **kwargs)
        self.within = HookRun.objects.all() if within is None else within
        # Choices are what has run: a hook since removed from the config still has its history.
        titles = dict(self.within.order_by("started_at").values_list("tool", "title"))
        hooks = sorted(((tool, f"{title} ({tool})") for tool, title in titles.items()), key=lambda c: c[1].lower())
        agents = self.within.order_by("caller_name").values_list("caller_name", flat=True).distinct()
        self._offer("hook", [("", "Any hook"), *hooks])
        self._offer("agent", [("", "Any agent"), *((name, name) for name in agents)])

    def _offer(self, name: str, choices: list[tuple[str, str]]) -> None:
        field = self.fields[name]
        assert isinstance(field, forms.ChoiceField)
        field.choices = choices

    def runs(self) -> QuerySet[HookRun]:
        """Runs matching the filters, newest first; none when a filter names something that never ran."""
        if not self.is_valid():
            return HookRun.objects.none()
        found = self.within.prefetch_related("directories")
        data: dict[str, Any] = self.cleaned_data
        if data["hook"]:
            found = found.filter(tool=data["hook"])
        if data["status"]:
            found = found.filter(status=data["status"])
        if data["agent"]:
            found = found.filter(caller_name=data["agent"])
        return found
