"""Bounded-cost BM25: common terms pruned, AND narrowing, recency window, owner over-fetch."""

from __future__ import annotations

import pytest

from bigmind.search import keyword
from bigmind.storage.db import Backend
from bigmind.storage.store import Store

FTS = "conversation_chunks_fts"


def _chunks(store: Store, texts: list[str]) -> None:
    for t in texts:
        store.append_chunk(t)


def test_rare_terms_rank_and_common_ones_are_named(store: Store) -> None:
    keyword.text_search(store.db).budget = 5
    _chunks(store, [f"the service handled request {i}" for i in range(20)])
    _chunks(store, ["the service crashed on a kafka rebalance"])
    plan = keyword.text_search(store.db).plan(
        FTS, "why did the service crash during the kafka rebalance"
    )
    assert plan is not None
    assert "service" in plan.dropped and "kafka" in plan.used
    hits = keyword.hits(store, "chunk", "why did the service crash during the kafka rebalance")
    assert "kafka rebalance" in hits[0].text.replace("**", "")
    assert "too common to rank on: 'service'" in hits[0].why


def test_all_common_terms_are_anded(store: Store) -> None:
    keyword.text_search(store.db).budget = 5
    _chunks(store, [f"error in module {i}" for i in range(10)])
    _chunks(store, [f"pytest run {i}" for i in range(10)])
    _chunks(store, ["pytest reported an error"])
    plan = keyword.text_search(store.db).plan(FTS, "pytest error")
    assert plan is not None and plan.conjunctive and set(plan.used) == {"pytest", "error"}
    hits = keyword.hits(store, "chunk", "pytest error")
    assert [h.text.replace("**", "") for h in hits] == ["pytest reported an error"]
    assert hits[0].why.startswith("has all of")


def test_and_skips_a_term_that_would_leave_nothing(store: Store) -> None:
    keyword.text_search(store.db).budget = 3
    _chunks(store, [f"deploy log {i}" for i in range(10)])
    _chunks(store, [f"rollback note {i}" for i in range(10)])
    plan = keyword.text_search(store.db).plan(FTS, "deploy rollback")
    assert plan is not None and len(plan.used) == 1 and plan.min_rowid is not None


def test_a_single_very_common_term_ranks_recent_matches(store: Store) -> None:
    keyword.text_search(store.db).budget = 5
    _chunks(store, [f"cache entry {i}" for i in range(30)])
    hits = keyword.hits(store, "chunk", "cache", limit=5)
    ids = [h.id for h in hits]
    assert len(ids) == 5 and min(ids) >= 26  # only the 5 most recent of 30 were ranked
    assert "most recent matches" in hits[0].why


def test_a_quiet_user_below_the_recency_window_still_finds_their_rows(backend: Backend) -> None:
    alice, bob = Store(backend, "alice"), Store(backend, "bob")
    alice.append_chunk("deploy checklist for the billing service")  # the oldest match
    for i in range(30):
        bob.append_chunk(f"deploy log {i}")
    keyword.text_search(alice.db).budget = 5  # bob's 30 matches fill the recency window of 5
    hits = keyword.hits(alice, "chunk", "deploy", limit=5)
    assert [h.text.replace("**", "") for h in hits] == ["deploy checklist for the billing service"]
    if backend.dialect == "sqlite":  # PostgreSQL's row-level security shows alice no other rows
        assert "most recent matches" in hits[0].why
    keyword.text_search(
        bob.db
    ).budget = 5  # bob has enough recent matches: no look below the window
    assert min(h.id for h in keyword.hits(bob, "chunk", "deploy", limit=3)) >= 27


def test_other_users_rows_do_not_crowd_out_the_owners(backend: Backend) -> None:
    alice, bob = Store(backend, "alice"), Store(backend, "bob")
    for i in range(200):
        bob.append_chunk(f"postgres vacuum tuning note {i} postgres postgres")
    alice.append_chunk("postgres vacuum advice for alice")
    hits = keyword.hits(alice, "chunk", "postgres vacuum", limit=5)
    assert [h.text.replace("**", "") for h in hits] == ["postgres vacuum advice for alice"]


def test_document_frequencies_are_cached(store: Store) -> None:
    _chunks(store, ["alpha beta"])
    keyword.hits(store, "chunk", "alpha")
    assert (FTS, "alpha") in keyword.text_search(store.db)._df


def test_a_term_written_after_its_count_was_cached_is_still_found(store: Store) -> None:
    keyword.text_search(store.db).budget = 5
    _chunks(store, [f"service note {i}" for i in range(20)])
    assert keyword.hits(store, "chunk", "kafka service")  # caches kafka as absent
    store.append_chunk("kafka consumer lag on the service")
    hits = keyword.hits(store, "chunk", "kafka service")
    assert "kafka consumer lag" in hits[0].text.replace("**", "")


def test_a_new_rare_term_is_found_even_when_the_others_are_anded(store: Store) -> None:
    keyword.text_search(store.db).budget = 5
    _chunks(store, [f"pytest error {i}" for i in range(10)] + [f"pytest {i}" for i in range(10)])
    keyword.hits(store, "chunk", "kafka pytest error")  # kafka cached as absent, the rest AND-ed
    store.append_chunk("kafka broke")
    texts = [h.text.replace("**", "") for h in keyword.hits(store, "chunk", "kafka pytest error")]
    assert "kafka broke" in texts


def test_common_terms_are_anded_rarest_first_even_past_the_budget(backend: Backend) -> None:
    """Counts stop at the budget; past it they are estimated, so the AND starts with the
    rarer term even when the query names the commoner one first."""
    store = Store(backend, "alice")
    search = keyword.text_search(store.db)
    search.budget = 5
    for i in range(60):  # the rarer term's rows spread over time, as words are
        _chunks(store, [f"latency note {i}"] + ([f"replica lag {i}"] if i % 10 == 0 else []))
    _chunks(store, ["replica latency spike after the failover"])
    plan = search.plan(FTS, "latency replica")
    assert plan is not None and plan.conjunctive
    if backend.dialect == "sqlite":  # PostgreSQL orders by its own statistics
        assert plan.used[0] == "replica"
    hits = keyword.hits(store, "chunk", "latency replica")
    assert hits[0].text.replace("**", "") == "replica latency spike after the failover"


def test_a_term_too_common_to_rank_on_lists_the_newest_matches(store: Store) -> None:
    """SQLite only: PostgreSQL's ranking has no IDF pass to avoid (pgtext.py)."""
    if store.db.dialect != "sqlite":
        pytest.skip("FTS5's bm25() cost")
    search = keyword.text_search(store.db)
    search.budget, search.common_df = 5, 20
    _chunks(store, [f"cache entry {i}" for i in range(30)])
    _chunks(store, ["kafka cache warmed"])
    plan = search.plan(FTS, "cache")
    assert plan is not None and plan.recency
    hits = keyword.hits(store, "chunk", "cache", limit=3)
    assert [h.text.replace("**", "") for h in hits] == [
        "kafka cache warmed",
        "cache entry 29",
        "cache entry 28",
    ]
    assert "newest matches first" in hits[0].why
    # A rarer term beside it is still ranked by BM25, and found.
    plan = search.plan(FTS, "cache kafka")
    assert plan is not None and not plan.recency and "kafka" in plan.used
    assert keyword.hits(store, "chunk", "cache kafka")[0].text.replace("**", "") == (
        "kafka cache warmed"
    )


def test_identifiers_are_found_among_many_rows_with_their_words(store: Store) -> None:
    search = keyword.text_search(store.db)
    search.budget = 5
    _chunks(store, [f"lint the memory pool {i}" for i in range(20)])
    _chunks(store, ["lint_memory raised in src/core/pool.py"])
    hits = keyword.hits(store, "chunk", "lint_memory")
    assert [h.text.replace("**", "") for h in hits] == ["lint_memory raised in src/core/pool.py"]
    hits = keyword.hits(store, "chunk", "src/core/pool.py memory")
    assert hits[0].text.replace("**", "") == "lint_memory raised in src/core/pool.py"


def test_a_phrase_found_nowhere_is_left_out_of_the_match(store: Store) -> None:
    _chunks(store, ["deploy notes for the billing service"])
    plan = keyword.text_search(store.db).plan(FTS, "src/api/stub_order.ts deploy")
    assert plan is not None and "deploy" in plan.used
    if store.db.dialect == "sqlite":  # matching a phrase reads every row of its words
        assert "stub" not in plan.expression
    assert [h.text for h in keyword.hits(store, "chunk", "src/api/stub_order.ts deploy")]
    assert keyword.hits(store, "chunk", "src/api/stub_order.ts") == []


def test_the_and_keeps_the_words_enough_rows_have_together(store: Store) -> None:
    search = keyword.text_search(store.db)
    search.budget, search.deepen_min = 5, 2
    _chunks(store, [f"beta gamma {i}" for i in range(20)] + [f"alpha gamma {i}" for i in range(6)])
    _chunks(store, ["alpha beta alone"] + [f"alpha beta gamma storm {j}" for j in range(3)])
    plan = search.plan(FTS, "alpha beta gamma")  # alpha AND beta leave 4 rows: within budget
    assert plan is not None and plan.conjunctive
    hits = [h.text.replace("**", "") for h in keyword.hits(store, "chunk", "alpha beta gamma")]
    assert hits[0].startswith("alpha beta gamma storm")
    if store.db.dialect == "sqlite":  # PostgreSQL narrows by its own statistics
        assert set(plan.used) == {"alpha", "beta", "gamma"}
        assert set(hits) == {f"alpha beta gamma storm {j}" for j in range(3)}
