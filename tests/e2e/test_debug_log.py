"""HOOKBRIDGE_DEBUG (and Ask-Me's name for it): every tool call logged to stderr, never to stdout (stdio owns it)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from testing.live import ROOT, LiveServer


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
