"""The `hookbridge` command (pip, pipx or uv tool install): the management commands people need, by short names.

    hookbridge serve [--port N] [--open] [--register] [-v]   (-v: every request logged, and daphne's notes)
    hookbridge stdio [--toolsets maxsim+askme] [--token T] [--no-open]
    hookbridge token NAME [--scope answer] [--project P | --all-projects]
    hookbridge register | unregister HOST [--project DIR] [--hooks] [--approve TOOLS]
        HOST: claude-code (the default), codex, gemini, copilot, opencode, cursor, cline, amp, windsurf, kiro
    hookbridge hook HOST                   (an agent host's hook: its JSON in, the team's decision out)
    hookbridge questions list | show | answer | dismiss
    hookbridge user create NAME [--email E] [--admin]
    hookbridge project create | member | list
    hookbridge policy apply FILE | export --project P | test FILE [--last N]   (rules and approval policies)
    hookbridge hooks list
    hookbridge link telegram|discord|teams USERNAME PLATFORM_USER_ID [--remove]   (whose chat presses answer as whom)
    hookbridge telegram set-webhook [--url URL] | delete-webhook
    hookbridge purge --older-than 90d
    hookbridge migrate

Data lives in HOOKBRIDGE_DATA_DIR ($XDG_DATA_HOME/hookbridge when installed; var/ in a checkout).
"""

from __future__ import annotations

import os
import sys

COMMANDS = {
    "serve": "serve",
    "stdio": "mcp_stdio",
    "token": "create_token",
    "register": "register",
    "unregister": "unregister",
    "questions": "questions",
    "hooks": "hooks",
    "user": "user",
    "project": "project",
    "policy": "policy",
    "link": "link",
    "telegram": "telegram",
    "purge": "purge",
    "audit": "audit",
    "migrate": "migrate",
}


# `hookbridge register` with no host, or only options, is Claude Code's (as it was before there were others).
DEFAULT_HOST = "claude-code"

WHAT = "Hook Bridge: AI coding agents ask your team over MCP, and wait while a person answers on a live dashboard.\n"


def usage() -> str:
    names = ", ".join([*COMMANDS, "hook"])
    return f"usage: hookbridge <command> [options]; commands: {names}. `hookbridge <command> --help` for its options."


def version() -> str:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed

    try:
        return installed("hookbridge")
    except PackageNotFoundError:  # a checkout that was never installed
        return "unknown (not installed)"


def verbose_as_django_says(args: list[str]) -> list[str]:
    """A bare -v or --verbose is Django's --verbosity 2; `-v N` stays as it is."""
    said: list[str] = []
    for n, arg in enumerate(args):
        bare = arg == "--verbose" or (arg == "-v" and (n + 1 == len(args) or not args[n + 1].isdigit()))
        said += ["--verbosity", "2"] if bare else [arg]
    return said


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in ("-h", "--help", "help"):
        # Asked for: on stdout, so `hookbridge --help | less` works.
        sys.stdout.write(WHAT + "\n" + (__doc__ or "") + usage() + "\n")
        return 0
    if args and args[0] in ("-V", "--version", "version"):
        sys.stdout.write(f"hookbridge {version()}\n")
        return 0
    if not args:
        sys.stderr.write(WHAT + usage() + "\n")
        return 2
    if args[0] == "hook":
        # Run on every tool use an agent host makes: no Django to set up, nothing on stdout but the answer.
        from hookbridge_site.paths import local_credentials
        from hosts import hook_client

        return hook_client.main(args[1:], credentials=local_credentials())
    command = COMMANDS.get(args[0])
    bare = len(args) == 1 or (args[1].startswith("-") and not set(args[1:]) & {"-h", "--help"})
    if command in ("register", "unregister") and bare:
        args = [args[0], DEFAULT_HOST, *args[1:]]
    if command is None:
        sys.stderr.write(f"hookbridge: unknown command {args[0]!r}; {usage()}\n")
        return 2
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "hookbridge_site.settings")
    import django
    from django.core.management import get_commands, load_command_class

    django.setup()
    # Run as Django's own command line would, under the short name: `hookbridge stdio --help` says so.
    load_command_class(get_commands()[command], command).run_from_argv(
        ["hookbridge", args[0], *verbose_as_django_says(args[1:])]
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
