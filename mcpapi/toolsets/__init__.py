"""Named tool sets; the /mcp path picks which ones a client sees (/mcp/askme+clifford)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from types import ModuleType
from typing import Any

from mcpapi.toolsets import approvals, askme, clifford, hooks, maxsim, progress
from mcpapi.toolsets.entries import ToolEntry

TOOLSETS: dict[str, ModuleType] = {
    "maxsim": maxsim,
    "askme": askme,
    "clifford": clifford,
    "progress": progress,
    "hooks": hooks,
    "approvals": approvals,
}


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


def _entries(module: ModuleType) -> list[ToolEntry]:
    # A set with a tools() function finds its tools at run time (hooks: from the plugins folder).
    found = module.tools() if hasattr(module, "tools") else module.TOOLS
    return [ToolEntry.of(entry) for entry in found]


def tools(sets: Iterable[str]) -> list[ToolEntry]:
    return [entry for name in sets for entry in _entries(TOOLSETS[name])]


def builtin_tool_names() -> frozenset[str]:
    """Names of the tools the fixed sets define: a hook may not take one."""
    return frozenset(
        ToolEntry.of(entry).name for module in TOOLSETS.values() if hasattr(module, "TOOLS") for entry in module.TOOLS
    )


def server_name(sets: Iterable[str]) -> str:
    """How the server introduces itself: a single set keeps its original's name, if it had its own."""
    sets = tuple(sets)
    if len(sets) == 1:
        return str(getattr(TOOLSETS[sets[0]], "SERVER_NAME", "hookbridge"))
    return "hookbridge"


def instructions(sets: Iterable[str]) -> str:
    """What the server tells an agent at initialize: each set's own sentence, naming only its tools.

    How to keep waiting on a pending question depends on what the endpoint serves: a
    set without wait_for_answer (askme, clifford) repeats the same call.
    """
    sets = tuple(sets)
    parts = ["Hook Bridge connects you to the people on your team."]
    parts += [TOOLSETS[name].INSTRUCTIONS for name in sets]
    if any(TOOLSETS[name].ASKS for name in sets):
        if any(entry.name == "wait_for_answer" for entry in tools(sets)):
            parts.append("If a result has status 'pending', call wait_for_answer with its questionId to keep waiting.")
        else:
            parts.append(
                "If a result has status 'pending', call the same tool again with the same arguments to keep "
                "waiting: it picks up the same question."
            )
        parts.append("Nothing is lost while you wait, or if your call ends before a person answers.")
    return " ".join(parts)


def prompts(sets: Iterable[str]) -> list[tuple[str, Callable[..., Any]]]:
    return [entry for name in sets for entry in _named(TOOLSETS[name].PROMPTS)]
