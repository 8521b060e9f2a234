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

import json
import re
from collections.abc import Sequence

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
PATH = 1_000  # one file path
RESULTS = 100  # the most results one call returns
IMPORTANCE = (1, 10)
ID_MAX = 2**63 - 1  # the largest row id either database holds (64-bit)
STALE_DAYS = 3_650  # the longest "stale after" a health check or scan accepts
RETENTION_DAYS = 36_500  # the longest retention memory_vacuum accepts
DETAIL_TOKENS = (200, 50_000)  # the size cap memory_get_session_detail accepts
DETAIL_TOKENS_DEFAULT = 4_000  # its default, and the size of a session read as a resource

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
