"""The team's rules and policies as this process compiled them (approvals.rules and approvals.policies)."""

from __future__ import annotations

from typing import Any

# Compiled once and re-read after a second (or at once, when this process saved a rule or a policy).
approval_rules: list[Any] | None = None
approval_rules_read_at = 0.0
approval_policies: list[Any] | None = None
approval_policies_read_at = 0.0
