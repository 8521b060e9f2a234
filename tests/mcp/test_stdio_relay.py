"""The stdio relays of `bigmind serve` (bigmind/mcp/stdio.py) on pipes: what counts as waiting
for an answer, and that the end of stdin waits for the answers, within its bound."""

from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from bigmind.mcp.stdio import Ledger, Stdout, _relay_in, _relay_out


def line(**message: Any) -> bytes:
    return json.dumps({"jsonrpc": "2.0", **message}).encode() + b"\n"


def test_requests_wait_for_their_answers_by_exact_id() -> None:
    ledger = Ledger()
    ledger.read(line(id=1, method="tools/call"))
    ledger.read(line(method="notifications/initialized"))  # a notification: nothing to wait for
    ledger.read(b'[{"jsonrpc": "2.0", "id": "1", "method": "tools/list"}]')  # a batch, id "1"
    assert ledger.waiting == 2
    assert ledger.wrote(line(id=1, result={}))
    assert ledger.waiting == 1 and not ledger.settle(0)  # "1" is not 1
    ledger.wrote(line(id="1", error={"code": -1, "message": "x"}))
    assert ledger.settle(0)


def test_a_cancelled_request_waits_for_nothing_and_a_server_request_answers_nothing() -> None:
    ledger = Ledger()
    ledger.read(line(id=7, method="tools/call"))
    ledger.wrote(line(id=7, method="roots/list"))  # the server asks the client: no answer
    assert ledger.waiting == 1
    ledger.read(line(method="notifications/cancelled", params={"requestId": 7}))
    assert ledger.settle(0)


def test_a_line_that_is_no_json_rpc_is_told_apart() -> None:
    ledger = Ledger()
    assert not ledger.wrote(b"Downloading model...\n")
    assert not ledger.wrote(b"42\n")


@pytest.fixture
def pipes() -> Iterator[tuple[int, int, int, int]]:
    """The client's pipe into the relay and the relay's pipe into the server. The test closes
    the client's end (that is the end of stdin); the relay closes its end into the server."""
    client_r, client_w = os.pipe()
    server_r, server_w = os.pipe()
    yield client_r, client_w, server_r, server_w
    os.close(client_r)
    os.close(server_r)


def read_all(fd: int) -> bytes:
    out = b""
    while chunk := os.read(fd, 65536):
        out += chunk
    return out


def test_end_of_stdin_reaches_the_server_once_its_requests_are_answered(
    pipes: tuple[int, int, int, int],
) -> None:
    client_r, client_w, server_r, server_w = pipes
    ledger = Ledger()
    relay = threading.Thread(target=_relay_in, args=(client_r, server_w, ledger, 60.0, Stdout(-1)))
    relay.start()
    os.write(client_w, line(id=1, method="tools/call"))
    os.close(client_w)  # the client is done writing
    got = os.read(server_r, 65536)
    assert json.loads(got)["id"] == 1
    relay.join(0.2)
    assert relay.is_alive()  # still holding the end of input: the call is in flight
    ledger.wrote(line(id=1, result={}))
    relay.join(30)
    assert not relay.is_alive() and read_all(server_r) == b""  # now the server reads EOF


def test_the_wait_for_answers_is_bounded(
    pipes: tuple[int, int, int, int], caplog: pytest.LogCaptureFixture
) -> None:
    client_r, client_w, server_r, server_w = pipes
    relay = threading.Thread(
        target=_relay_in, args=(client_r, server_w, Ledger(), 0.05, Stdout(-1))
    )
    relay.start()
    os.write(client_w, line(id=9, method="tools/call"))
    with caplog.at_level(logging.WARNING, logger="bigmind.mcp.stdio"):
        os.close(client_w)
        relay.join(30)
        assert read_all(server_r).count(b"\n") == 1  # the request, then EOF: never answered
    assert not relay.is_alive()
    assert "1 request(s) still unanswered" in caplog.text


def test_the_server_side_passes_json_rpc_on_and_keeps_stray_output_off_stdout(
    caplog: pytest.LogCaptureFixture,
) -> None:
    server_r, server_w = os.pipe()
    client_r, client_w = os.pipe()
    ledger, done = Ledger(), threading.Event()
    ledger.read(line(id=3, method="tools/call"))
    relay = threading.Thread(target=_relay_out, args=(server_r, Stdout(client_w), ledger, done))
    relay.start()
    with caplog.at_level(logging.WARNING, logger="bigmind.mcp.stdio"):
        os.write(server_w, b"stray print from a library\n" + line(id=3, result={}))
        assert ledger.settle(30)  # crossed off once passed on
        done.set()
        os.write(server_w, b"\n")  # as answering() does: wake the relay
        relay.join(30)
    assert not relay.is_alive()
    os.close(client_w)
    assert [json.loads(x)["id"] for x in read_all(client_r).splitlines()] == [3]
    assert "stray print from a library" in caplog.text
    for fd in (server_r, server_w, client_r):
        os.close(fd)
