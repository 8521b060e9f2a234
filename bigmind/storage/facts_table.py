"""The facts table (Tier 3: atomic truths), seen by one user.

A fact is *active* until deprecated: :data:`ACTIVE` is that condition, written once
(``deprecated`` is never NULL since migration 0012, so the state indexes serve it).
"""

from __future__ import annotations

from collections.abc import Sequence

from bigmind.models import FACT_COLUMNS, Fact, column_list
from bigmind.storage.db import Row, Tx
from bigmind.storage.schema import matched
from bigmind.storage.table import ANYWHERE, Table, containing, containing_params, marks


def active(alias: str = "f") -> str:
    """The condition of an active fact, on the facts table aliased ``alias``."""
    return f"{alias}.deprecated = 0"


def visible(alias: str, project: str | None) -> tuple[str, tuple[object, ...]]:
    """The condition (and its parameter) of a fact seen from ``project``: the global ones and
    the project's own. ``project`` None: the global ones; :data:`ANYWHERE`: every fact."""
    if project == ANYWHERE:
        return "1 = 1", ()
    if project is None:
        return f"{alias}.scope = 'global'", ()
    return f"({alias}.scope = 'global' OR {alias}.project = ?)", (project,)


ACTIVE = active("f")
STATUSES = ("active", "deprecated", "all")


def fact_from_row(row: Row) -> Fact:
    row = dict(row)
    row["confidence"] = _confidence(row.get("confidence"))
    row["importance"] = row.get("importance") or 5
    row["deprecated"] = row.get("deprecated") or 0
    row["access_count"] = row.get("access_count") or 0
    return Fact(**row)


def _confidence(value: float | None) -> float:
    """A stored confidence (NULL, from the plan's first schema, reads as 1.0)."""
    return 1.0 if value is None else float(value)


def _status(status: str) -> str:
    """The condition on ``f`` for a status: active, deprecated or all."""
    if status == "active":
        return f" AND {ACTIVE}"
    if status == "deprecated":
        return " AND f.deprecated = 1"
    return ""


class Facts(Table):
    """One user's facts."""

    # -- one fact --------------------------------------------------------------------------
    def get(self, fact_id: int, tx: Tx | None = None) -> Fact | None:
        rows = self._run(tx)(
            f"SELECT {FACT_COLUMNS} FROM facts f WHERE f.id = ? AND +f.user_id = ?",
            (fact_id, self.uid),
        )
        return fact_from_row(rows[0]) if rows else None

    def active_with_hash(
        self, digest: str, tx: Tx | None = None, project: str | None = ANYWHERE
    ) -> Fact | None:
        """The active fact with this content hash seen from ``project``, if any."""
        seen, args = visible("f", project)
        rows = self._run(tx)(
            f"SELECT {FACT_COLUMNS} FROM facts f WHERE f.user_id = ? AND f.content_hash = ?"
            f" AND {ACTIVE} AND {seen} LIMIT 1",
            (self.uid, digest, *args),
        )
        return fact_from_row(rows[0]) if rows else None

    def active_twin(self, tx: Tx, fact_id: int) -> int | None:
        """Another active fact with the same text as fact ``fact_id``, if any."""
        rows = tx.execute(
            "SELECT f.id FROM facts f WHERE f.user_id = ? AND f.content_hash ="
            f" (SELECT content_hash FROM facts WHERE id = ?) AND {ACTIVE} AND f.id <> ? LIMIT 1",
            (self.uid, fact_id, fact_id),
        )
        return int(rows[0]["id"]) if rows else None

    def other_with_hash(self, tx: Tx, digest: str, fact_id: int) -> int | None:
        """An active fact other than ``fact_id`` with this content hash, if any."""
        rows = tx.execute(
            f"SELECT f.id FROM facts f WHERE f.user_id = ? AND f.content_hash = ? AND {ACTIVE}"
            " AND f.id <> ? LIMIT 1",
            (self.uid, digest, fact_id),
        )
        return int(rows[0]["id"]) if rows else None

    def insert(
        self,
        tx: Tx,
        *,
        category: str,
        fact: str,
        source_session: str | None,
        confidence: float,
        importance: int,
        digest: str,
        ts: str,
        project: str | None = None,
        scope: str = "global",
    ) -> Fact:
        rows = tx.execute(
            "INSERT INTO facts(user_id, category, fact, source_session, confidence, importance,"
            " content_hash, created_at, updated_at, deprecated, access_count, project, scope)"
            f" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 0, 0, ?, ?) RETURNING {column_list(Fact)}",
            (
                self.uid,
                category,
                fact,
                source_session,
                confidence,
                importance,
                digest,
                ts,
                ts,
                project,
                scope,
            ),
        )
        return fact_from_row(rows[0])

    def set_scope(self, tx: Tx, fact_id: int, scope: str, project: str | None, ts: str) -> None:
        """Make a fact global, or its project's (``project``: where it now belongs)."""
        tx.execute(
            "UPDATE facts SET scope = ?, project = coalesce(?, project), updated_at = ?"
            " WHERE id = ? AND +user_id = ?",
            (scope, project, ts, fact_id, self.uid),
        )

    def update(
        self,
        tx: Tx,
        fact_id: int,
        *,
        category: str,
        fact: str,
        confidence: float,
        importance: int,
        digest: str,
        ts: str,
    ) -> None:
        """Rewrite a fact in place (its full-text entry follows by trigger)."""
        tx.execute(
            "UPDATE facts SET category = ?, fact = ?, confidence = ?, importance = ?,"
            " content_hash = ?, updated_at = ? WHERE id = ? AND +user_id = ?",
            (category, fact, confidence, importance, digest, ts, fact_id, self.uid),
        )

    def delete(self, tx: Tx, fact_ids: Sequence[int]) -> list[int]:
        """Delete these facts of this user (their full-text entries go by trigger); the ids
        deleted."""
        if not fact_ids:
            return []
        rows = tx.execute(
            f"DELETE FROM facts WHERE id IN ({marks(fact_ids)}) AND +user_id = ? RETURNING id",
            (*fact_ids, self.uid),
        )
        return [int(r["id"]) for r in rows]

    def unlink_session(self, tx: Tx, session_id: str) -> list[int]:
        """Facts learned in a session that is being forgotten keep their text, without the
        link; their ids."""
        rows = tx.execute(
            "UPDATE facts SET source_session = NULL WHERE source_session = ? AND user_id = ?"
            " RETURNING id",
            (session_id, self.uid),
        )
        return sorted(int(r["id"]) for r in rows)

    def holding(self, text: str, limit: int) -> list[Row]:
        """``id``, ``category``, ``fact``, ``deprecated`` of the facts (any status) whose text,
        category or deprecation reason contains ``text``, any case, oldest first."""
        cols = matched("facts", "f")
        return self.db.query(
            "SELECT f.id, f.category, f.fact, f.deprecated FROM facts f WHERE f.user_id = ?"
            f" AND {containing(cols)} ORDER BY f.id LIMIT ?",
            (self.uid, *containing_params(text, cols), limit),
        )

    def deprecate(self, tx: Tx, fact_id: int, reason: str, ts: str) -> None:
        tx.execute(
            "UPDATE facts SET deprecated = 1, deprecation_reason = ?, deprecated_at = ?,"
            " updated_at = ? WHERE id = ? AND +user_id = ?",
            (reason, ts, ts, fact_id, self.uid),
        )

    def restore(self, tx: Tx, fact_id: int, ts: str) -> None:
        tx.execute(
            "UPDATE facts SET deprecated = 0, deprecation_reason = NULL, deprecated_at = NULL,"
            " updated_at = ? WHERE id = ? AND +user_id = ?",
            (ts, fact_id, self.uid),
        )

    # -- the duplicate / conflict check (bigmind.memory.dedup) --------------------------------
    def unchecked(self, limit: int) -> list[Fact]:
        """Facts never checked for duplicates and conflicts (stored before the model was
        ready), oldest first."""
        rows = self.db.query(
            f"SELECT {FACT_COLUMNS} FROM facts f WHERE f.user_id = ? AND f.checked_at IS NULL"
            " ORDER BY f.id LIMIT ?",
            (self.uid, limit),
        )
        return [fact_from_row(r) for r in rows]

    def claim_check(self, tx: Tx, fact_id: int, ts: str) -> bool:
        """Mark the fact checked; False if it already was (another process checked it)."""
        rows = tx.execute(
            "UPDATE facts SET checked_at = ? WHERE id = ? AND +user_id = ? AND checked_at IS NULL"
            " RETURNING id",
            (ts, fact_id, self.uid),
        )
        return bool(rows)

    def absorb(self, tx: Tx, keep: int, other: int, ts: str) -> None:
        """Fact ``keep`` takes over fact ``other``'s usage and standing (the two are one fact):
        uses added up, the latest use, the higher importance and confidence, and ``other``'s
        source session when ``keep`` has none."""
        rows = tx.execute(
            "SELECT id, importance, confidence, access_count, last_accessed_at, source_session"
            " FROM facts WHERE id IN (?, ?) AND +user_id = ?",
            (keep, other, self.uid),
        )
        by_id = {int(r["id"]): r for r in rows}
        k, o = by_id[keep], by_id[other]
        used = [str(r["last_accessed_at"]) for r in (k, o) if r["last_accessed_at"]]
        tx.execute(
            "UPDATE facts SET importance = ?, confidence = ?, access_count = ?,"
            " last_accessed_at = ?, source_session = ?, updated_at = ? WHERE id = ? AND +user_id = ?",
            (
                max(int(k["importance"] or 5), int(o["importance"] or 5)),
                max(_confidence(k["confidence"]), _confidence(o["confidence"])),
                int(k["access_count"] or 0) + int(o["access_count"] or 0),
                max(used, default=None),
                k["source_session"] or o["source_session"],
                ts,
                keep,
                self.uid,
            ),
        )

    def add_uses(self, tx: Tx, fact_ids: Sequence[int], n: int, ts: str) -> None:
        """Count ``n`` more uses of these facts (see bigmind.usage)."""
        tx.execute(
            "UPDATE facts SET access_count = coalesce(access_count, 0) + ?,"
            f" last_accessed_at = ?, retired_at = NULL WHERE id IN ({marks(fact_ids)})"
            " AND +user_id = ?",
            (n, ts, *fact_ids, self.uid),
        )

    def retire_stale(self, tx: Tx, before: str, max_importance: int, ts: str) -> list[Row]:
        """Retire from the packet the active facts of importance ≤ ``max_importance`` neither
        used nor updated since ``before`` (a use brings one back: :meth:`add_uses`); ``id``
        and ``fact`` of those retired now."""
        return tx.execute(
            "UPDATE facts SET retired_at = ? WHERE user_id = ? AND deprecated = 0"
            " AND retired_at IS NULL AND importance <= ?"
            " AND coalesce(last_accessed_at, updated_at, created_at) < ? RETURNING id, fact",
            (ts, self.uid, max_importance, before),
        )

    def recheck(self, tx: Tx) -> int:
        """Mark every active fact as not yet checked for duplicates and conflicts (a full
        consolidation checks them all again); how many."""
        rows = tx.execute(
            "UPDATE facts SET checked_at = NULL WHERE user_id = ? AND deprecated = 0 RETURNING id",
            (self.uid,),
        )
        return len(rows)

    # -- lists -----------------------------------------------------------------------------
    def by_ids(self, ids: Sequence[int], project: str | None = ANYWHERE) -> list[Fact]:
        """The active facts with these ids seen from ``project``, in the order given."""
        if not ids:
            return []
        seen, args = visible("f", project)
        rows = self.db.query(
            f"SELECT {FACT_COLUMNS} FROM facts f WHERE f.id IN ({marks(ids)})"
            f" AND +f.user_id = ? AND {ACTIVE} AND {seen}",
            (*ids, self.uid, *args),
        )
        by_id = {int(r["id"]): fact_from_row(r) for r in rows}
        return [by_id[i] for i in ids if i in by_id]

    def top(self, limit: int, project: str | None = ANYWHERE) -> list[Fact]:
        """Active facts seen from ``project`` and not retired by consolidation, most important,
        most confident, most recently updated first (the packet's candidates)."""
        seen, args = visible("f", project)
        rows = self.db.query(
            f"SELECT {FACT_COLUMNS} FROM facts f WHERE f.user_id = ? AND {ACTIVE} AND {seen}"
            " AND f.retired_at IS NULL"
            " ORDER BY f.importance DESC, f.confidence DESC, f.updated_at DESC LIMIT ?",
            (self.uid, *args, limit),
        )
        return [fact_from_row(r) for r in rows]

    def of_session(self, session_id: str, limit: int = 100) -> list[Fact]:
        """Facts stored in a session, active and deprecated, newest first."""
        rows = self.db.query(
            f"SELECT {FACT_COLUMNS} FROM facts f WHERE f.user_id = ? AND f.source_session = ?"
            " ORDER BY f.created_at DESC, f.id DESC LIMIT ?",
            (self.uid, session_id, limit),
        )
        return [fact_from_row(r) for r in rows]

    def headlines_of_session(self, tx: Tx, session_id: str, limit: int) -> list[Row]:
        """``category`` and ``fact`` of the active facts stored in a session, most important
        first (an implicit session's automatic one-liner), read inside the closing write."""
        return tx.execute(
            "SELECT f.category, f.fact FROM facts f WHERE f.user_id = ? AND f.source_session = ?"
            f" AND {ACTIVE} ORDER BY f.importance DESC, f.created_at, f.id LIMIT ?",
            (self.uid, session_id, limit),
        )

    def page_with_sessions(
        self,
        status: str,
        category: str | None,
        limit: int,
        offset: int,
        project: str | None = ANYWHERE,
    ) -> list[Row]:
        """Newest first, each with its source session's one-liner (``session_ref`` is NULL
        when the fact has none). The page's ids come from the index alone
        (idx_facts_user_state), so a deep page skips index entries, not joined rows."""
        cond, args = self._filter(status, category, project)
        return self.db.query(
            f"{_WITH_SESSION} WHERE f.id IN (SELECT f.id FROM facts f WHERE {cond}"
            " ORDER BY f.id DESC LIMIT ? OFFSET ?) ORDER BY f.id DESC",
            (*args, limit, offset),
        )

    def with_sessions(self, ids: Sequence[int]) -> list[Row]:
        """These facts (any status) with their source sessions' one-liners."""
        if not ids:
            return []
        return self.db.query(
            f"{_WITH_SESSION} WHERE f.id IN ({marks(ids)}) AND +f.user_id = ?", (*ids, self.uid)
        )

    def _filter(
        self, status: str, category: str | None, project: str | None = ANYWHERE
    ) -> tuple[str, list[object]]:
        cond, args = "f.user_id = ?" + _status(status), list[object]([self.uid])
        if category:
            cond += " AND f.category = ?"
            args.append(category)
        if project != ANYWHERE:
            seen, more = visible("f", project)
            cond += f" AND {seen}"
            args += more
        return cond, args

    def created_since(self, ts: str, limit: int) -> tuple[int, list[Row]]:
        """(how many, the first ``limit``) of the active facts created at or after ``ts``."""
        return self._since(
            "id, category, fact, created_at",
            f"f.created_at >= ? AND {ACTIVE}",
            "created_at",
            ts,
            limit,
        )

    def deprecated_since(self, ts: str, limit: int) -> tuple[int, list[Row]]:
        return self._since(
            "id, fact, deprecation_reason",
            "f.deprecated = 1 AND f.deprecated_at >= ?",
            "deprecated_at",
            ts,
            limit,
        )

    def _since(
        self, columns: str, cond: str, order: str, ts: str, limit: int
    ) -> tuple[int, list[Row]]:
        source = f"facts f WHERE f.user_id = ? AND {cond}"
        return self._count_and_first(columns, source, (self.uid, ts), f"f.{order}", limit)

    # -- counts ----------------------------------------------------------------------------
    def count(
        self,
        status: str = "active",
        category: str | None = None,
        cap: int | None = None,
        project: str | None = ANYWHERE,
    ) -> int:
        """Facts of a status (and category) seen from ``project``; with ``cap``, counting stops
        there (cheap on huge memories)."""
        cond, args = self._filter(status, category, project)
        limit = "" if cap is None else f" LIMIT {int(cap)}"
        return int(
            self.db.query(
                f"SELECT count(*) AS n FROM (SELECT 1 FROM facts f WHERE {cond}{limit}) AS q", args
            )[0]["n"]
        )

    def projects(self) -> dict[str, int]:
        """The projects this user's active facts were made in, with how many each."""
        rows = self.db.query(
            f"SELECT f.project, count(*) AS n FROM facts f WHERE f.user_id = ? AND {ACTIVE}"
            " AND f.project IS NOT NULL GROUP BY f.project ORDER BY n DESC, f.project",
            (self.uid,),
        )
        return {str(r["project"]): int(r["n"]) for r in rows}

    def per_category(self, status: str = "active") -> dict[str, int]:
        """Facts per category, most first (then by name)."""
        rows = self.db.query(
            f"SELECT f.category, count(*) AS n FROM facts f WHERE f.user_id = ?{_status(status)}"
            " GROUP BY f.category ORDER BY n DESC, f.category",
            (self.uid,),
        )
        return {str(r["category"]): int(r["n"]) for r in rows}

    def stale(self, before: str) -> int:
        """Active facts neither updated nor used since ``before``."""
        return int(
            self.db.query(
                f"SELECT count(*) AS n FROM facts f WHERE f.user_id = ? AND {ACTIVE}"
                " AND f.updated_at < ? AND (f.last_accessed_at IS NULL OR f.last_accessed_at < ?)",
                (self.uid, before, before),
            )[0]["n"]
        )

    def unsure(self, below: float = 0.5) -> int:
        """Active facts with a confidence below ``below``."""
        return int(
            self.db.query(
                f"SELECT count(*) AS n FROM facts f WHERE f.user_id = ? AND {ACTIVE}"
                " AND f.confidence < ?",
                (self.uid, below),
            )[0]["n"]
        )


_WITH_SESSION = (
    f"SELECT {FACT_COLUMNS}, s.id AS session_ref, s.one_liner AS session_one_liner"
    " FROM facts f LEFT JOIN sessions s ON s.id = f.source_session"
)
