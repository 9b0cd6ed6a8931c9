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
