"""Named tool sets; the /mcp path picks which ones a client sees (/mcp/askme+clifford)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any

from mcpapi.toolsets import askme, clifford, maxsim, progress

TOOLSETS: dict[str, ModuleType] = {"maxsim": maxsim, "askme": askme, "clifford": clifford, "progress": progress}


class UnknownToolset(ValueError):
    def __init__(self, names: Iterable[str]) -> None:
        self.names = sorted(names)
        super().__init__(
            f"unknown tool set {', '.join(repr(n) for n in self.names)}; known sets: {', '.join(TOOLSETS)}"
        )


def parse(spec: str) -> tuple[str, ...]:
    """'askme+clifford' -> ('askme', 'clifford'), in a canonical order; raises UnknownToolset."""
    names = [name.strip() for name in spec.replace(",", "+").split("+") if name.strip()]
    unknown = [name for name in names if name not in TOOLSETS]
    if unknown or not names:
        raise UnknownToolset(unknown or [spec])
    return tuple(name for name in TOOLSETS if name in names)


def _named(entries: Iterable[Any]) -> list[tuple[str, Callable[..., Any]]]:
    return [entry if isinstance(entry, tuple) else (entry.__name__, entry) for entry in entries]


def tools(sets: Iterable[str]) -> list[tuple[str, Callable[..., Any]]]:
    return [entry for name in sets for entry in _named(TOOLSETS[name].TOOLS)]


def prompts(sets: Iterable[str]) -> list[tuple[str, Callable[..., Any]]]:
    return [entry for name in sets for entry in _named(TOOLSETS[name].PROMPTS)]
