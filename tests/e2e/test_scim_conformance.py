"""/scim/v2 as scim2-tester checks a SCIM server against RFC 7643/7644, over HTTP on a real daphne: discovery,
then Users and Groups created, read, listed, filtered, replaced, patched and deleted with generated values."""

from __future__ import annotations

from collections.abc import Iterator

import httpx2
import pytest
from scim2_client.engines.httpx2 import SyncSCIMClient
from scim2_tester import Status, check_server

from testing.live import LiveServer, serving

TOKEN = "scim-conformance-token-0123456789abcdefghij"


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    yield from serving(HOOKBRIDGE_SCIM_TOKEN=TOKEN, HOOKBRIDGE_OIDC_ROLES="shop-answerers=shop:answerer")


def checked(server: LiveServer, resource_types: list[str] | None = None) -> list[str]:
    http = httpx2.Client(base_url=f"{server.url}/scim/v2", headers={"Authorization": f"Bearer {TOKEN}"}, timeout=30)
    with http:
        client = SyncSCIMClient(http)
        results = check_server(client, resource_types=resource_types)
    assert results, "scim2-tester ran no check"
    return [
        f"{result.title}: {result.reason}"
        for result in results
        if result.status not in {Status.SUCCESS, Status.COMPLIANT, Status.SKIPPED}
    ]


def test_scim2_tester_finds_nothing_wrong_with_users_and_discovery(server: LiveServer) -> None:
    problems = checked(server, ["User"])
    assert problems == [], "\n".join(problems)


def test_scim2_tester_finds_nothing_wrong_with_groups(server: LiveServer) -> None:
    problems = checked(server, ["Group"])
    assert problems == [], "\n".join(problems)
