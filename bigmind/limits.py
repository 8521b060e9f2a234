"""Input limits and their checks: the one place a bound a caller can hit is written down.

The validators below (used by the store and every memory feature), the MCP tools' schemas
(``Field(le=RESULTS)``…) and the tools' descriptions ("≤ {ONE_LINER} characters") all take
their numbers from here, so a tool never promises what the store refuses. The bounds are
generous for real use and small enough that one call cannot flood the bootstrap packet.

Text that is kept goes through :func:`stored_text`, :func:`optional_stored` or
:func:`stored_lines`: checked like any text, then redacted (:mod:`bigmind.redact`), so no
secret is ever written. :func:`check_text` and :func:`optional_text` are for what is not kept
as memory (queries, names, ids); a test holds every caller to that.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic_core import ErrorDetails

from bigmind import redact
from bigmind.errors import InvalidInput

# Text, in characters.
FACT = 2_000
CHUNK = 100_000
SUMMARY = 40_000  # a session's Tier-2 summary, key facts or code references
ONE_LINER = 200
SHORT = 500  # a reason, a role, a flag reason, an expertise list, a savings note
OUTCOME = 2 * SHORT  # a session's outcome, a focus description
REMINDER = SHORT  # a reminder leads every packet until done: kept short
QUERY = 2_000
PERSON_QUERY = 1_000
PROFILE_TEXT = 4_000  # preferences; pinned facts
NOTES = 4_000  # notes on a person, in one call
NOTES_KEPT = 8_000  # all of a person's notes: older lines are trimmed beyond it
EXPERTISE_KEPT = 1_000  # a person's whole expertise list: the oldest items go beyond it
NAME = 100  # usernames, session ids, IDE hints, method names
TITLE = 80  # a company knowledge title (the plan: short)
GLOBAL_CONTENT = 4_000  # a company knowledge entry (the plan's target is ≤ 500 tokens)
REVIEW_NOTES = 1_000
CATEGORY = 40
TOPIC = 60
# Counts and ranges.
TOPICS = 20
FILES = 50  # files named in one focus announcement, or bound to one fact
REPLACES = 20  # facts one fact may replace in one call
PATH = 1_000  # one file path
RESULTS = 100  # the most results one call returns
IMPORTANCE = (1, 10)
ID_MAX = 2**63 - 1  # the largest row id either database holds (64-bit)
STALE_DAYS = 3_650  # the longest "stale after" a health check or scan accepts
RETENTION_DAYS = 36_500  # the longest retention memory_vacuum accepts
DETAIL_TOKENS = (200, 50_000)  # the size cap memory_get_session_detail accepts
DETAIL_TOKENS_DEFAULT = 4_000  # its default, and the size of a session read as a resource

SHOWN = 40  # characters of a wrong value quoted back ("got …")
MISSING = ("missing", "missing_argument")
UNKNOWN = ("unexpected_keyword_argument", "extra_forbidden")

_CATEGORY = re.compile(r"^[a-z][a-z0-9_\-]{0," + str(CATEGORY - 1) + "}$")


def optional_text(name: str, value: str | None, limit: int) -> str | None:
    """Stripped text, None when empty; refuses text longer than ``limit``."""
    if value is None or not value.strip():
        return None
    value = value.strip()
    if len(value) > limit:
        raise InvalidInput(
            f"'{name}' is {len(value):,} characters; the limit is {limit:,}. "
            "Shorten it or split it into several calls."
        )
    return value


def check_text(name: str, value: str | None, limit: int) -> str:
    """Like :func:`optional_text`, but the text is required."""
    out = optional_text(name, value, limit)
    if out is None:
        raise InvalidInput(f"'{name}' must not be empty.")
    return out


def stored_text(name: str, value: str | None, limit: int) -> str:
    """Required text that is stored: :func:`check_text`, then its secrets redacted."""
    return redact.scrub(check_text(name, value, limit))


def optional_stored(name: str, value: str | None, limit: int) -> str | None:
    """Optional text that is stored: :func:`optional_text`, then its secrets redacted."""
    return redact.scrub_optional(optional_text(name, value, limit))


def check_unit(name: str, value: float) -> float:
    if not 0.0 <= value <= 1.0:
        raise InvalidInput(f"'{name}' must be between 0.0 and 1.0, got {value}.")
    return float(value)


def parse_id(text: str) -> int | None:
    """A row id written as text (``42``, ``#42``): None unless it is one (ASCII digits, 1 to
    :data:`ID_MAX`), so no id becomes an overflow inside a database driver."""
    digits = text.strip().lstrip("#")
    if not (digits.isascii() and digits.isdigit()) or len(digits) > 19:
        return None
    n = int(digits)
    return n if 1 <= n <= ID_MAX else None


def check_importance(value: int) -> int:
    low, high = IMPORTANCE
    if not low <= value <= high:
        raise InvalidInput(f"'importance' must be an integer from {low} to {high}, got {value}.")
    return int(value)


def check_limit(value: int, name: str = "limit") -> int:
    if not 1 <= value <= RESULTS:
        raise InvalidInput(f"'{name}' must be between 1 and {RESULTS}, got {value}.")
    return int(value)


def check_days(name: str, value: int, longest: int) -> int:
    if not 1 <= value <= longest:
        raise InvalidInput(f"'{name}' must be between 1 and {longest}, got {value}.")
    return int(value)


def check_choice(name: str, value: str, choices: Sequence[str]) -> str:
    """``value`` if it is one of ``choices``; else InvalidInput naming them."""
    if value not in choices:
        raise InvalidInput(f"'{name}' must be one of {', '.join(choices)}; got {value!r}.")
    return value


def check_category(value: str) -> str:
    """A fact's category: a short lowercase word."""
    cat = (value or "").strip().lower()
    if not _CATEGORY.match(cat):
        raise InvalidInput(
            f"'category' must be a short lowercase word such as preference, decision, codebase, "
            f"constraint or bugfix (letters, digits, '-' or '_', at most {CATEGORY}); "
            f"got {value!r}."
        )
    return cat


def json_list(value: str | Sequence[str]) -> Sequence[str] | str:
    """A list sent as the text of a JSON array (``'["a", "b"]'``, as some clients send array
    arguments) as that list; any other value as given."""
    if isinstance(value, str) and value.strip().startswith("[") and value.strip().endswith("]"):
        try:
            parsed = json.loads(value)
        except ValueError:
            return value
        if isinstance(parsed, list) and all(isinstance(v, str | int | float) for v in parsed):
            return [str(v) for v in parsed]
    return value


def items(value: str | Sequence[str]) -> list[str]:
    """The items of a list argument: a list, the text of a JSON array, or a comma-separated
    string."""
    value = json_list(value)
    return value.split(",") if isinstance(value, str) else [str(v) for v in value]


def fact_ids(name: str, value: str | Sequence[str | int] | None, most: int) -> list[int]:
    """Fact ids from a list argument (a list, a JSON array's text, ``"12, #15"``), each once,
    in the order given; at most ``most``. None or an empty list: none."""
    if value is None:
        return []
    out: list[int] = []
    for raw in items([str(v) for v in value] if not isinstance(value, str) else value):
        if not raw.strip():
            continue
        n = parse_id(raw)
        if n is None:
            raise InvalidInput(f"'{name}' takes fact ids such as 12 or #12, got {_shown(raw)}.")
        if n not in out:
            out.append(n)
    if len(out) > most:
        raise InvalidInput(f"'{name}' takes at most {most} fact ids, got {len(out)}.")
    return out


def tags(value: str | Sequence[str] | None) -> str | None:
    """Topics as a comma-separated lowercase list, from a list, a JSON array's text or a comma
    string; stored (and shown to every user in the directory), so redacted."""
    if value is None:
        return None
    items_ = items(value)
    out: list[str] = []
    for item in items_:
        tag = redact.scrub(str(item).strip()).lower()
        if not tag:
            continue
        if len(tag) > TOPIC:
            raise InvalidInput(f"topic {tag[:30]!r}… is longer than {TOPIC} characters.")
        if tag not in out:
            out.append(tag)
    if len(out) > TOPICS:
        raise InvalidInput(f"at most {TOPICS} topics; keep the most telling ones.")
    return ",".join(out) or None


def stored_lines(name: str, value: str | Sequence[str] | None, limit: int) -> str | None:
    """A bullet list from a list of strings (or a JSON array's text), or the text as given;
    stored, so redacted."""
    if value is None:
        return None
    value = json_list(value)
    text = value if isinstance(value, str) else "\n".join(f"- {str(v).strip()}" for v in value)
    return optional_stored(name, text, limit)


# -- bad arguments, said in one line (the MCP tools and the REST API) -----------------------
def unfit(arguments: Mapping[str, Any]) -> str | None:
    """What no tool or endpoint takes in a call's ``arguments``, in one line; None if nothing:
    an integer beyond 64 bits (no id or count is that large, and the databases cannot hold
    one), a NUL character (not text, and PostgreSQL cannot store it), a string longer than the
    longest text any tool stores (:data:`CHUNK`)."""
    stack: list[tuple[str, object]] = list(arguments.items())
    while stack:
        name, value = stack.pop()
        if isinstance(value, bool):
            continue
        if isinstance(value, int) and not -ID_MAX - 1 <= value <= ID_MAX:
            return f"'{name}' must fit in 64 bits (at most {ID_MAX:,}), got {value:.3e}."
        if isinstance(value, str):
            if "\x00" in value:
                return f"'{name}' holds a NUL character (\\u0000), which no text or path may hold."
            if len(value) > CHUNK:
                return (
                    f"'{name}' is {len(value):,} characters; no argument may be longer than "
                    f"{CHUNK:,}."
                )
        elif isinstance(value, Mapping):
            stack += ((name, v) for v in value.values())
        elif isinstance(value, list):
            stack += ((name, v) for v in value)
    return None


def explain(
    schema: Mapping[str, Any],
    errors: Sequence[ErrorDetails],
    noun: str = "argument",
    holder: str = "this tool",
) -> str:
    """One line for pydantic's ``errors`` of a call (to a tool, or a REST endpoint: ``noun``
    "field", ``holder`` "this endpoint") with input ``schema``: the missing arguments, then
    each wrong one (once, however many union branches refused it), then the unknown ones with
    the names it takes."""
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
        parts.append(f"missing required {noun}{s} {', '.join(missing)}")
    parts += wrong.values()
    if unknown:
        parts.append(_unknown(unknown, list(props), noun, holder))
    return ("; ".join(parts) or f"invalid {noun}s") + "."


def _unknown(names: list[str], known: list[str], noun: str, holder: str) -> str:
    s = "s" if len(names) > 1 else ""
    said = f"unknown {noun}{s} {', '.join(_name(n) for n in names)}"
    close = [m for n in names for m in difflib.get_close_matches(n, known, n=1)]
    if close:
        said += f" (did you mean {', '.join(close)}?)"
    takes = ", ".join(known) if known else f"no {noun}s"
    return f"{said}; {holder} takes: {takes}"


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
