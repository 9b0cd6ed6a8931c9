"""Protocol details a strict client checks (issue 27, point 11): what the server declares is what it does."""

from __future__ import annotations

import httpx2
import pytest

from testing.live import LiveServer

ACCEPT = "application/json, text/event-stream"


MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


async def test_server_discover_declares_what_initialize_declares(live_server_proc: LiveServer) -> None:
    async with live_server_proc.mcp("legacy") as handshake:
        initialized = handshake.server_capabilities.model_dump(exclude_none=True, by_alias=True)
    headers = {**live_server_proc.auth(), "Accept": ACCEPT, "MCP-Protocol-Version": "2026-07-28"}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
        response = await http.post(
            f"{live_server_proc.url}/mcp",
            json={"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": MODERN_META}},
            headers={"Mcp-Method": "server/discover"},
        )
    discovered = response.json()["result"]["capabilities"]
    # Nothing here changes while the server runs: no list changes, no resource subscriptions, in either era.
    assert discovered["resources"] == initialized["resources"] == {"subscribe": False, "listChanged": False}
    assert discovered["tools"] == initialized["tools"] == {"listChanged": False}
    assert discovered["prompts"] == initialized["prompts"] == {"listChanged": False}
    assert discovered["logging"] == initialized["logging"] == {}


async def initialize(http: httpx2.AsyncClient, url: str) -> str:
    body = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        },
    }
    response = await http.post(url, json=body)
    assert response.status_code == 200
    return response.headers["mcp-session-id"]


@pytest.mark.parametrize("with_session", [True, False], ids=["after-initialize", "no-session"])
async def test_an_unsupported_protocol_version_in_the_handshake_era_is_named_in_its_words(
    live_server_proc: LiveServer, with_session: bool
) -> None:
    url = f"{live_server_proc.url}/mcp"
    async with httpx2.AsyncClient(headers={**live_server_proc.auth(), "Accept": ACCEPT}, timeout=60) as http:
        session = {"Mcp-Session-Id": await initialize(http, url)} if with_session else {}
        response = await http.post(
            url,
            json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            headers={**session, "MCP-Protocol-Version": "2099-01-01"},
        )
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["message"].startswith("MCP-Protocol-Version: '2099-01-01' is not supported; send one of 2024-11-05")
    assert error["data"] == {
        "supported": ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"],
        "requested": "2099-01-01",
    }
    assert "envelope" not in response.text
    assert "_meta" not in response.text


async def test_an_unsupported_version_with_the_2026_envelope_gets_that_eras_rejection(
    live_server_proc: LiveServer,
) -> None:
    """A 2026-era client negotiates from the SDK's structured rejection: it is left as it is."""
    meta = {**MODERN_META, "io.modelcontextprotocol/protocolVersion": "2099-01-01"}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta}}
    headers = {
        **live_server_proc.auth(),
        "Accept": ACCEPT,
        "MCP-Protocol-Version": "2099-01-01",
        "Mcp-Method": "tools/list",
    }
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
        response = await http.post(f"{live_server_proc.url}/mcp", json=body)
    assert '"supported":["2026-07-28"]' in response.text.replace(" ", ""), response.text
