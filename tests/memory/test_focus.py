"""Parallel sessions: focus announcements, file conflicts, closing stale sessions, savings, diff."""

from __future__ import annotations

import pytest

from bigmind.errors import InvalidInput, NotFound
from bigmind.memory import diff, focus, journal, people, savings
from bigmind.memory.context import build_context
from bigmind.models import ts_ago
from bigmind.storage.db import SQLiteBackend
from bigmind.storage.store import Store


def _idle(backend: SQLiteBackend, session_id: str, minutes: int) -> None:
    with backend.transaction() as tx:
        tx.execute(
            "UPDATE sessions SET last_activity_at = ? WHERE id = ?",
            (ts_ago(minutes=minutes), session_id),
        )


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("./src/app.py", "src/app.py"),
        ("src\\app.py", "src/app.py"),
        ("src/x/../app.py", "src/app.py"),
        ("/home/u/proj/src/app.py/", "/home/u/proj/src/app.py"),
    ],
)
def test_paths_are_normalised(path: str, expected: str) -> None:
    assert focus.normalise_path(path) == expected


def test_conflict_when_two_sessions_touch_the_same_file(store: Store) -> None:
    a = store.start_session(ide_hint="vscode").session
    b = store.start_session(ide_hint="cursor").session
    focus.announce(store, a.id, "Refactor app", ["./src/app.py", "README.md"])
    focus.announce(store, b.id, "Fix bug", ["/home/me/proj/src/app.py"])
    items, conflicts = focus.active(store)
    assert {i.session.id for i in items} == {a.id, b.id}
    assert len(conflicts) == 1 and set(conflicts[0].session_ids) == {a.id, b.id}
    assert conflicts[0].path == "/home/me/proj/src/app.py"


def test_no_conflict_for_different_files_or_closed_sessions(store: Store) -> None:
    a = store.start_session().session
    b = store.start_session().session
    focus.announce(store, a.id, "x", ["src/app.py"])
    focus.announce(store, b.id, "y", ["tests/app.py"])
    assert focus.active(store)[1] == []
    focus.announce(store, b.id, "z", ["src/app.py"])
    store.end_session(b.id, "done", None, None, None)
    assert focus.active(store)[1] == []


def test_latest_focus_is_shown_in_the_bootstrap(store: Store) -> None:
    other = store.start_session().session
    focus.announce(store, other.id, "old focus")
    focus.announce(store, other.id, "Migrating the billing tables", ["db/billing.sql"])
    me = store.start_session().session
    text = build_context(store, current_session=me.id).text
    assert "focus: Migrating the billing tables (files: db/billing.sql)" in text
    assert "old focus" not in text


def test_close_stale_spares_own_and_recent_sessions(store: Store, backend: SQLiteBackend) -> None:
    me = store.start_session().session
    idle = store.start_session().session
    busy = store.start_session().session
    _idle(backend, me.id, 500)
    _idle(backend, idle.id, 90)
    _idle(backend, busy.id, 5)
    closed = focus.close_stale(store, me.id, idle_minutes=30)
    assert [s.id for s in closed] == [idle.id]
    assert store.get_session(me.id).is_open and store.get_session(busy.id).is_open
    assert "closed as stale" in store.get_session(idle.id).one_liner
    assert [s.id for s in focus.close_stale(store, me.id, force=True)] == [busy.id]
    assert store.get_session(me.id).is_open


def test_close_stale_validation(store: Store) -> None:
    with pytest.raises(NotFound):
        focus.close_stale(store, "nope")
    s = store.start_session().session
    with pytest.raises(InvalidInput, match="idle_minutes"):
        focus.close_stale(store, s.id, idle_minutes=0)


def test_close_stale_never_touches_other_users(backend: SQLiteBackend) -> None:
    alice, bob = Store(backend, "alice"), Store(backend, "bob")
    bobs = bob.start_session().session
    _idle(backend, bobs.id, 600)
    mine = alice.start_session().session
    assert focus.close_stale(alice, mine.id, force=True) == []
    assert bob.get_session(bobs.id).is_open


def test_token_savings_totals(store: Store) -> None:
    savings.log(store, None, "recalled schema instead of reading 12 files", 4000, "memory")
    savings.log(store, None, "grep instead of opening", 500, "grep")
    savings.log(store, None, "again", 1000, "Memory")
    t = savings.totals(store)
    assert t["total"] == 5500 and t["entries"] == 3
    assert t["per_method"] == {"memory": 5000, "grep": 500}
    assert sum(t["per_week"].values()) == 5500
    with pytest.raises(InvalidInput, match="tokens_saved"):
        savings.log(store, None, "x", -1, "memory")


def test_diff_since_a_session(store: Store) -> None:
    old = store.store_fact("codebase", "Old fact")[0]
    since = store.start_session().session
    new = store.store_fact("codebase", "New fact")[0]
    store.deprecate_fact(old.id, "outdated")
    h, _ = journal.add(store, "Guess")
    journal.resolve(store, h.id, "confirmed", "yes")
    people.remember(store, "jdoe", "Jane")
    store.update_profile(role="Lead")
    later = store.start_session().session
    store.end_session(later.id, "Later work", None, "ok", None)
    d = diff.since_session(store, since.id)
    text = d.render()
    assert f"#{new.id} [codebase] New fact" in text
    assert "Old fact — outdated" in text
    assert "Later work" in text and "Guess" in text and "jdoe (Jane)" in text
    assert "role Lead" in text
    assert d.counts["New facts"] == 1 and d.counts["Hypotheses resolved"] == 1
    empty = diff.since_session(store, store.start_session().session.id)
    assert empty.render().endswith("nothing.")
