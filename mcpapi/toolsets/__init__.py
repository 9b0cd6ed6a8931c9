"""Named tool sets; the /mcp path picks which ones a client sees (/mcp/askme+clifford)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

# Reading a list of sets needs only their names (mcpapi.toolset_names); callers read it here too.
from mcpapi.toolset_names import UnknownToolset as UnknownToolset
from mcpapi.toolset_names import parse as parse
from mcpapi.toolsets import approvals, askme, clifford, hooks, maxsim, progress
from mcpapi.toolsets.entries import ToolEntry, Toolset

# Each module exports one typed Toolset; the order is the canonical order of a combined endpoint, the same as
# mcpapi.toolset_names.NAMES (mcpapi/tests/test_toolsets.py).
TOOLSETS: dict[str, Toolset] = {
    toolset.name: toolset
    for toolset in (maxsim.TOOLSET, askme.TOOLSET, clifford.TOOLSET, progress.TOOLSET, hooks.TOOLSET, approvals.TOOLSET)
}


def tools(sets: Iterable[str]) -> list[ToolEntry]:
    return [entry for name in sets for entry in TOOLSETS[name].entries()]


def asking_tool_names(sets: Iterable[str]) -> frozenset[str]:
    """The tools among `sets` that put a question to a person."""
    return frozenset().union(*(TOOLSETS[name].asking for name in sets))


def builtin_tool_names() -> frozenset[str]:
    """Names of the tools the fixed sets define: a hook may not take one."""
    return frozenset(entry.name for toolset in TOOLSETS.values() if toolset.fixed for entry in toolset.entries())


def server_name(sets: Iterable[str]) -> str:
    """How the server introduces itself: a single set keeps its original's name, if it had its own."""
    sets = tuple(sets)
    return TOOLSETS[sets[0]].server_name if len(sets) == 1 else "hookbridge"


# What a set's sentence says of an asking tool's wait ("{waits}" / "{wait}"), by HOOKBRIDGE_TASKS: with tasks
# on, a question may come back at once as a task, so "blocks" would be false (issue 55, point 12).
WAITS = {"off": ("blocks until", "block until"), "tasks": ("waits until", "wait until")}
TASKS_SENTENCE = {
    "auto": (
        "If your client supports MCP tasks (io.modelcontextprotocol/tasks), a question comes back at once as a "
        "task instead: go on working and poll tasks/get; when a person answers, the task completes and its result "
        "is the answer."
    ),
    "allowed": (
        "Pass background: true to ask in the background, if your client supports MCP tasks (a token the team lets "
        "ask in the background always does): the call returns a task at once, you go on working and poll "
        "tasks/get, and the answer comes as the task's result."
    ),
}


def instructions(sets: Iterable[str], tasks: str = "off") -> str:
    """What the server tells an agent at initialize: each set's own sentence, naming only its tools.

    How to keep waiting on a pending question depends on what the endpoint serves: a
    set without wait_for_answer (askme, clifford) repeats the same call. `tasks`: HOOKBRIDGE_TASKS, which
    says whether a question may come back as a task (approvals never do).
    """
    sets = tuple(sets)
    waits, wait = WAITS["off" if tasks == "off" else "tasks"]
    parts = ["Hook Bridge connects you to the people on your team."]
    parts += [TOOLSETS[name].instructions.format(waits=waits, wait=wait) for name in sets]
    # Approvals stay synchronous gates: they never come back as tasks.
    if any(TOOLSETS[name].asking for name in sets if name != "approvals") and tasks in TASKS_SENTENCE:
        parts.append(TASKS_SENTENCE[tasks])
    if any(TOOLSETS[name].asks for name in sets):
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
    return [entry for name in sets for entry in TOOLSETS[name].named_prompts()]
