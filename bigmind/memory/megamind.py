"""The MegaMind directory: everyone's card, and "who worked on X?".

Answers come from two shared sources only: the directory tables
(:mod:`bigmind.storage.directory_table`: per user, counts, dates and the topics their sessions were
tagged with) and approved company knowledge (Tier G, with who promoted each entry). Never from
anyone's sessions, one-liners, summaries, facts or exchanges, so nothing private can surface,
and the directory keeps working where PostgreSQL's row-level security hides those rows.

A user may hide their card (:func:`hide`): others then see neither it nor the user in any
answer; the user still sees it, marked hidden. In personal mode the directory is you alone.

Ranking of :func:`who_knows`, per person: how they match first (a topic or an entry title that
*is* the question, then one sharing a word or a word's stem with it), then how much they did
on it (sessions tagged with matching topics, each weighed by how much of the question the
topic shows, plus :data:`ENTRY_WEIGHT` per matching company entry they promoted), then how
recently.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from typing import Any

from bigmind import limits
from bigmind.limits import check_limit, check_text
from bigmind.models import now_ts
from bigmind.search import keyword
from bigmind.search.terms import TermMatcher, stem_prefix, terms_of
from bigmind.storage.directory_table import CardRow
from bigmind.storage.knowledge_table import GlobalEntry, Knowledge
from bigmind.storage.store import Store

CARDS_MAX = 1_000  # cards a directory page lists
TOPIC_SCAN = 2_000  # topic rows read for one question (most frequent first)
ENTRY_SCAN = 50  # company entries ranked for one question
ENTRY_WEIGHT = 2.0  # a promoted, approved entry counts as much as two sessions on the topic
EXACT, WORD = "exact", "word"


@dataclass(frozen=True, slots=True)
class Topic:
    topic: str
    sessions: int  # how many of the user's sessions carry it
    last_at: str | None  # when the last of them ended


@dataclass(frozen=True, slots=True)
class Card:
    """One user as the directory shows them: who, how active, on what. Never content."""

    username: str
    display_name: str | None
    role: str | None
    team: str | None
    access: str  # BigMind role: member, curator, admin
    first_seen: str | None
    last_seen: str | None
    sessions: int
    facts: int  # active
    topics: list[Topic]  # the most frequent first
    hidden: bool  # only ever True on your own card
    me: bool

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class EntryRef:
    """An approved company knowledge entry, named in an answer with its promoter."""

    id: int
    category: str
    title: str
    updated_at: str | None


@dataclass(frozen=True, slots=True)
class Expert:
    """A person who worked on a topic, and the evidence."""

    username: str
    display_name: str | None
    role: str | None
    team: str | None
    match: str  # "exact": a topic or entry title is the question; "word": shares a word
    sessions: int  # the most sessions any one of their matching topics was tagged in
    last_at: str | None  # the latest of those, or of their matching entries
    topics: list[Topic]  # the matching topics, most sessions first
    entries: list[EntryRef] = field(default_factory=list)  # approved entries they promoted
    me: bool = False
    score: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _words(text: str) -> str:
    """``text``'s words in lower case, one space apart: "Kafka-Consumer" is "kafka consumer"."""
    return " ".join(re.findall(r"[^\W_]+", text.lower()))


def _topic(row: Any) -> Topic:
    return Topic(str(row["topic"]), int(row["sessions"]), row["last_at"])


def _card(row: CardRow, uid: str) -> Card:
    mine = row.user_id == uid
    topics = [Topic(t, n, last) for t, n, last in row.top_topics]
    return Card(
        row.username,
        row.display_name,
        row.role,
        row.team,
        row.access,
        row.first_seen,
        row.last_seen,
        row.sessions,
        row.facts,
        topics,
        row.hidden and mine,
        mine,
    )


def cards(store: Store, limit: int = CARDS_MAX) -> list[Card]:
    """Every card you may see (yours always, marked if hidden), most recently seen first; in
    personal mode yours alone."""
    rows = store.directory.cards(limit)
    return [_card(r, store.uid) for r in rows if store.mode != "personal" or r.user_id == store.uid]


def my_card(store: Store) -> Card:
    """Your own card (made when missing)."""
    row = store.directory.mine()
    if row is None:
        with store.db.transaction() as tx:
            store.directory.ensure(tx, now_ts())
        row = store.directory.mine()
    assert row is not None
    return _card(row, store.uid)


def hide(store: Store, hidden: bool) -> Card:
    """Hide your card from everyone else (``hidden``), or show it again. Returns it."""
    with store.db.transaction() as tx:
        store.directory.set_hidden(tx, hidden, now_ts())
    return my_card(store)


@dataclass
class _Evidence:
    best: int = 0  # 2 exact, 1 word
    weight: float = 0.0
    sessions: int = 0
    last: str = ""
    topics: list[Topic] = field(default_factory=list)
    entries: list[EntryRef] = field(default_factory=list)

    def add(self, level: int, weight: float, last: str | None) -> None:
        self.best = max(self.best, level)
        self.weight += weight
        self.last = max(self.last, last or "")


def who_knows(store: Store, topic: str, limit: int = 10) -> list[Expert]:
    """Who worked on ``topic``: people whose session topics match it, and the promoters of
    approved company knowledge about it, best first (see the module's ranking). Hidden
    cards are left out (yours is not, for you); personal mode answers about you alone."""
    question = check_text("topic", topic, limits.QUERY)
    n = check_limit(limit)
    terms = [t for t in terms_of(question) if t.rstrip("*")]
    exact = _words(question)
    if not exact:
        return []
    matcher = TermMatcher(terms)
    found: dict[str, _Evidence] = {}
    stems = list(dict.fromkeys(stem_prefix(t) for t in terms))
    for row in store.directory.topics_like(question.strip().lower(), stems, TOPIC_SCAN):
        name = str(row["topic"])
        if _words(name) == exact:
            level, credit = 2, 1.0
        else:
            credit = matcher.credit(_words(name))[0]
            level = 1
        if credit <= 0:
            continue
        ev = found.setdefault(str(row["user_id"]), _Evidence())
        ev.add(level, credit * int(row["sessions"]), row["last_at"])
        ev.sessions = max(ev.sessions, int(row["sessions"]))
        ev.topics.append(_topic(row))
    for entry in _entries(store, question):
        if entry.promoted_by is None:
            continue
        level = 2 if _words(entry.title) == exact else 1
        ev = found.setdefault(entry.promoted_by, _Evidence())
        ev.add(level, ENTRY_WEIGHT, entry.updated_at)
        ev.entries.append(EntryRef(entry.id, entry.category, entry.title, entry.updated_at))
    if store.mode == "personal":
        found = {u: e for u, e in found.items() if u == store.uid}
    seen = store.directory.cards_of(list(found))  # hidden cards (not yours) are absent
    ranked = sorted(
        ((found[u], card) for u, card in seen.items()),
        key=lambda ec: (-ec[0].best, -ec[0].weight, -_ord(ec[0].last), ec[1].username),
    )
    return [_expert(ev, card, store.uid) for ev, card in ranked[:n]]


def _ord(ts: str) -> float:
    """A stored timestamp as a number that sorts like it (later is larger)."""
    return float(re.sub(r"\D", "", ts)[:20] or 0)


def _expert(ev: _Evidence, card: CardRow, uid: str) -> Expert:
    return Expert(
        card.username,
        card.display_name,
        card.role,
        card.team,
        EXACT if ev.best == 2 else WORD,
        ev.sessions,
        ev.last or None,
        sorted(ev.topics, key=lambda t: (-t.sessions, t.topic)),
        ev.entries,
        card.user_id == uid,
        round(ev.best * 1000 + ev.weight, 3),
    )


def _entries(store: Store, question: str) -> list[GlobalEntry]:
    """Approved company knowledge matching ``question`` by its words, best first."""
    ranked, _rows = keyword.ranked(store, "global", question, ENTRY_SCAN)
    ids = [int(i) for i, _score in ranked.items]
    by_id = {e.id: e for e in Knowledge(store.db, store.uid).approved_among(ids)}
    return [by_id[i] for i in ids if i in by_id]
