"""The channel layer a team server uses: Redis, configured so an idle wait is not mistaken for a dead server."""

from __future__ import annotations

from typing import Any

# channels_redis's core layer with one inbox per process (core/redis_layer.py says why);
# asking for channels_redis's own by name gets this one too.
CORE_LAYER = "core.redis_layer.RedisChannelLayer"
CHANNELS_REDIS_CORE = "channels_redis.core.RedisChannelLayer"

# How long a reply from Redis may take before the connection is given up. The core
# layer waits for messages with BZPOPMIN, which Redis answers after 5 s when nothing
# came; redis-py's own default read timeout is also 5 s, so a busy worker that read
# that empty answer a moment late failed the wait: a dashboard's WebSocket closed
# with 1011 and waiting calls logged errors (found at 100 agents answered flat out).
REDIS_SOCKET_TIMEOUT = 15.0


def redis_channel_layer(url: str, backend: str = CORE_LAYER) -> dict[str, Any]:
    config: dict[str, Any] = {"hosts": [{"address": url, "socket_timeout": REDIS_SOCKET_TIMEOUT}]}
    if backend == CHANNELS_REDIS_CORE:
        backend = CORE_LAYER
    if backend == CORE_LAYER:
        # Capacity: the default 100 queued messages per channel overflowed under a burst.
        config.update(capacity=1000, expiry=60)
    return {"BACKEND": backend, "CONFIG": config}
