"""System checks: every kind the tool sets ask with is registered, and has its template."""

from __future__ import annotations

from typing import Any

from django.core.checks import CheckMessage, Error, register
from django.template import TemplateDoesNotExist
from django.template.loader import get_template

from questions.kinds import REGISTRY, Kind


@register()
def kinds_are_complete(app_configs: Any = None, **kwargs: Any) -> list[CheckMessage]:
    errors: list[CheckMessage] = []
    for name in Kind:
        if name not in REGISTRY:
            errors.append(Error(f"Kind {name!r} has no module in questions/kinds/", id="questions.E001"))
    for kind in REGISTRY.values():
        try:
            get_template(kind.template)
        except TemplateDoesNotExist:
            errors.append(Error(f"Kind {kind.name!r} has no template {kind.template}", id="questions.E002"))
    return errors
