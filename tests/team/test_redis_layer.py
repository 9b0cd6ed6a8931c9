"""The team server's Redis channel layer, as settings configure it, against the real Redis."""

from __future__ import annotations

import asyncio
import time
import uuid

import channels.layers
import pytest
from django.utils.module_loading import import_string

from core import layer_groups
from core.channel_layers import redis_channel_layer
from testing.team import REDIS_URL, require_team_services


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


async def test_channels_of_two_prefixes_in_one_process_both_get_their_messages() -> None:
    """A dashboard's channel ("specific.") and a waiting call's ("hookbridge.wait.") in one worker."""
    require_team_services()
    config = redis_channel_layer(REDIS_URL, "channels_redis.core.RedisChannelLayer")
    layer = import_string(config["BACKEND"])(**config["CONFIG"])
    page, call = await layer.new_channel(), await layer.new_channel("hookbridge.wait")
    watching = asyncio.create_task(layer.receive(page))  # the first receiver holds the receive lock
    await asyncio.sleep(0.2)
    waiting = asyncio.create_task(layer.receive(call))
    await asyncio.sleep(0.2)
    await layer.send(call, {"type": "question.resolved"})
    async with asyncio.timeout(3):  # channels_redis's own layer: never, the page's receiver holds the lock
        assert await waiting == {"type": "question.resolved"}
    await layer.send(page, {"type": "dashboard.html", "html": "<p>still here</p>"})
    async with asyncio.timeout(3):
        assert (await watching)["html"] == "<p>still here</p>"
    await layer.flush()


async def test_far_more_joins_at_once_than_the_pool_has_connections_all_succeed(settings: object) -> None:
    """2,000 calls joining their groups at once: channels_redis's own pool raised MaxConnectionsError past 100."""
    require_team_services()
    settings.HOOKBRIDGE_REDIS_MAX_CONNECTIONS = 10  # type: ignore[attr-defined]
    config = redis_channel_layer(REDIS_URL, "channels_redis.core.RedisChannelLayer")
    layer = import_string(config["BACKEND"])(**config["CONFIG"])
    channels = [await layer.new_channel("hookbridge.wait") for _ in range(500)]
    results = await asyncio.gather(
        *(layer.group_add(f"g{n}", channel) for n, channel in enumerate(channels)), return_exceptions=True
    )
    assert [r for r in results if isinstance(r, BaseException)] == []
    pool = layer.connection(0).connection_pool
    assert pool.max_connections == 10
    assert len(pool._in_use_connections) + len(pool._available_connections) <= 10
    await layer.flush()


async def test_calls_hanging_up_at_once_leave_their_groups_in_one_pipeline(settings: object) -> None:
    """5,000 calls hung up at once, one ZREM each, ran the pool dry and logged tracebacks past its wait."""
    require_team_services()
    config = redis_channel_layer(REDIS_URL, "channels_redis.core.RedisChannelLayer")
    layer = import_string(config["BACKEND"])(**config["CONFIG"])
    channels.layers.channel_layers.set("default", layer)
    try:
        calls = [await layer.new_channel("hookbridge.wait") for _ in range(1000)]
        groups = {channel: (f"question-{uuid.uuid4().hex}", f"call-{uuid.uuid4().hex}") for channel in calls}
        for channel, (question, call) in groups.items():
            await layer.group_add(question, channel)
            await layer.group_add(call, channel)
        await layer.connection(0).connection_pool.disconnect()

        await asyncio.gather(*(layer_groups.leave(groups[channel], channel) for channel in calls))

        pool = layer.connection(0).connection_pool
        assert len(pool._in_use_connections) + len(pool._available_connections) == 1
        redis = layer.connection(0)
        sizes = [await redis.zcard(layer._group_key(group)) for pair in groups.values() for group in pair]
        assert sizes == [0] * 2000
    finally:
        await layer.flush()
        channels.layers.channel_layers.backends.pop("default", None)
