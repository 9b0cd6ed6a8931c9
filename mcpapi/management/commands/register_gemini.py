"""Register this Hook Bridge server with Gemini CLI: its hooks (team approvals, the session's timeline) and
its MCP server (ask_question and the rest), in ~/.gemini/settings.json or a project's .gemini/settings.json."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from core import commands
from mcpapi import claude_config, gemini_config
from mcpapi.management.commands.register_claude import base_url
from tokens.models import AgentToken


class Command(commands.Command):
    help = "Write Hook Bridge's hooks and MCP server into Gemini CLI's settings.json."

    def add_arguments(self, parser: CommandParser) -> None:
        add_common_arguments(parser)
        parser.add_argument("--token", default="", help="the agent token to tell you to export (default: a new one)")
        parser.add_argument(
            "--timeout", type=int, default=600, help="the hooks' timeout in seconds (the CLI gives up after it)"
        )
        parser.add_argument(
            "--headless",
            action="store_true",
            help="for `gemini -p`: what nobody decided is refused (Gemini CLI waits for ever on its own prompt there)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        path = settings_file(options)
        url = base_url(options)
        command = gemini_config.hook_command(url, headless=options["headless"])
        try:
            data = claude_config.load(path)
            added = gemini_config.add(data, command, options["timeout"], options["name"], f"{url}/mcp")
        except claude_config.ConfigError as exc:
            raise CommandError(str(exc)) from None
        path.parent.mkdir(parents=True, exist_ok=True)
        claude_config.save(path, data)
        events = ", ".join(added) or "none new (already there)"
        self.stdout.write(f"Gemini CLI: hooks ({events}) and the MCP server '{options['name']}' in {path}.")
        token = options["token"]
        if not token:
            where = Path(options["project"]).resolve().name if options["project"] else "user"
            _, token = AgentToken.issue(f"gemini ({where})")
        # The token goes to the person, never into the file: a project's settings are often committed.
        self.stdout.write(f"Before starting Gemini CLI, set the token it sends:\n  export HOOKBRIDGE_TOKEN={token}")


def add_common_arguments(parser: CommandParser) -> None:
    parser.add_argument(
        "--project", default=None, help="write the project's .gemini/settings.json (default: ~/.gemini/settings.json)"
    )
    parser.add_argument("--settings-file", default=None, help="write this settings file instead")
    parser.add_argument("--name", default="hookbridge", help="the MCP server's name in Gemini CLI")
    parser.add_argument(
        "--url",
        default=None,
        help="the server's base URL (default: the running `serve`'s address, or HOOKBRIDGE_PUBLIC_URL)",
    )


def settings_file(options: dict[str, Any]) -> Path:
    if options["settings_file"]:
        return Path(options["settings_file"])
    return gemini_config.settings_path(Path(options["project"]).resolve() if options["project"] else None)
