"""The profile page's data: paging, streaks, activity, topics, sessions, facts, the journal,
people, the team directory, company knowledge, badges, Store.restore_fact and the seeded world."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest
from web_world import SCRIPT_FACT, seed_world

from bigmind.errors import InvalidInput, NotFound
from bigmind.memory import globalkb, journal, people, savings
from bigmind.memory.users import add_user, set_role
from bigmind.service import pages as webdata
from bigmind.service.pages import Page, Streak
from bigmind.storage.db import Backend
from bigmind.storage.store import Store

DAY = date(2025, 6, 15)  # a Sunday


def _at(day: date, hour: int = 10) -> str:
    return f"{day.isoformat()} {hour:02d}:00:00.000000"


def _sessions_on(store: Store, *days: date, topics: str | None = None) -> list[str]:
    """One session started on each day (10:00 UTC), with a raw topics value if given."""
    ids = [store.start_session().session.id for _ in days]
    with store.db.transaction() as tx:
        for sid, day in zip(ids, days, strict=True):
            tx.execute(
                "UPDATE sessions SET started_at = ?, topics = ? WHERE id = ?",
                (_at(day), topics, sid),
            )
    return ids


def _set(store: Store, table: str, column: str, value: object, row_id: object) -> None:
    with store.db.transaction() as tx:
        tx.execute(f"UPDATE {table} SET {column} = ? WHERE id = ?", (value, row_id))


# -- paging --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("raw", "page"),
    [
        (None, 1),
        ("", 1),
        ("abc", 1),
        ("2.5", 1),
        ("0", 1),
        ("-3", 1),
        (" 7 ", 7),
        (5, 5),
        (0, 1),
        ("999999999", 100_000),
    ],
)
def test_page_number(raw: str | int | None, page: int) -> None:
    assert webdata.page_number(raw) == page


def test_page_properties() -> None:
    empty = Page[int]([], 1, 25, 0)
    assert (empty.pages, empty.has_prev, empty.has_next) == (1, False, False)
    middle = Page([1], 2, 25, 51)
    assert (middle.pages, middle.has_prev, middle.has_next) == (3, True, True)
    last = Page([1], 2, 25, 50)
    assert (last.pages, last.has_prev, last.has_next) == (2, True, False)


# -- Store.restore_fact --------------------------------------------------------------------------
def test_restore_fact_and_its_refusals(store: Store) -> None:
    f, _, _ = store.store_fact("decision", "Use tabs in the Makefile")
    with pytest.raises(InvalidInput, match=rf"Fact #{f.id} is not deprecated\. Nothing changed\."):
        store.restore_fact(f.id)
    store.deprecate_fact(f.id, "wrong")
    back = store.restore_fact(f.id)
    assert (back.deprecated, back.deprecation_reason) == (0, None)
    row = store.db.query("SELECT deprecated_at FROM facts WHERE id = ?", (f.id,))[0]
    assert row["deprecated_at"] is None
    assert (back.updated_at or "") > (f.updated_at or "")

    store.deprecate_fact(f.id, "again")
    twin, created, _ = store.store_fact("decision", "use tabs in the makefile.")
    assert created and twin.id != f.id
    with pytest.raises(InvalidInput, match=rf"An identical active fact #{twin.id} exists"):
        store.restore_fact(f.id)
    assert store.get_fact(f.id).deprecated == 1

    bob = Store(store.db, "bob")
    with pytest.raises(NotFound):
        bob.restore_fact(f.id)
    with pytest.raises(NotFound):
        store.restore_fact(987_654)


# -- streaks and activity ------------------------------------------------------------------------
def test_streak_counts_runs_across_a_gap(store: Store) -> None:
    run = [DAY - timedelta(days=d) for d in (0, 1, 2)]  # gap on DAY-3
    older = [DAY - timedelta(days=d) for d in (4, 5, 6, 7, 8)]
    _sessions_on(store, *run, *older, DAY - timedelta(days=20), DAY - timedelta(days=20))
    assert webdata.activity(store, DAY).streak == Streak(3, 5)
    assert webdata.profile(store, DAY).streak == Streak(3, 5)
    # Nothing yet on the next day: the streak still counts from yesterday; a day later it is over.
    assert webdata.activity(store, DAY + timedelta(days=1)).streak == Streak(3, 5)
    assert webdata.activity(store, DAY + timedelta(days=2)).streak == Streak(0, 5)
    # Seen from the past, later days do not count.
    assert webdata.activity(store, DAY - timedelta(days=5)).streak == Streak(4, 4)
    assert webdata.streak_of(set(), DAY) == Streak(0, 0)


def test_activity_window_weeks_and_savings(store: Store) -> None:
    first = DAY - timedelta(days=364)
    _sessions_on(
        store,
        DAY,
        DAY,
        first,
        DAY - timedelta(days=365),
        DAY + timedelta(days=1),
        DAY - timedelta(days=8),
    )
    a = webdata.activity(store, DAY)
    assert a.end == DAY
    assert a.days == {first: 1, DAY - timedelta(days=8): 1, DAY: 2}
    assert (a.total_sessions, a.active_days) == (4, 3)
    monday = date(2025, 6, 9)
    mondays = [monday - timedelta(weeks=i) for i in range(25, -1, -1)]
    assert [w for w, _ in a.weeks] == mondays == [w for w, _ in a.savings]
    assert a.weeks[-1] == (monday, 2) and a.weeks[-2] == (monday - timedelta(weeks=1), 1)
    assert sum(n for _, n in a.weeks) == 3  # DAY-364 is in the heatmap, not in the 26 weeks

    sid = store.start_session().session.id
    for when, tokens in (
        (DAY, 100),
        (DAY - timedelta(days=7), 50),
        (mondays[0], 20),
        (mondays[0] - timedelta(days=1), 1_000),  # before the 26 weeks
        (DAY + timedelta(days=1), 7),  # after the end
    ):
        new, _ = savings.log(store, sid, "recalled", tokens, "recall")
        _set(store, "token_saves", "created_at", _at(when), new)
    a = webdata.activity(store, DAY)
    assert a.savings[-1] == (monday, 100)
    assert a.savings[-2] == (monday - timedelta(weeks=1), 50)
    assert a.savings[0] == (mondays[0], 20)
    assert sum(n for _, n in a.savings) == 170
    assert a.total_saved == 1_177  # all time
    assert webdata.activity(store).end == datetime.now(UTC).date()


# -- topics --------------------------------------------------------------------------------------
def test_topics_are_case_folded_and_counted(store: Store) -> None:
    _sessions_on(store, DAY, topics="auth,postgres")
    _sessions_on(store, DAY, topics="auth,ci")
    _sessions_on(store, DAY, topics=" AUTH , Docs,,")
    _sessions_on(store, DAY, topics="ci,CI")  # one session counts a tag once
    _sessions_on(store, DAY)  # no topics
    bob = Store(store.db, "bob")
    _sessions_on(bob, DAY, topics="auth,secret")
    for cat, text in (("decision", "A"), ("decision", "B"), ("bugfix", "C"), ("bugfix", "D")):
        store.store_fact(cat, text)
    gone, _, _ = store.store_fact("codebase", "E")
    store.deprecate_fact(gone.id, "old")
    store.deprecate_fact(store.store_fact("bugfix", "F")[0].id, "old")
    t = webdata.topics(store)
    assert t.session_topics == [("auth", 3), ("ci", 2), ("docs", 1), ("postgres", 1)]
    assert t.fact_categories == [("bugfix", 2), ("decision", 2)]


# -- sessions ------------------------------------------------------------------------------------
def test_sessions_pages_newest_first_with_topic_filter(store: Store) -> None:
    days = [DAY - timedelta(days=i) for i in range(30)]  # newest first
    ids = [
        _sessions_on(store, d, topics="ci,pytest" if i % 3 == 0 else "docs")[0]
        for i, d in enumerate(days)
    ]
    _sessions_on(Store(store.db, "bob"), DAY, topics="ci")
    p1 = webdata.sessions(store)
    assert [s.id for s in p1.items] == ids[:25]
    assert (p1.total, p1.pages, p1.has_prev, p1.has_next) == (30, 2, False, True)
    p2 = webdata.sessions(store, page=2)
    assert [s.id for s in p2.items] == ids[25:]
    assert (p2.page, p2.has_prev, p2.has_next) == (2, True, False)
    ci = webdata.sessions(store, topic=" CI ")
    assert ci.total == 10 and [s.id for s in ci.items] == ids[::3]
    third = webdata.sessions(store, page=3, topic="ci", per_page=4)
    assert [s.id for s in third.items] == ids[::3][8:] and third.pages == 3
    assert webdata.sessions(store, topic="c").total == 0  # a whole tag, not a substring
    assert webdata.sessions(store, page=9).items == []
    with pytest.raises(InvalidInput, match="per_page"):
        webdata.sessions(store, per_page=0)


def test_topic_wildcards_are_literal(store: Store) -> None:
    _sessions_on(store, DAY, topics="c_d,100%")
    _sessions_on(store, DAY, topics="cxd,1000,back\\slash")
    assert webdata.sessions(store, topic="c_d").total == 1
    assert webdata.sessions(store, topic="100%").total == 1
    assert webdata.sessions(store, topic="%").total == 0
    assert webdata.sessions(store, topic="back\\slash").total == 1
    assert len(store.list_sessions(topic="c_d")) == 1  # the tool's filter is the same


def test_session_detail_and_other_users_ids(store: Store) -> None:
    sid = store.start_session().session.id
    f1, _, _ = store.store_fact("decision", "Keep the queue", session_id=sid)
    f2, _, _ = store.store_fact("bugfix", "Fixed the retry", session_id=sid)
    store.deprecate_fact(f1.id, "dropped")
    h, _ = journal.add(store, "The retry storm comes from the cron", 0.8, sid)
    store.append_chunk("first exchange", sid, "user")
    store.append_chunk("second exchange", sid, "assistant", flag_reason="decision")
    store.end_session(sid, "Queue work", "queue", None, "We kept the queue.")
    store.store_fact("decision", "Unrelated, no session open")  # links to none
    other = store.start_session().session.id
    journal.add(store, "Elsewhere", 0.5, other)

    d = webdata.session_detail(store, sid)
    assert d.session.id == sid and d.session.one_liner == "Queue work"
    assert d.summary is not None and d.summary.summary == "We kept the queue."
    assert [(c.seq, c.content) for c in d.chunks] == [(1, "first exchange"), (2, "second exchange")]
    assert [f.id for f in d.facts] == [f2.id, f1.id]
    assert [h2.id for h2 in d.hypotheses] == [h.id]
    bare = webdata.session_detail(store, other)
    assert (bare.summary, bare.chunks, bare.facts) == (None, [], [])

    bob = Store(store.db, "bob")
    bob_session = bob.start_session().session.id
    with pytest.raises(NotFound, match="No session"):
        webdata.session_detail(bob, sid)
    with pytest.raises(NotFound, match="No session"):
        webdata.session_detail(store, bob_session)
    with pytest.raises(NotFound, match="No session"):
        webdata.session_detail(store, "no-such-session")


# -- facts ---------------------------------------------------------------------------------------
def test_facts_listing_filters_and_pages(store: Store) -> None:
    sid = store.start_session().session.id
    store.end_session(sid, "Fixed the login", None, None, None)
    ids = []
    for i in range(35):
        cat = "bugfix" if i >= 30 else "decision"
        f, _, _ = store.store_fact(cat, f"Fact number {i}", session_id=sid if i == 34 else None)
        _set(store, "facts", "updated_at", _at(DAY + timedelta(days=i)), f.id)
        ids.append(f.id)
    for fid in ids[30:33]:
        store.deprecate_fact(fid, "old")
        _set(store, "facts", "updated_at", _at(DAY), fid)
    store.store_fact("decision", "Newest fact")
    bob = Store(store.db, "bob")
    bob.store_fact("secret", "Bob's private fact")

    v = webdata.facts(store, None)
    assert (v.query, v.category, v.status, v.note) == ("", None, "active", "")
    assert v.rows.total == 33 and v.rows.pages == 2 and len(v.rows.items) == 25
    newest = v.rows.items[0]
    assert newest.fact.fact == "Newest fact"  # updated now, after DAY+34
    second = v.rows.items[1]
    assert (second.fact.id, second.session_one_liner, second.why) == (
        ids[34],
        "Fixed the login",
        None,
    )
    assert v.rows.items[2].session_one_liner is None
    assert v.categories == [("decision", 31), ("bugfix", 5)]

    dep = webdata.facts(store, None, status="deprecated")
    assert dep.rows.total == 3 and {r.fact.id for r in dep.rows.items} == set(ids[30:33])
    assert webdata.facts(store, None, status="all").rows.total == 36
    bug = webdata.facts(store, None, category=" Bugfix ", status="all")
    assert bug.category == "bugfix" and bug.rows.total == 5
    assert [r.fact.id for r in webdata.facts(store, None, category="bugfix").rows.items] == [
        ids[34],
        ids[33],
    ]
    p2 = webdata.facts(store, None, page=2)
    assert [r.fact.id for r in p2.rows.items] == ids[:30][::-1][22:]
    with pytest.raises(InvalidInput, match="status"):
        webdata.facts(store, None, status="gone")


def test_facts_query_is_the_tools_search_filtered(store: Store) -> None:
    a, _, _ = store.store_fact("codebase", "The webhook handler retries three times")
    b, _, _ = store.store_fact("constraint", "Webhook secrets rotate monthly")
    c, _, _ = store.store_fact("decision", "Batch the webhook deliveries")
    store.deprecate_fact(c.id, "never built")
    store.store_fact("preference", "Serif fonts in the docs")
    Store(store.db, "bob").store_fact("codebase", "Bob's webhook notes")

    v = webdata.facts(store, None, "webhook")
    assert {r.fact.id for r in v.rows.items} == {a.id, b.id} and v.rows.total == 2
    assert v.note == "2 facts match “webhook” (semantic search off — keyword results only)"
    assert all(r.why and "webhook" in r.why for r in v.rows.items)
    assert [r.fact.id for r in webdata.facts(store, None, "webhook", "Constraint").rows.items] == [
        b.id
    ]
    dep = webdata.facts(store, None, "webhook", status="deprecated")
    assert [r.fact.id for r in dep.rows.items] == [c.id]
    assert dep.note.startswith("1 fact matches “webhook”")
    every = webdata.facts(store, None, " webhook ", status="all", per_page=2, page=2)
    assert every.query == "webhook" and every.rows.total == 3 and len(every.rows.items) == 1
    assert webdata.facts(store, None, "zeppelin").rows.total == 0
    blank = webdata.facts(store, None, "   ")
    assert (blank.query, blank.note, blank.rows.total) == ("", "", 3)
    # The page never counts as a recall: access counts stay untouched.
    assert store.get_fact(a.id).access_count == 0


# -- the journal ---------------------------------------------------------------------------------
def test_hypotheses_board(store: Store) -> None:
    made = {}
    for text, conf, status in (
        ("o1", 0.6, "open"),
        ("o2", 0.7, "open"),
        ("o3", 0.8, "open"),
        ("c1", 0.95, "confirmed"),
        ("c2", 0.6, "confirmed"),
        ("r1", 0.9, "refuted"),
    ):
        h, _ = journal.add(store, text, conf)
        if status != "open":
            journal.resolve(store, h.id, status, "checked")
        made[text] = h.id
    journal.add(Store(store.db, "bob"), "bob's", 0.5)
    v = webdata.hypotheses(store, per_column=2)
    assert list(v.columns) == ["open", "confirmed", "refuted", "abandoned"]
    assert v.totals == {"open": 3, "confirmed": 2, "refuted": 1, "abandoned": 0}
    assert [h.id for h in v.columns["open"]] == [made["o3"], made["o2"]]
    assert [h.id for h in v.columns["confirmed"]] == [made["c2"], made["c1"]]
    assert v.columns["abandoned"] == []
    assert v.calibration == journal.calibration(store)
    assert {b["band"]: b["resolved"] for b in v.calibration}["0.9–1.0"] == 2


# -- people and the team directory ---------------------------------------------------------------
def test_people_lists_the_shared_table(store: Store) -> None:
    for name in ("maria", "kenji", "lena"):
        people.remember(store, name, role="engineer")
    assert [p.username for p in webdata.people(store)] == ["lena", "kenji", "maria"]
    assert [p.username for p in webdata.people(store, limit=1)] == ["lena"]


def test_directory_is_empty_in_personal_mode(store: Store) -> None:
    store.start_session()
    Store(store.db, "bob").start_session()
    assert webdata.directory(store) == []


def test_directory_in_team_mode_counts_but_shows_no_content(backend: Backend) -> None:
    carol = Store(backend, "carol", mode="team")
    dave = Store(backend, "dave", mode="team")
    for _ in range(3):
        carol.start_session()
    carol.store_fact("decision", "zebrasecret plan")
    gone, _, _ = carol.store_fact("decision", "zebrasecret old plan")
    carol.deprecate_fact(gone.id, "old")
    dave.start_session()
    with backend.transaction() as tx:
        tx.execute("UPDATE users SET display_name = 'Dave D.' WHERE username = 'dave'")
    members = webdata.directory(carol)
    assert [m.username for m in members] == ["dave", "carol"]  # the most recently seen first
    c = members[1]
    assert (c.role, c.sessions, c.facts, c.hidden) == ("member", 3, 1, False)
    assert c.first_seen is not None and c.last_seen is not None and c.first_seen <= c.last_seen
    d = members[0]
    assert (d.display_name, d.sessions, d.facts) == ("Dave D.", 1, 0)
    assert set(webdata.Member.__dataclass_fields__) == {
        "username",
        "display_name",
        "role",
        "last_seen",
        "sessions",
        "facts",
        "first_seen",
        "hidden",
    }
    assert "zebrasecret" not in repr(members)


# -- company knowledge ---------------------------------------------------------------------------
def test_global_view_pending_for_members_and_curators(backend: Backend) -> None:
    add_user(backend, "root", "admin")
    alice = Store(backend, "alice", mode="team")
    bob = Store(backend, "bob", mode="team")
    root = Store(backend, "root", mode="team")
    theirs = globalkb.promote(bob, "standard", "Bob's rule", "Always rebase.").entry.id
    mine = globalkb.promote(alice, "pattern", "Alice's rule", "Retry thrice.").entry.id
    shared = globalkb.promote(root, "decision", "Root's rule", "Ship Tuesdays.").entry.id
    globalkb.review(root, shared, "approve")

    v = webdata.global_view(alice)
    assert not v.may_curate and [e.id for e in v.pending] == [mine]
    assert [e.id for e in v.approved.items] == [shared] and v.approved.total == 1
    set_role(backend, "alice", "curator")
    v = webdata.global_view(alice)
    assert v.may_curate and {e.id for e in v.pending} == {theirs, mine}
    assert [e.id for e in webdata.global_view(bob).pending] == [theirs]


def test_global_view_pages_and_category(store: Store) -> None:
    made = [
        globalkb.promote(
            store, "pattern" if i % 4 == 0 else "standard", f"Rule {i}", f"Body {i}", 1 + i % 10
        ).entry.id
        for i in range(27)
    ]
    v = webdata.global_view(store)
    assert (v.approved.total, v.approved.pages, len(v.approved.items)) == (27, 2, 25)
    assert v.may_curate and v.pending == [] and v.category is None
    p2 = webdata.global_view(store, page=2)
    expected = [e.id for e in globalkb.list_entries(store, limit=100)[0]]
    assert [e.id for e in v.approved.items + p2.approved.items] == expected
    assert sorted(expected) == made
    pat = webdata.global_view(store, category=" Pattern ", per_page=5)
    assert pat.category == "pattern" and pat.approved.total == 7 and pat.approved.pages == 2
    with pytest.raises(InvalidInput, match="category"):
        webdata.global_view(store, category="gossip")


# -- the profile header --------------------------------------------------------------------------
def _badges(store: Store, today: date = DAY) -> dict[str, webdata.Badge]:
    return {b.key: b for b in webdata.profile(store, today).badges}


def test_profile_of_an_empty_memory(store: Store) -> None:
    p = webdata.profile(store)
    assert (p.name, p.mode, p.pinned, p.first_session, p.tokens_saved) == (
        "alice",
        "personal",
        [],
        None,
        0,
    )
    assert p.streak == Streak(0, 0)
    assert [(t.key, t.label, t.count) for t in p.tiers] == [
        ("G", "Company knowledge (approved)", 0),
        ("0", "Profile fields set", 0),
        ("1", "Sessions", 0),
        ("2", "Session summaries", 0),
        ("3", "Facts (active)", 0),
        ("3", "Flagged exchanges", 0),
        ("", "Hypotheses", 0),
        ("", "People", 0),
    ]
    badges = _badges(store)
    assert list(badges) == [
        "first_session",
        "sessions_100",
        "facts_100",
        "confirmed_10",
        "streak_7",
        "tokens_100k",
    ]
    assert not any(b.earned for b in badges.values())
    assert badges["facts_100"].detail == "0 of 100 facts"


def test_profile_tiers_and_badges(store: Store) -> None:
    store.update_profile(role="dev", pinned_facts=["Ship on Tuesdays", "  ", "No ORMs"])
    _sessions_on(store, *(DAY - timedelta(days=d) for d in range(7)), DAY - timedelta(days=30))
    sid = store.start_session().session.id
    store.end_session(sid, "done", None, None, "a summary")
    store.append_chunk("flag me", sid, flag_reason="important")
    store.append_chunk("plain", sid)
    for i in range(3):
        store.store_fact("decision", f"fact {i}")
    for i in range(10):
        h, _ = journal.add(store, f"h{i}", 0.8, sid)
        journal.resolve(store, h.id, "confirmed" if i < 9 else "refuted", "r")
    savings.log(store, sid, "big recall", 100_000, "recall")
    people.remember(store, "maria")
    globalkb.promote(store, "standard", "T", "C")
    _set(store, "users", "display_name", "Alice A.", store.uid)

    p = webdata.profile(store, DAY)
    assert p.name == "Alice A." and p.user.display_name == "Alice A."
    assert p.pinned == ["Ship on Tuesdays", "No ORMs"]
    assert p.first_session == (DAY - timedelta(days=30)).isoformat()
    assert p.tokens_saved == 100_000 and p.streak == Streak(7, 7)
    assert {t.label: t.count for t in p.tiers} == {
        "Company knowledge (approved)": 1,
        "Profile fields set": 2,
        "Sessions": 9,
        "Session summaries": 1,
        "Facts (active)": 3,
        "Flagged exchanges": 1,
        "Hypotheses": 10,
        "People": 1,
    }
    assert p.counts == store.counts()
    badges = _badges(store)
    assert {k: b.earned for k, b in badges.items()} == {
        "first_session": True,
        "sessions_100": False,
        "facts_100": False,
        "confirmed_10": False,
        "streak_7": True,
        "tokens_100k": True,
    }
    assert badges["confirmed_10"].detail == "9 of 10 confirmed"
    assert badges["sessions_100"].detail == "9 of 100 sessions"
    assert badges["first_session"].detail == f"on {(DAY - timedelta(days=30)).isoformat()}"
    h, _ = journal.add(store, "h10", 0.8, sid)
    journal.resolve(store, h.id, "confirmed", "r")
    assert _badges(store)["confirmed_10"].earned
    # Six days in a row is not seven.
    six = _badges(store, DAY - timedelta(days=1))["streak_7"]
    assert not six.earned and six.detail == "6 of 7 days in a row (longest streak)"


def test_curator_badge_in_team_mode(backend: Backend) -> None:
    carol = Store(backend, "carol", mode="team")
    badge = _badges(carol)["curator"]
    assert (badge.title, badge.detail, badge.earned) == ("Curator", "role: member", False)
    set_role(backend, "carol", "curator")
    assert _badges(carol)["curator"].earned  # the role as the database holds it now
    assert webdata.profile(carol).user.role == "curator"


# -- the seeded world ----------------------------------------------------------------------------
def test_seed_world_builds_what_it_promises(store: Store) -> None:
    w = seed_world(store)
    assert w.user == "alice" and w.today == datetime.now(UTC).date()

    d = webdata.session_detail(store, w.session_id)
    assert d.summary is not None and len(d.chunks) >= 2 and not d.session.is_open
    assert store.get_fact(w.fact_id).deprecated == 0
    assert store.get_fact(w.deprecated_fact_id).deprecated == 1
    script = store.get_fact(w.script_fact_id)
    assert script.fact == SCRIPT_FACT and script.deprecated == 0
    assert globalkb.get(store, w.pending_global_id).status == "pending"
    approved = globalkb.get(store, w.approved_global_id)
    assert approved.status == "approved" and approved.promoter == "bob"
    assert w.topic in dict(webdata.topics(store).session_topics)
    assert w.category in dict(webdata.topics(store).fact_categories)

    counts = store.counts()
    assert (counts["sessions"], counts["facts"], counts["deprecated_facts"]) == (120, w.facts, 5)
    assert w.sessions == 120 and 125 <= w.facts <= 135
    assert counts["open_sessions"] == 1 and counts["summaries"] == 40 and counts["chunks"] == 19
    a = webdata.activity(store)
    assert (a.total_sessions, a.active_days, a.streak.current) == (120, 90, 8)
    assert 0 < a.total_saved < 100_000 and sum(n for _, n in a.savings) == a.total_saved
    assert sum(1 for _, n in a.savings[-21:] if n) >= 12 and all(n == 0 for _, n in a.savings[:5])
    h = webdata.hypotheses(store)
    assert h.totals["confirmed"] >= 12 and all(h.totals.values())
    assert len(webdata.people(store)) == 5
    g = webdata.global_view(store)
    assert g.approved.total == 3 and [e.promoter for e in g.pending] == ["bob", "bob"]
    p = webdata.profile(store)
    assert p.pinned == [
        "Production runs PostgreSQL 16 with pgvector",
        "Releases go out on Tuesdays",
        "Ask before touching the billing schema",
    ]
    assert store.restore_fact(w.deprecated_fact_id).deprecated == 0
