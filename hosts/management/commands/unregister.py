"""`manage.py unregister HOST`: take out exactly what `register HOST` wrote."""

from __future__ import annotations

from hosts.management.setup import HostCommand


class Command(HostCommand):
    help = "Take out exactly what `register HOST` wrote into an agent host's settings."
    verb = "unregister"
