"""The identity settings, checked at start-up: a mistake here locks people out, so it is named before anyone is."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.conf import settings
from django.core.checks import Error, Warning, register

from identity import roles

LOOPBACK = {"127.0.0.1", "localhost", "::1"}


@register()
def identity_settings(**kwargs: Any) -> list[Error | Warning]:
    found: list[Error | Warning] = []
    try:
        roles.parse(settings.HOOKBRIDGE_OIDC_ROLES)
    except ValueError as error:
        found.append(Error(str(error), hint="Write each as GROUP=PROJECT:ROLE, comma-separated.", id="identity.E001"))
    issuer, client = settings.HOOKBRIDGE_OIDC_ISSUER, settings.HOOKBRIDGE_OIDC_CLIENT_ID
    if bool(issuer) != bool(client):
        missing = "HOOKBRIDGE_OIDC_CLIENT_ID" if issuer else "HOOKBRIDGE_OIDC_ISSUER"
        found.append(
            Error(
                f"{missing} is not set: sign-in with the identity provider needs the issuer and the client id.",
                id="identity.E002",
            )
        )
    if settings.HOOKBRIDGE_OIDC_ONLY and not (issuer and client):
        found.append(
            Error(
                "HOOKBRIDGE_OIDC_ONLY is on but no identity provider is set up: nobody but the break-glass "
                "people could sign in.",
                hint="Set HOOKBRIDGE_OIDC_ISSUER and HOOKBRIDGE_OIDC_CLIENT_ID.",
                id="identity.E003",
            )
        )
    if issuer:
        parts = urlsplit(issuer)
        if parts.scheme != "https" and (parts.hostname or "") not in LOOPBACK:
            found.append(Warning(f"HOOKBRIDGE_OIDC_ISSUER is not https: {issuer}", id="identity.W001"))
    token = settings.HOOKBRIDGE_SCIM_TOKEN
    if token and len(token) < 32:
        found.append(
            Warning(
                "HOOKBRIDGE_SCIM_TOKEN is shorter than 32 characters: anyone who guesses it provisions people.",
                hint="python -c 'import secrets; print(secrets.token_urlsafe(32))'",
                id="identity.W002",
            )
        )
    return found
