"""Settings come from the environment and fail loudly on a bad value."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from typing import Any

import pytest

from testing.live import ROOT


def load_settings(**env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("HOOKBRIDGE_", "DATABASE_URL", "REDIS_URL"))}
    clean.update(env)
    code = (
        "import django, os; os.environ['DJANGO_SETTINGS_MODULE']='hookbridge_site.settings'; django.setup();"
        "from django.conf import settings as s;"
        "print(s.DATABASES['default']['ENGINE'], s.CHANNEL_LAYERS['default']['BACKEND'],"
        " s.HOOKBRIDGE_MAX_HOLD, s.HOOKBRIDGE_QUESTION_TIMEOUT)"
    )
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=clean, capture_output=True, text=True)


def test_the_defaults_are_sqlite_and_the_in_memory_layer_shared_with_local_processes() -> None:
    result = load_settings()
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == [
        "django.db.backends.sqlite3",
        "core.local_layer.LocalChannelLayer",
        "None",  # no hold limit: a call without a progress token waits until answered, as the seeds do
        "None",
    ]


def test_team_settings_switch_to_postgres_and_redis() -> None:
    result = load_settings(
        DATABASE_URL="postgres://u@127.0.0.1:5432/test",
        REDIS_URL="redis://127.0.0.1:6379/0",
        HOOKBRIDGE_QUESTION_TIMEOUT="600",
    )
    assert result.returncode == 0, result.stderr
    engine, layer, _, timeout = result.stdout.split()
    assert engine == "django.db.backends.postgresql"
    assert layer == "core.redis_layer.RedisChannelLayer"
    assert timeout == "600.0"


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"HOOKBRIDGE_MAX_HOLD": "-5"}, "HOOKBRIDGE_MAX_HOLD must be a positive number"),
        ({"HOOKBRIDGE_PROGRESS_INTERVAL": "soon"}, "soon"),
        (
            {"HOOKBRIDGE_QUESTION_TIMEOUT": "ten minutes"},
            "HOOKBRIDGE_QUESTION_TIMEOUT must be a number of seconds",
        ),
        ({"DEBUG": "maybe"}, "maybe"),
        ({"ALLOWED_HOSTS": "hooks.example.com", "SECRET_KEY": ""}, "SECRET_KEY is required"),
        ({"HOOKBRIDGE_DEFAULT_TOOLSETS": "maxsim+bogus"}, "HOOKBRIDGE_DEFAULT_TOOLSETS: unknown tool set 'bogus'"),
        ({"HOOKBRIDGE_ASKME_TIMEOUT": "-1"}, "HOOKBRIDGE_ASKME_TIMEOUT must be a positive number"),
        (
            {"SECRET_KEY": "change-me-to-a-long-random-string-of-at-least-fifty-characters-0123456789"},
            "SECRET_KEY is the example's from deploy/env.example, which anyone can read; make one with "
            'python -c "import secrets; print(secrets.token_urlsafe(50))"',
        ),
    ],
)
def test_a_bad_value_stops_the_start(env: dict[str, str], message: str) -> None:
    result = load_settings(**env)
    assert result.returncode != 0
    assert message in result.stderr


def test_production_settings_pass_check_deploy_without_warnings() -> None:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("HOOKBRIDGE_", "DATABASE_URL", "REDIS_URL"))},
        "DEBUG": "0",
        "ALLOWED_HOSTS": "hooks.example.com",
        "CSRF_TRUSTED_ORIGINS": "https://hooks.example.com",
        "SECRET_KEY": "k3J9v!x2Qm@7Lp#4Zr$8Tw%1Ys^6Nb&0Hc*5Fd(9Gj)2Kl_8Mn+3Pq=7Rs4Tu6Vw",
        "HOOKBRIDGE_TRUST_PROXY_HEADERS": "1",
    }
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


def test_the_deploy_checks_still_see_our_middleware_and_what_is_missing(settings: Any) -> None:
    # hookbridge_site.middleware subclasses Django's under other names; Django's own checks
    # would pass vacuously (no HSTS warning) and warn that the middleware is missing.
    from hookbridge_site.checks import check_middleware_security

    settings.SECURE_HSTS_SECONDS = 0
    assert "security.W004" in {m.id for m in check_middleware_security(None)}
    settings.SECURE_HSTS_SECONDS = 3600
    assert "security.W004" not in {m.id for m in check_middleware_security(None)}

    settings.MIDDLEWARE = [m for m in settings.MIDDLEWARE if not m.endswith((".Csrf", ".FrameOptions"))]
    ids = {m.id for m in check_middleware_security(None)}
    assert {"hookbridge_site.W002", "hookbridge_site.W003"} <= ids
    assert "hookbridge_site.W001" not in ids


def test_reading_the_settings_writes_nothing() -> None:
    # Every way of writing a file or a folder fails: importing the settings must not need one.
    code = (
        "import builtins, os, pathlib\n"
        "def refuse(*args, **kwargs): raise AssertionError(f'settings wrote to disk: {args!r}')\n"
        "pathlib.Path.mkdir = pathlib.Path.write_text = pathlib.Path.chmod = refuse\n"
        "os.makedirs = os.mkdir = refuse\n"
        "real_open = builtins.open\n"
        "def checked_open(file, mode='r', *args, **kwargs):\n"
        "    if any(flag in mode for flag in 'wax+'): refuse(file, mode)\n"
        "    return real_open(file, mode, *args, **kwargs)\n"
        "builtins.open = checked_open\n"
        "import hookbridge_site.settings as s\n"
        "print(len(s.SECRET_KEY) >= 50)\n"
    )
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("HOOKBRIDGE_", "DATABASE_URL", "REDIS_URL"))}
    clean.pop("SECRET_KEY", None)
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=clean, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "True"


def test_every_secret_key_the_deploy_files_publish_is_refused() -> None:
    from hookbridge_site.settings import PUBLISHED_SECRET_KEYS

    published = set()
    for path in [*(ROOT / "deploy").rglob("*"), *(ROOT / "docs").rglob("*.md"), ROOT / "README.md"]:
        if path.is_file():
            published |= set(re.findall(r"^SECRET_KEY=(\S+)", path.read_text(errors="replace"), flags=re.MULTILINE))
    assert published  # the example is found: the search looks where it is
    assert published <= PUBLISHED_SECRET_KEYS
