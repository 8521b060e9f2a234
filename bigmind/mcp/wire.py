"""Each line a client sends, checked before the MCP SDK reads it: every request is answered.

The SDK reads a line it cannot take (not JSON, not UTF-8, a JSON-RPC envelope it does not
know, a string holding a lone UTF-16 surrogate, nesting its parser refuses) as an exception it
logs, and the request is never answered: the client waits forever. :func:`screen` tells such a
line apart and writes the answer JSON-RPC 2.0 prescribes instead of passing it on:

- not UTF-8 or not JSON: ``-32700`` (parse error);
- an envelope that is not a JSON-RPC 2.0 request, notification or response (``"jsonrpc"``
  other than ``"2.0"``, an id that is neither a string nor an integer, a method that is not a
  string, params that are not an object, a batch, which MCP 2025-06-18 no longer has):
  ``-32600`` (invalid request);
- well-formed, but arguments no tool can take (a lone surrogate, nesting deeper than
  :data:`MAX_DEPTH`): ``-32602`` (invalid params).

The answer carries the request's id whenever the line yields one (read from the JSON, or from
its first bytes when it does not parse), else ``null``. A notification or a response that fails
gets no answer (JSON-RPC forbids one); it is dropped and logged. Logs name the reason and the
id, never the line's content, which may hold anything.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from bigmind.config import Settings

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
MAX_DEPTH = 64  # a tool call nests 5 deep; the SDK's parser gives up far deeper, silently
MAX_REQUEST_BYTES: int = Settings.model_fields["max_request_bytes"].default

_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")  # an escape that may be half of a pair
_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,18}(?![\d.eE])|"(?:[^"\\\x00-\x1f]|\\.){0,200}")')


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a line is not passed on, and the line answering it (None: nothing may answer)."""

    reason: str
    reply: bytes | None
    id: object = None


def _body(code: int, message: str, request_id: object = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def _line(value: object) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode() + b"\n"


def error(code: int, message: str, request_id: object = None) -> bytes:
    """A JSON-RPC error response, as one line."""
    return _line(_body(code, message, request_id))


def guess_id(head: bytes) -> object:
    """The request id in the first bytes of a line that did not parse, if one is plain there."""
    found = _ID.search(head[:65536])
    if found is None:
        return None
    try:
        return json.loads(found.group(1))
    except ValueError:  # an escape that is not JSON after all
        return None


def too_large(head: bytes, limit: int) -> Refusal:
    """The answer to a line longer than ``limit`` bytes, of which ``head`` was read."""
    rid = guess_id(head)
    message = (
        f"Invalid request: the message is larger than {limit:,} bytes "
        "(BIGMIND_MAX_REQUEST_BYTES); send less text in one call."
    )
    return Refusal(f"larger than {limit:,} bytes", error(INVALID_REQUEST, message, rid), rid)


def screen(line: bytes) -> Refusal | None:
    """None if the SDK can take ``line`` as it is; else the refusal to answer instead."""
    if not line.strip():
        return None
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        rid = guess_id(line)
        why = f"Parse error: the message is not UTF-8 (byte {exc.start}); send UTF-8 text."
        return Refusal("not UTF-8", error(PARSE_ERROR, why, rid), rid)
    try:
        data = json.loads(text)
    except RecursionError:
        why = f"Parse error: the message nests deeper than {MAX_DEPTH} levels."
        return Refusal("nested too deep to parse", error(PARSE_ERROR, why))
    except ValueError as exc:
        return Refusal("not JSON", error(PARSE_ERROR, f"Parse error: not valid JSON ({exc})."))
    if isinstance(data, list):
        return _batch(data)
    return _message(data, line)


def _batch(items: list[Any]) -> Refusal:
    """MCP 2025-06-18 has no batches: each request in one is answered with invalid request."""
    why = "Invalid request: batches are not part of MCP; send each message on a line of its own."
    replies = [
        _body(INVALID_REQUEST, why, m["id"])
        for m in items
        if isinstance(m, dict) and "method" in m and _is_id(m.get("id"))
    ]
    if not items:
        return Refusal("an empty batch", error(INVALID_REQUEST, "Invalid request: empty batch."))
    if not replies:
        return Refusal("a batch of notifications or responses", None)
    return Refusal("a batch", _line(replies))


def _is_id(value: object) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def _message(data: object, line: bytes) -> Refusal | None:
    if not isinstance(data, dict):
        why = "Invalid request: a message is a JSON object."
        return Refusal("not an object", error(INVALID_REQUEST, why))
    has_id = "id" in data
    rid = data.get("id") if _is_id(data.get("id")) else None
    # Whether the sender waits for an answer: a request, or what cannot be told from one.
    asks = has_id and ("method" in data or not ("result" in data or "error" in data))

    def refuse(code: int, why: str, reason: str) -> Refusal:
        return Refusal(reason, error(code, why, rid) if asks else None, rid)

    if data.get("jsonrpc") != "2.0":
        return refuse(INVALID_REQUEST, 'Invalid request: "jsonrpc" must be "2.0".', "not 2.0")
    if has_id and rid is None:
        asks = "method" in data
        why = "Invalid request: an id is a string or an integer."
        return refuse(INVALID_REQUEST, why, "a bad id")
    if "method" in data:
        if not isinstance(data["method"], str):
            why = "Invalid request: the method is a string."
            return refuse(INVALID_REQUEST, why, "a bad method")
        if "params" in data and not isinstance(data["params"], dict):
            why = "Invalid request: params are a JSON object."
            return refuse(INVALID_REQUEST, why, "bad params")
    elif not has_id or not ("result" in data or "error" in data):
        why = "Invalid request: no method (a request) and no result or error (a response)."
        return refuse(INVALID_REQUEST, why, "neither request nor response")
    fault = _contents(data, line)
    return refuse(INVALID_PARAMS, f"Invalid params: {fault}", fault) if fault else None


def _contents(data: dict[str, Any], line: bytes) -> str | None:
    """What no tool can take in a well-formed message: too deep, or not Unicode text."""
    deep = line.count(b"[") + line.count(b"{") > MAX_DEPTH
    halves = _SURROGATE.search(line) is not None
    if not (deep or halves):
        return None
    stack: list[tuple[object, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > MAX_DEPTH:
            return f"the message nests deeper than {MAX_DEPTH} levels."
        if isinstance(value, dict):
            stack.extend((k, depth) for k in value)
            stack.extend((v, depth + 1) for v in value.values())
        elif isinstance(value, list):
            stack.extend((v, depth + 1) for v in value)
        elif isinstance(value, str) and halves:
            try:
                value.encode("utf-8")
            except UnicodeEncodeError as exc:
                code = ord(value[exc.start])
                return (
                    f"a string holds a lone UTF-16 surrogate (\\u{code:04x}), which is not "
                    "Unicode text; send valid UTF-8."
                )
    return None
