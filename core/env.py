"""Typed readers of the environment, for settings.py: each raises at start-up on a bad value.

A value of the wrong type or range fails loudly when the server starts, naming the
variable, rather than misbehaving later. Every variable Hook Bridge reads goes
through one of these; django-environ parses the URL and list values.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import environ
from django.core.exceptions import ImproperlyConfigured

_env = environ.Env()

_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def _raw(name: str) -> str:
    return os.environ.get(name, "").strip()


def env_str(name: str, default: str = "") -> str:
    return _raw(name) or default


def env_list(name: str, default: list[str]) -> list[str]:
    """Comma-separated values."""
    value: list[str] = _env.list(name, default=default)
    return value


def env_db_url(name: str, default: str) -> dict[str, Any]:
    """A database URL (sqlite:///path, postgres://user@host/db) as Django's DATABASES entry."""
    try:
        config: dict[str, Any] = _env.db_url(name, default=default)
    except (ValueError, ImproperlyConfigured) as exc:
        raise ImproperlyConfigured(f"{name} is not a database URL Hook Bridge understands: {exc}") from None
    return config


def env_email_url(name: str) -> dict[str, Any]:
    """An e-mail URL (smtp://user:password@host:587, smtp+tls://…, consolemail://) as Django's EMAIL_* settings."""
    try:
        config: dict[str, Any] = _env.email_url(name)
    except (ValueError, ImproperlyConfigured, KeyError) as exc:
        raise ImproperlyConfigured(f"{name} is not an e-mail URL Hook Bridge understands: {exc}") from None
    return config


def env_bool(name: str, default: bool) -> bool:
    raw = _raw(name).lower()
    if raw == "":
        return default
    if raw in _TRUE:
        return True
    if raw in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name} must be one of 1/0, true/false, yes/no, on/off; got {raw!r}")


def env_choice(name: str, default: str, choices: tuple[str, ...]) -> str:
    raw = _raw(name).lower()
    if raw == "":
        return default
    if raw not in choices:
        raise ImproperlyConfigured(f"{name} must be one of {', '.join(choices)}; got {raw!r}")
    return raw


def env_int(name: str, default: int, *, minimum: int = 1) -> int:
    raw = _raw(name)
    if raw == "":
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a whole number, got {raw!r}") from None
    if value < minimum:
        raise ImproperlyConfigured(f"{name} must be at least {minimum}, got {value}")
    return value


def env_seconds(name: str, default: float | None) -> float | None:
    """A positive number of seconds; with default None, empty or "none" means no limit."""
    raw = _raw(name)
    if raw == "" or (default is None and raw.lower() == "none"):
        return default
    try:
        value = float(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name} must be a number of seconds, got {raw!r}") from None
    if not value > 0 or value == float("inf"):
        raise ImproperlyConfigured(f"{name} must be a positive number of seconds, got {raw!r}")
    return value


def required_seconds(name: str, default: float) -> float:
    value = env_seconds(name, default)
    assert value is not None
    return value


def env_seconds_or_none(name: str, default: float, *, none: float | None) -> float | None:
    """Seconds with a default of its own, where "none" means `none` (another setting's value)."""
    if _raw(name).lower() == "none":
        return none
    return env_seconds(name, default)


def env_url(name: str, default: str) -> str:
    """An http(s) URL, or empty when the default is empty."""
    value = env_str(name, default)
    if value and not value.startswith(("http://", "https://")):
        raise ImproperlyConfigured(f"{name} must be an http(s) URL, got {value!r}")
    return value


def env_directory(name: str, default: Path | None) -> Path | None:
    """An existing folder, resolved (symlinks followed) so containment checks compare real paths."""
    raw = _raw(name)
    if raw == "":
        return default
    path = Path(raw).expanduser()
    if not path.is_dir():
        raise ImproperlyConfigured(f"{name} must name an existing folder, got {raw!r}")
    return path.resolve()
