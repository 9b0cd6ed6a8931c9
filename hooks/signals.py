"""What a hook run announces; sent on commit by hooks.models (core.signals)."""

from __future__ import annotations

from django.dispatch import Signal

# A run was recorded and holds its slot. Arguments: run_id.
run_started = Signal()
# A run planned its folders, one folder started or finished, or the run ended. Arguments: run_id.
run_changed = Signal()
