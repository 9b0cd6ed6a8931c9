"""The embedded default's channel layer, shared between the local processes on one database."""

from __future__ import annotations

import asyncio
import os
import shutil
import socket
import tempfile
from pathlib import Path

import pytest

from core import runtime
from core.local_layer import MAX_DATAGRAM, LocalChannelLayer, bus_folder


def test_the_folder_sits_beside_the_sqlite_file_and_is_the_same_from_any_working_directory(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    short = Path(tempfile.mkdtemp(prefix="hb", dir="/tmp"))  # pytest's own are too long for a socket path
    try:
        database = {"ENGINE": "django.db.backends.sqlite3", "NAME": "var/db.sqlite3"}
        monkeypatch.chdir(short)
        assert bus_folder(database) == short / "var" / "db.sqlite3.bus"
        absolute = {**database, "NAME": str(short / "var" / "db.sqlite3")}
        assert bus_folder(absolute) == bus_folder(database)
    finally:
        shutil.rmtree(short)


@pytest.mark.parametrize("name", [":memory:", "file:memorydb_default?mode=memory&cache=shared", ""])
def test_a_database_no_other_process_can_open_shares_nothing(name: str) -> None:
    assert bus_folder({"ENGINE": "django.db.backends.sqlite3", "NAME": name}) is None


def test_a_path_too_long_for_a_socket_moves_under_the_temp_folder() -> None:
    folder = bus_folder({"ENGINE": "django.db.backends.sqlite3", "NAME": "/" + "a" * 120 + "/db.sqlite3"})
    assert folder is not None
    assert len(str(folder)) < 70
    assert folder.name.startswith(f"hookbridge-bus-{os.getuid()}-")


async def test_a_group_message_reaches_the_other_process_and_not_twice_this_one(tmp_path: Path) -> None:
    server, stdio = LocalChannelLayer(bus_folder=str(tmp_path)), LocalChannelLayer(bus_folder=str(tmp_path))
    waiting = await stdio.new_channel()
    await stdio.group_add("question.1", waiting)  # binds stdio's socket
    watching = await server.new_channel()
    await server.group_add("question.1", watching)

    await server.group_send("question.1", {"type": "question.resolved"})
    assert await asyncio.wait_for(stdio.receive(waiting), 30) == {"type": "question.resolved"}
    assert await asyncio.wait_for(server.receive(watching), 30) == {"type": "question.resolved"}
    with pytest.raises(TimeoutError):  # delivered to the other process only, never echoed back
        await asyncio.wait_for(server.receive(watching), 0.2)
    assert server.shared
    assert stdio.shared


async def test_a_message_too_large_for_a_datagram_arrives_as_a_resync(tmp_path: Path) -> None:
    sender, receiver = LocalChannelLayer(bus_folder=str(tmp_path)), LocalChannelLayer(bus_folder=str(tmp_path))
    page = await receiver.new_channel()
    await receiver.group_add("dashboard", page)
    await sender.group_send("dashboard", {"type": "dashboard.html", "html": "x" * (MAX_DATAGRAM + 1)})
    assert await asyncio.wait_for(receiver.receive(page), 30) == {"type": "state.resync"}


async def test_the_socket_of_a_process_that_died_is_forgotten(tmp_path: Path) -> None:
    dead = tmp_path / "4242-dead.sock"
    orphan = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    orphan.bind(str(dead))
    orphan.close()  # the process ended without removing its socket
    layer = LocalChannelLayer(bus_folder=str(tmp_path))
    await layer.group_send("question.1", {"type": "question.resolved"})
    assert not dead.exists()


async def test_a_folder_others_can_write_to_is_not_used(tmp_path: Path) -> None:
    os.chmod(tmp_path, 0o777)
    layer = LocalChannelLayer(bus_folder=str(tmp_path))
    await layer.group_add("question.1", await layer.new_channel())
    assert not layer.shared
    assert os.listdir(tmp_path) == []


async def test_a_push_is_heard_by_nobody_only_with_no_member_here_and_no_process_on_the_database_serving_pages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What spares a worker rendering cards nobody sees (core.broadcast.heard): it must never say "nobody" where a
    # page could hear, here or in another local process (a `serve` beside an agent's mcp_stdio).
    here, there = LocalChannelLayer(bus_folder=str(tmp_path)), LocalChannelLayer(bus_folder=str(tmp_path))
    groups = ("dashboard", "dashboard.partial")
    assert here.heard_by_nobody(groups)

    waiting = await here.new_channel()
    await here.group_add("question.1", waiting)  # a waiting call: a member of its own group only
    assert here.heard_by_nobody(groups)

    page = await here.new_channel()
    await here.group_add("dashboard.partial", page)
    assert not here.heard_by_nobody(groups), "a page in this process"
    await here.group_discard("dashboard.partial", page)
    assert here.heard_by_nobody(groups)

    elsewhere = await there.new_channel()
    await there.group_add("question.2", elsewhere)  # another process on the database, with a socket of its own
    assert not here.heard_by_nobody(groups), "another local process may have a page open"
    bus = there._get_bus()
    assert bus is not None
    bus.close()  # that process ended
    assert here.heard_by_nobody(groups)

    # An agent's mcp_stdio beside it serves no pages, and its socket says so: still nobody to render for.
    monkeypatch.setattr(runtime, "serves_web", False)
    stdio = LocalChannelLayer(bus_folder=str(tmp_path))
    await stdio.group_add("question.3", await stdio.new_channel())
    assert here.heard_by_nobody(groups)
    monkeypatch.setattr(runtime, "serves_web", None)
    serve = LocalChannelLayer(bus_folder=str(tmp_path))  # a page-serving process, again
    await serve.group_add("question.4", await serve.new_channel())
    assert not here.heard_by_nobody(groups)
