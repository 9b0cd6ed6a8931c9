from __future__ import annotations

from pathlib import Path

from django.apps import AppConfig
from django.conf import settings


class SiteConfig(AppConfig):
    name = "hookbridge_site"
    verbose_name = "Hook Bridge"

    def ready(self) -> None:
        # The folders the embedded default writes to, made at start-up rather than when the
        # settings are read: the SQLite database's, and ServeStatic's (STATIC_ROOT, which it expects to exist).
        database = settings.DATABASES["default"]
        if database["ENGINE"] == "django.db.backends.sqlite3" and not str(database["NAME"]).startswith(
            ("file:", ":memory:")
        ):
            Path(database["NAME"]).parent.mkdir(parents=True, exist_ok=True)
        Path(settings.STATIC_ROOT).mkdir(parents=True, exist_ok=True)
        from hookbridge_site import checks  # noqa: F401  (registers the deploy checks)
