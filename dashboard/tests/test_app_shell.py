"""Issue 42: the dashboard installs as an app — its manifest, icons, service worker and offline page."""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path

from django.contrib.staticfiles import finders
from django.test import Client


def png_size(path: str) -> tuple[int, int]:
    with open(path, "rb") as png:
        header = png.read(24)
    assert header[:8] == b"\x89PNG\r\n\x1a\n", path
    width, height = struct.unpack(">II", header[16:24])
    return width, height


def test_the_manifest_makes_the_dashboard_an_installable_app(client: Client) -> None:
    response = client.get("/manifest.webmanifest")
    assert response.status_code == 200
    assert response["Content-Type"] == "application/manifest+json"
    manifest = json.loads(response.content)
    assert (manifest["name"], manifest["start_url"], manifest["scope"], manifest["display"]) == (
        "Hook Bridge", "/", "/", "standalone",
    )  # fmt: skip
    pngs = [icon for icon in manifest["icons"] if icon["type"] == "image/png"]
    assert {icon["sizes"] for icon in pngs} == {"192x192", "512x512"}, "what browsers need to offer installing"
    assert any(icon.get("purpose") == "maskable" for icon in pngs)
    for icon in pngs:
        found = finders.find(icon["src"].removeprefix("/static/"))
        assert isinstance(found, str), icon
        assert "x".join(map(str, png_size(found))) == icon["sizes"], icon


def test_the_service_worker_is_served_from_the_root_so_it_may_serve_every_page(client: Client) -> None:
    response = client.get("/sw.js")
    assert response.status_code == 200
    assert response["Content-Type"] == "text/javascript; charset=utf-8"
    assert response["Cache-Control"] == "no-cache"
    script = response.content.decode()
    assert 'const OFFLINE = "/offline/";' in script
    assert '"/static/hookbridge.css"' in script
    assert 'request.mode === "navigate"' in script


def test_the_offline_page_needs_no_login_and_shows_nothing_of_anyone(client: Client, db: None) -> None:
    response = client.get("/offline/")
    assert response.status_code == 200
    page = response.content.decode()
    assert "No connection to Hook Bridge" in page
    assert "Log out" not in page
    assert "hookbridge-user" not in page


def test_every_page_links_the_manifest_and_the_worker_registers_from_the_sites_script(logged_in: Client) -> None:
    page = logged_in.get("/").content.decode()
    assert '<link rel="manifest" href="/manifest.webmanifest">' in page
    assert '<meta name="theme-color" content="#2457d6">' in page
    script = finders.find("hb/sending.js")
    assert isinstance(script, str)
    with open(script) as source:
        assert "navigator.serviceWorker.register(" in source.read()


def test_the_pages_load_their_script_as_modules_each_of_them_short(logged_in: Client) -> None:
    page = logged_in.get("/").content.decode()
    assert '<script type="module" src="/static/hookbridge.js"></script>' in page
    entry = finders.find("hookbridge.js")
    assert isinstance(entry, str)
    loaded = re.findall(r'^import "\./(hb/[a-z-]+\.js)";$', Path(entry).read_text(), re.M)
    assert len(loaded) >= 10, "one module per feature"
    ours = [*Path(entry).parent.glob("*.js"), *Path(entry).parent.glob("hb/*.js")]
    assert {f"hb/{path.name}" for path in ours if path.parent.name == "hb"} == set(loaded), "every module loaded"
    long = {path.name: n for path in ours if (n := len(path.read_text().splitlines())) > 400}
    assert not long, f"over 400 lines: {long}"
