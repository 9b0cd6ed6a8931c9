"""What this process keeps in memory about the calls waiting for a person (questions.asking).

None of it is shared between processes; all of it may be lost on a restart without losing
anything a user gave. Written by questions.asking only; others ask through its functions.
"""

from __future__ import annotations

import asyncio
import uuid
from collections import Counter
from typing import Any

# How many calls wait here: the re-read slice grows with the crowd (questions.asking.slice_for).
waiting_now = 0
# The questions those calls wait on (a question may have several): what a stopping worker
# marks as left, in one UPDATE, before its calls are cut.
waiting_on: Counter[uuid.UUID] = Counter()
# Those a stopping worker already marked, all at once; a call cut then marks its own only if missing here.
marked_on_shutdown: set[uuid.UUID] = set()
# Set when the server is going down (questions.asking.stopping): calls cancelled then leave their
# questions pending, so the agent re-attaches on another worker or after the restart.
shutting_down = asyncio.Event()
# Questions being written by a call that has not started waiting yet: a stopping worker
# waits for the write, so the question it leaves behind is marked as left too. A call takes its
# write out of here only once it is counted in waiting_on.
asks_in_flight: set[asyncio.Future[Any]] = set()
# Calls waiting for a person, per token id, every way of asking: HOOKBRIDGE_MAX_WAITING_PER_TOKEN.
waiting_per_token: Counter[int] = Counter()
# Asks handed to the database thread and not written yet, per token id: HOOKBRIDGE_QUEUED_ASKS_PER_TOKEN.
queued_asks_per_token: Counter[int] = Counter()
# Asks per token id, new ones and re-asks alike (core.limits.Bucket): HOOKBRIDGE_QUESTIONS_PER_MINUTE here.
asks_per_token: dict[int, Any] = {}
