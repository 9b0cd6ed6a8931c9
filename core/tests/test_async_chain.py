"""Under ASGI the middleware chain runs on the event loop: a request leaves it only for its view's database work."""

from __future__ import annotations

from typing import Any

import pytest
from asgiref.sync import SyncToAsync, iscoroutinefunction
from channels.testing import HttpCommunicator
from django.core.handlers.asgi import ASGIHandler
from django.core.handlers.base import BaseHandler

from tokens.models import AgentToken, Scope

pytestmark = [pytest.mark.django_db(transaction=True)]


def test_django_adapts_nothing_in_the_asgi_chain(monkeypatch: pytest.MonkeyPatch) -> None:
    # A sync-only middleware (WhiteNoise's) makes Django wrap everything below it in
    # sync_to_async; a sync process_view (Django's CSRF) is wrapped on its own.
    adapted: list[str] = []
    adapt = BaseHandler.adapt_method_mode

    def spy(self: BaseHandler, is_async: bool, method: Any, *args: Any, **kwargs: Any) -> Any:
        result = adapt(self, is_async, method, *args, **kwargs)
        if result is not method:
            adapted.append(str(kwargs.get("name") or getattr(method, "__qualname__", repr(method))))
        return result

    monkeypatch.setattr(BaseHandler, "adapt_method_mode", spy)
    handler: Any = ASGIHandler()
    assert adapted == []
    assert iscoroutinefunction(handler._middleware_chain)
    assert all(iscoroutinefunction(process_view) for process_view in handler._view_middleware)


@pytest.fixture
def hops(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The name of every function run through sync_to_async (and database_sync_to_async) meanwhile."""
    seen: list[str] = []
    call = SyncToAsync.__call__

    async def counting(self: SyncToAsync[Any, Any], *args: Any, **kwargs: Any) -> Any:
        seen.append(getattr(self.func, "__qualname__", repr(self.func)))
        return await call(self, *args, **kwargs)

    monkeypatch.setattr(SyncToAsync, "__call__", counting)
    return seen


async def get(app: ASGIHandler, path: str, raw_token: str) -> tuple[int, bytes]:
    headers = [(b"authorization", f"Bearer {raw_token}".encode()), (b"host", b"localhost")]
    response = await HttpCommunicator(app, "GET", path, headers=headers).get_response(timeout=10)
    return response["status"], response["body"]


async def test_an_api_request_leaves_the_loop_only_for_its_view(hops: list[str]) -> None:
    from asgiref.sync import sync_to_async

    _, raw = await sync_to_async(AgentToken.issue)("answer-bot", scope=Scope.ANSWER)
    app = ASGIHandler()
    assert (await get(app, "/api/questions", raw))[0] == 200  # reads the token; the cache keeps it
    hops.clear()

    status, body = await get(app, "/api/questions", raw)
    assert status == 200, body
    in_the_chain = [name for name in hops if "process_" in name or "Middleware" in name]
    assert in_the_chain == []
    assert hops.count("question_list") == 1
    # What is left is Django's own: the request_started receivers and closing the response.
    assert len(hops) <= 3, hops


async def test_a_refused_token_is_answered_without_leaving_the_loop_for_a_view(hops: list[str]) -> None:
    app = ASGIHandler()
    status, _ = await get(app, "/api/questions", "hb_not-a-token")
    assert status == 401
    assert "question_list" not in hops


async def test_api_requests_keep_one_database_connection_between_them() -> None:
    # Django gives each request a thread of its own, which opened (and closed) a SQLite
    # connection every time; the token-API views run on the shared database thread instead.
    from asgiref.sync import sync_to_async
    from django.db.backends.signals import connection_created

    _, raw = await sync_to_async(AgentToken.issue)("answer-bot", scope=Scope.ANSWER)
    app = ASGIHandler()
    assert (await get(app, "/api/questions", raw))[0] == 200
    opened: list[object] = []

    def note(sender: Any, connection: Any, **kwargs: Any) -> None:
        opened.append(connection)

    connection_created.connect(note)
    try:
        for _ in range(3):
            assert (await get(app, "/api/questions", raw))[0] == 200
    finally:
        connection_created.disconnect(note)
    assert opened == []


async def test_the_sites_handler_serves_an_api_request_without_a_thread_of_its_own(
    hops: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Django starts (and joins) a thread per request for the request_started/finished receivers;
    # a token-API view needs neither: its database work is one hop to the database thread.
    import threading

    from asgiref.sync import sync_to_async

    from core.asgi_handler import HookBridgeASGIHandler

    _, raw = await sync_to_async(AgentToken.issue)("answer-bot", scope=Scope.ANSWER)
    app = HookBridgeASGIHandler()
    assert (await get(app, "/api/questions", raw))[0] == 200
    started: list[str] = []
    start = threading.Thread.start

    def counting_start(self: threading.Thread) -> None:
        started.append(self.name)
        start(self)

    monkeypatch.setattr(threading.Thread, "start", counting_start)
    hops.clear()

    status, body = await get(app, "/api/questions", raw)
    assert status == 200, body
    assert hops == ["question_list"]
    assert started == []
    # Any other page still goes through Django's handler, receivers and all.
    assert (await get(app, "/accounts/login/", raw))[0] == 200
    assert "question_list" not in hops[1:]
    assert len(hops) > 1


def test_a_worker_switches_threads_often_enough_for_its_loop_to_send_a_woken_answer() -> None:
    # At Python's default 5 ms, a thread rendering pages kept the loop from answering the agent.
    import sys

    import hookbridge_site.asgi  # noqa: F401  (the worker's entry point)
    from core import runtime

    assert sys.getswitchinterval() == pytest.approx(runtime.SWITCH_INTERVAL)
    assert runtime.SWITCH_INTERVAL <= 0.001
