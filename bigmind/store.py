"""The memory store: users, sessions, facts, chunks and the profile, for one configured user.

Every read and write is scoped to that user; an id that belongs to someone else
is reported exactly like an unknown id, so ids leak nothing. Validation lives
here, so the MCP tools and the CLI reject the same inputs with the same words.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from bigmind import limits
from bigmind.db import Backend, Params, Row, Tx
from bigmind.errors import Forbidden, InvalidInput, NotFound
from bigmind.limits import (
    check_category,
    check_importance,
    check_limit,
    check_text,
    check_unit,
    optional_text,
)
from bigmind.models import (
    AUTO_CLOSE_HOURS,
    AUTO_CLOSED_ONE_LINER,
    CHUNK_COLUMNS,
    CHUNK_ROLES,
    FACT_COLUMNS,
    SESSION_COLUMNS,
    Chunk,
    Fact,
    Profile,
    Session,
    Summary,
    User,
    column_list,
    content_hash,
    new_id,
    now_ts,
    ts_ago,
)
from bigmind.textsearch import TextSearch

TOUCH_SECONDS = 30


@dataclass(frozen=True, slots=True)
class SessionStart:
    session: Session
    reused: bool
    auto_closed: list[str]


@dataclass(frozen=True, slots=True)
class SessionRef:
    """The session a write was attached to, and whether it had to be opened for it."""

    session: Session
    opened: bool


class Store:
    """CRUD and search for one user's memory over a :class:`Backend`."""

    def __init__(self, backend: Backend, username: str, *, mode: str = "personal") -> None:
        self.db = backend
        self.mode = mode
        if backend.dialect == "postgresql":
            from bigmind.pgtext import PG_BUDGET, PgTextSearch

            self.text: TextSearch = PgTextSearch(backend, PG_BUDGET)
        else:
            self.text = TextSearch(backend)
        self.user = self._ensure_user(username)

    # -- users -------------------------------------------------------------------------------
    def _ensure_user(self, username: str) -> User:
        username = check_text("username", username, limits.NAME)
        with self.db.transaction() as tx:
            rows = tx.execute("SELECT * FROM users WHERE username = ?", (username,))
            if not rows:
                # The personal-mode owner administers their memory; in team and enterprise
                # modes a new user is a member until `bigmind user set-role` says otherwise.
                role = "admin" if self.mode == "personal" else "member"
                tx.execute(
                    "INSERT INTO users(id, username, role, created_at, last_seen)"
                    " VALUES (?, ?, ?, ?, ?)",
                    (new_id(), username, role, now_ts(), now_ts()),
                )
            else:
                tx.execute(
                    "UPDATE users SET last_seen = ? WHERE username = ?", (now_ts(), username)
                )
            row = tx.execute(
                "SELECT id, username, display_name, role, created_at, last_seen"
                " FROM users WHERE username = ?",
                (username,),
            )[0]
        return User(**row)

    @property
    def uid(self) -> str:
        return self.user.id

    def check_user(self, user_id: str | None) -> None:
        """Accept the configured user's name or id; refuse anyone else's."""
        if user_id and user_id not in (self.user.id, self.user.username):
            raise Forbidden(
                f"This BigMind server acts as user '{self.user.username}'. "
                "Omit user_id, or start the server with BIGMIND_USER set to that user."
            )

    # -- sessions ----------------------------------------------------------------------------
    def _session_row(
        self, run: Callable[[str, Params], list[Row]], session_id: str
    ) -> Session | None:
        rows = run(
            f"SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ? AND +user_id = ?",
            (session_id, self.uid),
        )
        return session_from_row(rows[0]) if rows else None

    def get_session(self, session_id: str) -> Session:
        sid = check_text("session_id", session_id, limits.NAME)
        s = self._session_row(self.db.query, sid)
        if s is None:
            raise NotFound(
                f"No session '{sid}' in your memory. Use memory_list_sessions to find ids, "
                "or omit session_id to use the open session."
            )
        return s

    def start_session(
        self, ide_hint: str | None = None, session_id: str | None = None
    ) -> SessionStart:
        """Open a session (auto-closing ones open > 24 h), or reuse ``session_id`` if given."""
        hint = optional_text("ide_hint", ide_hint, limits.NAME)
        ts = now_ts()
        with self.db.transaction() as tx:
            if session_id:
                existing = self._session_row(tx.execute, session_id.strip())
                if existing is None:
                    raise NotFound(
                        f"No session '{session_id}' in your memory to resume. "
                        "Call memory_start_session() without session_id to open a new one."
                    )
                tx.execute(
                    "UPDATE sessions SET last_activity_at = ? WHERE id = ?", (ts, existing.id)
                )
                return SessionStart(existing, True, [])
            stale = tx.execute(
                "SELECT id FROM sessions WHERE user_id = ? AND ended_at IS NULL AND started_at < ?",
                (self.uid, ts_ago(hours=AUTO_CLOSE_HOURS)),
            )
            closed = [r["id"] for r in stale]
            self._auto_close(tx, closed, AUTO_CLOSED_ONE_LINER, ts)
            sid = new_id()
            tx.execute(
                "INSERT INTO sessions(id, user_id, started_at, one_liner, ide_hint, last_activity_at)"
                " VALUES (?, ?, ?, '', ?, ?)",
                (sid, self.uid, ts, hint, ts),
            )
            session = self._session_row(tx.execute, sid)
        assert session is not None
        return SessionStart(session, False, closed)

    @staticmethod
    def _auto_close(tx: Tx, ids: Sequence[str], one_liner: str, ts: str) -> None:
        for sid in ids:
            tx.execute(
                "UPDATE sessions SET ended_at = ?, auto_closed = 1,"
                " one_liner = CASE WHEN one_liner = '' THEN ? ELSE one_liner END"
                " WHERE id = ? AND ended_at IS NULL",
                (ts, one_liner, sid),
            )

    def auto_close(self, session_ids: Sequence[str], one_liner: str) -> list[str]:
        """Close those of ``session_ids`` that are this user's and still open, marked as closed
        automatically; a one-liner the agent already wrote is kept. Returns the ids closed."""
        line = check_text("one_liner", one_liner, limits.ONE_LINER)
        ts = now_ts()
        with self.db.transaction() as tx:
            open_ids = [
                sid
                for sid in dict.fromkeys(session_ids)
                if tx.execute(
                    "SELECT 1 FROM sessions WHERE id = ? AND user_id = ? AND ended_at IS NULL",
                    (sid, self.uid),
                )
            ]
            self._auto_close(tx, open_ids, line, ts)
        return open_ids

    def resolve_session(self, session_id: str | None, tx: Tx) -> SessionRef:
        """The session a write belongs to: the given one, else the latest open one, else a new one.

        Agents forget memory_start_session; a write must never fail for that reason.
        """
        ts = now_ts()
        if session_id and session_id.strip():
            s = self._session_row(tx.execute, session_id.strip())
            if s is None:
                raise NotFound(
                    f"No session '{session_id}' in your memory. Omit session_id to use the "
                    "open session, or call memory_start_session()."
                )
            self._touch(tx, s, ts)
            return SessionRef(s, False)
        rows = tx.execute(
            f"SELECT {SESSION_COLUMNS} FROM sessions WHERE user_id = ? AND ended_at IS NULL"
            " ORDER BY coalesce(last_activity_at, started_at) DESC LIMIT 1",
            (self.uid,),
        )
        if rows:
            s = session_from_row(rows[0])
            self._touch(tx, s, ts)
            return SessionRef(s, False)
        sid = new_id()
        tx.execute(
            "INSERT INTO sessions(id, user_id, started_at, one_liner, last_activity_at)"
            " VALUES (?, ?, ?, '', ?)",
            (sid, self.uid, ts, ts),
        )
        s2 = self._session_row(tx.execute, sid)
        assert s2 is not None
        return SessionRef(s2, True)

    def _touch(self, tx: Tx, s: Session, ts: str) -> None:
        """Record activity, at most once per TOUCH_SECONDS: a write saved on most calls."""
        if (s.last_activity_at or "") < ts_ago(seconds=TOUCH_SECONDS):
            tx.execute("UPDATE sessions SET last_activity_at = ? WHERE id = ?", (ts, s.id))

    def end_session(
        self,
        session_id: str | None,
        one_liner: str,
        topics: str | Sequence[str] | None,
        outcome: str | None,
        summary: str | None,
        key_facts: str | Sequence[str] | None = None,
        code_refs: str | Sequence[str] | None = None,
        importance: int = 5,
    ) -> tuple[Session, bool]:
        """Close a session with its Tier-1 line and Tier-2 summary. Returns (session, was_open)."""
        line = check_text("one_liner", one_liner, limits.ONE_LINER)
        tags = limits.tags(topics)
        out = optional_text("outcome", outcome, limits.OUTCOME)
        body = optional_text("summary", summary, limits.SUMMARY)
        facts = limits.lines("key_facts", key_facts, limits.SUMMARY)
        refs = limits.lines("code_refs", code_refs, limits.SUMMARY)
        imp = check_importance(importance)
        ts = now_ts()
        with self.db.transaction() as tx:
            ref = self.resolve_session(session_id, tx)
            was_open = ref.session.is_open
            tx.execute(
                "UPDATE sessions SET ended_at = coalesce(ended_at, ?), one_liner = ?, topics = ?,"
                " outcome = ?, importance = ?, has_tier2 = ?, last_activity_at = ? WHERE id = ?",
                (ts, line, tags, out, imp, 1 if body or facts or refs else 0, ts, ref.session.id),
            )
            if body or facts or refs:
                # ON CONFLICT … DO UPDATE fires the FTS update trigger; REPLACE would not.
                tx.execute(
                    "INSERT INTO session_summaries(id, summary, key_facts, code_refs, created_at)"
                    " VALUES (?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET summary = excluded.summary,"
                    " key_facts = excluded.key_facts, code_refs = excluded.code_refs",
                    (ref.session.id, body or "", facts, refs, ts),
                )
            s = self._session_row(tx.execute, ref.session.id)
        assert s is not None
        return s, was_open

    def session_detail(self, session_id: str) -> tuple[Session, Summary | None, list[Chunk]]:
        s = self.get_session(session_id)
        rows = self.db.query(
            "SELECT summary, key_facts, code_refs, created_at FROM session_summaries WHERE id = ?",
            (s.id,),
        )
        chunks = self.db.query(
            f"SELECT {CHUNK_COLUMNS} FROM conversation_chunks c WHERE c.session_id = ?"
            " AND c.user_id = ? ORDER BY c.seq",
            (s.id, self.uid),
        )
        return s, (Summary(**rows[0]) if rows else None), [Chunk(**r) for r in chunks]

    def list_sessions(
        self, limit: int = 10, topic: str | None = None, offset: int = 0
    ) -> list[Session]:
        n = check_limit(limit)
        if topic and topic.strip():
            rows = self.db.query(
                f"SELECT {SESSION_COLUMNS} FROM sessions WHERE user_id = ?"
                f" AND {TOPIC_MATCH} ORDER BY started_at DESC LIMIT ? OFFSET ?",
                (self.uid, topic_pattern(topic), n, offset),
            )
        else:
            rows = self.db.query(
                f"SELECT {SESSION_COLUMNS} FROM sessions WHERE user_id = ?"
                " ORDER BY started_at DESC LIMIT ? OFFSET ?",
                (self.uid, n, offset),
            )
        return [session_from_row(r) for r in rows]

    def important_sessions(self, limit: int = 3, min_importance: int = 8) -> list[Session]:
        rows = self.db.query(
            f"SELECT {SESSION_COLUMNS} FROM sessions WHERE user_id = ? AND importance >= ?"
            " AND ended_at IS NOT NULL ORDER BY importance DESC, started_at DESC LIMIT ?",
            (self.uid, min_importance, limit),
        )
        return [session_from_row(r) for r in rows]

    def count_sessions(self) -> int:
        return int(
            self.db.query("SELECT count(*) AS n FROM sessions WHERE user_id = ?", (self.uid,))[0][
                "n"
            ]
        )

    def open_sessions(self) -> list[Session]:
        rows = self.db.query(
            f"SELECT {SESSION_COLUMNS} FROM sessions WHERE user_id = ? AND ended_at IS NULL"
            " ORDER BY started_at DESC LIMIT 20",
            (self.uid,),
        )
        return [session_from_row(r) for r in rows]

    # -- facts -------------------------------------------------------------------------------
    def store_fact(
        self,
        category: str,
        fact: str,
        confidence: float = 1.0,
        session_id: str | None = None,
        importance: int = 5,
    ) -> tuple[Fact, bool, SessionRef | None]:
        """Store a fact. Returns (fact, created, session); an identical active fact is reused."""
        cat = check_category(category)
        text = check_text("fact", fact, limits.FACT)
        conf = check_unit("confidence", confidence)
        imp = check_importance(importance)
        digest = content_hash(text)
        ts = now_ts()
        with self.db.transaction() as tx:
            dup = tx.execute(
                f"SELECT {FACT_COLUMNS} FROM facts f WHERE f.user_id = ? AND f.content_hash = ?"
                " AND coalesce(f.deprecated, 0) = 0 LIMIT 1",
                (self.uid, digest),
            )
            if dup:
                return fact_from_row(dup[0]), False, None
            ref = self.resolve_session(session_id, tx) if session_id else None
            rows = tx.execute(
                "INSERT INTO facts(user_id, category, fact, source_session, confidence, importance,"
                " content_hash, created_at, updated_at, deprecated, access_count)"
                f" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0) RETURNING {column_list(Fact)}",
                (self.uid, cat, text, ref.session.id if ref else None, conf, imp, digest, ts, ts),
            )
        return fact_from_row(rows[0]), True, ref

    def get_fact(self, fact_id: int) -> Fact:
        rows = self.db.query(
            f"SELECT {FACT_COLUMNS} FROM facts f WHERE f.id = ? AND +f.user_id = ?",
            (fact_id, self.uid),
        )
        if not rows:
            raise NotFound(
                f"No fact #{fact_id} in your memory. Use memory_search_facts to find fact ids."
            )
        return fact_from_row(rows[0])

    def deprecate_fact(self, fact_id: int, reason: str) -> Fact:
        why = check_text("reason", reason, limits.SHORT)
        current = self.get_fact(fact_id)
        if current.deprecated:
            raise InvalidInput(
                f"Fact #{fact_id} is already deprecated ({current.deprecation_reason}). "
                "Nothing changed."
            )
        ts = now_ts()
        with self.db.transaction() as tx:
            tx.execute(
                "UPDATE facts SET deprecated = 1, deprecation_reason = ?, deprecated_at = ?,"
                " updated_at = ? WHERE id = ? AND +user_id = ?",
                (why, ts, ts, fact_id, self.uid),
            )
        return self.get_fact(fact_id)

    def restore_fact(self, fact_id: int) -> Fact:
        """Undo :meth:`deprecate_fact`, unless an identical fact is active again meanwhile."""
        current = self.get_fact(fact_id)
        if not current.deprecated:
            raise InvalidInput(f"Fact #{fact_id} is not deprecated. Nothing changed.")
        with self.db.transaction() as tx:
            same = tx.execute(
                "SELECT f.id FROM facts f WHERE f.user_id = ? AND f.content_hash ="
                " (SELECT content_hash FROM facts WHERE id = ?)"
                " AND coalesce(f.deprecated, 0) = 0 AND f.id <> ? LIMIT 1",
                (self.uid, fact_id, fact_id),
            )
            if same:
                raise InvalidInput(
                    f"An identical active fact #{same[0]['id']} exists; restoring #{fact_id}"
                    " would duplicate it. Nothing changed."
                )
            tx.execute(
                "UPDATE facts SET deprecated = 0, deprecation_reason = NULL, deprecated_at = NULL,"
                " updated_at = ? WHERE id = ? AND +user_id = ?",
                (now_ts(), fact_id, self.uid),
            )
        return self.get_fact(fact_id)

    def facts_by_ids(self, ids: Sequence[int]) -> list[Fact]:
        """The user's active facts with these ids, in the order given."""
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        rows = self.db.query(
            f"SELECT {FACT_COLUMNS} FROM facts f WHERE f.id IN ({marks}) AND +f.user_id = ?"
            " AND f.deprecated = 0",
            (*ids, self.uid),
        )
        by_id = {int(r["id"]): fact_from_row(r) for r in rows}
        return [by_id[i] for i in ids if i in by_id]

    def top_facts(self, limit: int) -> list[Fact]:
        """Active facts, most important, most confident, most recently updated first."""
        rows = self.db.query(
            f"SELECT {FACT_COLUMNS} FROM facts f WHERE f.user_id = ? AND f.deprecated = 0"
            " ORDER BY f.importance DESC, f.confidence DESC, f.updated_at DESC LIMIT ?",
            (self.uid, limit),
        )
        return [fact_from_row(r) for r in rows]

    def count_active_facts(self, cap: int | None = None) -> int:
        """Active facts; with ``cap``, counting stops there (cheap on huge memories)."""
        limit = "" if cap is None else f" LIMIT {int(cap)}"
        return int(
            self.db.query(
                "SELECT count(*) AS n FROM (SELECT 1 FROM facts WHERE user_id = ? AND deprecated = 0"
                f"{limit})",
                (self.uid,),
            )[0]["n"]
        )

    # -- chunks ------------------------------------------------------------------------------
    def append_chunk(
        self,
        content: str,
        session_id: str | None = None,
        role: str = "assistant",
        flag_reason: str | None = None,
    ) -> tuple[Chunk, SessionRef]:
        body = check_text("content", content, limits.CHUNK)
        if role not in CHUNK_ROLES:
            raise InvalidInput(f"'role' must be one of {', '.join(CHUNK_ROLES)}; got {role!r}.")
        reason = optional_text("flag_reason", flag_reason, limits.SHORT)
        with self.db.transaction() as tx:
            ref = self.resolve_session(session_id, tx)
            rows = tx.execute(
                "INSERT INTO conversation_chunks(session_id, user_id, role, content, flag_reason,"
                " seq, created_at) VALUES (?, ?, ?, ?, ?, (SELECT coalesce(max(seq), 0) + 1 FROM"
                f" conversation_chunks WHERE session_id = ?), ?) RETURNING {column_list(Chunk)}",
                (ref.session.id, self.uid, role, body, reason, ref.session.id, now_ts()),
            )
        return Chunk(**rows[0]), ref

    # -- profile -----------------------------------------------------------------------------
    def get_profile(self) -> Profile:
        rows = self.db.query(
            "SELECT role, preferences, pinned_facts, updated_at FROM identity_profile"
            " WHERE user_id = ?",
            (self.uid,),
        )
        return Profile(**rows[0]) if rows else Profile(None, None, None, None)

    def update_profile(
        self,
        role: str | None = None,
        preferences: str | None = None,
        pinned_facts: str | Sequence[str] | None = None,
    ) -> Profile:
        """Upsert the Tier-0 profile; a field left as None keeps its value, "" clears it."""
        if role is None and preferences is None and pinned_facts is None:
            raise InvalidInput("Give at least one of role, preferences or pinned_facts.")
        fields: dict[str, str | None] = {}
        if role is not None:
            fields["role"] = optional_text("role", role, limits.SHORT)
        if preferences is not None:
            fields["preferences"] = optional_text("preferences", preferences, limits.PROFILE_TEXT)
        if pinned_facts is not None:
            fields["pinned_facts"] = limits.lines("pinned_facts", pinned_facts, limits.PROFILE_TEXT)
        ts = now_ts()
        with self.db.transaction() as tx:
            exists = tx.execute(
                "SELECT 1 AS x FROM identity_profile WHERE user_id = ?", (self.uid,)
            )
            if not exists:
                tx.execute(
                    "INSERT INTO identity_profile(id, user_id, updated_at) VALUES (?, ?, ?)",
                    (self.uid, self.uid, ts),
                )
            sets = ", ".join(f"{k} = ?" for k in fields)
            tx.execute(
                f"UPDATE identity_profile SET {sets}, updated_at = ? WHERE user_id = ?",
                (*fields.values(), ts, self.uid),
            )
        return self.get_profile()

    def counts(self) -> dict[str, int]:
        """Row counts of this user's memory per kind."""
        q = self.db.query
        u = (self.uid,)
        return {
            "sessions": q("SELECT count(*) AS n FROM sessions WHERE user_id = ?", u)[0]["n"],
            "open_sessions": q(
                "SELECT count(*) AS n FROM sessions WHERE user_id = ? AND ended_at IS NULL", u
            )[0]["n"],
            "summaries": q(
                "SELECT count(*) AS n FROM session_summaries s JOIN sessions x ON x.id = s.id"
                " WHERE x.user_id = ?",
                u,
            )[0]["n"],
            "facts": self.count_active_facts(),
            "deprecated_facts": q(
                "SELECT count(*) AS n FROM facts WHERE user_id = ? AND deprecated = 1", u
            )[0]["n"],
            "chunks": q("SELECT count(*) AS n FROM conversation_chunks WHERE user_id = ?", u)[0][
                "n"
            ],
            "hypotheses": q("SELECT count(*) AS n FROM hypotheses WHERE user_id = ?", u)[0]["n"],
            "global_approved": q(
                "SELECT count(*) AS n FROM global_knowledge WHERE status = 'approved'"
            )[0]["n"],
        }


# One tag of a session's comma-separated topics, any case; `%` and `_` in a tag are literal.
TOPIC_MATCH = "(',' || lower(coalesce(topics, '')) || ',') LIKE ? ESCAPE '\\'"


def topic_pattern(topic: str) -> str:
    tag = topic.strip().lower().replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%,{tag},%"


def session_from_row(row: Row) -> Session:
    row = dict(row)
    row["importance"] = row.get("importance") or 5
    row["has_tier2"] = row.get("has_tier2") or 0
    row["auto_closed"] = row.get("auto_closed") or 0
    row["one_liner"] = row.get("one_liner") or ""
    return Session(**row)


def fact_from_row(row: Row) -> Fact:
    row = dict(row)
    row["confidence"] = 1.0 if row.get("confidence") is None else float(row["confidence"])
    row["importance"] = row.get("importance") or 5
    row["deprecated"] = row.get("deprecated") or 0
    row["access_count"] = row.get("access_count") or 0
    return Fact(**row)
