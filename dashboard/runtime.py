"""The dashboards open in this process, and what they were last sent (dashboard.consumers, dashboard.watcher)."""

from __future__ import annotations

# serve --open opens a browser only when this is 0 (and no other `serve` has one open); the
# watcher runs while it is above 0. Published to other processes by core.presence.
open_dashboards = 0
# What this process's dashboards were last sent (dashboard.watcher, on a layer no other
# process shares): the pending question ids, and (id, status, heartbeat) of the listed hook runs.
dashboard_pending_seen: set[str] = set()
dashboard_runs_seen: tuple[object, ...] = ()
