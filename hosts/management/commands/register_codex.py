"""The old name of `register codex`: it still works, and says the new one."""

from __future__ import annotations

from hosts.management.setup import renamed

Command = renamed("register", "codex")
