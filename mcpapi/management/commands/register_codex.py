"""Register this Hook Bridge server with Codex CLI: its hooks (team approvals, team rules, the session's
timeline), the hooks' trust, and its MCP server (ask_question and the rest), in $CODEX_HOME (~/.codex) or a
project's .codex folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import CommandError, CommandParser

from core import commands
from mcpapi import claude_config, codex_config
from mcpapi.management.commands.register_claude import base_url
from tokens.models import AgentToken


class Command(commands.Command):
    help = "Write Hook Bridge's hooks, their trust and its MCP server into Codex CLI's hooks.json and config.toml."

    def add_arguments(self, parser: CommandParser) -> None:
        add_common_arguments(parser)
        parser.add_argument("--token", default="", help="the agent token to tell you to export (default: a new one)")
        parser.add_argument(
            "--timeout",
            type=int,
            default=codex_config.TIMEOUT_SECONDS,
            help="the hooks' timeout in seconds (Codex gives up after it)",
        )
        parser.add_argument(
            "--headless",
            action="store_true",
            help="for `codex exec`: what nobody decided is refused rather than left to Codex's own approval policy",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        home = codex_home(options)
        hooks_file, config_file = home / "hooks.json", home / "config.toml"
        url = base_url(options)
        command = codex_config.hook_command(url, headless=options["headless"])
        try:
            data = claude_config.load(hooks_file)
            # A changed command (another URL, --headless) is a new hook: the old one goes, and its trust with it.
            codex_config.remove_hooks(data)
            codex_config.add_hooks(data, command, options["timeout"])
            config_text = config_file.read_text() if config_file.exists() else None
            trust = codex_config.trust_entries(hooks_file.absolute(), data)
            new_block = codex_config.block(options["name"], f"{url}/mcp", trust)
            config = codex_config.add_block(config_text, new_block, config_file)
        except claude_config.ConfigError as exc:
            raise CommandError(str(exc)) from None
        home.mkdir(parents=True, exist_ok=True)
        claude_config.save(hooks_file, data)
        claude_config.write_atomically(config_file, config)
        self.stdout.write(
            f"Codex: hooks ({', '.join(codex_config.EVENTS)}) in {hooks_file}, trusted, and the MCP server "
            f"'{options['name']}' in {config_file}."
        )
        token = options["token"]
        if not token:
            where = Path(options["project"]).resolve().name if options["project"] else "user"
            _, token = AgentToken.issue(f"codex ({where})")
        # The token goes to the person, never into a file: a project's .codex is often committed.
        self.stdout.write(f"Before starting Codex, set the token it sends:\n  export HOOKBRIDGE_TOKEN={token}")
        if options["project"]:
            self.stdout.write(
                "Codex reads a project's .codex folder only once you trust the project (it asks on first start)."
            )


def add_common_arguments(parser: CommandParser) -> None:
    parser.add_argument(
        "--project", default=None, help="write the project's .codex folder (default: $CODEX_HOME, else ~/.codex)"
    )
    parser.add_argument("--codex-home", default=None, help="write this folder instead")
    parser.add_argument("--name", default="hookbridge", help="the MCP server's name in Codex")
    parser.add_argument(
        "--url",
        default=None,
        help="the server's base URL (default: the running `serve`'s address, or HOOKBRIDGE_PUBLIC_URL)",
    )


def codex_home(options: dict[str, Any]) -> Path:
    if options["codex_home"]:
        return Path(options["codex_home"])
    return codex_config.codex_home(Path(options["project"]).resolve() if options["project"] else None)
