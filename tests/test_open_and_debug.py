"""serve --open and HOOKBRIDGE_DEBUG."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
import webbrowser

import pytest
from django.test import override_settings

from dashboard import runtime
from mcpapi import asking
from questions.models import Question
from tests.live import ROOT, LiveServer


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


@pytest.mark.e2e
@pytest.mark.parametrize("variable", ["HOOKBRIDGE_DEBUG", "ASK_ME_MCP_DEBUG"])  # Ask-Me's name for it
def test_debug_logs_every_tool_call_to_stderr(live_server_proc: LiveServer, variable: str) -> None:
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "get_phase_status", "arguments": {}}},
    ]  # fmt: skip
    result = subprocess.run(
        [sys.executable, "manage.py", "mcp_stdio", "--token", live_server_proc.tokens["agent-a"]],
        input="".join(json.dumps(m) + "\n" for m in messages),
        cwd=ROOT, env={**live_server_proc.env, variable: "1"}, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert "tool call get_phase_status {}" in result.stderr
    assert "tool call" not in result.stdout
