"""Every agent host Hook Bridge serves, by name and by the path its hooks are POSTed to.

Adding a host is one module (hosts/<host>.py, a `Host`), its name here, its fixtures and its tests: the hook
endpoint, `hookbridge hook`, `register`/`unregister` and the cards read this table.
"""

from __future__ import annotations

from hosts.amp import AMP
from hosts.base import Host
from hosts.claude_code import CLAUDE_CODE
from hosts.cline import CLINE
from hosts.codex import CODEX
from hosts.copilot import COPILOT
from hosts.cursor import CURSOR
from hosts.gemini import GEMINI
from hosts.kiro import KIRO
from hosts.opencode import OPENCODE
from hosts.windsurf import WINDSURF

HOSTS: dict[str, Host] = {
    host.name: host for host in (CLAUDE_CODE, CODEX, GEMINI, COPILOT, OPENCODE, CURSOR, CLINE, AMP, WINDSURF, KIRO)
}
PATHS: dict[str, Host] = {host.path: host for host in HOSTS.values()}


def title(name: str) -> str:
    """A host's name as people call it ("Gemini CLI"); an unknown one as it is."""
    host = HOSTS.get(name)
    return host.title if host is not None else name
