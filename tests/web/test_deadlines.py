"""Slow clients on both HTTP servers (the profile page and the gateway): a request head or body
trickled past its deadline is cut off while other clients are served; connections beyond the
bound per address are refused; keep-alive clients are unaffected (bigmind/web/deadlines.py).

Deadlines are short (1-2 s) and every wait is bounded by ``BOUND_S``; what is asserted is what
the server did (closed, answered 408 or 503, served), never how long it took."""

from __future__ import annotations

import contextlib
import http.client
import logging
import re
import socket
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx2
import pytest
from conftest import free_port
from gateway_world import running

from bigmind.config import Settings
from bigmind.runtime import Runtime
from bigmind.web.profile_server import profile_server

pytestmark = pytest.mark.timeout(90)

SERVERS = ("page", "gateway")
GET_PATH = {"page": "/api/identity", "gateway": "/healthz"}  # answered without a credential
POST_PATH = {"page": "/directory/hide", "gateway": "/mcp"}  # both read the whole body first
BOUND_S = 10.0  # the longest any wait here may last: a bound, never a figure asserted
TRICKLE_S = 0.3  # one byte every TRICKLE_S


@dataclass
class Served:
    kind: str
    host: str
    port: int

    @property
    def address(self) -> tuple[str, int]:
        return self.host, self.port

    def url(self, path: str = "") -> str:
        return f"http://{self.host}:{self.port}{path or GET_PATH[self.kind]}"

    def get(self) -> int:
        """A normal client (httpx, a connection of its own): the status it gets."""
        return httpx2.get(self.url(), timeout=BOUND_S).status_code

    def eventually_served(self) -> bool:
        """Served within BOUND_S (the server may not have seen a closed connection go yet)."""
        until = time.monotonic() + BOUND_S
        while time.monotonic() < until:
            with contextlib.suppress(httpx2.TransportError):
                if self.get() == 200:
                    return True
            time.sleep(0.05)
        return False


@pytest.fixture
def serve(settings_for: Callable[[str], Settings]) -> Iterator[Callable[..., Served]]:
    """Starts the profile page or the gateway with the given settings; stops it at the end."""
    with contextlib.ExitStack() as stack:

        def start(kind: str, **limits: Any) -> Served:
            if kind == "page":
                rt = Runtime(settings_for("alice").model_copy(update=limits))
                stack.callback(rt.close)  # stops the page's server thread
                url = profile_server(rt).url()
            else:
                gw_settings = settings_for("gateway").model_copy(update=limits)
                url = stack.enter_context(running(gw_settings, free_port())).url
            host, port = url.removeprefix("http://").rstrip("/").rsplit(":", 1)
            return Served(kind, host, int(port))

        yield start


def connect(srv: Served) -> socket.socket:
    return socket.create_connection(srv.address, timeout=BOUND_S)


def request_head(method: str, path: str, **headers: str) -> bytes:
    lines = [f"{method} {path} HTTP/1.1", "Host: 127.0.0.1", "User-Agent: a-slow-client"]
    lines += [f"{k.replace('_', '-')}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def read_response(sock: socket.socket) -> tuple[int, bytes]:
    """One response with a Content-Length: its status and body."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(4096)
        assert chunk, f"closed before a whole response: {data!r}"
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
    while length and len(body) < int(length.group(1)):
        chunk = sock.recv(4096)
        assert chunk, "closed inside a response body"
        body += chunk
    return int(head.split()[1]), body


def trickle(sock: socket.socket, data: bytes, meanwhile: Callable[[], None]) -> bytes:
    """Send ``data`` a byte every TRICKLE_S, calling ``meanwhile`` after the second byte, until
    the server closes the connection: what it sent before. Fails if it holds on past BOUND_S
    (``data`` outlasts that bound, so a server without a deadline fails this)."""
    assert len(data) * TRICKLE_S > BOUND_S
    sock.settimeout(TRICKLE_S)
    got = b""
    until = time.monotonic() + BOUND_S
    sent = 0
    while time.monotonic() < until:
        try:
            sock.sendall(data[sent : sent + 1])
            sent += 1
            if sent == 2:
                meanwhile()
            chunk = sock.recv(4096)
        except TimeoutError:
            continue
        except (BrokenPipeError, ConnectionResetError):  # closed while we were sending
            return got
        if not chunk:
            return got
        got += chunk
    pytest.fail(f"the server still held the connection after {sent} bytes")


def cut_off(got: bytes) -> bool:
    """The server's words before closing a late request: 408, or nothing (it may also have
    answered the request early, e.g. a refusal, before the body's deadline)."""
    return got == b"" or b"HTTP/1.1 408 " in got


@pytest.mark.parametrize("after_a_request", [False, True], ids=["new", "keep-alive"])
@pytest.mark.parametrize("kind", SERVERS)
def test_a_trickled_request_head_is_cut_off_while_others_are_served(
    serve: Callable[..., Served], kind: str, after_a_request: bool
) -> None:
    srv = serve(kind, header_timeout_s=1)
    padding = "x" * 40  # the head outlasts BOUND_S at a byte every TRICKLE_S
    with connect(srv) as sock:
        if after_a_request:  # the deadline starts again when a response ends
            sock.sendall(request_head("GET", GET_PATH[kind]))
            assert read_response(sock)[0] == 200

        def others_are_served() -> None:
            assert srv.get() == 200

        got = trickle(
            sock, request_head("GET", GET_PATH[kind], X_Padding=padding), others_are_served
        )
    assert cut_off(got), got
    assert srv.get() == 200


@pytest.mark.parametrize("kind", SERVERS)
def test_a_trickled_body_is_cut_off_while_others_are_served(
    serve: Callable[..., Served], kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    srv = serve(kind, body_timeout_s=1)
    body = b"reason=" + b"x" * 60
    head = request_head(
        "POST",
        POST_PATH[kind],
        Content_Type="application/x-www-form-urlencoded",
        Content_Length=str(len(body)),
    )
    with connect(srv) as sock:
        sock.sendall(head)  # the head at once: only the body is late

        def others_are_served() -> None:
            assert srv.get() == 200

        got = trickle(sock, body, others_are_served)
    assert cut_off(got), got
    assert srv.get() == 200
    # The app waiting for the body saw the client go: logged as such, not as a failure.
    assert not [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR]


@pytest.mark.parametrize("kind", SERVERS)
def test_connections_beyond_the_bound_per_address_are_refused_until_one_closes(
    serve: Callable[..., Served], kind: str
) -> None:
    """The observable behaviour: a connection beyond the bound is answered 503 at once, before
    it sends anything, and closed; the ones already open are untouched; a closed one frees
    its place."""
    bound = 3
    srv = serve(kind, connections_per_address=bound, header_timeout_s=60)
    with contextlib.ExitStack() as stack:
        held = [stack.enter_context(connect(srv)) for _ in range(bound)]  # idle, not a byte sent
        for _ in range(2):
            with connect(srv) as extra:
                status, text = read_response(extra)
                assert status == 503 and b"Too many connections" in text
                assert extra.recv(1) == b""  # and closed
        try:  # any client from the address: 503 (or a reset, if its request was unread)
            status: int | None = srv.get()
        except httpx2.TransportError:
            status = None
        assert status in (503, None)
        # The held connections were never disturbed: one of them is served now.
        held[0].sendall(request_head("GET", GET_PATH[kind]))
        assert read_response(held[0])[0] == 200
        held[1].close()
        assert srv.eventually_served()
    # Every place is given back: more connections, one after another, than the bound.
    for _ in range(2 * bound):
        assert srv.eventually_served()


@pytest.mark.parametrize("kind", SERVERS)
def test_a_keep_alive_client_keeps_its_connection_across_deadlines(
    serve: Callable[..., Served], kind: str
) -> None:
    """Requests on one connection, spaced well within the head deadline but together longer
    than it, with one connection allowed per address: every one served on the same socket."""
    srv = serve(kind, header_timeout_s=1.5, body_timeout_s=1.5, connections_per_address=1)
    conn = http.client.HTTPConnection(srv.host, srv.port, timeout=BOUND_S)
    try:
        first: socket.socket | None = None
        for i in range(7):
            if i % 2:
                conn.request("POST", POST_PATH[kind], body=b"reason=x")
                assert conn.getresponse().read() is not None  # answered (a refusal is fine)
            else:
                conn.request("GET", GET_PATH[kind])
                response = conn.getresponse()
                response.read()
                assert response.status == 200
            first = first or conn.sock
            assert conn.sock is first and first is not None  # the same connection
            time.sleep(0.3)
    finally:
        conn.close()
