"""serve --open: the question opened when nobody watches (HOOKBRIDGE_DEBUG: tests/e2e/test_debug_log.py)."""

from __future__ import annotations

import uuid
import webbrowser

import pytest
from django.test import override_settings

from dashboard import runtime
from mcpapi import asking
from questions.models import Question


@override_settings(HOOKBRIDGE_OPEN_BROWSER=True, HOOKBRIDGE_PUBLIC_URL="http://127.0.0.1:8123")
async def test_it_opens_the_question_when_nobody_is_watching(monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[str] = []

    def fake_open(url: str) -> bool:
        opened.append(url)
        return True

    monkeypatch.setattr(webbrowser, "open", fake_open)
    question = Question(pk=uuid.uuid4())
    assert await asking.open_dashboard_if_unwatched(question) is None
    assert opened == [f"http://127.0.0.1:8123/questions/{question.pk}/"]

    monkeypatch.setattr(runtime, "open_dashboards", 1)
    assert await asking.open_dashboard_if_unwatched(question) is None
    assert len(opened) == 1, "a dashboard is open: nothing more is opened"


@override_settings(HOOKBRIDGE_OPEN_BROWSER=True, HOOKBRIDGE_PUBLIC_URL="http://127.0.0.1:8123")
async def test_when_no_browser_opens_the_agent_is_told_where_to_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(webbrowser, "open", lambda url: False)
    question = Question(pk=uuid.uuid4())
    note = await asking.open_dashboard_if_unwatched(question)
    assert note is not None
    assert f"http://127.0.0.1:8123/questions/{question.pk}/" in note


async def test_without_open_nothing_is_opened(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(webbrowser, "open", lambda url: pytest.fail("opened a browser"))
    assert await asking.open_dashboard_if_unwatched(Question(pk=uuid.uuid4())) is None
