"""An approval's decision, as the hosts read it: {"behavior": "allow", …} or {"behavior": "deny", "message": …}.

One value type for everything that makes or reads one: the approval kind's form and parser, Slack's buttons
(notify), the team's rules and Claude Code's hooks (hosts), and the permission-prompt tool (mcpapi).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

Behavior = Literal["allow", "deny"]


@dataclass(frozen=True)
class Decision:
    behavior: Behavior
    message: str = ""  # a denial's reason, which the agent reads
    updated_input: dict[str, Any] | None = None  # an allow with the tool's input changed
    updated_permissions: list[Any] | None = None  # an allow that also keeps a rule the host suggested

    @classmethod
    def allow(
        cls, *, updated_input: dict[str, Any] | None = None, updated_permissions: list[Any] | None = None
    ) -> Decision:
        return cls("allow", updated_input=updated_input, updated_permissions=updated_permissions)

    @classmethod
    def deny(cls, message: str) -> Decision:
        return cls("deny", message=message)

    @classmethod
    def of(cls, data: Mapping[str, Any] | None) -> Decision | None:
        """The decision a stored or received dict holds; None when it holds none (no behavior we know)."""
        if not data or data.get("behavior") not in ("allow", "deny"):
            return None
        if data["behavior"] == "deny":
            return cls.deny(str(data.get("message") or ""))
        return cls.allow(updated_input=data.get("updatedInput"), updated_permissions=data.get("updatedPermissions"))

    @property
    def allowed(self) -> bool:
        return self.behavior == "allow"

    def as_dict(self) -> dict[str, Any]:
        """As the host reads it (and as the answer stores it)."""
        if self.behavior == "deny":
            return {"behavior": "deny", "message": self.message}
        decision: dict[str, Any] = {"behavior": "allow"}
        if self.updated_input is not None:
            decision["updatedInput"] = self.updated_input
        if self.updated_permissions is not None:
            decision["updatedPermissions"] = self.updated_permissions
        return decision
