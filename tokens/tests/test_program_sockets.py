"""Who may open the program WebSockets (/ws/sessions/<guid>/, /ws/<guid>, /ws/events/), through the whole ASGI stack."""

from __future__ import annotations

import json

import pytest
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator

from hookbridge_site.asgi import application
from lifecycle.models import AgentSession
from tokens.models import AgentToken, Scope

pytestmark = [pytest.mark.django_db(transaction=True)]


@database_sync_to_async
def tokens_and_session() -> tuple[str, str, str, str]:
    owner, owner_raw = AgentToken.issue("agent-a")
    _, other_raw = AgentToken.issue("agent-b")
    _, bot_raw = AgentToken.issue("answer-bot", scope=Scope.ANSWER)
    session = AgentSession.open(token=owner, name="Run")
    return owner_raw, other_raw, bot_raw, str(session.guid)


def socket(path: str, *, header: str | None = None, protocols: list[str] | None = None) -> WebsocketCommunicator:
    headers = [(b"host", b"127.0.0.1")]
    if header is not None:
        headers.append((b"authorization", header.encode()))
    return WebsocketCommunicator(application, path, headers=headers, subprotocols=protocols or [])


async def close_code(communicator: WebsocketCommunicator) -> int | None:
    connected, code = await communicator.connect()
    if connected:
        await communicator.disconnect()
        return None
    return int(code) if code is not None else None


@pytest.mark.parametrize("path", ["/ws/sessions/{guid}/", "/ws/{guid}"])
async def test_the_token_that_opened_a_session_may_watch_it(path: str) -> None:
    owner, _, _, guid = await tokens_and_session()
    communicator = socket(path.format(guid=guid), header=f"Bearer {owner}")
    connected, _ = await communicator.connect()
    assert connected
    await communicator.disconnect()


@pytest.mark.parametrize("path", ["/ws/sessions/{guid}/", "/ws/{guid}"])
async def test_another_agents_token_is_refused_as_if_the_session_did_not_exist(path: str) -> None:
    _, other, _, guid = await tokens_and_session()
    assert await close_code(socket(path.format(guid=guid), header=f"Bearer {other}")) == 4404


async def test_an_answering_token_may_watch_any_session() -> None:
    _, _, bot, guid = await tokens_and_session()
    communicator = socket(f"/ws/{guid}", header=f"Bearer {bot}")
    connected, _ = await communicator.connect()
    assert connected
    await communicator.disconnect()


@pytest.mark.parametrize("header", ["Bearer hb_not-a-token", "Bearer ", "Basic dXNlcjpwdw=="])
async def test_an_unknown_or_malformed_credential_is_refused(header: str) -> None:
    _, _, _, guid = await tokens_and_session()
    assert await close_code(socket(f"/ws/{guid}", header=header)) == 4401


async def test_browser_code_authenticates_with_subprotocols_and_never_gets_the_token_echoed() -> None:
    _, _, bot, guid = await tokens_and_session()
    communicator = socket(f"/ws/sessions/{guid}/", protocols=["hookbridge", f"bearer.{bot}"])
    connected, subprotocol = await communicator.connect()
    assert connected
    assert subprotocol == "hookbridge"
    await communicator.disconnect()


async def test_without_a_token_or_a_login_the_socket_is_refused() -> None:
    _, _, _, guid = await tokens_and_session()
    connected, _ = await socket(f"/ws/{guid}").connect()
    assert not connected


async def test_the_event_stream_takes_answering_tokens_only() -> None:
    owner, _, bot, _ = await tokens_and_session()
    assert await close_code(socket("/ws/events/", header=f"Bearer {owner}")) == 4403
    communicator = socket("/ws/events/", header=f"Bearer {bot}")
    connected, _ = await communicator.connect()
    assert connected
    first = json.loads(await communicator.receive_from())
    assert first["type"] == "questions-queued"
    assert first["questions"] == []
    await communicator.disconnect()


async def test_a_token_cannot_open_the_dashboards_html_socket() -> None:
    _, _, bot, _ = await tokens_and_session()
    assert await close_code(socket("/ws/dashboard/", header=f"Bearer {bot}")) == 4401
