"""The sessions table (Tier 1) and session_summaries (Tier 2), seen by one user."""

from __future__ import annotations

from collections.abc import Sequence

from bigmind.models import SESSION_COLUMNS, Session, Summary
from bigmind.storage.db import Row, Tx
from bigmind.storage.schema import matched
from bigmind.storage.table import (
    ANYWHERE,
    Table,
    containing,
    containing_params,
    in_project,
    like_literal,
)

# One tag of a session's comma-separated topics, any case; `%` and `_` in a tag are literal.
TOPIC_MATCH = "(',' || lower(coalesce(topics, '')) || ',') LIKE ? ESCAPE '\\'"


def topic_pattern(topic: str) -> str:
    return f"%,{like_literal(topic.strip().lower())},%"


def session_from_row(row: Row) -> Session:
    row = dict(row)
    row["importance"] = row.get("importance") or 5
    row["has_tier2"] = row.get("has_tier2") or 0
    row["auto_closed"] = row.get("auto_closed") or 0
    row["implicit"] = row.get("implicit") or 0
    row["one_liner"] = row.get("one_liner") or ""
    return Session(**row)


class Sessions(Table):
    """One user's sessions and their summaries."""

    # -- one session -----------------------------------------------------------------------
    def get(self, session_id: str, tx: Tx | None = None) -> Session | None:
        rows = self._run(tx)(
            f"SELECT {SESSION_COLUMNS} FROM sessions WHERE id = ? AND +user_id = ?",
            (session_id, self.uid),
        )
        return session_from_row(rows[0]) if rows else None

    def latest_open(self, tx: Tx | None = None, project: str | None = ANYWHERE) -> Session | None:
        """The open session of ``project`` (exactly: None is no project) with the most recent
        activity: a write in one repository never lands in another's open session."""
        args: tuple[object, ...] = ()
        if project == ANYWHERE:
            cond = "1 = 1"
        elif project is None:
            cond = "project IS NULL"
        else:
            cond, args = "project = ?", (project,)
        rows = self._run(tx)(
            f"SELECT {SESSION_COLUMNS} FROM sessions WHERE user_id = ? AND ended_at IS NULL"
            f" AND {cond} ORDER BY coalesce(last_activity_at, started_at) DESC LIMIT 1",
            (self.uid, *args),
        )
        return session_from_row(rows[0]) if rows else None

    def insert(
        self,
        tx: Tx,
        session_id: str,
        ts: str,
        ide_hint: str | None = None,
        project: str | None = None,
        *,
        implicit: bool = False,
    ) -> None:
        tx.execute(
            "INSERT INTO sessions(id, user_id, started_at, one_liner, ide_hint, last_activity_at,"
            " project, implicit) VALUES (?, ?, ?, '', ?, ?, ?, ?)",
            (session_id, self.uid, ts, ide_hint, ts, project, int(implicit)),
        )

    def touch(self, tx: Tx, session_id: str, ts: str) -> None:
        tx.execute(
            "UPDATE sessions SET last_activity_at = ? WHERE id = ? AND +user_id = ?",
            (ts, session_id, self.uid),
        )

    def all_open(self, tx: Tx) -> list[Session]:
        """Every open session of this user, read inside the write that may close them."""
        rows = tx.execute(
            f"SELECT {SESSION_COLUMNS} FROM sessions WHERE user_id = ? AND ended_at IS NULL",
            (self.uid,),
        )
        return [session_from_row(r) for r in rows]

    def hint(self, tx: Tx, session_id: str, ide_hint: str) -> None:
        """Give the session this IDE hint unless it has one."""
        tx.execute(
            "UPDATE sessions SET ide_hint = coalesce(ide_hint, ?) WHERE id = ? AND +user_id = ?",
            (ide_hint, session_id, self.uid),
        )

    def open_ids(self, tx: Tx, ids: Sequence[str]) -> list[str]:
        """Those of ``ids`` that are this user's open sessions, in the order given."""
        return [
            sid
            for sid in dict.fromkeys(ids)
            if tx.execute(
                "SELECT 1 FROM sessions WHERE id = ? AND user_id = ? AND ended_at IS NULL",
                (sid, self.uid),
            )
        ]

    def open_before(self, tx: Tx, started_before: str) -> list[str]:
        """Ids of this user's sessions still open that started before the given time."""
        rows = tx.execute(
            "SELECT id FROM sessions WHERE user_id = ? AND ended_at IS NULL AND started_at < ?",
            (self.uid, started_before),
        )
        return [str(r["id"]) for r in rows]

    def close_auto(
        self, tx: Tx, ids: Sequence[str], one_liner: str, ts: str, topics: str | None = None
    ) -> None:
        """Close sessions automatically; a one-liner and topics the agent already wrote are
        kept."""
        for sid in ids:
            tx.execute(
                "UPDATE sessions SET ended_at = ?, auto_closed = 1,"
                " one_liner = CASE WHEN one_liner = '' THEN ? ELSE one_liner END,"
                " topics = coalesce(topics, ?)"
                " WHERE id = ? AND +user_id = ? AND ended_at IS NULL",
                (ts, one_liner, topics, sid, self.uid),
            )

    def end(
        self,
        tx: Tx,
        session_id: str,
        ts: str,
        *,
        one_liner: str,
        topics: str | None,
        outcome: str | None,
        importance: int,
        has_tier2: bool,
    ) -> None:
        tx.execute(
            "UPDATE sessions SET ended_at = coalesce(ended_at, ?), one_liner = ?, topics = ?,"
            " outcome = ?, importance = ?, has_tier2 = ?, last_activity_at = ?"
            " WHERE id = ? AND +user_id = ?",
            (ts, one_liner, topics, outcome, importance, int(has_tier2), ts, session_id, self.uid),
        )

    def save_summary(
        self,
        tx: Tx,
        session_id: str,
        summary: str,
        key_facts: str | None,
        code_refs: str | None,
        ts: str,
    ) -> None:
        # ON CONFLICT … DO UPDATE fires the FTS update trigger; REPLACE would not.
        tx.execute(
            "INSERT INTO session_summaries(id, summary, key_facts, code_refs, created_at)"
            " VALUES (?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET summary = excluded.summary,"
            " key_facts = excluded.key_facts, code_refs = excluded.code_refs",
            (session_id, summary, key_facts, code_refs, ts),
        )

    def delete_summary(self, tx: Tx, session_id: str) -> bool:
        """Delete a session's Tier-2 summary (its full-text entry goes by trigger); the session
        stays, marked as having none. Whether there was one."""
        rows = tx.execute(
            "DELETE FROM session_summaries WHERE id = (SELECT id FROM sessions WHERE id = ?"
            " AND user_id = ?) RETURNING id",
            (session_id, self.uid),
        )
        tx.execute(
            "UPDATE sessions SET has_tier2 = 0 WHERE id = ? AND +user_id = ?",
            (session_id, self.uid),
        )
        return bool(rows)

    def delete(self, tx: Tx, session_id: str) -> bool:
        """Delete the session row (its summary, exchanges and every row pointing at it must be
        gone or unlinked first). Whether it existed."""
        rows = tx.execute(
            "DELETE FROM sessions WHERE id = ? AND +user_id = ? RETURNING id",
            (session_id, self.uid),
        )
        return bool(rows)

    def holding(self, text: str, limit: int) -> list[Row]:
        """``id``, ``started_at``, ``one_liner`` of the sessions whose one-liner, topics,
        outcome or IDE hint contains ``text``, any case, oldest first."""
        cols = matched("sessions")
        return self.db.query(
            "SELECT id, started_at, one_liner FROM sessions WHERE user_id = ?"
            f" AND {containing(cols)} ORDER BY started_at, id LIMIT ?",
            (self.uid, *containing_params(text, cols), limit),
        )

    def summaries_holding(self, text: str, limit: int) -> list[Row]:
        """``id``, ``started_at``, ``one_liner`` of the sessions whose Tier-2 summary, key facts
        or code references contain ``text``, any case, oldest first."""
        cols = matched("session_summaries", "b")
        return self.db.query(
            "SELECT s.id, s.started_at, s.one_liner FROM session_summaries b"
            f" JOIN sessions s ON s.id = b.id WHERE s.user_id = ? AND {containing(cols)}"
            " ORDER BY s.started_at, s.id LIMIT ?",
            (self.uid, *containing_params(text, cols), limit),
        )

    def summary(self, session_id: str) -> Summary | None:
        """The Tier-2 summary of one of this user's sessions."""
        rows = self.db.query(
            "SELECT b.summary, b.key_facts, b.code_refs, b.created_at FROM session_summaries b"
            " JOIN sessions s ON s.id = b.id WHERE b.id = ? AND s.user_id = ?",
            (session_id, self.uid),
        )
        return Summary(**rows[0]) if rows else None

    # -- lists -----------------------------------------------------------------------------
    def page(
        self,
        limit: int,
        offset: int = 0,
        topic: str | None = None,
        project: str | None = ANYWHERE,
    ) -> list[Session]:
        """Newest first, seen from ``project``; ``topic`` matches one tag of the list, any
        case."""
        where, args = self._topic(topic, project)
        rows = self.db.query(
            f"SELECT {SESSION_COLUMNS} FROM sessions WHERE {where}"
            " ORDER BY started_at DESC, id DESC LIMIT ? OFFSET ?",
            (*args, limit, offset),
        )
        return [session_from_row(r) for r in rows]

    def count(self, topic: str | None = None, project: str | None = ANYWHERE) -> int:
        where, args = self._topic(topic, project)
        return int(self.db.query(f"SELECT count(*) AS n FROM sessions WHERE {where}", args)[0]["n"])

    def _topic(
        self, topic: str | None, project: str | None = ANYWHERE
    ) -> tuple[str, tuple[object, ...]]:
        seen, more = in_project("project", project)
        if topic and topic.strip():
            return (
                f"user_id = ? AND {seen} AND {TOPIC_MATCH}",
                (self.uid, *more, topic_pattern(topic)),
            )
        return f"user_id = ? AND {seen}", (self.uid, *more)

    def important(
        self, limit: int, min_importance: int, project: str | None = ANYWHERE
    ) -> list[Session]:
        seen, more = in_project("project", project)
        rows = self.db.query(
            f"SELECT {SESSION_COLUMNS} FROM sessions WHERE user_id = ? AND importance >= ?"
            f" AND ended_at IS NOT NULL AND {seen} ORDER BY importance DESC, started_at DESC"
            " LIMIT ?",
            (self.uid, min_importance, *more, limit),
        )
        return [session_from_row(r) for r in rows]

    def open(self, limit: int = 20) -> list[Session]:
        rows = self.db.query(
            f"SELECT {SESSION_COLUMNS} FROM sessions WHERE user_id = ? AND ended_at IS NULL"
            " ORDER BY started_at DESC LIMIT ?",
            (self.uid, limit),
        )
        return [session_from_row(r) for r in rows]

    def opened_since(self, ts: str, limit: int) -> tuple[int, list[Row]]:
        """(how many, the first ``limit``) of the sessions started after ``ts``."""
        return self._since("started_at > ?", "started_at", ts, limit)

    def closed_since(self, ts: str, limit: int) -> tuple[int, list[Row]]:
        return self._since("ended_at >= ?", "ended_at", ts, limit)

    def _since(self, cond: str, order: str, ts: str, limit: int) -> tuple[int, list[Row]]:
        return self._count_and_first(
            "id, started_at, ended_at, one_liner, outcome",
            f"sessions WHERE user_id = ? AND {cond}",
            (self.uid, ts),
            order,
            limit,
        )

    # -- counts ----------------------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        """Sessions, open sessions and summaries of this user."""
        row = self.db.query(
            "SELECT count(*) AS n, coalesce(sum(CASE WHEN ended_at IS NULL THEN 1 ELSE 0 END), 0)"
            " AS open, (SELECT count(*) FROM session_summaries b JOIN sessions x ON x.id = b.id"
            " WHERE x.user_id = ?) AS summaries FROM sessions WHERE user_id = ?",
            (self.uid, self.uid),
        )[0]
        return {
            "sessions": int(row["n"]),
            "open_sessions": int(row["open"]),
            "summaries": int(row["summaries"]),
        }

    def unsummarised(self) -> int:
        """Closed by the agent without a Tier-2 summary."""
        return int(
            self.db.query(
                "SELECT count(*) AS n FROM sessions WHERE user_id = ? AND ended_at IS NOT NULL"
                " AND coalesce(has_tier2, 0) = 0 AND coalesce(auto_closed, 0) = 0",
                (self.uid,),
            )[0]["n"]
        )

    def span(self) -> tuple[str | None, str | None]:
        """When the first and the last session started."""
        row = self.db.query(
            "SELECT min(started_at) AS first, max(started_at) AS last FROM sessions"
            " WHERE user_id = ?",
            (self.uid,),
        )[0]
        return row["first"], row["last"]

    def projects(self) -> dict[str, int]:
        """The projects this user's sessions were held in, with how many each."""
        rows = self.db.query(
            "SELECT project, count(*) AS n FROM sessions WHERE user_id = ? AND project IS NOT NULL"
            " GROUP BY project ORDER BY n DESC, project",
            (self.uid,),
        )
        return {str(r["project"]): int(r["n"]) for r in rows}

    def per_day(self) -> dict[str, int]:
        """Sessions started per UTC day (YYYY-MM-DD), days with none absent."""
        rows = self.db.query(
            "SELECT substr(started_at, 1, 10) AS day, count(*) AS n FROM sessions"
            " WHERE user_id = ? GROUP BY substr(started_at, 1, 10)",
            (self.uid,),
        )
        return {str(r["day"]): int(r["n"]) for r in rows}

    def topic_lists(self) -> list[tuple[str, int]]:
        """Each distinct topic list with how many sessions carry it."""
        rows = self.db.query(
            "SELECT topics, count(*) AS n FROM sessions WHERE user_id = ? AND topics IS NOT NULL"
            " GROUP BY topics",
            (self.uid,),
        )
        return [(str(r["topics"]), int(r["n"])) for r in rows]
