"""Value types shared by the store, the context builder and the tools."""

from __future__ import annotations

import hashlib
import re
import uuid
from dataclasses import dataclass, fields
from datetime import UTC, datetime, timedelta
from typing import Any

TS_FORMAT = "%Y-%m-%d %H:%M:%S.%f"
ROLES = ("member", "curator", "admin")
CHUNK_ROLES = ("user", "assistant", "system")
AUTO_CLOSE_HOURS = 24
AUTO_CLOSED_ONE_LINER = "[auto-closed — session exceeded 24h]"
SESSION_GAP_MINUTES = 30  # silence after which a write closes an implicit session (0: never)


def now_ts() -> str:
    """The current UTC time in the stored text form (sorts lexicographically)."""
    return datetime.now(UTC).strftime(TS_FORMAT)


def ts_ago(**delta: float) -> str:
    """The stored form of now minus ``delta`` (timedelta keywords)."""
    return (datetime.now(UTC) - timedelta(**delta)).strftime(TS_FORMAT)


def day_of(ts: str | None) -> str:
    """YYYY-MM-DD of a stored timestamp ('' when unknown)."""
    return (ts or "")[:10]


def new_id() -> str:
    return str(uuid.uuid4())


def normalise_text(text: str) -> str:
    """Case-, whitespace- and trailing-punctuation-insensitive form used to spot duplicates."""
    return re.sub(r"\s+", " ", text).strip().rstrip(".!;,").casefold()


def content_hash(text: str) -> str:
    return hashlib.sha1(normalise_text(text).encode("utf-8")).hexdigest()


def column_list(record: type[Any], alias: str = "") -> str:
    """The SELECT list of a record dataclass's fields, each prefixed with ``alias.`` if given."""
    prefix = f"{alias}." if alias else ""
    return ", ".join(prefix + name for name in record.__dataclass_fields__)


class Record:
    """Mixin: plain-dict view for structured tool output and export."""

    def as_dict(self) -> dict[str, Any]:
        # Shallow: every field is a plain value (dataclasses.asdict deep-copies, 10× slower).
        return {f.name: getattr(self, f.name) for f in fields(self)}  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class User(Record):
    id: str
    username: str
    display_name: str | None
    role: str
    created_at: str | None
    last_seen: str | None


@dataclass(frozen=True, slots=True)
class Session(Record):
    id: str
    user_id: str
    started_at: str
    ended_at: str | None
    one_liner: str
    topics: str | None
    outcome: str | None
    importance: int
    has_tier2: int
    ide_hint: str | None
    last_activity_at: str | None
    auto_closed: int
    project: str | None = None  # the project's key (bigmind.project); None: no project
    implicit: int = 0  # opened by a write, not memory_start_session

    @property
    def is_open(self) -> bool:
        return self.ended_at is None


SESSION_COLUMNS = column_list(Session)


@dataclass(frozen=True, slots=True)
class Fact(Record):
    id: int
    category: str
    fact: str
    confidence: float
    importance: int
    source_session: str | None
    deprecated: int
    deprecation_reason: str | None
    created_at: str | None
    updated_at: str | None
    access_count: int
    project: str | None = None  # where it was made (bigmind.project's key)
    scope: str = "global"  # project: seen in its project only; global: everywhere


FACT_COLUMNS = column_list(Fact, "f")


@dataclass(frozen=True, slots=True)
class Chunk(Record):
    id: int
    session_id: str
    role: str
    content: str
    flag_reason: str | None
    seq: int
    created_at: str | None


CHUNK_COLUMNS = column_list(Chunk, "c")


@dataclass(frozen=True, slots=True)
class Profile(Record):
    role: str | None
    preferences: str | None
    pinned_facts: str | None
    updated_at: str | None

    @property
    def is_empty(self) -> bool:
        return not (self.role or self.preferences or self.pinned_facts)


@dataclass(frozen=True, slots=True)
class Summary(Record):
    summary: str
    key_facts: str | None
    code_refs: str | None
    created_at: str | None


@dataclass(frozen=True, slots=True)
class Hit(Record):
    """One search result: what it is, where it came from, and why it ranked."""

    kind: str  # fact | chunk | summary | hypothesis | person | global
    id: int | str  # a session id (text) for summaries
    date: str
    text: str
    score: float
    why: str
    session_id: str | None = None
    category: str | None = None
    confidence: float | None = None
    deprecated: bool = False
    project: str | None = None  # set when the hit is from another project than the current one
    rivals: tuple[dict[str, Any], ...] = ()  # a fact's rivals (bigmind.memory.rivals)
    weak: bool = False  # below the relevance a clear answer reaches (bigmind.search.ranking)
    marks: tuple[str, ...] = ()  # lines shown under it: a newer memory on its subject
