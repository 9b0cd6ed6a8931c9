"""What lifecycle models announce; sent on commit (core.signals), pushed by lifecycle.live."""

from __future__ import annotations

from django.dispatch import Signal

# A lifecycle event (MAXSIM) was recorded. Arguments: event (the LifecycleEvent).
event_recorded = Signal()
# A session's own event (progress channel) was recorded. Arguments: event_id.
session_event_recorded = Signal()
# A session was opened, closed, or something on it changed. Arguments: guid, and change: "opened", "closed"
# or absent (something else: a question of the session).
session_changed = Signal()
