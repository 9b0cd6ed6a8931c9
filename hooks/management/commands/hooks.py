"""`manage.py hooks list`: the hooks this server finds under HOOKBRIDGE_PLUGINS_DIR, and configs it skipped."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import CommandError, CommandParser

from core import commands
from hooks.config import discovered


class Command(commands.Command):
    help = "List the hooks served at /mcp/hooks and any plugin configs that were skipped (exit status 1 if any)."

    def add_arguments(self, parser: CommandParser) -> None:
        sub = parser.add_subparsers(dest="action", required=True)
        sub.add_parser("list", help="Show each hook's tool, title, command and where it runs; then config errors.")

    def handle(self, *args: Any, **options: Any) -> None:
        found = discovered()
        if found.plugins_dir is None:
            raise CommandError("HOOKBRIDGE_PLUGINS_DIR is not set: no hooks are served. Point it at a plugins folder.")
        self.stdout.write(f"Plugins folder: {found.plugins_dir}")
        self.stdout.write(f"Workspace:      {settings.HOOKBRIDGE_WORKSPACE}")
        self.stdout.write(f"{len(found.hooks)} hook(s) served at /mcp/hooks")
        for hook in found.hooks.values():
            where = f"directories containing {', '.join(hook.dirs_with)}" if hook.dirs_with else "the chosen folder"
            self.stdout.write("")
            self.stdout.write(self.style.SUCCESS(hook.tool_name) + f"  {hook.title}")
            self.stdout.write(f"  command: {hook.command}")
            self.stdout.write(f"  runs in: {where}" + (f" where `{hook.dir_test}` succeeds" if hook.dir_test else ""))
            self.stdout.write(f"  timeout: {hook.timeout:g} s, at most {hook.max_concurrent} run(s) per folder")
            self.stdout.write(f"  config:  {hook.config_path}")
        if found.errors:
            self.stderr.write("")
            self.stderr.write(self.style.ERROR(f"{len(found.errors)} plugin config(s) skipped:"))
            for error in found.errors:
                self.stderr.write(f"  {error}")
            raise SystemExit(1)
