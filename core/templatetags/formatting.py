from __future__ import annotations

from django import template

from core.formatting import duration

register = template.Library()


@register.filter(name="duration")
def duration_filter(seconds: float | None) -> str:
    """{{ run.duration|duration }}: '1.2s', '3m 05s', as everywhere else (core.formatting)."""
    return "" if seconds is None else duration(seconds, tenths=True)
