"""Where daphne listens: a TCP endpoint whose listen backlog takes a crowd of agents arriving at once.

Daphne's -b/-p give Twisted's default backlog of 50 connections waiting to be accepted. A thousand
agents connecting at once (a worker restarted, a network back) overflowed it and connections were
reset before any response (bench/agents.py: 144 of 1,000). The kernel caps the figure at
net.core.somaxconn (4,096 on current Linux).
"""

from __future__ import annotations

from daphne.endpoints import build_endpoint_description_strings

LISTEN_BACKLOG = 1024


def endpoint(host: str, port: int, backlog: int = LISTEN_BACKLOG) -> str:
    """A Twisted endpoint string for daphne's -e option."""
    (tcp,) = build_endpoint_description_strings(host=host, port=port)
    return f"{tcp}:backlog={backlog}"
