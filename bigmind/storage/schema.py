"""The registry of BigMind's tables: one entry per table of the migrated schema.

Each :class:`Entry` says, for one table, who owns a row, how its text columns are sorted,
what row-level security it gets, how it exports and imports, how the SQLite → PostgreSQL
copier moves it and how a forget or a purge deals with it. Every per-table consumer reads
it: scan-secrets and the redactor (:mod:`~bigmind.storage.redact_rows`), the policies
(:mod:`~bigmind.storage.pgpolicies`), the copier (:mod:`~bigmind.storage.migratedb`), export
and import (:mod:`~bigmind.storage.export_rows`, ``memory/transfer.py``), forget and purge
(:mod:`~bigmind.storage.purge_rows`, ``memory/erasure.py``, ``memory/purge.py``) and the salvage
(:mod:`~bigmind.storage.sqlite_recover`). ``tests/storage/test_schema.py`` holds it to both backends' live
schemas: a table without an entry, or an entry naming a column the table lacks, fails there.

Text columns come in three kinds, and every text-typed column of a table is in exactly one:

- ``text``: free text a user or an agent wrote, file paths included (a path can carry a
  token). Redacted when written, swept by ``bigmind scan-secrets``, matched by ``bigmind purge``.
- ``labels``: short text a user or an agent chose (categories, topics, file names, hints,
  usernames, labels) and text BigMind made from memories (a link's reason, the directory's
  topics). Matched by ``bigmind purge``.
- ``not_text``: ids and keys, timestamps, digests, fixed choices, settings. Never matched:
  three characters of a date would match every row.

The order of :data:`TABLES` is the copier's and the export's: parents before children.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

# Row-level security on PostgreSQL (docs/privacy-postgres.md):
# owned      every row belongs to the user in the owner column
# belonging  no owner column: a row is visible exactly when its parent row is
# shared     read by everyone, written by any session acting for a user
# directory  read by everyone, each row written by its owner
# vectors    owner '' shared, any other owner private
# users      the users table's own policies and role trigger
# knowledge  company knowledge's own policies and review trigger
# unguarded  outside row-level security: read before any user is known, or bookkeeping
Privacy = Literal[
    "owned", "belonging", "shared", "directory", "vectors", "users", "knowledge", "unguarded"
]
VECTORS = "vec_*"  # the entry of every vec_<kind> table (one per kind of storage/vector_tables.py)


@dataclass(frozen=True, slots=True)
class Skipped:
    """A table an export or the copier leaves out on purpose, and why."""

    why: str


@dataclass(frozen=True, slots=True)
class Export:
    """How a table travels in an export file and is merged back by an import."""

    key: tuple[str, ...]  # the natural key an import matches a row on (a match adds nothing)
    required: tuple[str, ...]  # columns a file's row must fill
    order: tuple[str, ...] = ("id",)  # the order an export writes the rows in
    int_id: bool = True  # integer ids, kept where they are free
    session: str | None = None  # the column naming a session: the file's or the importer's
    of_session: bool = False  # the row belongs to a session that must be in the file
    loose: bool = False  # no foreign key: an unknown session is dropped, not refused
    of_fact: bool = False  # travels with its fact: imported for the facts an import adds
    merged: bool = False  # one row per user, merged field by field (the profile)


@dataclass(frozen=True, slots=True)
class Copy:
    """How ``bigmind migrate-db`` copies a table and checks the copy."""

    key: tuple[str, ...] = ("id",)  # primary key: what ON CONFLICT and verification match on
    same: tuple[str, ...] = ()  # must also be equal for a present key to count as this row
    users: tuple[str, ...] = ()  # columns holding a user id (rewritten when a user is merged)


@dataclass(frozen=True, slots=True)
class Forget:
    """How a forget and a purge deal with a table's rows. A table with matched columns
    (text or labels) is forgotten as a ``kind`` of memory, ``cut`` or ``rebuilt``."""

    kind: str | None = None  # the memory its rows are: forgotten whole
    deleted_with: tuple[str, ...] = ()  # other kinds whose forget deletes (or remakes) rows here
    unlinked_by: tuple[str, ...] = ()  # kinds whose forget only unlinks rows here
    cut: str | None = None  # a purge cuts the text out, the row stays: what the answer calls it
    rebuilt: bool = False  # made again from the other tables by a forget or purge
    derived: bool = False  # vectors or use counts, deleted with their memory
    key: str = "id"  # the column naming one row (a cut's, a rebuilt table's)


@dataclass(frozen=True, slots=True)
class Entry:
    """One table: its owner, its columns sorted, its privacy, export, copy and forget."""

    name: str
    owner: str | None  # the column naming a row's owner; None: no owner column
    privacy: Privacy
    export: Export | Skipped
    copy: Copy | Skipped
    text: tuple[str, ...] = ()
    labels: tuple[str, ...] = ()
    not_text: tuple[str, ...] = ()
    path_lists: tuple[str, ...] = ()  # text columns holding the JSON text of a list of paths
    parent: tuple[str, str] | None = None  # (table, this table's column holding its id)
    vectors: tuple[str, ...] = ()  # the kinds of vector its text feeds (dropped when it changes)
    vector_store: bool = False  # part of the vector store (copied only when the model matches)
    forget: Forget = field(default_factory=Forget)

    @property
    def matched(self) -> tuple[str, ...]:
        """The columns a purge matches: free text, then labels."""
        return self.text + self.labels


_NOT_EXPORTED_VECTORS = Skipped("the vector store: the importing server embeds what came in")
_REMADE = Skipped("made again on the target from what was copied (a hidden card stays hidden)")
_DIRECTORY = Skipped("made from the sessions and facts an import adds")
_SESSION = ("session",)

TABLES: tuple[Entry, ...] = (
    Entry(
        "bigmind_migrations",
        owner=None,
        privacy="unguarded",
        export=Skipped("BigMind's bookkeeping: the importing database has its own history"),
        copy=Copy(key=("name",)),
        not_text=("name", "applied_at"),
    ),
    Entry(
        "users",
        owner="id",
        privacy="users",
        export=Skipped("the exporter's own row travels as the file's 'user'; rows are re-owned"),
        copy=Copy(same=("username",), users=("id",)),
        labels=("display_name",),
        not_text=("id", "username", "role", "created_at", "last_seen"),
        forget=Forget(cut="your display name"),
    ),
    Entry(
        "api_tokens",
        owner="user_id",
        # Only token digests: the gateway reads it to learn who the user is.
        privacy="unguarded",
        export=Skipped("credentials of one database: a token is made where it is used"),
        copy=Copy(same=("token_hash",), users=("user_id",)),
        labels=("label",),
        not_text=(
            "id",
            "user_id",
            "token_hash",
            "created_at",
            "expires_at",
            "revoked_at",
            "last_used_at",
        ),
        forget=Forget(cut="API token labels"),
    ),
    Entry(
        "sessions",
        owner="user_id",
        privacy="owned",
        export=Export(("id",), ("id", "started_at"), order=("started_at",), int_id=False),
        copy=Copy(same=("user_id", "started_at"), users=("user_id",)),
        text=("one_liner", "outcome"),
        labels=("topics", "ide_hint"),
        not_text=("id", "user_id", "started_at", "ended_at", "last_activity_at", "project"),
        vectors=("summary",),
        forget=Forget(kind="session"),
    ),
    Entry(
        "session_summaries",
        owner=None,
        privacy="belonging",
        parent=("sessions", "id"),
        export=Export(
            ("id",),
            ("id", "summary"),
            order=("created_at",),
            int_id=False,
            session="id",
            of_session=True,
        ),
        copy=Copy(),
        text=("summary", "key_facts", "code_refs"),
        not_text=("id", "created_at"),
        vectors=("summary",),
        forget=Forget(kind="summary", deleted_with=_SESSION),
    ),
    Entry(
        "identity_profile",
        owner="user_id",
        privacy="owned",
        export=Export(("user_id",), (), merged=True),
        copy=Copy(same=("user_id",), users=("id", "user_id")),
        text=("role", "preferences", "pinned_facts"),
        not_text=("id", "user_id", "updated_at"),
        forget=Forget(cut="your profile", key="user_id"),
    ),
    Entry(
        "facts",
        owner="user_id",
        privacy="owned",
        export=Export(
            ("content_hash", "created_at"), ("category", "fact"), session="source_session"
        ),
        copy=Copy(same=("user_id", "created_at"), users=("user_id",)),
        text=("fact", "deprecation_reason"),
        labels=("category",),
        not_text=(
            "user_id",
            "source_session",
            "created_at",
            "updated_at",
            "last_accessed_at",
            "deprecated_at",
            "content_hash",
            "project",
            "scope",
            "checked_at",
            "retired_at",
        ),
        vectors=("fact",),
        forget=Forget(kind="fact", unlinked_by=_SESSION),
    ),
    Entry(
        "fact_history",
        owner="user_id",
        privacy="owned",
        # A fact's earlier versions travel with it: imported for the facts an import adds.
        export=Export(
            ("fact_id", "version"),
            ("fact_id", "version", "category", "fact"),
            order=("fact_id", "version"),
            of_fact=True,
        ),
        copy=Copy(same=("fact_id", "version"), users=("user_id",)),
        text=("fact", "reason"),
        labels=("category",),
        not_text=("user_id", "written_at", "replaced_at"),
        forget=Forget(kind="fact"),
    ),
    Entry(
        "fact_links",
        owner="user_id",
        privacy="owned",
        export=Skipped("imported facts are checked against the memory they join, and linked there"),
        copy=Copy(same=("fact_id", "other_id", "kind"), users=("user_id",)),
        labels=("why",),  # the judge's reason quotes the facts' words
        not_text=("user_id", "kind", "created_at"),
        forget=Forget(cut="links between facts", deleted_with=("fact",)),  # by cascade
    ),
    Entry(
        "fact_files",
        owner="user_id",
        privacy="owned",
        # The files a fact is bound to travel with it, as its earlier versions do.
        export=Export(("fact_id", "path"), ("fact_id", "path", "name"), of_fact=True),
        copy=Copy(same=("fact_id", "path"), users=("user_id",)),
        text=("path",),
        labels=("name",),
        not_text=("user_id", "created_at"),
        forget=Forget(kind="fact"),
    ),
    Entry(
        "conversation_chunks",
        owner="user_id",
        privacy="owned",
        export=Export(
            ("session_id", "seq"),
            ("session_id", "role", "content", "seq"),
            session="session_id",
            of_session=True,
        ),
        copy=Copy(same=("session_id", "seq"), users=("user_id",)),
        text=("content", "flag_reason"),
        not_text=("session_id", "user_id", "role", "created_at", "project"),
        vectors=("chunk", "chunk_context"),
        forget=Forget(kind="chunk", deleted_with=_SESSION),
    ),
    Entry(
        "hypotheses",
        owner="user_id",
        privacy="owned",
        export=Export(("hypothesis", "created_at"), ("hypothesis",), session="session_id"),
        copy=Copy(same=("user_id", "created_at"), users=("user_id",)),
        text=("hypothesis", "resolution"),
        not_text=("session_id", "user_id", "status", "created_at", "resolved_at", "project"),
        vectors=("hypothesis",),
        forget=Forget(kind="hypothesis", unlinked_by=_SESSION),
    ),
    Entry(
        "attempts",
        owner="user_id",
        privacy="owned",
        export=Export(("approach", "created_at"), ("approach", "outcome"), session="session_id"),
        copy=Copy(same=("user_id", "created_at"), users=("user_id",)),
        text=("approach", "why"),
        not_text=("user_id", "session_id", "project", "outcome", "created_at"),
        vectors=("attempt",),
        forget=Forget(kind="attempt", unlinked_by=_SESSION),
    ),
    Entry(
        "reminders",
        owner="user_id",
        privacy="owned",
        export=Export(("text", "created_at"), ("text", "created_at"), session="session_id"),
        copy=Copy(same=("user_id", "created_at"), users=("user_id",)),
        text=("text",),
        not_text=("user_id", "session_id", "project", "due_at", "created_at", "done_at"),
        forget=Forget(kind="reminder", unlinked_by=_SESSION),
    ),
    Entry(
        "focus_announcements",
        owner="user_id",
        privacy="owned",
        export=Export(
            ("session_id", "created_at", "description"),
            ("session_id", "description"),
            session="session_id",
            of_session=True,
        ),
        copy=Copy(same=("session_id", "created_at"), users=("user_id",)),
        text=("description", "files"),
        path_lists=("files",),
        labels=("ide_hint",),
        not_text=("session_id", "user_id", "created_at", "project"),
        forget=Forget(kind="focus", deleted_with=_SESSION),
    ),
    Entry(
        "token_saves",
        owner="user_id",
        privacy="owned",
        export=Export(
            ("created_at", "description"),
            ("description", "tokens_saved", "method_used"),
            session="session_id",
        ),
        copy=Copy(same=("user_id", "created_at"), users=("user_id",)),
        text=("description",),
        labels=("method_used",),
        not_text=("session_id", "user_id", "created_at"),
        forget=Forget(cut="token-savings notes", unlinked_by=_SESSION),
    ),
    Entry(
        "people",
        owner="added_by",
        privacy="shared",
        export=Export(("username",), ("username",)),
        copy=Copy(same=("username",), users=("added_by",)),
        text=("display_name", "role", "team", "expertise", "notes"),
        labels=("username",),
        not_text=("added_by", "created_at", "updated_at", "last_seen"),
        vectors=("person",),
        forget=Forget(kind="person"),
    ),
    Entry(
        "global_knowledge",
        owner="promoted_by",
        privacy="knowledge",
        export=Export(
            ("title", "created_at"),
            ("category", "title", "content"),
            session="source_session",
            loose=True,
        ),
        copy=Copy(
            same=("title", "created_at"), users=("promoted_by", "approved_by", "reviewed_by")
        ),
        text=("title", "content", "review_notes"),
        labels=("category",),
        not_text=(
            "status",
            "promoted_by",
            "source_session",
            "approved_by",
            "created_at",
            "updated_at",
            "reviewed_by",
            "reviewed_at",
        ),
        vectors=("global",),
        forget=Forget(cut="company knowledge entries", unlinked_by=_SESSION),
    ),
    Entry(
        "memory_usage",
        owner="user_id",
        privacy="owned",
        export=Skipped("use counts: counted again as the memories are used"),
        copy=Copy(key=("kind", "item_id", "user_id"), users=("user_id",)),
        not_text=("kind", "item_id", "user_id", "last_accessed_at"),
        forget=Forget(derived=True),
    ),
    Entry(
        "directory_cards",
        owner="user_id",
        privacy="directory",
        export=_DIRECTORY,
        copy=_REMADE,
        labels=("top_topics",),
        not_text=("user_id", "first_seen", "last_seen", "updated_at"),
        forget=Forget(deleted_with=_SESSION, rebuilt=True, key="user_id"),
    ),
    Entry(
        "directory_topics",
        owner="user_id",
        privacy="directory",
        export=_DIRECTORY,
        copy=_REMADE,
        labels=("topic",),  # copies of the sessions' topics
        not_text=("user_id", "last_at"),
        forget=Forget(deleted_with=_SESSION, rebuilt=True, key="topic"),
    ),
    Entry(
        "embedding_state",
        owner=None,
        privacy="shared",
        export=_NOT_EXPORTED_VECTORS,
        copy=Copy(key=("key",)),
        not_text=("key", "value"),
        vector_store=True,
    ),
    Entry(
        "embeddings",
        owner="user_id",
        privacy="vectors",
        export=_NOT_EXPORTED_VECTORS,
        copy=Copy(same=("kind", "item_id"), users=("user_id",)),
        not_text=("kind", "item_id", "user_id", "model", "content_hash", "embedded_at"),
        vector_store=True,
        forget=Forget(derived=True),
    ),
    Entry(
        VECTORS,
        owner="user_id",
        privacy="vectors",
        export=_NOT_EXPORTED_VECTORS,
        copy=Copy(key=("rowid",), same=("user_id",), users=("user_id",)),
        not_text=("user_id",),
        vector_store=True,
        forget=Forget(derived=True),
    ),
)
_BY_NAME = {t.name: t for t in TABLES}


def entry(table: str) -> Entry:
    """The entry of ``table`` (every ``vec_<kind>`` table has :data:`VECTORS`').

    Raises:
        KeyError: no table of that name.
    """
    return _BY_NAME[VECTORS if table.startswith("vec_") else table]


def names(*privacy: Privacy) -> tuple[str, ...]:
    """The tables (not the vector tables' family) with one of these privacy groups."""
    return tuple(t.name for t in TABLES if t.privacy in privacy and t.name != VECTORS)


def vector_store() -> tuple[str, ...]:
    """The vector store's tables beside the ``vec_<kind>`` ones."""
    return tuple(t.name for t in TABLES if t.vector_store and t.name != VECTORS)


def with_text() -> tuple[str, ...]:
    """The tables holding free text (scan-secrets sweeps them)."""
    return tuple(t.name for t in TABLES if t.text)


def matched(table: str, alias: str = "") -> tuple[str, ...]:
    """The columns of ``table`` a purge matches (``alias.`` before each, if given)."""
    cols = _BY_NAME[table].matched if table in _BY_NAME else ()
    return tuple(f"{alias}.{c}" for c in cols) if alias else cols


def matched_tables() -> tuple[str, ...]:
    """The tables holding a column a purge matches."""
    return tuple(t.name for t in TABLES if t.matched)


def cut_tables() -> tuple[str, ...]:
    """The tables a purge cuts its text out of (the rows stay)."""
    return tuple(t.name for t in TABLES if t.forget.cut)


def rebuilt_tables() -> tuple[str, ...]:
    """The tables a forget or a purge makes again from the others."""
    return tuple(t.name for t in TABLES if t.forget.rebuilt)


def forgotten_with(kind: str) -> tuple[str, ...]:
    """The tables whose rows a forget of ``kind`` deletes or remakes (their text leaves)."""
    return tuple(t.name for t in TABLES if t.forget.kind == kind or kind in t.forget.deleted_with)


def unlinked_by(kind: str) -> tuple[str, ...]:
    """The tables whose rows a forget of ``kind`` only unlinks (they stay)."""
    return tuple(t.name for t in TABLES if kind in t.forget.unlinked_by)
