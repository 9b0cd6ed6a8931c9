"""channels_redis's core layer, with every channel of a process in one inbox.

channels_redis receives all of a process's channels ("<prefix>.<client>!<id>") under one
receive lock, and the task holding it waits on the Redis key of its own channel's prefix
only. Channels of two prefixes in one process (a dashboard's "specific.", a waiting
call's "hookbridge.wait.") therefore starve each other: while a dashboard's consumer held
the lock, no wake-up reached a call waiting in that worker until its re-read. Here every
process-local channel gets the same prefix, so whoever holds the lock pops everyone's
messages and hands each to its channel.
"""

from __future__ import annotations

from channels_redis.core import RedisChannelLayer as CoreLayer

PREFIX = "specific"


class RedisChannelLayer(CoreLayer):  # type: ignore[misc]
    async def new_channel(self, prefix: str = PREFIX) -> str:
        return str(await super().new_channel(PREFIX))
