"""The team server's Redis channel layer, as settings configure it, against the real Redis."""

from __future__ import annotations

import asyncio
import time
import uuid

import pytest
from django.utils.module_loading import import_string

from hookbridge_site.channel_layers import redis_channel_layer
from tests.team import REDIS_URL, require_team_services

pytestmark = [pytest.mark.team]


@pytest.mark.parametrize(
    "backend", ["channels_redis.core.RedisChannelLayer", "channels_redis.pubsub.RedisPubSubChannelLayer"]
)
async def test_an_idle_wait_survives_a_worker_busy_when_redis_says_nothing_came(backend: str) -> None:
    """Redis answers an empty wait after 5 s; a busy worker reads that a little late, and must not fail."""
    require_team_services()
    config = redis_channel_layer(REDIS_URL, backend)
    layer = import_string(config["BACKEND"])(**config["CONFIG"])
    channel = await layer.new_channel()
    waiting = asyncio.create_task(layer.receive(channel))
    await asyncio.sleep(4.8)
    time.sleep(0.6)  # noqa: ASYNC251 - on purpose: the worker's loop is busy (a render, a burst of requests) when the empty answer lands
    await asyncio.sleep(0.5)
    assert not waiting.done() or waiting.exception() is None, waiting.exception()
    message = {"type": "dashboard.html", "html": f"<p>{uuid.uuid4()}</p>"}
    await layer.send(channel, message)
    async with asyncio.timeout(10):
        assert await waiting == message
    await layer.flush()
