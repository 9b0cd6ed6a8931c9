"""Local passwords, as Django checks them, unless the company's identity provider is the only way in."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.contrib.auth.backends import ModelBackend
from django.http import HttpRequest


def password_allowed(username: str) -> bool:
    """Under HOOKBRIDGE_OIDC_ONLY only the break-glass people have a password that works."""
    if not settings.HOOKBRIDGE_OIDC_ONLY:
        return True
    return username.casefold() in {name.casefold() for name in settings.HOOKBRIDGE_BREAK_GLASS_USERS}


class PasswordUnlessOidcOnly(ModelBackend):
    def authenticate(
        self, request: HttpRequest | None, username: str | None = None, password: str | None = None, **kwargs: Any
    ) -> Any:
        if username is not None and not password_allowed(username):
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)
