"""Every request gets an answer: lines the MCP SDK would drop unanswered are answered with the
JSON-RPC error the specification prescribes (bigmind/mcp/wire.py, screened by the stdio relay),
and arguments no tool can take are refused in one line before any tool runs."""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest
from mcp_calls import BIGMIND, Cli, call, refused

from bigmind.mcp import wire
from bigmind.mcp.stdio import Ledger, Stdout, _relay_in

REQUEST = {"jsonrpc": "2.0", "id": 5, "method": "tools/call"}
CALL = {"name": "memory_recall", "arguments": {"query": "x"}}


def raw(**message: Any) -> bytes:
    return json.dumps(message).encode() + b"\n"


def answer(line: bytes) -> tuple[object, int]:
    refusal = wire.screen(line)
    assert refusal is not None and refusal.reply is not None, line[:80]
    reply = json.loads(refusal.reply)
    assert reply["jsonrpc"] == "2.0" and "result" not in reply
    return reply["id"], reply["error"]["code"]


@pytest.mark.parametrize(
    "line",
    [
        raw(**REQUEST, params=CALL),
        raw(jsonrpc="2.0", method="notifications/initialized"),
        raw(jsonrpc="2.0", id="a", result={}),  # the client answering roots/list
        raw(jsonrpc="2.0", id=3, error={"code": -1, "message": "no roots"}),
        raw(**REQUEST, params={"name": "memory_store_fact", "arguments": {"fact": "🧠 ok ✓"}}),
        b'{"jsonrpc":"2.0","id":1,"method":"x","params":{"q":"\\ud83e\\udde0 a pair is fine"}}\n',
        b"\n",
    ],
)
def test_what_the_sdk_can_take_passes(line: bytes) -> None:
    assert wire.screen(line) is None


@pytest.mark.parametrize(
    ("line", "rid", "code"),
    [
        (b'{"jsonrpc":"2.0","id":5,"method":', None, wire.PARSE_ERROR),
        (b"not json at all", None, wire.PARSE_ERROR),
        (b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"q":"\xff"}}', 5, -32700),
        (b"[" * 5000 + b"]" * 5000, None, wire.PARSE_ERROR),  # deeper than the parser goes
        (raw(jsonrpc="1.0", id=5, method="tools/list"), 5, wire.INVALID_REQUEST),
        (raw(id=5, method="tools/list"), 5, wire.INVALID_REQUEST),
        (raw(jsonrpc="2.0", id={"a": 1}, method="tools/list"), None, wire.INVALID_REQUEST),
        (raw(jsonrpc="2.0", id=1.5, method="tools/list"), None, wire.INVALID_REQUEST),
        (raw(jsonrpc="2.0", id=True, method="tools/list"), None, wire.INVALID_REQUEST),
        (raw(jsonrpc="2.0", id=5, method=123), 5, wire.INVALID_REQUEST),
        (raw(jsonrpc="2.0", id=5, method="tools/list", params=[1]), 5, wire.INVALID_REQUEST),
        (raw(jsonrpc="2.0", id=5), 5, wire.INVALID_REQUEST),
        (b"42", None, wire.INVALID_REQUEST),
        (b"[]", None, wire.INVALID_REQUEST),
        (raw(**REQUEST, params={"arguments": {"q": "x \ud800 y"}}), 5, wire.INVALID_PARAMS),
        (raw(**REQUEST, params={"arguments": {"\udfff": 1}}), 5, wire.INVALID_PARAMS),
        (
            b'{"jsonrpc":"2.0","id":5,"method":"x","params":{"a":'
            + b"[" * 100
            + b"]" * 100
            + b"}}",
            5,
            wire.INVALID_PARAMS,
        ),
    ],
)
def test_what_the_sdk_would_drop_is_answered_with_the_prescribed_error(
    line: bytes, rid: object, code: int
) -> None:
    assert answer(line) == (rid, code)


def test_a_batch_answers_each_request_in_it() -> None:
    batch = json.dumps(
        [
            {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
            {"jsonrpc": "2.0", "method": "notifications/initialized"},
            {"jsonrpc": "2.0", "id": "b", "method": "ping"},
        ]
    ).encode()
    refusal = wire.screen(batch)
    assert refusal is not None and refusal.reply is not None
    replies = json.loads(refusal.reply)
    assert [(r["id"], r["error"]["code"]) for r in replies] == [(1, -32600), ("b", -32600)]
    only_notes = wire.screen(b'[{"jsonrpc": "2.0", "method": "notifications/initialized"}]')
    assert only_notes is not None and only_notes.reply is None  # nothing may answer those


def test_a_notification_or_response_that_fails_is_dropped_unanswered() -> None:
    for line in (
        raw(jsonrpc="2.0", method="notifications/x", params={"a": "\udc00"}),
        raw(jsonrpc="1.0", method="notifications/initialized"),
        raw(jsonrpc="2.0", id=2, result={"roots": [{"uri": "\ud800"}]}),
    ):
        refusal = wire.screen(line)
        assert refusal is not None and refusal.reply is None


def test_an_id_is_found_in_a_line_that_does_not_parse() -> None:
    assert wire.guess_id(b'{"jsonrpc":"2.0","id":"abc-1","method":"tools/call","par') == "abc-1"
    assert wire.guess_id(b'{"id": 77, "x": ') == 77
    assert wire.guess_id(b'{"id": 1.5}') is None and wire.guess_id(b"{") is None


def relay(lines: bytes, limit: int) -> tuple[bytes, bytes]:
    """What ``lines`` from a client become through the stdin relay: (what the server read,
    what the client was answered)."""
    client_r, client_w = os.pipe()
    server_r, server_w = os.pipe()
    out_r, out_w = os.pipe()
    t = threading.Thread(
        target=_relay_in, args=(client_r, server_w, Ledger(), 0.05, Stdout(out_w), limit)
    )
    t.start()
    writer = threading.Thread(target=_write_and_close, args=(client_w, lines))
    writer.start()  # more than a pipe holds: written while the server end is read
    server = b"".join(iter(lambda: os.read(server_r, 65536), b""))
    t.join(30)
    writer.join(30)
    os.close(out_w)
    client = b"".join(iter(lambda: os.read(out_r, 65536), b""))
    for fd in (client_r, server_r, out_r):
        os.close(fd)
    return server, client


def _write_and_close(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    os.close(fd)  # the end of stdin


def test_a_line_over_the_cap_is_answered_unread_and_the_next_one_passes() -> None:
    big = raw(**REQUEST, params={"name": "x", "arguments": {"q": "a" * 200_000}})
    ok = raw(jsonrpc="2.0", id=6, method="tools/list")
    server, client = relay(big + ok, limit=65_536)
    assert server == ok
    reply = json.loads(client)
    assert reply["id"] == 5 and reply["error"]["code"] == wire.INVALID_REQUEST
    assert "larger than 65,536 bytes" in reply["error"]["message"]
    exact = raw(jsonrpc="2.0", id=7, method="x", params={"p": "b" * 100})
    server, client = relay(exact, limit=len(exact) - 1)  # its content is the limit: taken
    assert server == exact and client == b""


@pytest.mark.anyio
async def test_no_argument_reaches_a_tool_that_no_tool_can_take(client: Cli) -> None:
    said = await refused(client, "memory_deprecate_fact", fact_id=2**63, reason="x")
    assert "'fact_id' must fit in 64 bits" in said
    said = await refused(client, "memory_export", output_path="a\x00b")
    assert "'output_path' holds a NUL character" in said
    said = await refused(client, "memory_store_fact", category="x", fact="y" * 100_001)
    assert "'fact' is 100,001 characters" in said
    said = await refused(client, "memory_end_session", one_liner="x", topics=["a\x00"])
    assert "'topics' holds a NUL character" in said


@pytest.mark.e2e
def test_bigmind_serve_answers_every_line_a_client_sends(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BIGMIND_")}
    env.update(
        BIGMIND_DB_PATH=str(tmp_path / "m.db"),
        BIGMIND_EMBED_MODEL="off",
        BIGMIND_WEB="0",
        BIGMIND_MAX_REQUEST_BYTES="100000",
    )
    probes = [
        b'{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"memory_store_fact",'
        b'"arguments":{"category":"x","fact":"x \\ud800 y"}}}',
        b'{"jsonrpc":"2.0","id":2,"method":',
        raw(jsonrpc="1.0", id=3, method="tools/list").strip(),
        b'[{"jsonrpc":"2.0","id":4,"method":"tools/list"}]',
        b'{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}',
        b'{"jsonrpc":"2.0","id":6,"method":"x","params":{"a":' + b"[" * 2000 + b"]" * 2000 + b"}}",
        raw(**REQUEST, params={"name": "memory_recall", "arguments": {"query": "q" * 200_000}}),
        raw(jsonrpc="2.0", id=8, method="tools/call", params={"name": "memory_get_stats"}),
    ]
    init = raw(
        jsonrpc="2.0",
        id=0,
        method="initialize",
        params={
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "probe", "version": "1"},
        },
    )
    proc = subprocess.Popen(
        [str(BIGMIND), "serve"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert proc.stdin is not None and proc.stdout is not None
    body = b"".join(p if p.endswith(b"\n") else p + b"\n" for p in probes)
    proc.stdin.write(init + raw(jsonrpc="2.0", method="notifications/initialized") + body)
    proc.stdin.close()  # every line read before the end is answered before the server stops
    answers: list[tuple[object, int | None]] = []
    stats = ""
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    while sel.select(60) and (line := proc.stdout.readline()):
        message = json.loads(line)
        for m in message if isinstance(message, list) else [message]:
            answers.append((m["id"], (m.get("error") or {}).get("code")))
            stats = m["result"]["content"][0]["text"] if m["id"] == 8 else stats
    sel.close()
    proc.stdout.close()
    assert proc.wait(60) == 0
    assert sorted(answers, key=repr) == sorted(
        [
            (0, None),
            (1, wire.INVALID_PARAMS),  # the lone surrogate
            (None, wire.PARSE_ERROR),  # cut short
            (3, wire.INVALID_REQUEST),
            (4, wire.INVALID_REQUEST),  # the batch's one request
            (None, wire.INVALID_REQUEST),  # the object id
            (None, wire.PARSE_ERROR),  # 2,000 deep
            (5, wire.INVALID_REQUEST),  # over BIGMIND_MAX_REQUEST_BYTES: id read off its head
            (8, None),
        ],
        key=repr,
    )
    assert json.loads(stats)["counts"]["sessions"] == 0  # the server went on serving


@pytest.mark.anyio
async def test_a_pattern_argument_is_bounded_where_it_enters(client: Cli) -> None:
    """A 49,997-character topic once reached SQLite as 'LIKE or GLOB pattern too complex'."""
    await call(client, "memory_start_session")
    said = await refused(client, "memory_list_sessions", topic="A" * 49_997)
    assert "'topic'" in said and "60" in said
    _, data = await call(client, "memory_list_sessions", topic="A" * 60)  # a tag's length: fine
    assert data["sessions"] == []


@pytest.mark.anyio
async def test_an_unknown_argument_with_an_odd_name_is_quoted_on_the_one_line(client: Cli) -> None:
    said = await refused(client, "memory_deprecate_fact", fact_id=1, reason="x", **{"\n": None})
    assert '"\\n"' in said and "\n" not in said
