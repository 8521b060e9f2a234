"""The store: sessions, facts, chunks, profile, validation and per-user scoping."""

from __future__ import annotations

import pytest

from bigmind.errors import Forbidden, InvalidInput, NotFound
from bigmind.limits import FACT as MAX_FACT
from bigmind.memory.users import set_role
from bigmind.models import AUTO_CLOSED_ONE_LINER, ts_ago
from bigmind.search import keyword
from bigmind.storage.db import Backend, SQLiteBackend
from bigmind.storage.store import Store


def _age_session(backend: SQLiteBackend, session_id: str, hours: float) -> None:
    with backend.transaction() as tx:
        tx.execute(
            "UPDATE sessions SET started_at = ?, last_activity_at = ? WHERE id = ?",
            (ts_ago(hours=hours), ts_ago(hours=hours), session_id),
        )


# -- users -------------------------------------------------------------------------------------
def test_personal_mode_user_is_admin_and_registered_once(backend: Backend) -> None:
    a1 = Store(backend, "alice")
    a2 = Store(backend, "alice")
    assert a1.user.id == a2.user.id and a1.user.role == "admin"
    assert backend.query("SELECT count(*) AS n FROM users")[0]["n"] == 1


@pytest.mark.parametrize("mode", ["team", "enterprise"])
def test_shared_modes_register_every_user_as_member(backend: Backend, mode: str) -> None:
    first = Store(backend, "alice", mode=mode)
    second = Store(backend, "bob", mode=mode)
    assert (first.user.role, second.user.role) == ("member", "member")
    set_role(backend, "alice", "curator")
    assert Store(backend, "alice", mode=mode).user.role == "curator"  # kept on the next start


def test_another_user_id_is_forbidden(store: Store) -> None:
    store.check_user(None)
    store.check_user("alice")
    store.check_user(store.user.id)
    with pytest.raises(Forbidden, match="acts as user 'alice'"):
        store.check_user("mallory")


# -- sessions ----------------------------------------------------------------------------------
def test_start_auto_closes_sessions_open_longer_than_24h(
    store: Store, backend: SQLiteBackend
) -> None:
    old = store.start_session().session
    recent = store.start_session().session
    _age_session(backend, old.id, hours=25)
    _age_session(backend, recent.id, hours=23)
    started = store.start_session()
    assert started.auto_closed == [old.id]
    closed = store.get_session(old.id)
    assert closed.ended_at is not None and closed.auto_closed == 1
    assert closed.one_liner == AUTO_CLOSED_ONE_LINER
    assert store.get_session(recent.id).is_open


def test_start_with_session_id_reuses_it(store: Store) -> None:
    first = store.start_session().session
    again = store.start_session(session_id=first.id)
    assert again.reused and again.session.id == first.id
    assert store.count_sessions() == 1


def test_start_with_unknown_session_id_says_what_to_do(store: Store) -> None:
    with pytest.raises(NotFound, match="No session 'no-such-session'") as refused:
        store.start_session(session_id="no-such-session")
    assert "without session_id" in refused.value.message_for("tool")


def test_write_without_session_opens_one_then_reuses_it(store: Store) -> None:
    _, ref1 = store.append_chunk("first")
    _, ref2 = store.append_chunk("second")
    assert ref1.opened and not ref2.opened
    assert ref1.session.id == ref2.session.id


def test_write_uses_the_most_recently_active_open_session(store: Store) -> None:
    store.start_session()
    b = store.start_session().session
    _, ref = store.append_chunk("goes to b")
    assert ref.session.id == b.id


def test_chunks_get_consecutive_seq_per_session(store: Store) -> None:
    s = store.start_session().session
    seqs = [store.append_chunk(f"c{i}", s.id)[0].seq for i in range(3)]
    assert seqs == [1, 2, 3]


def test_end_session_writes_tier1_and_tier2(store: Store) -> None:
    s = store.start_session().session
    ended, was_open = store.end_session(
        s.id, "Built the core", ["Core", "db", "core"], "It works", "Long story", ["k1", "k2"]
    )
    assert was_open and ended.ended_at and ended.has_tier2 == 1
    assert ended.topics == "core,db"
    _, summary, _ = store.session_detail(s.id)
    assert summary is not None and summary.key_facts == "- k1\n- k2"


def test_end_session_twice_updates_and_keeps_one_summary(store: Store) -> None:
    s = store.start_session().session
    store.end_session(s.id, "v1", "a", None, "first summary")
    again, was_open = store.end_session(s.id, "v2", "b", None, "second summary")
    assert not was_open and again.one_liner == "v2"
    _, summary, _ = store.session_detail(s.id)
    assert summary is not None and summary.summary == "second summary"
    n = store.db.query("SELECT count(*) AS n FROM session_summaries")[0]["n"]
    assert n == 1
    # The full-text index followed the update (FTS5 trigger / generated tsvector column).
    for word, n in (("second", 1), ("first", 0)):
        rows, _ = keyword.text_search(store.db).search(
            "session_summaries_fts", "session_summaries", word, "b.id", "1 = 1", (), 5, "1.0, 1.0"
        )
        assert len(rows) == n, word


def test_end_session_rejects_bad_input_and_writes_nothing(store: Store) -> None:
    s = store.start_session().session
    with pytest.raises(InvalidInput, match="one_liner"):
        store.end_session(s.id, "x" * 500, None, None, "summary")
    with pytest.raises(InvalidInput, match="importance"):
        store.end_session(s.id, "ok", None, None, "summary", importance=11)
    assert store.get_session(s.id).is_open


def test_list_sessions_filters_by_topic_tag_exactly(store: Store) -> None:
    a = store.start_session().session
    store.end_session(a.id, "a", "db,api", None, None)
    b = store.start_session().session
    store.end_session(b.id, "b", "database", None, None)
    assert [s.id for s in store.list_sessions(topic="db")] == [a.id]


# -- facts -------------------------------------------------------------------------------------
def test_identical_fact_is_not_stored_twice(store: Store) -> None:
    f1, created1, _ = store.store_fact("preference", "Prefers pytest.")
    f2, created2, _ = store.store_fact("preference", "  prefers   PYTEST ")
    assert created1 and not created2 and f1.id == f2.id


def test_fact_validation(store: Store) -> None:
    with pytest.raises(InvalidInput, match="confidence"):
        store.store_fact("preference", "x", confidence=1.5)
    with pytest.raises(InvalidInput, match="importance"):
        store.store_fact("preference", "x", importance=0)
    with pytest.raises(InvalidInput, match="category"):
        store.store_fact("Not a category!", "x")
    with pytest.raises(InvalidInput, match="limit is"):
        store.store_fact("preference", "x" * (MAX_FACT + 1))
    with pytest.raises(InvalidInput, match="empty"):
        store.store_fact("preference", "   ")
    assert store.count_active_facts() == 0


def test_deprecated_facts_leave_search_and_context_but_stay(store: Store) -> None:
    f, _, _ = store.store_fact("decision", "We deploy with Kubernetes")
    store.deprecate_fact(f.id, "moved to Nomad")
    assert keyword.hits(store, "fact", "kubernetes deploy") == []
    hits = keyword.hits(store, "fact", "kubernetes deploy", include_deprecated=True)
    assert hits and hits[0].deprecated
    assert store.top_facts(10) == []
    with pytest.raises(InvalidInput, match="already deprecated"):
        store.deprecate_fact(f.id, "again")


def test_deprecated_fact_can_be_stored_again(store: Store) -> None:
    f, _, _ = store.store_fact("decision", "Use tabs")
    store.deprecate_fact(f.id, "wrong")
    f2, created, _ = store.store_fact("decision", "Use tabs")
    assert created and f2.id != f.id


def test_search_leaves_access_count_alone(store: Store) -> None:
    f, _, _ = store.store_fact("codebase", "The parser lives in parse.py")
    keyword.hits(store, "fact", "parser")
    assert store.get_fact(f.id).access_count == 0  # uses are counted by bigmind.usage


def test_top_facts_order_importance_then_confidence(store: Store) -> None:
    store.store_fact("codebase", "low", importance=2)
    store.store_fact("codebase", "high unsure", importance=9, confidence=0.5)
    store.store_fact("codebase", "high sure", importance=9, confidence=0.9)
    assert [f.fact for f in store.top_facts(3)] == ["high sure", "high unsure", "low"]


# -- privacy -----------------------------------------------------------------------------------
def test_other_users_rows_are_invisible_and_unaddressable(backend: SQLiteBackend) -> None:
    alice = Store(backend, "alice")
    bob = Store(backend, "bob")
    f, _, _ = alice.store_fact("preference", "Alice likes vim")
    _chunk, ref = alice.append_chunk("Alice's secret plan")
    assert (
        keyword.hits(bob, "fact", "vim") == [] and keyword.hits(bob, "chunk", "secret plan") == []
    )
    with pytest.raises(NotFound):
        bob.deprecate_fact(f.id, "nope")
    with pytest.raises(NotFound):
        bob.session_detail(ref.session.id)
    with pytest.raises(NotFound):
        bob.append_chunk("intrude", session_id=ref.session.id)
    assert bob.list_sessions() == [] and bob.top_facts(10) == []
    assert alice.get_fact(f.id).deprecated == 0


def test_same_fact_for_two_users_is_two_rows(backend: SQLiteBackend) -> None:
    a, _, _ = Store(backend, "alice").store_fact("preference", "Dark mode")
    b, created, _ = Store(backend, "bob").store_fact("preference", "Dark mode")
    assert created and a.id != b.id


# -- profile -----------------------------------------------------------------------------------
def test_profile_partial_update_and_clear(store: Store) -> None:
    store.update_profile(role="Engineer", preferences="Terse", pinned_facts=["uses uv", "macOS"])
    p = store.update_profile(preferences="Verbose")
    assert p.role == "Engineer" and p.preferences == "Verbose"
    assert p.pinned_facts == "- uses uv\n- macOS"
    p = store.update_profile(role="")
    assert p.role is None
    with pytest.raises(InvalidInput, match="at least one"):
        store.update_profile()


def test_chunk_role_is_validated(store: Store) -> None:
    with pytest.raises(InvalidInput, match="role"):
        store.append_chunk("x", role="robot")
