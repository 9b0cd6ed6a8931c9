"""Django's deploy checks, run again for the middleware of hookbridge_site.middleware.

Django finds its security, clickjacking and CSRF middleware by dotted path, so with our
on-the-loop subclasses in MIDDLEWARE it would warn that they are missing and skip every check
that depends on them (HSTS, SSL redirect, nosniff, X-Frame-Options, the CSRF cookie). Those
three warnings are silenced in the settings; here the checks run as if Django's names were
listed, and the three come back under this app's ids should a middleware really be missing.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from django.conf import settings
from django.core.checks import CheckMessage, Tags, register
from django.core.checks.security import base, csrf

STAND_INS = {
    "hookbridge_site.middleware.Security": "django.middleware.security.SecurityMiddleware",
    "hookbridge_site.middleware.Csrf": "django.middleware.csrf.CsrfViewMiddleware",
    "hookbridge_site.middleware.FrameOptions": "django.middleware.clickjacking.XFrameOptionsMiddleware",
}
SILENCED = {"security.W001", "security.W002", "security.W003"}

# Each Django check that looks at MIDDLEWARE.
MIDDLEWARE_CHECKS = (
    base.check_security_middleware,
    base.check_xframe_options_middleware,
    base.check_sts,
    base.check_sts_include_subdomains,
    base.check_sts_preload,
    base.check_content_type_nosniff,
    base.check_ssl_redirect,
    base.check_xframe_deny,
    base.check_referrer_policy,
    base.check_cross_origin_opener_policy,
    csrf.check_csrf_middleware,
    csrf.check_csrf_cookie_secure,
)


@contextmanager
def django_names() -> Iterator[None]:
    # Checks run once, before any request, in one thread: a plain swap is enough.
    listed = settings.MIDDLEWARE
    settings.MIDDLEWARE = [STAND_INS.get(path, path) for path in listed]
    try:
        yield
    finally:
        settings.MIDDLEWARE = listed


@register(Tags.security, deploy=True)
def check_middleware_security(app_configs: Any, **kwargs: Any) -> list[CheckMessage]:
    with django_names():
        found = [message for check in MIDDLEWARE_CHECKS for message in check(app_configs)]
    for message in found:
        if message.id in SILENCED:
            message.id = f"hookbridge_site.{message.id.removeprefix('security.')}"
    return found
