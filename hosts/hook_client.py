"""`hookbridge hook HOST`: the command an agent host runs as its hook (the command hooks of Gemini CLI, Codex,
Copilot CLI, Cursor and Cline, and Claude Code where it takes no HTTP hooks).

It reads the host's hook JSON on stdin, POSTs it to the server's /hooks/<host> (HOOKBRIDGE_URL, with
HOOKBRIDGE_TOKEN, else the local login's token `serve` made in the data folder), waits while a person decides,
and writes the server's answer, already in the host's format, to stdout: nothing else, since the host parses
stdout as its decision. It runs on every tool use, so it sets up no Django and imports only the standard library,
the hosts' table and where the data folder is.

When the server cannot be asked (down, refused, too slow for the host's own hook timeout) it writes the host's
"no decision" (Gemini CLI's and Cursor's "ask", with why in the message their UI shows beside their prompt; for
the others, nothing: each asks at its own prompt) and one line on stderr saying why: never a silent allow.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.request
from pathlib import Path
from typing import IO, Any

from hosts.base import Hooked, Host
from hosts.registry import HOSTS

DEFAULT_URL = "http://127.0.0.1:8000"
# The server answers "no decision" itself at HOOKBRIDGE_APPROVAL_TIMEOUT (590 s); `register gemini` gives
# the hook 600 s. This is between them: the host never kills the hook before it has answered.
DEFAULT_TIMEOUT = 595.0


def parser() -> argparse.ArgumentParser:
    made = argparse.ArgumentParser(
        prog="hookbridge hook",
        description="Run as an agent host's hook: its JSON on stdin, the team's decision on stdout.",
    )
    # OpenCode's plugin POSTs itself (register opencode). Claude Code does too (HTTP hooks, register --hooks), and
    # may run this as a command hook instead (where a team's settings allow only command hooks).
    made.add_argument("host", choices=sorted(name for name, host in HOSTS.items() if host.runs_hook_command))
    made.add_argument("--url", default=None, help=f"the server (HOOKBRIDGE_URL, default {DEFAULT_URL})")
    made.add_argument(
        "--timeout",
        type=float,
        default=None,
        help=f"seconds to wait for the team (HOOKBRIDGE_HOOK_TIMEOUT, default {DEFAULT_TIMEOUT:g}); "
        "keep it below the host's own hook timeout",
    )
    made.add_argument(
        "--undecided",
        choices=["ask", "deny"],
        default="ask",
        help="when nobody decides or the server cannot be asked: ask at the host's own prompt (default), or deny "
        "(for a headless run, where nobody is at that prompt)",
    )
    made.add_argument(
        "--mcp-server",
        default=None,
        metavar="NAME",
        help="Hook Bridge's own MCP server's name in the host: a permission to call its tools is given without "
        "asking anyone (asking the team is what they are for)",
    )
    return made


def own_tool(host: Host, body: Any, mcp_server: str | None, url: str) -> bool:
    """Whether `body` asks permission to call a tool of Hook Bridge's own MCP server (Copilot CLI names it
    "<server>/<tool>", Kiro "@<server>/<tool>", read as Claude Code's "mcp__<server>__<tool>"; Cursor names the
    server's URL)."""
    if not isinstance(body, dict):
        return False
    said = host.to_claude(body)
    if said.get("hook_event_name") != "PermissionRequest":
        return False
    server = said.get("mcp_server")
    if isinstance(server, str) and server.startswith(url.rstrip("/") + "/mcp"):
        return True
    tool = str(said.get("tool_name"))
    return bool(mcp_server) and (tool.startswith(f"{mcp_server}/") or tool.startswith(f"mcp__{mcp_server}__"))


def main(
    argv: list[str],
    stdin: IO[str] | None = None,
    stdout: IO[str] | None = None,
    *,
    credentials: Path | None = None,
    stderr: IO[str] | None = None,
) -> int:
    """`credentials`: the local login's file (`serve` made it in the data folder), whose token stands in for
    HOOKBRIDGE_TOKEN on a laptop. Returns the exit code the host reads (0 for most; Amp's is its answer)."""
    args = parser().parse_args(argv)
    host = HOSTS[args.host]
    env = os.environ
    raw = host.read_hook((stdin or sys.stdin).read(), Hooked(dict(env), os.getcwd(), os.getppid()))
    out, err = stdout or sys.stdout, stderr or sys.stderr
    try:
        body: Any = json.loads(raw)
    except ValueError:
        body = None
    url = args.url or env.get("HOOKBRIDGE_URL", DEFAULT_URL)
    if own_tool(host, body, args.mcp_server, url):
        return tell(
            host,
            host.answer("PermissionRequest", {"hookSpecificOutput": {"decision": {"behavior": "allow"}}}),
            out,
            err,
        )
    timeout = args.timeout if args.timeout is not None else float(env.get("HOOKBRIDGE_HOOK_TIMEOUT", DEFAULT_TIMEOUT))
    answer, why = ask(host, raw, url, env.get("HOOKBRIDGE_TOKEN", "") or local_token(credentials), timeout)
    if answer is None:
        refused = args.undecided == "deny"
        then = "refused" if refused or not host.asks_itself else f"{host.title} asks at its own prompt"
        err.write(f"hookbridge hook {host.name}: {why}; {then}\n")
        said = host.no_decision(body, refuse=f"Hook Bridge: {why}; not run." if refused else "", why=why)
    else:
        said = json.loads(answer)
        if args.undecided == "deny" and said == host.no_decision(body):
            said = host.no_decision(body, refuse="Hook Bridge: nobody on the team decided in time; not run.")
    return tell(host, said, out, err)


def tell(host: Host, said: dict[str, Any], out: IO[str], err: IO[str]) -> int:
    """The answer as the host reads it (most: one JSON line on stdout, nothing else); the exit code."""
    text, problem, code = host.deliver(said)
    out.write(text)
    out.flush()
    err.write(problem)
    err.flush()
    return code


def local_token(credentials: Path | None) -> str:
    """The agent token `hookbridge serve` made for this machine's own login (its data folder), if there is one:
    a laptop's hooks need no HOOKBRIDGE_TOKEN."""
    try:
        saved = json.loads(credentials.read_text()) if credentials is not None else None
    except (OSError, ValueError):
        return ""
    token = saved.get("token") if isinstance(saved, dict) else None
    return token if isinstance(token, str) else ""


def ask(host: Host, raw: str, url: str, token: str, timeout: float) -> tuple[str | None, str]:
    """(the server's answer, "") or (None, why it could not be had)."""
    if not token:
        return (
            None,
            "HOOKBRIDGE_TOKEN is not set, and there is no local login's token (an agent token: "
            "`hookbridge token NAME`)",
        )
    request = urllib.request.Request(
        url.rstrip("/") + host.path,
        data=raw.encode(),
        method="POST",
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            text: str = response.read().decode()
    except urllib.error.HTTPError as exc:
        return None, f"the server refused the hook ({exc.code}: {_error_of(exc)})"
    except TimeoutError:
        return None, f"no decision within {timeout:g} s"
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        return None, f"cannot reach Hook Bridge at {url} ({reason})"
    try:
        json.loads(text)
    except ValueError:
        return None, "the server's answer is not JSON"
    return text, ""


def _error_of(exc: urllib.error.HTTPError) -> str:
    try:
        said = json.loads(exc.read().decode())
    except (ValueError, OSError):
        return str(exc.reason)
    return str(said.get("error") or said) if isinstance(said, dict) else str(said)
