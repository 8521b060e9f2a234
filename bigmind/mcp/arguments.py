"""Bad tool arguments, said in one line the agent can act on.

FastMCP validates a call's arguments with pydantic before the tool runs, and its error is a
multi-line dump with links to pydantic's documentation ("3 validation errors for
call[memory_store_fact] … For further information visit https://errors.pydantic.dev/…").
:class:`ReadableArguments` catches that one error for every tool and says instead what is
wrong with each argument, by its name and in the terms of the tool's own input schema:

    missing required argument fact; unknown argument content (this tool takes: category,
    fact, confidence, session_id, importance, scope); 'importance' must be an integer from 1
    to 10, got "high".

What the schema accepts is read from the schema itself (the bounds come from ``limits.py``
through it), so a message can never disagree with ``tools/list``.

Before any tool sees them, every call's arguments are held to what no tool can take
(:func:`unfit`): an integer beyond 64 bits (no id or count is that large, and the databases
cannot hold one), a NUL character (not text, and PostgreSQL cannot store it), a string longer
than the longest text any tool stores (``limits.CHUNK``).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Mapping, Sequence
from typing import Any

from fastmcp.exceptions import ToolError, ValidationError
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from pydantic import ValidationError as PydanticValidationError
from pydantic_core import ErrorDetails

from bigmind import limits

SHOWN = 40  # characters of a wrong value quoted back ("got …")
MISSING = ("missing", "missing_argument")
UNKNOWN = ("unexpected_keyword_argument", "extra_forbidden")


class ReadableArguments(Middleware):
    """Turns an argument-validation failure of any tool into a one-line ToolError."""

    async def on_call_tool(
        self, context: MiddlewareContext[Any], call_next: CallNext[Any, Any]
    ) -> Any:
        fault = unfit(context.message.arguments or {})
        if fault:
            raise ToolError(fault)
        try:
            return await call_next(context)
        except ValidationError as exc:
            cause = exc.__cause__
            if not isinstance(cause, PydanticValidationError):
                raise
            name = context.message.name
            schema: Mapping[str, Any] = {}
            if context.fastmcp_context is not None:
                tool = await context.fastmcp_context.fastmcp.get_tool(name)
                schema = tool.parameters if tool is not None else {}
            # Not logged: the line quotes the values sent (FastMCP logs the error's kinds).
            raise ToolError(explain(schema, cause.errors(include_url=False))) from exc


def unfit(arguments: Mapping[str, Any]) -> str | None:
    """What no tool takes in a call's ``arguments``, in one line; None if nothing."""
    stack: list[tuple[str, object]] = list(arguments.items())
    while stack:
        name, value = stack.pop()
        if isinstance(value, bool):
            continue
        if isinstance(value, int) and not -limits.ID_MAX - 1 <= value <= limits.ID_MAX:
            return f"'{name}' must fit in 64 bits (at most {limits.ID_MAX:,}), got {value:.3e}."
        if isinstance(value, str):
            if "\x00" in value:
                return f"'{name}' holds a NUL character (\\u0000), which no text or path may hold."
            if len(value) > limits.CHUNK:
                return (
                    f"'{name}' is {len(value):,} characters; no argument may be longer than "
                    f"{limits.CHUNK:,}."
                )
        elif isinstance(value, Mapping):
            stack += ((name, v) for v in value.values())
        elif isinstance(value, list):
            stack += ((name, v) for v in value)
    return None


def explain(schema: Mapping[str, Any], errors: Sequence[ErrorDetails]) -> str:
    """One line for pydantic's ``errors`` of a call to a tool with input ``schema``: the
    missing arguments, then each wrong one (once, however many union branches refused it),
    then the unknown ones with the names the tool takes."""
    props: Mapping[str, Any] = schema.get("properties", {})
    missing: list[str] = []
    unknown: list[str] = []
    wrong: dict[str, str] = {}
    for e in errors:
        arg = str(e["loc"][0]) if e["loc"] else ""
        if e["type"] in MISSING:
            missing.append(arg)
        elif e["type"] in UNKNOWN:
            unknown.append(arg)
        elif arg not in wrong:
            wrong[arg] = _wrong(arg, props.get(arg, {}), e)
    parts = []
    if missing:
        s = "s" if len(missing) > 1 else ""
        parts.append(f"missing required argument{s} {', '.join(missing)}")
    parts += wrong.values()
    if unknown:
        parts.append(_unknown(unknown, list(props)))
    return ("; ".join(parts) or "invalid arguments") + "."


def _unknown(names: list[str], known: list[str]) -> str:
    s = "s" if len(names) > 1 else ""
    said = f"unknown argument{s} {', '.join(_name(n) for n in names)}"
    close = [m for n in names for m in difflib.get_close_matches(n, known, n=1)]
    if close:
        said += f" (did you mean {', '.join(close)}?)"
    takes = ", ".join(known) if known else "no arguments"
    return f"{said}; this tool takes: {takes}"


def _name(name: str) -> str:
    """An argument's name as sent: as it is when it looks like one, else quoted (a newline or a
    long name stays off the one line)."""
    return name if name.isidentifier() and len(name) <= SHOWN else _shown(name)


def _wrong(arg: str, prop: Mapping[str, Any], e: ErrorDetails) -> str:
    if e["type"] == "value_error":  # a validator of ours: its message is already the answer
        return f"'{arg}': {e['msg'].removeprefix('Value error, ')}"
    return f"'{arg}' must be {expected(prop)}, got {_shown(e['input'])}"


def expected(prop: Mapping[str, Any]) -> str:
    """What a JSON schema accepts, in words: "an integer from 1 to 10", "one of all, project",
    "a string of at most 2,000 characters", "an array of strings or a string"."""
    options = prop.get("anyOf")
    if options:
        kinds = [expected(o) for o in options if o.get("type") != "null"]
        said = " or ".join(dict.fromkeys(kinds))
        if len(kinds) < len(options):
            said += " (or left out)"
        return said
    if "enum" in prop:
        return "one of " + ", ".join(str(v) for v in prop["enum"])
    if "const" in prop:
        return json.dumps(prop["const"])
    kind = prop.get("type")
    if kind in ("integer", "number"):
        return ("an integer" if kind == "integer" else "a number") + _range(prop)
    if kind == "string":
        return "a string" + _length(prop)
    if kind == "boolean":
        return "true or false"
    if kind == "array":
        return f"an array of {_plural(expected(prop.get('items', {})))}"
    if kind == "object":
        return "an object"
    return "a valid value"


def _range(prop: Mapping[str, Any]) -> str:
    low, high = prop.get("minimum"), prop.get("maximum")
    if low is not None and high is not None:
        return f" from {_num(low)} to {_num(high)}"
    if low is not None:
        return f" of at least {_num(low)}"
    if high is not None:
        return f" of at most {_num(high)}"
    if "exclusiveMinimum" in prop:
        return f" greater than {_num(prop['exclusiveMinimum'])}"
    return ""


def _length(prop: Mapping[str, Any]) -> str:
    if "maxLength" in prop:
        return f" of at most {prop['maxLength']:,} characters"
    if "minLength" in prop:
        return f" of at least {prop['minLength']:,} characters"
    return ""


def _plural(one: str) -> str:
    """ "a string" → "strings", "an integer from 1 to 10" → "integers from 1 to 10"."""
    words = one.split(" ", 2)
    if words[0] in ("a", "an") and len(words) > 1:
        return " ".join([words[1] + "s", *words[2:]])
    return one


def _num(value: float) -> str:
    return f"{value:,}" if isinstance(value, int) else str(value)


def _shown(value: object) -> str:
    """The value the agent sent, short and on one line: long text by its length."""
    if isinstance(value, str) and len(value) > SHOWN:
        return f"{len(value):,} characters"
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    text = " ".join(text.split())
    return text if len(text) <= SHOWN else text[: SHOWN - 1] + "…"
