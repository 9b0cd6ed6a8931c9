"""The embedded default's channel layer: in memory, and shared with the other processes on the same database.

`make serve` and `manage.py mcp_stdio` are two processes on one SQLite file, and
each had its own in-memory layer: an answer given on serve's dashboard could not
wake a call waiting in the stdio process (it found the answer at its next re-read,
2 s later), and a question asked over stdio reached serve's dashboards only by
polling. So every process here that has a group member binds a Unix datagram
socket in a folder named after the database, and each `group_send` is also sent,
as one datagram, to the other sockets in that folder; the receiving process hands
it to its own groups. A wake-up crosses processes in well under a millisecond.

Messages stay hints, as on any layer: the row is the truth. A peer that is gone
(its socket refuses) is forgotten; a peer that does not read (its buffer is full)
misses the message and its waiting calls find the answer at their next re-read. A
message too large for one datagram is sent as `state.resync`, which tells a live
page to fetch its whole current state and a waiting call to re-read its row.

No sockets (and no sharing) for an in-memory SQLite database, which no other
process can open, or where the platform has no Unix datagram sockets.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import errno
import hashlib
import json
import logging
import os
import socket
import stat
import tempfile
from pathlib import Path
from typing import Any

from core import runtime
from core.compat.channels_layers import SweepingAtMostEvery

logger = logging.getLogger(__name__)

# One datagram per message; the default socket buffer (about 208 KiB on Linux) holds several.
MAX_DATAGRAM = 60_000
# How the socket of a process that serves no pages ends, before ".sock" (mcp_stdio's).
PAGELESS = ".nopages"
# sun_path holds 108 bytes on Linux, 104 on macOS.
MAX_SOCKET_PATH = 100


def bus_folder(database: dict[str, Any]) -> Path | None:
    """Where the processes on this database meet; None when no other process can share it."""
    name = str(database.get("NAME") or "")
    if database.get("ENGINE", "").endswith("sqlite3"):
        if not name or name == ":memory:" or name.startswith("file:") or "mode=memory" in name:
            return None
        # Resolved: two processes started from different folders must still meet.
        folder = Path(name).resolve().with_name(Path(name).name + ".bus")
    else:
        identity = "|".join(str(database.get(key) or "") for key in ("ENGINE", "HOST", "PORT", "NAME"))
        digest = hashlib.sha256(identity.encode()).hexdigest()[:16]
        folder = Path(tempfile.gettempdir()) / f"hookbridge-bus-{os.getuid()}-{digest}"
    if len(str(folder)) + 30 > MAX_SOCKET_PATH:
        # Too long for a socket address: the same folder name, hashed, under the temp folder.
        digest = hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:16]
        folder = Path(tempfile.gettempdir()) / f"hookbridge-bus-{os.getuid()}-{digest}"
    return folder


def _private_folder(folder: Path) -> bool:
    """Create the folder for this user only; refuse one that others could write into."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = folder.stat()
    if info.st_uid != os.getuid() or stat.S_IMODE(info.st_mode) & 0o077:
        logger.warning("Not sharing the channel layer through %s: it must belong to this user alone", folder)
        return False
    return True


class _Bus:
    """This process's socket in the folder, and sending to every other one there."""

    def __init__(self, folder: Path, deliver: Any) -> None:
        self.folder = folder
        self._deliver = deliver
        self._sender = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self._sender.setblocking(False)
        self._receiver: socket.socket | None = None
        self._address: str | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    def listen(self, loop: asyncio.AbstractEventLoop) -> None:
        """Bind this process's socket (once) and read it on `loop` (again, if an earlier loop has closed)."""
        if self._receiver is None:
            receiver = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
            receiver.setblocking(False)
            # A process that serves no pages (mcp_stdio) says so in its socket's name: the others then know no page
            # of theirs can be listening there (LocalChannelLayer.heard_by_nobody). Any other may serve pages.
            pageless = PAGELESS if runtime.serves_web is False else ""
            address = str(self.folder / f"{os.getpid()}-{os.urandom(4).hex()}{pageless}.sock")
            receiver.bind(address)
            self._receiver, self._address = receiver, address
            atexit.register(self.close)
        if self._loop is not loop:
            if self._loop is not None and not self._loop.is_closed():
                self._loop.remove_reader(self._receiver.fileno())
            loop.add_reader(self._receiver.fileno(), self._read)
            self._loop = loop

    @property
    def listening(self) -> bool:
        return self._receiver is not None

    def close(self) -> None:
        if self._address is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._address)
            self._address = None

    def _read(self) -> None:
        assert self._receiver is not None
        assert self._loop is not None
        while True:
            try:
                datagram = self._receiver.recv(MAX_DATAGRAM + 1024)
            except (BlockingIOError, InterruptedError):
                return
            try:
                envelope = json.loads(datagram)
                group, message = str(envelope["g"]), dict(envelope["m"])
            except (ValueError, KeyError, TypeError):
                logger.warning("Dropped a malformed message from the local channel layer")
                continue
            task = self._loop.create_task(self._deliver(group, message))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    def peers(self) -> list[str]:
        """The other processes' sockets in the folder (a process binds one once it has a group member)."""
        try:
            found = [entry.path for entry in os.scandir(self.folder) if entry.name.endswith(".sock")]
        except OSError:
            return []
        return [path for path in found if path != self._address]

    def forward(self, group: str, message: dict[str, Any]) -> None:
        """Send to every other process in the folder; never blocks, never raises."""
        peers = self.peers()
        if not peers:
            return
        try:
            datagram = json.dumps({"g": group, "m": message}, separators=(",", ":")).encode()
        except (TypeError, ValueError):
            logger.debug("Not forwarding a %s message: it is not JSON", message.get("type"))
            return
        if len(datagram) > MAX_DATAGRAM:
            datagram = json.dumps({"g": group, "m": {"type": "state.resync"}}).encode()
        for path in peers:
            try:
                self._sender.sendto(datagram, path)
            except (ConnectionRefusedError, FileNotFoundError):
                # Nobody reads there any more: a process that ended without removing its socket.
                with contextlib.suppress(OSError):
                    os.unlink(path)
            except OSError as exc:
                # EAGAIN: the peer is not reading fast enough. Its calls re-read their rows.
                level = logging.DEBUG if exc.errno in (errno.EAGAIN, errno.EWOULDBLOCK) else logging.WARNING
                logger.log(level, "Could not forward a %s message to %s: %s", message.get("type"), path, exc)


class LocalChannelLayer(SweepingAtMostEvery):
    """InMemoryChannelLayer whose group messages also reach the other local processes on the same database."""

    # Channels sweeps every channel and group for expired messages at each receive and group_send:
    # with thousands of calls waiting, each one's receive walked all the others' (O(n²)); a worker
    # holding 2,000 calls spent a sixth of its time there and sent response headers seconds late
    # (bench/agents.py). Messages expire after a minute: sweeping once a second loses nothing.
    def __init__(self, *, bus_folder: str | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._folder_setting = bus_folder
        self._bus: _Bus | None = None
        self._bus_checked = False

    @property
    def shared(self) -> bool:
        """Whether other local processes hear this one's group messages (and it theirs)."""
        return self._bus is not None and self._bus.listening

    def _get_bus(self) -> _Bus | None:
        if not self._bus_checked:
            self._bus_checked = True
            try:
                self._bus = self._open_bus()
            except OSError:
                logger.warning("The channel layer is not shared with other local processes", exc_info=True)
        return self._bus

    def _open_bus(self) -> _Bus | None:
        if not hasattr(socket, "AF_UNIX"):
            return None
        if self._folder_setting:
            folder: Path | None = Path(self._folder_setting)
        else:
            from django.db import connections

            folder = bus_folder(connections["default"].settings_dict)
        if folder is None or not _private_folder(folder):
            return None
        return _Bus(folder, self._deliver_here)

    def heard_by_nobody(self, groups: tuple[str, ...]) -> bool:
        """Whether a message to any of `groups` is sure to reach nobody: no member here, and no other local process
        that could have one. Read from any thread: a push is rendered in the request's, and a member that joins
        after this answered False reads the whole current state after joining (core.consumers.LiveConsumer)."""
        if any(self.groups.get(group) for group in groups):
            return False
        bus = self._get_bus()
        return bus is None or all(path.endswith(PAGELESS + ".sock") for path in bus.peers())

    async def _deliver_here(self, group: str, message: dict[str, Any]) -> None:
        await super().group_send(group, message)

    async def group_add(self, group: str, channel: str) -> None:
        await super().group_add(group, channel)
        bus = self._get_bus()
        if bus is not None:
            try:
                bus.listen(asyncio.get_running_loop())
            except OSError:
                logger.warning("Could not listen for other local processes' messages", exc_info=True)
                self._bus = None

    async def group_send(self, group: str, message: dict[str, Any]) -> None:
        await super().group_send(group, message)
        bus = self._get_bus()
        if bus is not None:
            bus.forward(group, message)
