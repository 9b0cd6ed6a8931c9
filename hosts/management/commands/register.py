"""`manage.py register HOST`: write Hook Bridge's hooks and MCP server into an agent host's settings."""

from __future__ import annotations

from hosts.management.setup import HostCommand


class Command(HostCommand):
    help = "Write Hook Bridge's hooks and MCP server into an agent host's settings (`register HOST --help`)."
    verb = "register"
