"""First-run set-up for local use: an admin login and an agent token, printed at every start.

The credentials are kept in var/local-credentials.json (mode 0600) beside the
SQLite database, so `make serve` can show them again on the next start. Without
a SECRET_KEY in the environment, the key this process runs on is saved in
var/secret_key, so logins survive a restart. If the password was changed or the token revoked
since, it says so (and issues a new token) rather than showing stale values.
"""

from __future__ import annotations

import json
import os
import secrets
from pathlib import Path
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import CommandParser

from core import commands, local_secret
from core.env import env_str
from tokens.models import AgentToken


class Command(commands.Command):
    help = "Create a local admin login and agent token if needed, and print how to use them."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--url", default="http://127.0.0.1:8000", help="Where the server will listen.")
        parser.add_argument("--credentials", default=str(settings.HOOKBRIDGE_LOCAL_CREDENTIALS))

    def handle(self, *args: Any, url: str, credentials: str, **options: Any) -> None:
        if not env_str("SECRET_KEY"):
            local_secret.save(settings.HOOKBRIDGE_SECRET_KEY_FILE, settings.SECRET_KEY)
        path = Path(credentials)
        saved: dict[str, str] = json.loads(path.read_text()) if path.exists() else {}
        User = get_user_model()

        username = saved.get("username", "admin")
        user = User.objects.filter(username=username).first()
        password: str | None = saved.get("password")
        if user is None:
            password = secrets.token_urlsafe(12)
            user = User.objects.create_superuser(username=username, email="", password=password)
        elif password is None or not user.check_password(password):
            password = None

        raw_token = saved.get("token", "")
        if not raw_token or AgentToken.authenticate(raw_token) is None:
            _, raw_token = AgentToken.issue("claude-code")

        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"username": username, "password": password or "", "token": raw_token}))
        os.chmod(path, 0o600)

        out = self.stdout.write
        out("")
        out(f"Hook Bridge dashboard: {url}/")
        if password:
            out(f"  Log in as: {username} / {password}")
        else:
            out(f"  Log in as: {username} (password changed since first start; reset it with")
            out(f"  python manage.py changepassword {username})")
        out(f"  Admin:     {url}/admin/")
        out("Agent token (bearer): " + raw_token)
        out("Add it to Claude Code:")
        out(f'  claude mcp add --transport http hookbridge {url}/mcp --header "Authorization: Bearer {raw_token}"')
        out("")
