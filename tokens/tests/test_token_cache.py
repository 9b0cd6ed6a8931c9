"""tokens.cache: a token this process knows costs no query; a change to its row is heard at once."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from channels.layers import get_channel_layer
from django.test import Client
from django.utils import timezone

from core import limits
from core import runtime as core_runtime
from tokens import auth, cache, runtime
from tokens.models import AgentToken, Scope, digest

pytestmark = [pytest.mark.django_db(transaction=True)]


@pytest.fixture
async def reads(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[list[str]]:
    """Each database read of a token, and a listener ready to hear changes."""
    seen: list[str] = []
    authenticate = AgentToken.authenticate

    def counting(raw: str) -> AgentToken | None:
        seen.append(raw)
        return authenticate(raw)

    monkeypatch.setattr(AgentToken, "authenticate", counting)
    cache.ensure_listening()
    for _ in range(100):
        if runtime.token_listener_ready:
            break
        await asyncio.sleep(0.01)
    assert runtime.token_listener_ready
    yield seen
    core_runtime.background_tasks.pop(cache.TASK).cancel()
    runtime.token_cache.clear()


async def until(predicate: Any, timeout: float = 1.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        assert asyncio.get_running_loop().time() < deadline, "not within the time"
        await asyncio.sleep(0.01)


async def test_it_reads_a_known_token_once(reads: list[str]) -> None:
    token, raw = await sync_to_async(AgentToken.issue)("agent-a")
    assert (await cache.authenticate(raw)) == token
    assert (await cache.authenticate(raw)) == token
    assert reads == [raw]


async def test_it_does_not_keep_unknown_tokens(reads: list[str]) -> None:
    assert await cache.authenticate("hb_guess") is None
    assert await cache.authenticate("hb_guess") is None
    assert reads == ["hb_guess", "hb_guess"]
    assert runtime.token_cache == {}


async def test_a_revoked_token_is_refused_at_once(reads: list[str]) -> None:
    token, raw = await sync_to_async(AgentToken.issue)("agent-a")
    assert await cache.authenticate(raw) is not None
    await sync_to_async(token.revoke)()
    assert await cache.authenticate(raw) is None


async def test_another_process_revoking_a_token_is_heard_within_a_second(reads: list[str]) -> None:
    token, raw = await sync_to_async(AgentToken.issue)("agent-a")
    assert await cache.authenticate(raw) is not None
    # What another worker's revoke sends once it commits; this process's own row stays cached till then.
    await get_channel_layer().group_send(cache.GROUP, {"type": "token.changed", "digest": digest(raw)})
    await until(lambda: digest(raw) not in runtime.token_cache)
    await sync_to_async(AgentToken.objects.filter(pk=token.pk).update)(revoked_at=timezone.now())
    assert await cache.authenticate(raw) is None


async def test_an_expired_token_is_refused_without_a_message(reads: list[str]) -> None:
    _, raw = await sync_to_async(AgentToken.issue)("agent-a", expires_at=timezone.now() + timedelta(seconds=0.3))
    assert await cache.authenticate(raw) is not None
    await asyncio.sleep(0.4)
    assert await cache.authenticate(raw) is None


async def test_a_row_read_while_a_change_arrives_is_not_kept(reads: list[str]) -> None:
    token, raw = await sync_to_async(AgentToken.issue)("agent-a")
    runtime.token_changes_heard += 1  # as if the listener heard a change during the read below
    heard = runtime.token_changes_heard - 1
    cache._remember(digest(raw), token, heard)
    assert digest(raw) not in runtime.token_cache


async def test_while_nothing_can_be_heard_every_request_reads_the_database(reads: list[str]) -> None:
    token, raw = await sync_to_async(AgentToken.issue)("agent-a")
    runtime.token_listener_ready = False
    assert await cache.authenticate(raw) == token
    assert await cache.authenticate(raw) == token
    assert reads == [raw, raw]


def test_a_bucket_lets_a_burst_through_then_one_request_per_share_of_the_minute() -> None:
    buckets: dict[str, limits.Bucket] = {}
    assert [limits.take(buckets, "a", per_minute=60, burst=3, now=100.0) for _ in range(3)] == [0.0, 0.0, 0.0]
    assert limits.take(buckets, "a", per_minute=60, burst=3, now=100.0) == pytest.approx(1.0)
    assert limits.take(buckets, "b", per_minute=60, burst=3, now=100.0) == 0.0, "another key has its own"
    assert limits.take(buckets, "a", per_minute=60, burst=3, now=101.0) == 0.0, "a second later: one more"
    assert limits.take(buckets, "a", per_minute=60, burst=3, now=101.5) == pytest.approx(0.5)
    # Idle for long: the bucket fills to its burst, no further.
    assert [limits.take(buckets, "a", per_minute=60, burst=3, now=1000.0) for _ in range(4)][-1] > 0


@pytest.mark.django_db
def test_a_token_past_its_requests_a_minute_gets_429_naming_the_setting_and_another_token_does_not(
    client: Client, settings: Any
) -> None:
    # Bursts of 10, then one more every 10 s: at 60 a minute (one a second) a loaded machine's 13 requests took
    # long enough to earn the 13th back (CI saw a 200).
    settings.HOOKBRIDGE_REQUESTS_PER_MINUTE = 6
    _, flood = AgentToken.issue("flood-bot", scope=Scope.ANSWER)
    _, calm = AgentToken.issue("calm-bot", scope=Scope.ANSWER)
    statuses = [client.get("/api/questions", HTTP_AUTHORIZATION=f"Bearer {flood}").status_code for _ in range(12)]
    assert statuses[:10] == [200] * 10
    refused = client.get("/api/questions", HTTP_AUTHORIZATION=f"Bearer {flood}")
    assert refused.status_code == 429
    assert "HOOKBRIDGE_REQUESTS_PER_MINUTE=6" in refused.json()["error"]
    assert 1 <= int(refused["Retry-After"]) <= 10
    assert client.get("/api/questions", HTTP_AUTHORIZATION=f"Bearer {calm}").status_code == 200


def test_a_spent_allowance_says_how_long_to_wait_and_takes_nothing() -> None:
    buckets: dict[str, limits.Bucket] = {}
    assert limits.spent(buckets, "a", per_minute=60, now=100.0) == 0.0, "a key never seen may go"
    for _ in range(2):
        limits.take(buckets, "a", per_minute=60, burst=2, now=100.0)
    assert limits.spent(buckets, "a", per_minute=60, now=100.0) == pytest.approx(1.0)
    assert limits.spent(buckets, "a", per_minute=60, now=100.5) == pytest.approx(0.5)
    assert limits.spent(buckets, "a", per_minute=60, now=100.5) == pytest.approx(0.5), "asking twice took nothing"
    assert limits.spent(buckets, "a", per_minute=60, now=101.0) == 0.0
    assert limits.take(buckets, "a", per_minute=60, burst=2, now=101.0) == 0.0


async def test_a_refusal_is_held_a_second_but_only_a_few_per_token_at_once() -> None:
    """A flood that ignores Retry-After waits for its refusals; past the cap, they are sent at once."""
    held = [asyncio.create_task(auth.refuse_slowly(7)) for _ in range(auth.HELD_REFUSALS_PER_TOKEN)]
    await asyncio.sleep(0)
    assert runtime.held_refusals == {7: auth.HELD_REFUSALS_PER_TOKEN}
    past_the_cap = asyncio.create_task(auth.refuse_slowly(7))
    other_token = asyncio.create_task(auth.refuse_slowly(8))
    await asyncio.sleep(0)
    assert past_the_cap.done(), "past the cap: not held"
    assert not other_token.done(), "another token's refusal is held as usual"
    assert not any(task.done() for task in held)
    for task in [*held, other_token]:
        task.cancel()
    await asyncio.gather(*held, other_token, return_exceptions=True)
    assert runtime.held_refusals == {}, "every hold let go, cancelled or not"
