"""The old name of `register claude-code`: it still works, and says the new one."""

from __future__ import annotations

from hosts.management.setup import renamed

Command = renamed("register", "claude-code")
