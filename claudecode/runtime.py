"""The team's approval rules as this process compiled them (claudecode.policy writes and reads it)."""

from __future__ import annotations

from typing import Any

# Compiled once and re-read after a second (or at once, when this process saved a rule).
approval_rules: list[Any] | None = None
approval_rules_read_at = 0.0
