"""brain serve and the dashboard close a connection whose request headers do not arrive in time
(issue 54, item 9): uvicorn alone held a half-sent request open for as long as the client liked."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator

import pytest
import uvicorn

from pybrain.serve.http import server_config


async def hello(scope, receive, send) -> None:  # a minimal ASGI app
    if scope["type"] != "http":
        return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"ok"})


@pytest.fixture
def port() -> Iterator[int]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    server = uvicorn.Server(server_config(hello, header_timeout=1.0, log_level="warning", lifespan="off"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the server did not start"
        time.sleep(0.05)
    try:
        yield sock.getsockname()[1]
    finally:
        server.should_exit = True
        thread.join(20)
        sock.close()


def closed_after(conn: socket.socket, wait: float) -> float | None:
    """Seconds until the server closed conn, None when it was still open after wait."""
    start = time.monotonic()
    conn.settimeout(wait)
    try:
        while conn.recv(4096):
            pass
    except TimeoutError:
        return None
    return time.monotonic() - start


def test_a_half_sent_request_is_closed_and_a_whole_one_answered(port: int) -> None:
    with socket.create_connection(("127.0.0.1", port)) as half:
        half.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # no blank line: headers unfinished
        time.sleep(0.5)
        half.sendall(b"X-Slow: 1\r\n")  # a byte now and then does not keep it open
        waited = closed_after(half, 5)
    assert waited is not None and waited < 3, "the half-sent request was held open"

    with socket.create_connection(("127.0.0.1", port)) as silent:
        assert closed_after(silent, 5) is not None, "a connection that sends nothing was held open"

    with socket.create_connection(("127.0.0.1", port)) as whole:
        whole.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        whole.settimeout(5)
        assert whole.recv(4096).startswith(b"HTTP/1.1 200")
        # the next request on the connection has its own deadline
        waited = closed_after(whole, 5)
    assert waited is not None and waited < 3
