"""What a tool set hands the server for each tool."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mcp.types import ToolAnnotations


@dataclass(frozen=True)
class ToolEntry:
    """A tool: its function, and what the function's name and docstring cannot say."""

    name: str
    fn: Callable[..., Any]
    title: str | None = None
    description: str | None = None
    annotations: ToolAnnotations | None = None

    @classmethod
    def of(cls, entry: Any) -> ToolEntry:
        """A tool set's TOOLS entry: a function, (name, function), or a ToolEntry."""
        if isinstance(entry, ToolEntry):
            return entry
        if isinstance(entry, tuple):
            return cls(name=entry[0], fn=entry[1])
        return cls(name=entry.__name__, fn=entry)


ToolSource = Callable[..., Any] | tuple[str, Callable[..., Any]] | ToolEntry
PromptSource = Callable[..., Any] | tuple[str, Callable[..., Any]]


@dataclass(frozen=True)
class Toolset:
    """One tool set, as its module exports it (TOOLSET): its tools and prompts, and what it says of itself.

    `tools` is fixed, or a function that finds them at run time (the hooks set: from the plugins);
    `asks`: whether its tools wait for a person (the server then says how to keep waiting);
    `asking`: the tools that put a question (each draws on the token's HOOKBRIDGE_QUESTIONS_PER_MINUTE);
    `server_name`: what the original system called itself, for clients that key on it.
    """

    name: str
    instructions: str
    tools: tuple[ToolSource, ...] | Callable[[], list[ToolEntry]]
    prompts: tuple[PromptSource, ...] = ()
    asks: bool = False
    asking: frozenset[str] = frozenset()
    server_name: str = "hookbridge"

    @property
    def fixed(self) -> bool:
        return isinstance(self.tools, tuple)

    def entries(self) -> list[ToolEntry]:
        found = self.tools if isinstance(self.tools, tuple) else self.tools()
        return [ToolEntry.of(entry) for entry in found]

    def named_prompts(self) -> list[tuple[str, Callable[..., Any]]]:
        return [entry if isinstance(entry, tuple) else (entry.__name__, entry) for entry in self.prompts]
