"""Every text column of every table, sorted once: what a user or an agent wrote, or not.

Three kinds, and every text column of the schema is in exactly one
(``tests/test_purge_everywhere.py`` reads the schema of both backends and fails on a column
that is in none):

- :data:`TEXT_COLUMNS`: free text a user or an agent wrote, file paths included (a path can
  carry a token). Redacted when written, swept by ``bigmind scan-secrets``, matched by
  ``bigmind purge``.
- :data:`LABEL_COLUMNS`: short text a user or an agent chose (categories, topics, file names,
  hints, usernames, labels) and text BigMind made from memories (a link's reason, the
  directory's topics). Matched by ``bigmind purge``.
- :data:`NOT_TEXT`: ids and keys, timestamps, digests, fixed choices, settings. Never matched:
  three characters of a date would match every row.
"""

from __future__ import annotations

# Every column holding text a user or an agent wrote, per table, file paths included (ids,
# names, categories, topics and timestamps are not free text).
TEXT_COLUMNS: dict[str, tuple[str, ...]] = {
    "facts": ("fact", "deprecation_reason"),
    "fact_history": ("fact", "reason"),
    "conversation_chunks": ("content", "flag_reason"),
    "sessions": ("one_liner", "outcome"),
    "session_summaries": ("summary", "key_facts", "code_refs"),
    "hypotheses": ("hypothesis", "resolution"),
    "reminders": ("text",),
    "people": ("display_name", "role", "team", "expertise", "notes"),
    "focus_announcements": ("description", "files"),
    "token_saves": ("description",),
    "identity_profile": ("role", "preferences", "pinned_facts"),
    "global_knowledge": ("title", "content", "review_notes"),
    "attempts": ("approach", "why"),
    "fact_files": ("path",),
}
# Columns of TEXT_COLUMNS holding the JSON text of a list of file paths: each path is
# redacted on its own.
PATH_LISTS = frozenset(("files",))
LABEL_COLUMNS: dict[str, tuple[str, ...]] = {
    "facts": ("category",),
    "fact_history": ("category",),
    "fact_files": ("name",),
    "fact_links": ("why",),  # the judge's reason quotes the facts' words
    "sessions": ("topics", "ide_hint"),
    "focus_announcements": ("ide_hint",),
    "people": ("username",),
    "token_saves": ("method_used",),
    "global_knowledge": ("category",),
    "directory_topics": ("topic",),  # copies of the sessions' topics
    "directory_cards": ("top_topics",),
    "users": ("display_name",),
    "api_tokens": ("label",),
}
NOT_TEXT: dict[str, tuple[str, ...]] = {
    "api_tokens": (
        "id",
        "user_id",
        "token_hash",
        "created_at",
        "expires_at",
        "revoked_at",
        "last_used_at",
    ),
    "attempts": ("user_id", "session_id", "project", "outcome", "created_at"),
    "bigmind_migrations": ("name", "applied_at"),
    "conversation_chunks": ("session_id", "user_id", "role", "created_at", "project"),
    "directory_cards": ("user_id", "first_seen", "last_seen", "updated_at"),
    "directory_topics": ("user_id", "last_at"),
    "embedding_state": ("key", "value"),
    "embeddings": ("kind", "item_id", "user_id", "model", "content_hash", "embedded_at"),
    "fact_files": ("user_id", "created_at"),
    "fact_history": ("user_id", "written_at", "replaced_at"),
    "fact_links": ("user_id", "kind", "created_at"),
    "facts": (
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
    "focus_announcements": ("session_id", "user_id", "created_at", "project"),
    "global_knowledge": (
        "status",
        "promoted_by",
        "source_session",
        "approved_by",
        "created_at",
        "updated_at",
        "reviewed_by",
        "reviewed_at",
    ),
    "hypotheses": ("session_id", "user_id", "status", "created_at", "resolved_at", "project"),
    "identity_profile": ("id", "user_id", "updated_at"),
    "memory_usage": ("kind", "item_id", "user_id", "last_accessed_at"),
    "people": ("added_by", "created_at", "updated_at", "last_seen"),
    "reminders": ("user_id", "session_id", "project", "due_at", "created_at", "done_at"),
    "session_summaries": ("id", "created_at"),
    "sessions": ("id", "user_id", "started_at", "ended_at", "last_activity_at", "project"),
    "token_saves": ("session_id", "user_id", "created_at"),
    "users": ("id", "username", "role", "created_at", "last_seen"),
}


def matched(table: str, alias: str = "") -> tuple[str, ...]:
    """The columns of ``table`` a purge matches (``alias.`` before each, if given)."""
    cols = TEXT_COLUMNS.get(table, ()) + LABEL_COLUMNS.get(table, ())
    return tuple(f"{alias}.{c}" for c in cols) if alias else cols


def matched_tables() -> tuple[str, ...]:
    """The tables holding a column a purge matches."""
    return tuple(dict.fromkeys([*TEXT_COLUMNS, *LABEL_COLUMNS]))
