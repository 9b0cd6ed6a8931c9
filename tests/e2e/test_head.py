"""HEAD sends headers only, whatever the page's size, so a kept-alive connection stays readable.

Daphne dropped only a HEAD response's first 64 KiB body chunk; the rest went onto the connection
and the next response on it (nginx keeps connections to the workers alive) read as garbage.
"""

from __future__ import annotations

import socket

from testing.live import LiveServer

FILL = (
    "from questions.models import Question\n"
    "for n in range(30):\n"
    "    Question.ask(asker=None, asker_name='filler', text=f'Filler {n} ' + 'long words ' * 600, options=[])\n"
)


def read_response(conn: socket.socket, *, head: bool) -> tuple[bytes, bytes]:
    """One response off a kept-alive connection: its status line and its body (by Content-Length)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        assert chunk, "the connection closed"
        data += chunk
    head_part, _, rest = data.partition(b"\r\n\r\n")
    lines = head_part.split(b"\r\n")
    length = next(int(line.split(b":", 1)[1]) for line in lines if line.lower().startswith(b"content-length:"))
    wanted = 0 if head else length
    while len(rest) < wanted:
        rest += conn.recv(65536)
    assert len(rest) == wanted, f"{len(rest) - wanted} bytes more than the response's own"
    return lines[0], rest


async def test_head_on_a_large_page_sends_no_body_and_the_connection_stays_usable(
    empty_server: LiveServer,
) -> None:
    server = empty_server
    server.manage("shell", "-c", FILL)
    async with server.login() as http:
        cookie = server.cookie_header(http)
        size = len((await http.get("/")).content)
    assert size > 64 * 1024
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as conn:
        request = f"{{}} / HTTP/1.1\r\nHost: 127.0.0.1:{server.port}\r\nCookie: {cookie}\r\n\r\n"
        conn.sendall(request.format("HEAD").encode())
        status, body = read_response(conn, head=True)
        assert status.startswith(b"HTTP/1.1 200")
        assert body == b""
        conn.sendall(request.format("GET").encode())
        status, body = read_response(conn, head=False)
        assert status.startswith(b"HTTP/1.1 200"), status
        assert len(body) > 64 * 1024
    server.manage("shell", "-c", "from questions.models import Question; Question.objects.all().delete()")
