"""`serve`'s port probe: a port just left is free again at once, a port someone listens on is not (issue 39)."""

from __future__ import annotations

import socket
from collections.abc import Iterator

import pytest

from mcpapi.management.commands.serve import choose_port, port_is_free


@pytest.fixture
def left_in_time_wait() -> int:
    """A port whose server side closed a connection first, as daphne does on Ctrl-C: its socket lingers in
    TIME_WAIT, and a plain bind to the port is refused for a minute."""
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as Twisted listens, for daphne
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = int(listener.getsockname()[1])
        client = socket.create_connection(("127.0.0.1", port))
        served, _ = listener.accept()
        served.close()  # the server closes first: its end waits in TIME_WAIT
        client.recv(1)
        client.close()
    with socket.socket() as plain, pytest.raises(OSError, match="Address already in use"):
        plain.bind(("127.0.0.1", port))  # the state the probe met: refused without SO_REUSEADDR
    return port


@pytest.fixture
def listened_on() -> Iterator[int]:
    with socket.socket() as listener:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        yield int(listener.getsockname()[1])


def test_a_port_just_left_is_free_again_at_once(left_in_time_wait: int) -> None:
    assert port_is_free("127.0.0.1", left_in_time_wait)
    assert choose_port("127.0.0.1", left_in_time_wait) == left_in_time_wait


def test_a_port_someone_listens_on_is_still_taken(listened_on: int) -> None:
    assert not port_is_free("127.0.0.1", listened_on)
