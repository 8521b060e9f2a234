"""Every row of an import file held to the rules a tool call is held to, before anything is
written.

One table of per-column checks per copied table (:data:`RULES`), built from the bounds in
:mod:`bigmind.limits` and the validators the tools call (``check_category``, ``check_unit``,
``check_importance``, the text limits, the enums of each feature), so an imported row can hold
nothing a tool would have refused: a wrong type, an oversized text, an out-of-range number, an
unknown status, a timestamp that does not parse. The first bad value refuses the whole file
with one line naming the table, the row and the reason.

A check returns the value to store: the value as given, or its stored form where the tool
stores a normal form (a category lower-cased, topics as a tag list, a timestamp in UTC).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import Any

from bigmind import limits
from bigmind.errors import InvalidInput
from bigmind.memory import focus, globalkb, journal, savings
from bigmind.models import CHUNK_ROLES, TS_FORMAT
from bigmind.project import SCOPES
from bigmind.storage.attempts_table import OUTCOMES

Check = Callable[[str, Any], Any]  # (column, value) → the value to store; raises InvalidInput
PROJECT = limits.NAME * 10  # a project key, as the store bounds it
PERSON_FIELD = 200  # a person's display name, role or team, as memory_remember_person bounds it
HASH = 64  # a content hash (SHA-1 hex today)


class _Bad(Exception):
    """One value breaks its column's rule (the reason, without the row's address)."""


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=True, default=str)
    return text if len(text) <= 40 else text[:37] + "..."


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _tool_rule(col: str, check: Callable[[], Any]) -> Any:
    """Run a tool's own validator; its refusal (less the column's name) becomes the reason."""
    try:
        return check()
    except InvalidInput as exc:
        raise _Bad(str(exc).removeprefix(f"'{col}' ")) from None


def text(limit: int, *, null: bool = True) -> Check:
    """Text of at most ``limit`` characters (the tool's limit for it), no NUL, valid Unicode."""

    def check(col: str, value: Any) -> Any:
        if value is None and null:
            return None
        if not isinstance(value, str):
            raise _Bad(f"must be text, got {_shown(value)}")
        if "\x00" in value:
            raise _Bad("must not contain a NUL character")
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise _Bad("must be valid Unicode (it holds a lone surrogate)") from None
        if len(value) > limit:
            raise _Bad(f"is {len(value):,} characters; the limit is {limit:,}")
        return value

    return check


def integer(low: int = 0, high: int = limits.ID_MAX, *, null: bool = True) -> Check:
    def check(col: str, value: Any) -> Any:
        if value is None and null:
            return None
        if not _is_int(value) or not low <= value <= high:
            raise _Bad(f"must be an integer from {low:,} to {high:,}, got {_shown(value)}")
        return value

    return check


def unit(col: str, value: Any) -> Any:
    """A confidence: a number from 0.0 to 1.0 (check_unit)."""
    if value is None:
        return None
    if not isinstance(value, int | float) or isinstance(value, bool) or not math.isfinite(value):
        raise _Bad(f"must be a number from 0.0 to 1.0, got {_shown(value)}")
    return _tool_rule(col, lambda: limits.check_unit(col, value))


def importance(col: str, value: Any) -> Any:
    low, high = limits.IMPORTANCE
    if value is None:
        return None
    if not _is_int(value):
        raise _Bad(f"must be an integer from {low} to {high}, got {_shown(value)}")
    return _tool_rule(col, lambda: limits.check_importance(value))


def flag(col: str, value: Any) -> Any:
    if value is None or value in (0, 1):  # True and False are 1 and 0
        return None if value is None else int(value)
    raise _Bad(f"must be 0 or 1, got {_shown(value)}")


def choice(choices: tuple[str, ...], *, null: bool = True) -> Check:
    def check(col: str, value: Any) -> Any:
        if value is None and null:
            return None
        if not isinstance(value, str) or value not in choices:
            raise _Bad(f"must be one of {', '.join(choices)}, got {_shown(value)}")
        return value

    return check


def category(col: str, value: Any) -> Any:
    if not isinstance(value, str):
        raise _Bad(f"must be text, got {_shown(value)}")
    return _tool_rule(col, lambda: limits.check_category(value))


def topics(col: str, value: Any) -> Any:
    if value is None:
        return None
    text(limits.TOPICS * (limits.TOPIC + 1))(col, value)
    return _tool_rule(col, lambda: limits.tags(value))


def files(col: str, value: Any) -> Any:
    """A focus announcement's files: the JSON text of a list of paths (focus.file_list)."""
    if value is None:
        return None
    text(limits.FILES * (limits.PATH + 3) + 2)(col, value)
    try:
        paths = json.loads(value)
    except ValueError:
        raise _Bad("must be the JSON text of a list of file paths") from None
    if not isinstance(paths, list) or not all(isinstance(p, str) for p in paths):
        raise _Bad("must be the JSON text of a list of file paths")
    return json.dumps(_tool_rule(col, lambda: focus.file_list(paths)))


def timestamp(*, null: bool = True) -> Check:
    """An ISO timestamp, stored in the stored UTC form (an offset is converted to UTC)."""

    def check(col: str, value: Any) -> Any:
        if value is None and null:
            return None
        if not isinstance(value, str) or len(value) > 40:
            raise _Bad(f"must be a timestamp such as 2025-01-31 12:00:00, got {_shown(value)}")
        try:
            when = datetime.fromisoformat(value.strip())
        except ValueError:
            raise _Bad(
                f"must be a timestamp such as 2025-01-31 12:00:00, got {_shown(value)}"
            ) from None
        if when.tzinfo is None and "T" not in value and value == value.strip():
            return value  # already the stored form
        return when.astimezone(UTC).replace(tzinfo=None).strftime(TS_FORMAT)

    return check


def owner(col: str, value: Any) -> Any:
    """A column the import overwrites with the importing user."""
    return value


ROW_ID = integer(1)
SESSION_ID = text(limits.NAME)
PROJECT_KEY = text(PROJECT)
TS = timestamp()

# Per table, a check for every column it stores (a test holds this to the schema).
RULES: Mapping[str, Mapping[str, Check]] = {
    "sessions": {
        "id": text(limits.NAME, null=False),
        "user_id": owner,
        "started_at": timestamp(null=False),
        "ended_at": TS,
        "one_liner": text(limits.ONE_LINER, null=False),
        "topics": topics,
        "outcome": text(limits.OUTCOME),
        "importance": importance,
        "has_tier2": flag,
        "ide_hint": text(limits.NAME),
        "last_activity_at": TS,
        "auto_closed": flag,
        "project": PROJECT_KEY,
        "implicit": flag,
    },
    "session_summaries": {
        "id": text(limits.NAME, null=False),
        "summary": text(limits.SUMMARY, null=False),
        "key_facts": text(limits.SUMMARY),
        "code_refs": text(limits.SUMMARY),
        "created_at": TS,
    },
    "facts": {
        "id": ROW_ID,
        "user_id": owner,
        "category": category,
        "fact": text(limits.FACT, null=False),
        "source_session": SESSION_ID,
        "confidence": unit,
        "created_at": TS,
        "updated_at": TS,
        "deprecated": flag,
        "deprecation_reason": text(limits.SHORT),
        "importance": importance,
        "access_count": integer(),
        "last_accessed_at": TS,
        "deprecated_at": TS,
        "content_hash": text(HASH),
        "project": PROJECT_KEY,
        "scope": choice(SCOPES),
        "checked_at": TS,
        "retired_at": TS,
    },
    "fact_history": {
        "id": ROW_ID,
        "fact_id": integer(1, null=False),
        "user_id": owner,
        "version": integer(1, null=False),
        "category": category,
        "fact": text(limits.FACT, null=False),
        "confidence": unit,
        "importance": importance,
        "written_at": TS,
        "replaced_at": timestamp(null=False),
        "reason": text(limits.SHORT),
    },
    "fact_files": {
        "id": ROW_ID,
        "fact_id": integer(1, null=False),
        "user_id": owner,
        "path": text(limits.PATH, null=False),
        "name": text(limits.PATH, null=False),
        "created_at": timestamp(null=False),
    },
    "conversation_chunks": {
        "id": ROW_ID,
        "session_id": text(limits.NAME, null=False),
        "user_id": owner,
        "role": choice(CHUNK_ROLES, null=False),
        "content": text(limits.CHUNK, null=False),
        "flag_reason": text(limits.SHORT),
        "seq": integer(null=False),
        "created_at": TS,
        "project": PROJECT_KEY,
    },
    "hypotheses": {
        "id": ROW_ID,
        "session_id": SESSION_ID,
        "user_id": owner,
        "hypothesis": text(limits.FACT, null=False),
        "confidence": unit,
        "status": choice(journal.STATUSES),
        "resolution": text(limits.FACT),
        "created_at": TS,
        "resolved_at": TS,
        "project": PROJECT_KEY,
    },
    "attempts": {
        "id": ROW_ID,
        "user_id": owner,
        "session_id": SESSION_ID,
        "project": PROJECT_KEY,
        "approach": text(limits.OUTCOME, null=False),
        "outcome": choice(OUTCOMES, null=False),
        "why": text(limits.OUTCOME),
        "created_at": timestamp(null=False),
    },
    "reminders": {
        "id": ROW_ID,
        "user_id": owner,
        "session_id": SESSION_ID,
        "project": PROJECT_KEY,
        "text": text(limits.REMINDER, null=False),
        "due_at": TS,
        "created_at": timestamp(null=False),
        "done_at": TS,
    },
    "focus_announcements": {
        "id": ROW_ID,
        "session_id": text(limits.NAME, null=False),
        "user_id": owner,
        "description": text(limits.OUTCOME, null=False),
        "files": files,
        "ide_hint": text(limits.NAME),
        "created_at": TS,
        "project": PROJECT_KEY,
    },
    "token_saves": {
        "id": ROW_ID,
        "session_id": SESSION_ID,
        "user_id": owner,
        "description": text(limits.SHORT, null=False),
        "tokens_saved": integer(0, savings.MAX_TOKENS_SAVED, null=False),
        "method_used": text(limits.NAME, null=False),
        "created_at": TS,
    },
    "people": {
        "id": ROW_ID,
        "username": text(limits.NAME, null=False),
        "display_name": text(PERSON_FIELD),
        "role": text(PERSON_FIELD),
        "team": text(PERSON_FIELD),
        "expertise": text(limits.EXPERTISE_KEPT),
        "notes": text(limits.NOTES_KEPT),
        "added_by": owner,
        "created_at": TS,
        "updated_at": TS,
        "last_seen": TS,
    },
    "global_knowledge": {
        "id": ROW_ID,
        "category": category,
        "title": text(limits.TITLE, null=False),
        "content": text(limits.GLOBAL_CONTENT, null=False),
        "importance": importance,
        "status": choice(globalkb.STATUSES),
        "promoted_by": owner,
        "source_session": SESSION_ID,
        "approved_by": text(limits.NAME),
        "created_at": TS,
        "updated_at": TS,
        "review_notes": text(limits.REVIEW_NOTES),
        "reviewed_by": text(limits.NAME),
        "reviewed_at": TS,
    },
    "identity_profile": {
        "id": text(limits.NAME),
        "user_id": owner,
        "role": text(limits.SHORT),
        "preferences": text(limits.PROFILE_TEXT),
        "pinned_facts": text(limits.PROFILE_TEXT),
        "updated_at": TS,
    },
}


def check_row(table: str, index: int, row: dict[str, Any]) -> None:
    """Hold one row to its table's rules, storing each value's checked form in place.

    Raises:
        InvalidInput: ``table[index].column`` and the reason, for the first bad value.
    """
    rules = RULES[table]
    for col, value in row.items():
        rule = rules.get(col)
        if rule is None:
            continue  # a column this database does not have: the import leaves it out
        try:
            row[col] = rule(col, value)
        except _Bad as bad:
            reason = str(bad).rstrip(".")
            joint = " " if reason.startswith(("must ", "is ")) else ": "
            raise InvalidInput(
                f"{table}[{index}].{col}{joint}{reason}; nothing was imported. Fix or remove "
                "that row and import the file again."
            ) from None
