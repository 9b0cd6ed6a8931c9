"""channels_redis's core layer, with every channel of a process in one inbox.

channels_redis receives all of a process's channels ("<prefix>.<client>!<id>") under one
receive lock, and the task holding it waits on the Redis key of its own channel's prefix
only. Channels of two prefixes in one process (a dashboard's "specific.", a waiting
call's "hookbridge.wait.") therefore starve each other: while a dashboard's consumer held
the lock, no wake-up reached a call waiting in that worker until its re-read. Here every
process-local channel gets the same prefix, so whoever holds the lock pops everyone's
messages and hands each to its channel.

Connections are shared from a blocking pool: channels_redis's own pool raises
MaxConnectionsError once 100 are in use, and 2,000 calls joining their groups at
once failed thousands of times (each then fell back to re-reading its row). Here a
send past HOOKBRIDGE_REDIS_MAX_CONNECTIONS waits its turn for a connection instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from channels_redis.core import RedisChannelLayer as CoreLayer
from django.conf import settings
from redis.asyncio import BlockingConnectionPool

from core.compat.channels_layers import group_key, host_of

PREFIX = "specific"
# How long a send waits for a free connection before it fails (and its caller falls back to re-reading).
POOL_WAIT_SECONDS = 20.0


class RedisChannelLayer(CoreLayer):  # type: ignore[misc]
    async def new_channel(self, prefix: str = PREFIX) -> str:
        return str(await super().new_channel(PREFIX))

    def create_pool(self, index: int) -> Any:
        host = dict(self.hosts[index])
        if "address" not in host:  # a Sentinel set-up: channels_redis's own pool
            return super().create_pool(index)
        address = host.pop("address")
        return BlockingConnectionPool.from_url(
            address, max_connections=settings.HOOKBRIDGE_REDIS_MAX_CONNECTIONS, timeout=POOL_WAIT_SECONDS, **host
        )

    async def group_discard_many(self, memberships: Sequence[tuple[str, str]]) -> None:
        """Leave many groups in one round trip per Redis host (core.layer_groups.leave)."""
        by_host: dict[int, list[tuple[bytes, str]]] = {}
        for group, channel in memberships:
            assert self.require_valid_group_name(group), "Group name not valid"
            assert self.require_valid_channel_name(channel), "Channel name not valid"
            by_host.setdefault(host_of(self, group), []).append((group_key(self, group), channel))
        for index, keys in by_host.items():
            async with self.connection(index).pipeline(transaction=False) as pipe:
                for key, channel in keys:
                    pipe.zrem(key, channel)
                await pipe.execute()
