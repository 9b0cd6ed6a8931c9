"""Register this Hook Bridge server with GitHub Copilot CLI: its hooks (team approvals, team rules, the session's
timeline) in ~/.copilot/settings.json, and its MCP server (ask_question and the rest) in ~/.copilot/mcp-config.json."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from core import commands
from mcpapi import claude_config, copilot_config
from mcpapi.management.commands.register_claude import base_url
from tokens.models import AgentToken


class Command(commands.Command):
    help = "Write Hook Bridge's hooks and MCP server into GitHub Copilot CLI's settings.json and mcp-config.json."

    def add_arguments(self, parser: CommandParser) -> None:
        add_common_arguments(parser)
        parser.add_argument("--token", default="", help="the agent token to tell you to export (default: a new one)")
        parser.add_argument(
            "--headless",
            action="store_true",
            help="for `copilot -p` with --allow-all-tools: what nobody decided is refused, not left to that flag",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        home = copilot_home(options)
        settings, mcp_file = home / "settings.json", home / "mcp-config.json"
        url = base_url(options)
        command = copilot_config.hook_command(url, options["name"], headless=options["headless"])
        try:
            data, mcp = claude_config.load(settings), claude_config.load(mcp_file)
            copilot_config.add(data, command, mcp, options["name"], f"{url}/mcp")
        except claude_config.ConfigError as exc:
            raise CommandError(str(exc)) from None
        home.mkdir(parents=True, exist_ok=True)
        claude_config.save(settings, data)
        claude_config.save(mcp_file, mcp)
        self.stdout.write(
            f"Copilot CLI: hooks ({', '.join(copilot_config.EVENTS)}) in {settings}, and the MCP server "
            f"'{options['name']}' in {mcp_file}."
        )
        token = options["token"] or AgentToken.issue("copilot (user)")[1]
        self.stdout.write(f"Before starting Copilot CLI, set the token it sends:\n  export HOOKBRIDGE_TOKEN={token}")


def add_common_arguments(parser: CommandParser) -> None:
    parser.add_argument("--copilot-home", default=None, help="write this folder instead of ~/.copilot")
    parser.add_argument("--name", default="hookbridge", help="the MCP server's name in Copilot CLI")
    parser.add_argument(
        "--url",
        default=None,
        help="the server's base URL (default: the running `serve`'s address, or HOOKBRIDGE_PUBLIC_URL)",
    )


def copilot_home(options: dict[str, Any]) -> Path:
    return Path(options["copilot_home"]) if options["copilot_home"] else copilot_config.copilot_home()
