"""How big one message the server sends may be, and fitting lists into it.

Daphne's WebSocket layer (autobahn) refuses a frame over 1 MiB and closes the socket with
1011; the dashboard then reconnected, was sent the same state, and failed forever. So no
message is over MAX_MESSAGE_BYTES: long lists go a page at a time, and one item too large
for a page is cut down by its owner (a card shows its start and a link).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar

MAX_MESSAGE_BYTES = 512 * 1024
# What the first state of a page or a stream may spend on its list, leaving room for the rest of it.
LIST_BUDGET_BYTES = 384 * 1024

T = TypeVar("T")
K = TypeVar("K", bound=Hashable)


def size_of(text: str) -> int:
    return len(text.encode())


def fit(items: Iterable[T], render: Callable[[T], str], *, budget: int = LIST_BUDGET_BYTES) -> tuple[list[str], int]:
    """Render items in order until the next would pass `budget` bytes: (what fits, how many items it took).

    The first item always goes in (its owner keeps it under the budget), so a page is never empty.
    """
    rendered: list[str] = []
    used = 0
    for item in items:
        text = render(item)
        size = size_of(text)
        if rendered and used + size > budget:
            break
        rendered.append(text)
        used += size
    return rendered, len(rendered)


def with_list(head: str, key: str, rendered: list[str]) -> str:
    """The JSON object `head` (as text) with `key` set to the list of items `fit` rendered, each serialised once."""
    separator = "" if head == "{}" else ", "
    return f'{head[:-1]}{separator}"{key}": [{", ".join(rendered)}]}}'


class OverLimit(Exception):
    """A caller already holds as many of something as a setting allows; the message names the setting."""


@contextmanager
def holding(counter: Counter[K], key: K, *, limit: int, what: str, setting: str) -> Iterator[None]:
    """Count one more `what` for `key` while the block runs, or raise OverLimit if it has `limit` already.

    Per process, in this process's own counter: one agent flooding a worker must not stall the others
    there (2,000 calls from one token exhausted a worker's Redis pool and kept /mcp unanswered).
    """
    if counter[key] >= limit:
        raise OverLimit(
            f"too many {what}: {limit} are open already on this server, the most one may hold "
            f"({setting}={limit}); let some finish, or raise {setting}"
        )
    counter[key] += 1
    try:
        yield
    finally:
        counter[key] -= 1
        if counter[key] <= 0:
            del counter[key]


@dataclass
class Bucket:
    """A token bucket: `level` requests may go now; it refills at the rate, up to the burst."""

    level: float
    at: float


def take(buckets: dict[K, Bucket], key: K, *, per_minute: int, burst: int, now: float | None = None) -> float:
    """One request of `key`'s allowance: 0.0 when it may go, else the seconds until it may.

    Per process, like `holding`: a refused request costs no query and no lock, so a flood is turned away
    before it reaches the database the other callers need.
    """
    now = time.monotonic() if now is None else now
    rate = per_minute / 60.0
    bucket = buckets.get(key)
    if bucket is None:
        bucket = buckets[key] = Bucket(level=float(burst), at=now)
    bucket.level = min(float(burst), bucket.level + (now - bucket.at) * rate)
    bucket.at = now
    if bucket.level >= 1.0:
        bucket.level -= 1.0
        return 0.0
    return (1.0 - bucket.level) / rate


def spent(buckets: dict[K, Bucket], key: K, *, per_minute: int, now: float | None = None) -> float:
    """The seconds until `key` may make its next request (0.0: it may now), taking nothing.

    For an edge that turns a request away before the work that would `take` begins.
    """
    bucket = buckets.get(key)
    if bucket is None:
        return 0.0
    now = time.monotonic() if now is None else now
    rate = per_minute / 60.0
    level = bucket.level + (now - bucket.at) * rate
    return 0.0 if level >= 1.0 else (1.0 - level) / rate
