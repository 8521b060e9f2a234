"""stdin and stdout of ``bigmind serve``: every request read before stdin closed is answered.

The MCP SDK's stdio loop treats the end of stdin as "the client is gone" and cancels the
requests still running, so a client that writes its requests and then closes stdin (a script,
a pipeline, a client shutting down right after its last call) never reads the answers of the
slower ones. :func:`answering` puts two relay threads between the process's descriptors and
the SDK, which then reads and writes pipes instead of fd 0 and fd 1:

- stdin → server: each line is passed on whole, and the ids of the requests in it are noted;
  at the end of stdin the relay waits until each of them has been answered (at most
  :data:`ANSWER_WITHIN_S`), and only then closes the server's end, which ends the loop.
  A line the SDK would drop unanswered (not JSON, not a JSON-RPC 2.0 message, a lone
  surrogate…) or one longer than ``BIGMIND_MAX_REQUEST_BYTES`` is answered here with the
  JSON-RPC error instead (:mod:`bigmind.mcp.wire`); a long line is never read whole.
- server → stdout: each line is passed on, then the ids it answers are crossed off. A line
  that is not JSON (stray output of a library or a child process) goes to stderr instead.

This works on the wire format alone, so it holds whatever the SDK's internals do at the end
of input, and the server still runs through FastMCP's own ``run(transport="stdio")``. On
Windows the process's standard handles are not plain descriptors, so the relay is off there.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from bigmind.mcp import wire

log = logging.getLogger(__name__)

ANSWER_WITHIN_S = 30.0  # how long the end of stdin waits for answers still being worked on
DRAIN_S = 5.0  # how long the last answers may take to reach stdout after the server stopped
CHUNK = 65536


def _ids(line: bytes) -> Iterator[tuple[str, dict[str, Any]]]:
    """The JSON-RPC messages of one line (a batch is several), each with its id's key."""
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):  # screened out before it reaches the server
        return
    for message in data if isinstance(data, list) else [data]:
        if isinstance(message, dict):
            # An id is a string or a number, and 1 and "1" are different ids.
            yield json.dumps(message.get("id")), message


class Ledger:
    """The requests read from the client and not answered yet."""

    def __init__(self) -> None:
        self._open: set[str] = set()
        self._changed = threading.Condition()

    @property
    def waiting(self) -> int:
        with self._changed:
            return len(self._open)

    def read(self, line: bytes) -> None:
        """A line from the client: its requests are now waiting for an answer."""
        with self._changed:
            for key, message in _ids(line):
                if "method" in message and "id" in message:
                    self._open.add(key)
                elif message.get("method") == "notifications/cancelled":
                    # The spec: a cancelled request gets no answer.
                    params = message.get("params")
                    if isinstance(params, dict):
                        self._open.discard(json.dumps(params.get("requestId")))
            self._changed.notify_all()

    def wrote(self, line: bytes) -> bool:
        """A line the server wrote; False if it holds no JSON-RPC message at all."""
        found = False
        with self._changed:
            for key, message in _ids(line):
                found = True
                if "method" not in message:  # a response or an error, not a request of ours
                    self._open.discard(key)
            self._changed.notify_all()
        return found

    def settle(self, timeout: float) -> bool:
        """Wait until every request read has been answered; False on timeout."""
        with self._changed:
            return self._changed.wait_for(lambda: not self._open, timeout)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


class Stdout:
    """The client's end, written by both relays (answers, and refusals of lines the server
    never sees): whole lines, one at a time."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._lock = threading.Lock()

    def write(self, line: bytes) -> None:
        with self._lock:
            try:
                _write_all(self.fd, line)
            except OSError as exc:  # the client went away: its answers have nowhere to go
                log.debug("stdout closed: %s", exc)


def _relay_in(
    client: int,
    server: int,
    ledger: Ledger,
    within: float,
    stdout: Stdout,
    limit: int = wire.MAX_REQUEST_BYTES,
) -> None:
    """Client → server, line by line, each screened first (a refused one is answered here);
    at the end of stdin, wait for the answers, then close."""
    try:
        with open(client, "rb", closefd=False) as lines:
            while line := lines.readline(limit + 1):
                refusal = wire.screen(line) if len(line) <= limit else _skip(line, lines, limit)
                if refusal is None:
                    ledger.read(line)  # noted before the server can answer it
                    _write_all(server, line)
                    continue
                log.warning("refused a client message (id %r): %s", refusal.id, refusal.reason)
                if refusal.reply is not None:
                    stdout.write(refusal.reply)
    except OSError as exc:  # stdin unreadable, or the server's end gone
        log.warning("stdin relay stopped: %s", exc)
    if not ledger.settle(within):
        log.warning(
            "stdin closed; %d request(s) still unanswered after %.0f s are cancelled",
            ledger.waiting,
            within,
        )
    os.close(server)  # the server reads the end of its input now


def _skip(head: bytes, lines: Any, limit: int) -> wire.Refusal | None:
    """A line of which ``limit + 1`` bytes (``head``) were read: one of ``limit`` bytes and its
    newline is screened as usual; a longer one is read past in pieces, never held whole."""
    if head.endswith(b"\n"):
        return wire.screen(head)
    while piece := lines.readline(CHUNK):
        if piece.endswith(b"\n"):
            break
    return wire.too_large(head, limit)


def _relay_out(server: int, client: Stdout, ledger: Ledger, done: threading.Event) -> None:
    """Server → client, line by line; after each line, the requests it answers are crossed off.
    Once ``done`` is set, what the pipe still holds is passed on and the relay ends."""
    rest = b""
    while True:
        try:
            chunk = os.read(server, CHUNK)
        except BlockingIOError:  # drained after done
            return
        if not chunk:
            return
        *lines, rest = (rest + chunk).split(b"\n")
        for line in lines:
            _pass_on(line + b"\n", client, ledger)
        if done.is_set():
            os.set_blocking(server, False)


def _pass_on(line: bytes, client: Stdout, ledger: Ledger) -> None:
    if not line.strip():
        return
    if not ledger.wrote(line):
        log.warning("not JSON-RPC, kept off stdout: %s", line[:200].decode("utf-8", "replace"))
        return
    client.write(line)


@contextmanager
def answering(
    within: float = ANSWER_WITHIN_S, limit: int = wire.MAX_REQUEST_BYTES
) -> Iterator[Ledger | None]:
    """Serve stdio through the relays while the block runs (see the module's docstring).

    Yields the ledger (None where the relay is off: Windows, or no usable fd 0 and 1).
    """
    if sys.platform == "win32":
        yield None
        return
    try:
        client_in, client_out = os.dup(0), os.dup(1)
    except OSError:
        yield None
        return
    ledger = Ledger()
    stdout = Stdout(client_out)
    done = threading.Event()
    in_r, in_w = os.pipe()
    out_r, out_w = os.pipe()
    os.dup2(in_r, 0)
    os.dup2(out_w, 1)
    os.close(in_r)
    incoming = threading.Thread(
        target=_relay_in,
        args=(client_in, in_w, ledger, within, stdout, limit),
        name="bigmind-stdin",
        daemon=True,
    )
    outgoing = threading.Thread(
        target=_relay_out, args=(out_r, stdout, ledger, done), name="bigmind-stdout"
    )
    incoming.start()
    outgoing.start()
    try:
        yield ledger
    finally:
        sys.stdout.flush()
        # Every answer is in the pipe by now (the server awaited its writes): the relay passes
        # on what it holds and stops. The newline wakes it if it is waiting for more.
        done.set()
        _write_all(out_w, b"\n")
        outgoing.join(DRAIN_S)
        os.dup2(client_out, 1)
        os.dup2(client_in, 0)
        # The pipes' descriptors stay open: the SDK may hold copies of them, and the stdin
        # relay may still be reading (the server stopped for another reason than EOF).
