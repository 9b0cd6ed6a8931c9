"""Channels' in-memory layer and channels_redis's core layer, where we reach past their public API.

- `SweepingAtMostEvery`: InMemoryChannelLayer sweeps every channel and group for expired
  messages at every receive (`_clean_expired`), O(n²) with thousands of calls waiting;
  core.local_layer sweeps at most once a second.
- `group_key` / `host_of`: channels_redis leaves a group with one command per call; core.redis_layer
  leaves many in one pipeline, so it needs the group's key and the index of the Redis host it lives on.
"""

from __future__ import annotations

import time
from typing import Any

from channels.layers import InMemoryChannelLayer


class SweepingAtMostEvery(InMemoryChannelLayer):  # type: ignore[misc]  # channels ships no type hints
    CLEAN_EVERY = 1.0

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._cleaned_at = 0.0

    def _clean_expired(self) -> None:
        now = time.monotonic()
        if now - self._cleaned_at >= self.CLEAN_EVERY:
            self._cleaned_at = now
            super()._clean_expired()


def group_key(layer: Any, group: str) -> bytes:
    key: bytes = layer._group_key(group)
    return key


def host_of(layer: Any, group: str) -> int:
    index: int = layer.consistent_hash(group)
    return index
