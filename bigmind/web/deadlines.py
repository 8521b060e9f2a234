"""Deadlines for slow HTTP clients, and a bound on each address's connections (both servers).

uvicorn times out nothing before a request has arrived: a client could send its request head or
its body a byte at a time for ever, on as many connections as it liked. ``DeadlineProtocol`` is
uvicorn's h11 protocol plus one timer per connection, following h11's view of the client:

- waiting for a request head (the connection opened, or the previous response ended): it must
  be complete within ``BIGMIND_HEADER_TIMEOUT_S``;
- reading its body: complete within ``BIGMIND_BODY_TIMEOUT_S`` of the head;
- otherwise (the app is answering) no deadline.

A connection past its deadline gets ``408`` (when no response has begun) and is closed; the app,
if it waits for the body, sees the client disconnect. A connection beyond
``BIGMIND_CONNECTIONS_PER_ADDRESS`` open ones from the same address gets ``503`` and is closed at
once, before anything of it is read. WebSockets are off (BigMind serves none; an upgraded
connection would leave the protocol and its deadlines).
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

if TYPE_CHECKING:
    from uvicorn.config import Config
    from uvicorn.server import ServerState

    from bigmind.config import Settings

log = logging.getLogger(__name__)


def _response(status: int, reason: str, text: str) -> bytes:
    body = text.encode()
    head = (
        f"HTTP/1.1 {status} {reason}\r\ncontent-type: text/plain; charset=utf-8\r\n"
        f"content-length: {len(body)}\r\nconnection: close\r\n\r\n"
    )
    return head.encode() + body


TIMED_OUT = _response(408, "Request Timeout", "The request did not arrive in time.\n")
TOO_MANY = _response(503, "Service Unavailable", "Too many connections from your address.\n")


@dataclass(frozen=True)
class Deadlines:
    """Seconds for a request's head and for its body, connections per address (0: none)."""

    head_s: float
    body_s: float
    per_address: int

    @classmethod
    def of(cls, settings: Settings) -> Deadlines:
        return cls(
            settings.header_timeout_s, settings.body_timeout_s, settings.connections_per_address
        )


class DeadlineProtocol(H11Protocol):
    """uvicorn's h11 protocol with the deadlines above; made per server by :func:`protocol`."""

    deadlines: ClassVar[Deadlines]
    open_from: ClassVar[Counter[str]]  # this server's open connections by client address

    def __init__(
        self,
        config: Config,
        server_state: ServerState,
        app_state: dict[str, Any],
        _loop: asyncio.AbstractEventLoop | None = None,
    ) -> None:
        super().__init__(config, server_state, app_state, _loop)
        self._phase: str | None = None  # "head" or "body": what the client owes now
        self._timer: asyncio.TimerHandle | None = None
        self._counted: str | None = None  # the address this connection counts against

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        host = self.client[0] if self.client else None
        bound = self.deadlines.per_address
        if host is not None and bound > 0:
            if self.open_from[host] >= bound:
                log.info("http: refused a connection from %s: %d already open", host, bound)
                self.transport.write(TOO_MANY)
                self.transport.close()
                return
            self.open_from[host] += 1
            self._counted = host
        self._follow()

    def connection_lost(self, exc: Exception | None) -> None:
        self._cancel()
        if self._counted is not None:
            self.open_from[self._counted] -= 1
            if self.open_from[self._counted] <= 0:
                del self.open_from[self._counted]
            self._counted = None
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._follow()

    def on_response_complete(self) -> None:
        super().on_response_complete()  # a keep-alive connection waits for the next head
        self._follow()

    def _follow(self) -> None:
        """(Re)arm the deadline when what the client owes has changed."""
        if self.transport.is_closing():
            self._cancel()
            return
        state = self.conn.their_state
        phase = "head" if state is h11.IDLE else "body" if state is h11.SEND_BODY else None
        if phase == self._phase:
            return
        self._cancel()
        if phase is None:
            return
        self._phase = phase
        seconds = self.deadlines.head_s if phase == "head" else self.deadlines.body_s
        if seconds > 0:
            self._timer = self.loop.call_later(seconds, self._expire, phase)

    def _cancel(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._phase = None

    def _expire(self, phase: str) -> None:
        self._timer = None
        if self.transport.is_closing():
            return
        seconds = self.deadlines.head_s if phase == "head" else self.deadlines.body_s
        who = self.client[0] if self.client else "?"
        log.info(
            "http: closed %s's connection: request %s not complete in %g s", who, phase, seconds
        )
        cycle = self.cycle
        if cycle is None or cycle.response_complete or not cycle.response_started:
            self.transport.write(TIMED_OUT)
        if cycle is not None and not cycle.response_complete:
            cycle.disconnected = True  # nothing the app sends now follows the 408
            cycle.message_event.set()  # an app waiting for the body sees the disconnect
        self.transport.close()


def protocol(deadlines: Deadlines) -> type[DeadlineProtocol]:
    """A protocol class for one server: its own count of connections per address."""

    class ServerProtocol(DeadlineProtocol):
        pass

    ServerProtocol.deadlines = deadlines
    ServerProtocol.open_from = Counter()
    return ServerProtocol


def uvicorn_options(settings: Settings) -> dict[str, Any]:
    """The ``uvicorn.Config`` arguments that put a server under ``settings``' deadlines."""
    return {"http": protocol(Deadlines.of(settings)), "ws": "none"}
