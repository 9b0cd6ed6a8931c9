"""What core/compat assumes of each library's internals: an upgrade that breaks one fails here first, by name."""

from __future__ import annotations

import asyncio
import inspect
import time
from typing import Any

import pytest
from asgiref.sync import async_to_sync
from channels.layers import InMemoryChannelLayer
from django.core.handlers.asgi import ASGIHandler
from mcp.server.mcpserver import MCPServer
from mcp.types import SetLevelRequestParams

from core.compat import anyio_tasks, asgiref, channels_layers, django_asgi, mcp_sdk
from core.redis_layer import RedisChannelLayer


def test_mcp_sdk_the_low_level_server_runs_streams_and_takes_request_handlers() -> None:
    server = MCPServer("compat")
    lowlevel = mcp_sdk.lowlevel(server)
    assert inspect.iscoroutinefunction(lowlevel.run)
    assert list(inspect.signature(lowlevel.run).parameters)[:3] == [
        "read_stream",
        "write_stream",
        "initialization_options",
    ]
    assert lowlevel.create_initialization_options().server_name == "compat"

    async def set_level(ctx: Any, params: SetLevelRequestParams) -> dict[str, Any]:
        return {}

    mcp_sdk.add_request_handler(server, "logging/setLevel", SetLevelRequestParams, set_level)
    assert "logging/setLevel" in str(lowlevel._request_handlers)


def test_mcp_sdk_prompts_are_found_by_name() -> None:
    server = MCPServer("compat")

    @server.prompt(name="review")
    def review(path: str) -> str:
        return f"Review {path}"

    found = mcp_sdk.prompt(server, "review")
    assert found is not None
    assert [(a.name, a.required) for a in found.arguments or []] == [("path", True)]
    assert mcp_sdk.prompt(server, "missing") is None
    assert mcp_sdk.prompt_names(server) == ["review"]


def test_asgiref_runs_the_hook_around_each_call_in_its_thread() -> None:
    seen: list[str] = []

    class Around(asgiref.AroundTheThread):
        def around(self) -> None:
            import threading

            seen.append(threading.current_thread().name)

    def work() -> str:
        import threading

        return threading.current_thread().name

    thread = asyncio.run(Around(work)())
    assert seen == [thread, thread]


def test_asgiref_has_one_shared_thread_for_thread_sensitive_calls() -> None:
    executor = asgiref.shared_sync_executor()
    assert executor._max_workers == 1
    assert asgiref.shared_sync_executor() is executor


def test_asgiref_tells_a_coroutine_under_async_to_sync() -> None:
    async def probe() -> bool:
        return asgiref.under_async_to_sync()

    assert async_to_sync(probe)() is True
    assert asyncio.run(probe()) is False


def test_django_asgi_handler_has_the_steps_handle_on_the_loop_calls() -> None:
    for step in ("read_body", "run_get_response", "send_response"):
        assert inspect.iscoroutinefunction(getattr(ASGIHandler, step)), step
    assert list(inspect.signature(ASGIHandler.create_request).parameters) == ["self", "scope", "body_file"]
    assert inspect.iscoroutinefunction(django_asgi.handle_on_the_loop)


@pytest.mark.django_db
def test_django_asgi_serves_a_request_on_the_loop() -> None:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {
        "type": "http",
        "method": "GET",
        "path": "/api/questions",
        "query_string": b"",
        "headers": [(b"host", b"127.0.0.1")],
        "server": ("127.0.0.1", 8000),
    }
    async_to_sync(django_asgi.handle_on_the_loop)(ASGIHandler(), scope, receive, send)
    assert sent[0]["type"] == "http.response.start"
    assert sent[0]["status"] == 401  # the API's answer without a token: the view ran
    assert sent[-1]["type"] == "http.response.body"


def test_channels_sweeps_expired_messages_at_most_once_a_second(monkeypatch: pytest.MonkeyPatch) -> None:
    sweeps: list[float] = []
    monkeypatch.setattr(InMemoryChannelLayer, "_clean_expired", lambda self: sweeps.append(1))
    layer = channels_layers.SweepingAtMostEvery()
    for _ in range(100):
        layer._clean_expired()
    assert sweeps == [1]
    layer._cleaned_at = time.monotonic() - layer.CLEAN_EVERY
    layer._clean_expired()
    assert sweeps == [1, 1]


async def test_channels_in_memory_layer_calls_the_sweep_on_receive(monkeypatch: pytest.MonkeyPatch) -> None:
    layer = channels_layers.SweepingAtMostEvery()
    swept: list[int] = []
    monkeypatch.setattr(layer, "_clean_expired", lambda: swept.append(1))
    channel = await layer.new_channel()
    await layer.send(channel, {"type": "x"})
    assert await layer.receive(channel) == {"type": "x"}
    assert swept, "InMemoryChannelLayer no longer sweeps through _clean_expired"


def test_channels_redis_names_a_groups_key_and_host() -> None:
    layer = RedisChannelLayer(hosts=[{"address": "redis://127.0.0.1:6379"}], prefix="asgi")
    assert channels_layers.group_key(layer, "question-1") == b"asgi:group:question-1"
    assert channels_layers.host_of(layer, "question-1") == 0


def test_daphne_a_send_on_a_closed_socket_raises_autobahns_disconnected() -> None:
    import daphne.server  # noqa: F401  (as in a daphne process: autobahn's framework is Twisted's)
    from autobahn.websocket.protocol import WebSocketProtocol

    from core.compat.daphne import SOCKET_CLOSED

    protocol = WebSocketProtocol()
    protocol.state = WebSocketProtocol.STATE_CLOSED
    with pytest.raises(SOCKET_CLOSED):
        protocol.sendMessage(b"a push after the page went away")  # type: ignore[no-untyped-call]


def test_anyio_task_handles_run_their_coroutine_and_keep_its_exception() -> None:
    from anyio._core._tasks import TaskHandle

    assert inspect.iscoroutinefunction(TaskHandle._run_coro)
    assert "_exception" in TaskHandle.__slots__


def test_anyio_a_cancelled_task_is_freed_without_the_cycle_collector() -> None:
    import gc
    import weakref

    import anyio

    anyio_tasks.free_cancelled_tasks()

    class Marker:
        pass

    held: list[weakref.ref[Marker]] = []

    async def wait_for_ever() -> None:
        marker = Marker()
        held.append(weakref.ref(marker))
        await anyio.sleep_forever()

    async def hang_up() -> None:
        async with anyio.create_task_group() as group:
            group.start_soon(wait_for_ever)
            await anyio.sleep(0.01)
            group.cancel_scope.cancel()

    gc.collect()
    gc.disable()  # only reference counting may free it
    try:
        anyio.run(hang_up)
        assert len(held) == 1
        assert held[0]() is None
    finally:
        gc.enable()
