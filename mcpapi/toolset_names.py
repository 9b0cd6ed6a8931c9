"""The tool sets' names, in the canonical order of a combined endpoint, and reading a list of them.

Apart from mcpapi.toolsets, which loads every set and with them the MCP SDK: the start-up check of
HOOKBRIDGE_DEFAULT_TOOLSETS needs only the names, and a `manage.py` command need not pay for the SDK.
mcpapi/tests/test_toolsets.py checks that the names are the sets'.
"""

from __future__ import annotations

from collections.abc import Iterable

NAMES = ("maxsim", "askme", "clifford", "progress", "hooks", "approvals")


class UnknownToolset(ValueError):
    def __init__(self, names: Iterable[str]) -> None:
        self.names = sorted(names)
        super().__init__(f"unknown tool set {', '.join(repr(n) for n in self.names)}; known sets: {', '.join(NAMES)}")


def parse(spec: str) -> tuple[str, ...]:
    """'askme+clifford' -> ('askme', 'clifford'), in a canonical order; raises UnknownToolset."""
    names = [name.strip() for name in spec.replace(",", "+").split("+") if name.strip()]
    unknown = [name for name in names if name not in NAMES]
    if unknown or not names:
        raise UnknownToolset(unknown or [spec])
    return tuple(name for name in NAMES if name in names)
