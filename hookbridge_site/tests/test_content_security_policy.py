"""Every page carries a Content-Security-Policy: scripts, styles and images from this server only."""

from __future__ import annotations

import pytest
from django.test import Client


def directives(header: str) -> dict[str, list[str]]:
    parsed = {}
    for part in header.split(";"):
        name, *values = part.split()
        parsed[name] = values
    return parsed


@pytest.mark.parametrize("path", ["/accounts/login/", "/", "/history/", "/hooks/runs/", "/admin/"])
def test_every_page_allows_only_this_server(logged_in: Client, path: str) -> None:
    response = logged_in.get(path, follow=True)
    assert response.status_code == 200
    policy = directives(response["Content-Security-Policy"])
    assert policy["script-src"] == ["'self'"]
    assert policy["style-src"] == ["'self'"]
    assert policy["img-src"] == ["'self'", "data:", "blob:"]  # blob: a pasted image's preview, made locally
    assert policy["object-src"] == ["'none'"]
    assert policy["frame-ancestors"] == ["'none'"]
    assert "'unsafe-inline'" not in response["Content-Security-Policy"]
    assert "'unsafe-eval'" not in response["Content-Security-Policy"]
