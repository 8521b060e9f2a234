"""The MegaMind directory's tables: a card per user and the topics of their sessions.

``directory_cards`` holds one row per user (first and last seen, how many sessions and active
facts, whether the card is hidden, and their most frequent topics, so that a page of cards reads
one table); ``directory_topics`` one row per user and session topic
(how many of their sessions carry it, and when the last one did). Both are **readable by every
user** and **each row is written by its owner only** (``user_id``): the directory is read
from them and never from another user's private rows, so it keeps working where PostgreSQL's
row-level security hides those. Nothing private is copied here: counts, dates and topic tags
only; names, roles and teams are joined in at read time from ``users`` and ``people``.

A card is kept current by the owner's own writes, in their transaction and at a bounded cost
(:class:`Directory`): a session opened adds one to the count, a session ended adds its topics
(and takes back those a second end replaced); forgetting and importing rebuild the owner's
card from their rows (:meth:`Directory.rebuild`), as migration ``0023_directory`` does for
every user.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from bigmind.models import Record
from bigmind.storage.db import Backend, Row, Tx
from bigmind.storage.facts_table import active
from bigmind.storage.table import Table, like_literal, marks

DDL = """
CREATE TABLE IF NOT EXISTS directory_cards (
    user_id    TEXT PRIMARY KEY REFERENCES users(id),
    first_seen {ts},
    last_seen  {ts},
    sessions   INTEGER NOT NULL DEFAULT 0,
    facts      INTEGER NOT NULL DEFAULT 0,
    hidden     INTEGER NOT NULL DEFAULT 0,
    top_topics TEXT,
    updated_at {ts}
);
CREATE TABLE IF NOT EXISTS directory_topics (
    user_id  TEXT NOT NULL REFERENCES users(id),
    topic    TEXT NOT NULL,
    sessions INTEGER NOT NULL,
    last_at  {ts},
    PRIMARY KEY (user_id, topic)
);
CREATE INDEX IF NOT EXISTS idx_directory_topics_rank
    ON directory_topics(user_id, sessions DESC, last_at DESC, topic);
"""
TOP_TOPICS = 8  # the most frequent topics a card carries (``top_topics``)
_RANK = "ORDER BY sessions DESC, last_at DESC, topic"

_CARD = (
    "SELECT c.user_id, u.username, coalesce(p.display_name, u.display_name) AS display_name,"
    " p.role, p.team, u.role AS access, c.first_seen, c.last_seen, c.sessions, c.facts,"
    " c.hidden, c.top_topics FROM directory_cards c JOIN users u ON u.id = c.user_id"
    " LEFT JOIN people p ON p.username = u.username"
)
_HIDDEN = "SELECT user_id FROM directory_cards WHERE hidden = 1"
# The cards a user may see: every shown card, and their own.
_SEEN = "(c.hidden = 0 OR c.user_id = ?)"


@dataclass(frozen=True, slots=True)
class CardRow(Record):
    """A card as stored, with the name, role and team known for its user."""

    user_id: str
    username: str
    display_name: str | None
    role: str | None  # the people table's (what they do), if anyone recorded it
    team: str | None
    access: str  # BigMind's role: member, curator or admin
    first_seen: str | None
    last_seen: str | None
    sessions: int
    facts: int
    hidden: bool
    top_topics: list[tuple[str, int, str | None]]  # (topic, sessions, last), most first


def _card(row: Row) -> CardRow:
    r = dict(row)
    r["top_topics"] = [(str(t), int(n), last) for t, n, last in json.loads(r["top_topics"] or "[]")]
    r["access"] = r.get("access") or "member"
    r["hidden"] = bool(r["hidden"])
    r["sessions"], r["facts"] = int(r["sessions"] or 0), int(r["facts"] or 0)
    return CardRow(**r)


def split_topics(topics: str | None) -> list[str]:
    """A session's stored topic list (``limits.tags``: comma-separated, lower case) as tags."""
    return [t for t in dict.fromkeys(x.strip().lower() for x in (topics or "").split(",")) if t]


class Directory(Table):
    """Every card, as user ``uid`` sees them; writes touch ``uid``'s own rows only."""

    # -- reads -----------------------------------------------------------------------------
    def cards(self, limit: int) -> list[CardRow]:
        """Shown cards and this user's own, most recently seen first."""
        rows = self.db.query(
            f"{_CARD} WHERE {_SEEN} ORDER BY c.last_seen DESC, u.username LIMIT ?",
            (self.uid, limit),
        )
        return [_card(r) for r in rows]

    def cards_of(self, user_ids: Sequence[str]) -> dict[str, CardRow]:
        """Those of ``user_ids`` whose card this user may see."""
        if not user_ids:
            return {}
        rows = self.db.query(
            f"{_CARD} WHERE {_SEEN} AND c.user_id IN ({marks(user_ids)})",
            (self.uid, *user_ids),
        )
        return {str(r["user_id"]): _card(r) for r in rows}

    def mine(self) -> CardRow | None:
        found = self.cards_of([self.uid])
        return found.get(self.uid)

    def topics_like(self, exact: str, fragments: Sequence[str], limit: int) -> list[Row]:
        """Topics (``user_id``, ``topic``, ``sessions``, ``last_at``) on cards this user may
        see that equal ``exact`` or contain any of ``fragments`` (lower case), the most
        frequent first."""
        likes = "".join(" OR t.topic LIKE ? ESCAPE '\\'" for _ in fragments)
        rows = self.db.query(
            "SELECT t.user_id, t.topic, t.sessions, t.last_at FROM directory_topics t"
            " JOIN directory_cards c ON c.user_id = t.user_id"
            f" WHERE {_SEEN} AND (t.topic = ?{likes})"
            " ORDER BY t.sessions DESC, t.last_at DESC LIMIT ?",
            (self.uid, exact, *(f"%{like_literal(f)}%" for f in fragments), limit),
        )
        return rows

    # -- the owner's writes ------------------------------------------------------------------
    def ensure(self, tx: Tx, ts: str) -> None:
        """This user's card, made empty (first seen when they were registered) if they have
        none."""
        tx.execute(
            "INSERT INTO directory_cards(user_id, first_seen, last_seen, updated_at)"
            " SELECT id, coalesce(created_at, ?), coalesce(last_seen, ?), ? FROM users"
            " WHERE id = ? ON CONFLICT(user_id) DO NOTHING",
            (ts, ts, ts, self.uid),
        )

    def opened(self, tx: Tx, ts: str) -> None:
        """A session was opened at ``ts``: one more, seen now."""
        self.ensure(tx, ts)
        tx.execute(
            "UPDATE directory_cards SET sessions = sessions + 1, last_seen = ?, updated_at = ?"
            " WHERE user_id = ?",
            (ts, ts, self.uid),
        )

    def ended(
        self, tx: Tx, ts: str, before: str | None, after: str | None, *, seen: bool = True
    ) -> None:
        """A session ended at ``ts`` with the topics ``after``; ``before``: those it carried
        until now (a second end replaces them), taken back first. ``seen``: the user ended it
        (an automatic close is no sign of them)."""
        old, new = split_topics(before), split_topics(after)
        # Sorted: concurrent writers take the rows' locks in one order (PostgreSQL).
        gone = sorted(t for t in old if t not in new)
        added = sorted(t for t in new if t not in old)
        if gone:
            tx.execute(
                "UPDATE directory_topics SET sessions = sessions - 1"
                f" WHERE user_id = ? AND topic IN ({marks(gone)})",
                (self.uid, *gone),
            )
            tx.execute(
                "DELETE FROM directory_topics WHERE user_id = ? AND sessions <= 0", (self.uid,)
            )
        for topic in added:
            tx.execute(
                "INSERT INTO directory_topics(user_id, topic, sessions, last_at) VALUES (?, ?, 1, ?)"
                " ON CONFLICT(user_id, topic) DO UPDATE SET sessions = directory_topics.sessions"
                " + 1, last_at = excluded.last_at",
                (self.uid, topic, ts),
            )
        self.ensure(tx, ts)
        if gone or added:
            rank_topics(tx, [self.uid])
        tx.execute(
            "UPDATE directory_cards SET last_seen = CASE WHEN ? = 1 THEN ? ELSE last_seen END,"
            " updated_at = ? WHERE user_id = ?",
            (int(seen), ts, ts, self.uid),
        )

    def seen(self, tx: Tx, ts: str) -> None:
        """The user was active at ``ts`` (a session's activity, recorded every half minute)."""
        tx.execute(
            "UPDATE directory_cards SET last_seen = ? WHERE user_id = ? AND last_seen < ?",
            (ts, self.uid, ts),
        )

    def count_facts(self, tx: Tx, change: int) -> None:
        """One more (or fewer) active fact (stored, deprecated, restored; a forget or an import
        rebuilds the card instead)."""
        tx.execute(
            "UPDATE directory_cards SET facts = CASE WHEN facts + ? > 0 THEN facts + ? ELSE 0"
            " END WHERE user_id = ?",
            (change, change, self.uid),
        )

    def set_hidden(self, tx: Tx, hidden: bool, ts: str) -> None:
        self.ensure(tx, ts)
        tx.execute(
            "UPDATE directory_cards SET hidden = ?, updated_at = ? WHERE user_id = ?",
            (int(hidden), ts, self.uid),
        )

    def rebuild(self, tx: Tx, ts: str) -> None:
        """This user's card and topics made again from their sessions and facts (after a
        forget or an import); the hidden flag stays."""
        rebuild(tx, ts, [self.uid])


def rebuild(tx: Tx, ts: str, user_ids: Sequence[str] | None = None) -> None:
    """The cards and topics of ``user_ids`` (None: every user) made from their sessions and
    active facts; a card's hidden flag is kept. Migration ``0023_directory`` and
    ``bigmind migrate-db`` run it for everyone, an owner's forget or import for themselves."""
    where, args = ("", ()) if user_ids is None else (f" IN ({marks(user_ids)})", tuple(user_ids))
    users = f" WHERE u.id{where}" if where else ""
    owners = f" AND s.user_id{where}" if where else ""
    tx.execute(
        f"DELETE FROM directory_topics WHERE user_id IN (SELECT u.id FROM users u{users})", args
    )
    # First seen: registered (the card's own first moment), or an older session's start (an
    # import); last seen: the latest session activity, else the last login.
    tx.execute(
        "INSERT INTO directory_cards(user_id, first_seen, last_seen, sessions, facts, updated_at)"
        " SELECT x.id, CASE WHEN x.first IS NULL OR x.created_at < x.first"
        " THEN coalesce(x.created_at, x.first, ?) ELSE x.first END,"
        " coalesce(x.last, x.last_seen, x.created_at, ?), x.n, x.f, ? FROM (SELECT u.id,"
        " u.created_at, u.last_seen,"
        " (SELECT min(s.started_at) FROM sessions s WHERE s.user_id = u.id) AS first,"
        " (SELECT max(coalesce(s.last_activity_at, s.started_at)) FROM sessions s"
        " WHERE s.user_id = u.id) AS last,"
        " (SELECT count(*) FROM sessions s WHERE s.user_id = u.id) AS n,"
        f" (SELECT count(*) FROM facts f WHERE f.user_id = u.id AND {active('f')}) AS f"
        f" FROM users u{users}) x WHERE 1 = 1 ON CONFLICT(user_id) DO UPDATE SET first_seen ="
        " excluded.first_seen, last_seen = excluded.last_seen, sessions = excluded.sessions,"
        " facts = excluded.facts, updated_at = excluded.updated_at",
        (ts, ts, ts, *args),
    )
    per_user: dict[str, Counter[str]] = {}
    last: dict[tuple[str, str], str] = {}
    for r in tx.execute(
        "SELECT s.user_id, s.topics, count(*) AS n, max(coalesce(s.ended_at, s.started_at))"
        f" AS last_at FROM sessions s WHERE s.topics IS NOT NULL{owners}"
        " GROUP BY s.user_id, s.topics",
        args,
    ):
        uid = str(r["user_id"])
        counts = per_user.setdefault(uid, Counter())
        for topic in split_topics(r["topics"]):
            counts[topic] += int(r["n"])
            key = (uid, topic)
            last[key] = max(last.get(key, ""), str(r["last_at"] or ""))
    for uid, counts in per_user.items():
        for topic, n in counts.items():
            tx.execute(
                "INSERT INTO directory_topics(user_id, topic, sessions, last_at)"
                " VALUES (?, ?, ?, ?)",
                (uid, topic, n, last[(uid, topic)] or None),
            )
    everyone = tx.execute(f"SELECT u.id FROM users u{users}", args)
    rank_topics(tx, [str(r["id"]) for r in everyone])


def rank_topics(tx: Tx, user_ids: Sequence[str]) -> None:
    """Copy each user's :data:`TOP_TOPICS` most frequent topics onto their card (one indexed
    read of a few rows each): a page of cards then reads one table."""
    for uid in user_ids:
        rows = tx.execute(
            f"SELECT topic, sessions, last_at FROM directory_topics WHERE user_id = ? {_RANK}"
            " LIMIT ?",
            (uid, TOP_TOPICS),
        )
        top = json.dumps([[r["topic"], r["sessions"], r["last_at"]] for r in rows])
        tx.execute("UPDATE directory_cards SET top_topics = ? WHERE user_id = ?", (top, uid))


def hidden_users(db: Backend) -> list[str]:
    """The users whose card is hidden (``bigmind migrate-db`` carries the flag over)."""
    if not db.table_exists("directory_cards"):
        return []
    return [str(r["user_id"]) for r in db.query(_HIDDEN)]


def hide_users(tx: Tx, user_ids: Sequence[str]) -> None:
    """Hide these users' cards (a copy of a database keeps what its users hid)."""
    if user_ids:
        tx.execute(
            f"UPDATE directory_cards SET hidden = 1 WHERE user_id IN ({marks(user_ids)})",
            tuple(user_ids),
        )
