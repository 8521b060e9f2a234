"""What the profile page shows: read-only views of one user's memory, page by page.

Plain functions over the store of the user the call acts for (``rt.store``), returning frozen
records the web layer renders as they are (REST's ``GET /facts`` pages with :func:`facts`
too). Private rows are read with the store's own rule, counts and day buckets are grouped in
SQL by the data layer's named queries (:mod:`bigmind.storage`).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, timedelta
from typing import Generic, TypeVar

from bigmind import project
from bigmind.errors import InvalidInput
from bigmind.limits import RESULTS, check_choice
from bigmind.memory import globalkb, journal, rivals, users
from bigmind.memory import megamind as megamind
from bigmind.memory import people as people_mod
from bigmind.memory.globalkb import GlobalEntry
from bigmind.memory.journal import Hypothesis
from bigmind.memory.people import Person
from bigmind.models import (
    Chunk,
    Fact,
    Profile,
    Session,
    Summary,
    User,
    day_of,
)
from bigmind.search.ranking import Recall
from bigmind.storage.db import Row
from bigmind.storage.fact_history_table import FactHistory, Version
from bigmind.storage.hypotheses_table import Hypotheses
from bigmind.storage.knowledge_table import Knowledge
from bigmind.storage.people_table import People
from bigmind.storage.savings_table import Savings
from bigmind.storage.store import (
    Store,
    fact_from_row,
)
from bigmind.storage.table import ANYWHERE

T = TypeVar("T")
PER_PAGE = 25
MAX_PAGE = 100_000
HEATMAP_DAYS = 365
WEEKS = 26
TOP_TOPICS = 80
FACT_STATUSES = ("active", "deprecated", "all")
_BULLET = re.compile(r"^\s*[-*•]\s+")  # update_profile stores a list as "- item" lines
SEARCH_POOL = 100  # facts a query fetches (the tools' cap) before filtering and paging


# -- paging --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Page(Generic[T]):
    """One page of a list. Not slotted: on Python 3.11 ``Page[X](…)`` fails on a frozen
    slotted generic dataclass (TypeError from the generated ``__setattr__``)."""

    items: list[T]
    page: int
    per_page: int
    total: int

    @property
    def pages(self) -> int:
        return max(1, -(-self.total // self.per_page))

    @property
    def has_prev(self) -> bool:
        return self.page > 1

    @property
    def has_next(self) -> bool:
        return self.page < self.pages


def page_number(value: str | int | None) -> int:
    """A ``?page=`` value as a page number: 1 for anything unusable, at most MAX_PAGE."""
    try:
        n = int(str(value).strip()) if value is not None else 1
    except ValueError:
        return 1
    return min(max(n, 1), MAX_PAGE)


def _per_page(value: int) -> int:
    if not 1 <= value <= RESULTS:
        raise InvalidInput(f"'per_page' must be between 1 and {RESULTS}, got {value}.")
    return int(value)


def _offset(page: int, per_page: int) -> int:
    return (page_number(page) - 1) * per_page


# -- streaks, badges, the profile ----------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Streak:
    current: int  # consecutive days up to today (or yesterday, if today has no session yet)
    longest: int


@dataclass(frozen=True, slots=True)
class Badge:
    key: str
    title: str
    detail: str
    earned: bool


@dataclass(frozen=True, slots=True)
class Tier:
    key: str  # "G", "0"…"3", or "" for the journal and people rows
    label: str
    count: int


@dataclass(frozen=True, slots=True)
class ProfileView:
    name: str
    user: User
    mode: str
    profile: Profile
    pinned: list[str]
    tiers: list[Tier]
    badges: list[Badge]
    streak: Streak
    first_session: str | None  # YYYY-MM-DD
    counts: dict[str, int]
    tokens_saved: int
    activity: Activity  # the year's heatmap on the profile


def _today(today: date | None) -> date:
    return today or datetime.now(UTC).date()


def _session_days(store: Store) -> Counter[date]:
    """Sessions started per UTC day (days with none are absent), grouped in SQL."""
    return Counter({date.fromisoformat(d): n for d, n in store.sessions.per_day().items()})


def streak_of(days: set[date] | Counter[date], today: date) -> Streak:
    """Runs of consecutive active days: the one reaching today (or yesterday), the longest."""
    active = {d for d in days if d <= today}
    longest = run = 0
    prev: date | None = None
    for d in sorted(active):
        run = run + 1 if prev is not None and d - prev == timedelta(days=1) else 1
        longest = max(longest, run)
        prev = d
    day = today if today in active else today - timedelta(days=1)
    current = 0
    while day in active:
        current += 1
        day -= timedelta(days=1)
    return Streak(current, longest)


def _tokens_saved(store: Store) -> int:
    return Savings(store.db, store.uid).total()


def _progress(n: int, goal: int, unit: str) -> str:
    return f"{n:,} {unit}" if n >= goal else f"{n:,} of {goal:,} {unit}"


def _badges(
    store: Store, user: User, counts: dict[str, int], first: str | None, streak: Streak, saved: int
) -> list[Badge]:
    confirmed = Hypotheses(store.db, store.uid).count_by_status().get("confirmed", 0)
    n = counts["sessions"]
    goals = (
        ("sessions_100", "100 sessions", n, 100, "sessions"),
        ("facts_100", "100 facts", counts["facts"], 100, "facts"),
        ("confirmed_10", "10 confirmed hypotheses", confirmed, 10, "confirmed"),
        ("streak_7", "7-day streak", streak.longest, 7, "days in a row (longest streak)"),
        ("tokens_100k", "100k tokens saved", saved, 100_000, "tokens saved"),
    )
    badges = [
        Badge("first_session", "First session", f"on {first}" if first else "none yet", n > 0)
    ]
    badges += [Badge(k, t, _progress(v, goal, unit), v >= goal) for k, t, v, goal, unit in goals]
    if store.mode != "personal":
        badges.append(Badge("curator", "Curator", f"role: {user.role}", users.is_curator(user)))
    return badges


def profile(store: Store, today: date | None = None) -> ProfileView:
    """The header of the page: who, the memory per tier, badges, streak and savings."""
    day = _today(today)
    user = globalkb.caller(store)  # the role as the database holds it now
    prof = store.get_profile()
    counts = store.counts()
    first_day = day_of(store.sessions.span()[0]) or None
    act = activity(store, day)  # the heatmap, and the streak and savings it already counts
    streak, saved = act.streak, act.total_saved
    flagged = store.chunks.count(flagged=True)
    known = People(store.db, store.uid).count()
    fields_set = sum(bool(v) for v in (prof.role, prof.preferences, prof.pinned_facts))
    tiers = [
        Tier("G", "Company knowledge (approved)", counts["global_approved"]),
        Tier("0", "Profile fields set", fields_set),
        Tier("1", "Sessions", counts["sessions"]),
        Tier("2", "Session summaries", counts["summaries"]),
        Tier("3", "Facts (active)", counts["facts"]),
        Tier("3", "Flagged exchanges", flagged),
        Tier("", "Hypotheses", counts["hypotheses"]),
        Tier("", "People", known),
    ]
    pinned = [_BULLET.sub("", ln).strip() for ln in (prof.pinned_facts or "").splitlines()]
    return ProfileView(
        name=user.display_name or user.username,
        user=user,
        mode=store.mode,
        profile=prof,
        pinned=[p for p in pinned if p],
        tiers=tiers,
        badges=_badges(store, user, counts, first_day, streak, saved),
        streak=streak,
        first_session=first_day,
        counts=counts,
        tokens_saved=saved,
        activity=act,
    )


# -- activity ------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Activity:
    end: date
    days: dict[date, int]  # sessions started per day, days with some only, the last 365 days
    weeks: list[tuple[date, int]]  # (Monday, sessions started) of the last 26 weeks, oldest first
    savings: list[tuple[date, int]]  # (Monday, tokens saved) of the same weeks
    total_sessions: int
    active_days: int
    streak: Streak
    total_saved: int  # all time


def _mondays(end: date) -> list[date]:
    last = end - timedelta(days=end.weekday())
    return [last - timedelta(weeks=i) for i in range(WEEKS - 1, -1, -1)]


def _by_week(per_day: dict[date, int], mondays: list[date]) -> list[tuple[date, int]]:
    weeks = dict.fromkeys(mondays, 0)
    for d, n in per_day.items():
        monday = d - timedelta(days=d.weekday())
        if monday in weeks:
            weeks[monday] += n
    return list(weeks.items())


def activity(store: Store, today: date | None = None) -> Activity:
    """The heatmap (365 days ending ``today``), weekly sessions and weekly tokens saved."""
    end = _today(today)
    start = end - timedelta(days=HEATMAP_DAYS - 1)
    every = _session_days(store)  # one grouping serves the window and the streak
    days = {d: n for d, n in every.items() if start <= d <= end}
    mondays = _mondays(end)
    per_day = Savings(store.db, store.uid).per_day(
        mondays[0].isoformat(), (end + timedelta(days=1)).isoformat()
    )
    saved = {date.fromisoformat(d): n for d, n in per_day.items()}
    return Activity(
        end=end,
        days=dict(sorted(days.items())),
        weeks=_by_week(days, mondays),
        savings=_by_week(saved, mondays),
        total_sessions=sum(days.values()),
        active_days=len(days),
        streak=streak_of(every, end),
        total_saved=_tokens_saved(store),
    )


# -- topics --------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Topics:
    session_topics: list[tuple[str, int]]  # most frequent first, then by name; the top 80
    fact_categories: list[tuple[str, int]]  # active facts per category, most first


def _ranked(counts: Counter[str]) -> list[tuple[str, int]]:
    return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))


def topics(store: Store) -> Topics:
    """Session topics (grouped in SQL per distinct tag list, split here) and fact categories."""
    tags: Counter[str] = Counter()
    for topic_list, n in store.sessions.topic_lists():
        for tag in {t.strip().lower() for t in topic_list.split(",")} - {""}:
            tags[tag] += n
    return Topics(_ranked(tags)[:TOP_TOPICS], _ranked(Counter(store.facts.per_category())))


# -- sessions ------------------------------------------------------------------------------------
def sessions(
    store: Store,
    page: int = 1,
    topic: str | None = None,
    per_page: int = PER_PAGE,
    project_key: str | None = None,
) -> Page[Session]:
    """The user's sessions, newest first; ``topic`` matches one tag of the list, any case;
    ``project_key``: those held in that project (and in none)."""
    n = _per_page(per_page)
    where = project_key or ANYWHERE
    total = store.sessions.count(topic, where)
    rows = store.sessions.page(n, _offset(page, n), topic, where)
    return Page(rows, page_number(page), n, total)


@dataclass(frozen=True, slots=True)
class SessionDetail:
    session: Session
    summary: Summary | None
    chunks: list[Chunk]
    facts: list[Fact]  # stored in this session, active and deprecated, newest first (≤ 100)
    hypotheses: list[Hypothesis]


def session_detail(store: Store, session_id: str) -> SessionDetail:
    """One session with what was written in it. NotFound for unknown or others' ids."""
    s, summary, chunks = store.session_detail(session_id)
    facts = store.facts.of_session(s.id, 100)
    hyps = Hypotheses(store.db, store.uid).in_session(s.id)
    return SessionDetail(s, summary, chunks, facts, hyps)


# -- facts ---------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class FactRow:
    fact: Fact
    why: str | None  # why a query matched it; None when listing
    session_one_liner: str | None  # provenance; None when the fact has no source session
    versions: list[Version] = field(default_factory=list)  # earlier versions, oldest first
    rivals: tuple[rivals.Rival, ...] = ()  # conflicting facts (⚠️), and what replaced it


@dataclass(frozen=True, slots=True)
class FactsView:
    rows: Page[FactRow]
    query: str
    category: str | None
    status: str
    categories: list[tuple[str, int]]  # the user's categories (any status) with counts
    note: str
    project: str | None = None  # the project key the list is seen from (None: every project)
    projects: list[tuple[str, str, int]] = field(default_factory=list)  # key, name, memories


def _fact_row(r: Row, why: str | None = None) -> FactRow:
    r = dict(r)
    has_session = r.pop("session_ref") is not None
    line = r.pop("session_one_liner")
    return FactRow(fact_from_row(r), why, (line or "") if has_session else None)


def _with_versions(store: Store, rows: list[FactRow]) -> list[FactRow]:
    """The rows with their facts' earlier versions (one statement for the page)."""
    history = FactHistory(store.db, store.uid).of_facts([r.fact.id for r in rows])
    return [replace(r, versions=history[r.fact.id]) if r.fact.id in history else r for r in rows]


def _with_rivals(store: Store, rows: list[FactRow]) -> list[FactRow]:
    """The rows with each fact's rivals and history (what it superseded or absorbed, what
    superseded it or it was merged into)."""
    found = rivals.rivals_of(store, rivals.of_facts([r.fact for r in rows]), history=True)
    return [replace(r, rivals=tuple(found.get(r.fact.id, ()))) for r in rows]


def _status_ok(fact: Fact, status: str) -> bool:
    return status == "all" or bool(fact.deprecated) == (status == "deprecated")


def facts(
    store: Store,
    recall: Recall | None,
    query: str = "",
    category: str | None = None,
    status: str = "active",
    page: int = 1,
    per_page: int = PER_PAGE,
    project_key: str | None = None,
) -> FactsView:
    """The user's facts, newest first, or the best matches of ``query`` (the tools' search);
    with ``project_key``, those seen from that project (its own and the global ones)."""
    check_choice("status", status, FACT_STATUSES)
    n = _per_page(per_page)
    q = (query or "").strip()
    cat = (category or "").strip().lower() or None
    categories = _ranked(Counter(store.facts.per_category("all")))
    known = [(k, project.name_of(k), c) for k, c in store.known_projects().items()]
    seen = project.Project(project_key, project.name_of(project_key)) if project_key else None
    where = seen.key if seen else ANYWHERE
    if not q:
        total = store.facts.count(status, cat, project=where)
        rows = store.facts.page_with_sessions(status, cat, n, _offset(page, n), where)
        items = _with_rivals(store, _with_versions(store, [_fact_row(r) for r in rows]))
        rows_page = Page(items, page_number(page), n, total)
        return FactsView(rows_page, "", cat, status, categories, "", project_key, known)
    with project.using(seen):
        found = (recall or Recall(store, None)).search(
            q,
            limit=SEARCH_POOL,
            kinds=["fact"],
            include_deprecated=status != "active",
            scope="project" if seen else "all",
        )
    ids = [int(h.id) for h in found.hits]
    loaded = {int(r["id"]): r for r in store.facts.with_sessions(ids)}
    matched = []
    for h in found.hits:
        row = loaded.get(int(h.id))
        if row is None:
            continue
        fr = _fact_row(row, h.why)
        if _status_ok(fr.fact, status) and (cat is None or fr.fact.category == cat):
            matched.append(fr)
    start = _offset(page, n)
    shown_rows = _with_rivals(store, _with_versions(store, matched[start : start + n]))
    shown = Page(shown_rows, page_number(page), n, len(matched))
    word = "fact matches" if len(matched) == 1 else "facts match"
    note = f"{len(matched)} {word} “{q}”"
    if len(found.hits) >= SEARCH_POOL:
        note += f" (among the best {SEARCH_POOL})"
    if found.note:
        note += f" {found.note}"
    return FactsView(shown, q, cat, status, categories, note, project_key, known)


# -- hypotheses ----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class HypothesesView:
    columns: dict[str, list[Hypothesis]]  # journal.STATUSES order, newest first
    totals: dict[str, int]
    calibration: list[dict[str, object]]


def hypotheses(store: Store, per_column: int = 50) -> HypothesesView:
    """The journal as a board: one column per status, with the full count of each."""
    have = Hypotheses(store.db, store.uid).count_by_status()
    totals = {st: have.get(st, 0) for st in journal.STATUSES}
    columns = {
        st: journal.list_(store, st, per_column) if totals[st] else [] for st in journal.STATUSES
    }
    return HypothesesView(columns, totals, journal.calibration(store))


# -- people and the team -------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Member:
    """One user of the database as the team directory shows them: activity, never content."""

    username: str
    display_name: str | None
    role: str  # BigMind's: member, curator, admin
    last_seen: str | None
    sessions: int
    facts: int  # active
    first_seen: str | None
    hidden: bool  # your own card, hidden from the others


def people(store: Store, limit: int = 100) -> list[Person]:
    """The shared people table, most recently seen first."""
    return people_mod.list_(store, limit)


def directory(store: Store) -> list[Member]:
    """Every user of a shared database with activity counts, from the directory's cards (never
    their sessions or facts); [] in personal mode."""
    if store.mode == "personal":
        return []
    members = [
        Member(
            c.username,
            c.display_name,
            c.access,
            c.last_seen,
            c.sessions,
            c.facts,
            c.first_seen,
            c.hidden,
        )
        for c in megamind.cards(store)
    ]
    members.sort(key=lambda m: m.username)
    members.sort(key=lambda m: m.last_seen or "", reverse=True)
    return members


@dataclass(frozen=True, slots=True)
class DirectoryView:
    cards: list[megamind.Card]
    topic: str  # the "who knows?" question, "" when none was asked
    experts: list[megamind.Expert]


def directory_view(store: Store, topic: str = "") -> DirectoryView:
    """The /directory page: every card you may see and, when asked, who worked on ``topic``."""
    asked = topic.strip()
    experts = megamind.who_knows(store, asked, RESULTS) if asked else []
    return DirectoryView(megamind.cards(store), asked, experts)


# -- company knowledge ---------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class GlobalView:
    approved: Page[GlobalEntry]
    pending: list[GlobalEntry]  # everyone's for curators and admins, members' own otherwise
    may_curate: bool
    category: str | None


def global_view(
    store: Store, page: int = 1, category: str | None = None, per_page: int = PER_PAGE
) -> GlobalView:
    """Tier G: approved entries page by page, and the pending ones the user may see."""
    n = _per_page(per_page)
    cat = globalkb.check_category(category) if category and category.strip() else None
    total = Knowledge(store.db, store.uid).count("approved", cat)
    approved, _ = globalkb.list_entries(store, cat, n, "approved", offset=_offset(page, n))
    pending, _ = globalkb.list_entries(store, status="pending", limit=100)
    return GlobalView(
        Page(approved, page_number(page), n, total), pending, globalkb.may_curate(store), cat
    )
