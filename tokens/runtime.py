"""Bearer tokens checked lately, and each token's request allowance, in this process.

tokens.cache writes and reads the cache; tokens.auth the allowances and held refusals; nobody else either.
"""

from __future__ import annotations

from typing import Any

# digest -> (the token's row, when it was read: monotonic seconds). Trusted only while this
# process hears token changes on the channel layer (token_listener_ready).
token_cache: dict[str, tuple[Any, float]] = {}
token_listener_ready = False
# How many changes the listener has heard: a row read across a change is not cached.
token_changes_heard = 0

# token id -> its request allowance here (core.limits.Bucket): HOOKBRIDGE_REQUESTS_PER_MINUTE.
request_buckets: dict[int, Any] = {}
# token id -> how many of its refusals are being held before they are sent (tokens.auth.refuse_slowly).
held_refusals: dict[int, int] = {}
