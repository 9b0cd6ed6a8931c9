"""Bearer tokens checked lately, in this process (tokens.cache writes and reads it; nobody else)."""

from __future__ import annotations

from typing import Any

# digest -> (the token's row, when it was read: monotonic seconds). Trusted only while this
# process hears token changes on the channel layer (token_listener_ready).
token_cache: dict[str, tuple[Any, float]] = {}
token_listener_ready = False
# How many changes the listener has heard: a row read across a change is not cached.
token_changes_heard = 0
