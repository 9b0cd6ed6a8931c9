"""The audit record's settings, read at start-up: a key that does not parse stops the server with a clear error,
and a team server whose workers would each sign with a key of their own is warned."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Error, Warning, register
from django.core.exceptions import ImproperlyConfigured

from audit import signing


def _public_key_problem(text: str) -> str | None:
    try:
        raw = base64.b64decode(text, validate=True)
    except binascii.Error:
        return "is not base64"
    return None if len(raw) == 32 else f"is {len(raw)} bytes, not an Ed25519 public key's 32"


@register()
def audit_keys(app_configs: Any, **kwargs: Any) -> list[CheckMessage]:
    found: list[CheckMessage] = []
    if settings.HOOKBRIDGE_AUDIT_SIGNING_KEY.strip():
        try:
            signing.load()
        except ImproperlyConfigured as exc:
            found.append(Error(str(exc), id="audit.E001"))
    elif settings.DATABASES["default"]["ENGINE"] != "django.db.backends.sqlite3":
        found.append(
            Warning(
                "HOOKBRIDGE_AUDIT_SIGNING_KEY is not set: each worker signs the audit record's checkpoints with a "
                "key of its own data folder, and `audit verify` on one refuses the others'.",
                hint="Set the same HOOKBRIDGE_AUDIT_SIGNING_KEY on every worker (python -m audit.signing makes one).",
                id="audit.W001",
            )
        )
    for n, key in enumerate(settings.HOOKBRIDGE_AUDIT_PREVIOUS_KEYS, 1):
        if problem := _public_key_problem(key):
            found.append(Error(f"HOOKBRIDGE_AUDIT_PREVIOUS_KEYS: key {n} {problem}", id="audit.E002"))
    return found
