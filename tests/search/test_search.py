"""The query builder: natural-language questions become safe OR queries of meaningful terms."""

from __future__ import annotations

import pytest

from bigmind.memory.usage import USE_TOP, UsageTally
from bigmind.search import keyword
from bigmind.search.ranking import Recall
from bigmind.search.terms import MAX_TERMS, STEM_ONLY, TermMatcher, build_fts_query, terms_of
from bigmind.storage.store import Store

NASTY = [
    'What "testing" library does the user prefer?',
    "pre-commit AND OR NOT NEAR(foo bar) * ^ : - +",
    'unbalanced "quote and (paren',
    "config.py snake_case v1.2 C++ node.js",
    "Ünïcödé 日本語のテキスト café naïve 🧠",
    "column:value {a b} [x] <y> ~z @w #v $u %t &s !r",
    "NEAR",
    "*",
    " ".join(["which"] + ["database migration rollback strategy"] * 10),  # 40 words
]


def test_stop_words_are_dropped_and_terms_kept_in_order() -> None:
    assert terms_of("What testing library does the user prefer?") == [
        "testing",
        "library",
        "user",
        "prefer",
    ]


def test_only_stop_words_falls_back_to_all_words() -> None:
    assert terms_of("what is it") == ["what", "is", "it"]


def test_operators_and_punctuation_never_reach_fts_unquoted() -> None:
    q = build_fts_query('pre-commit "NEAR" AND OR * hooks')
    assert q is not None
    assert q.expression == '"pre-commit" OR "hooks"'


def test_prefix_star_is_kept_as_prefix_search() -> None:
    q = build_fts_query("migrat*")
    assert q is not None and q.expression == '"migrat"*'


def test_no_searchable_term_gives_none() -> None:
    assert build_fts_query("?!  ... ***") is None


def test_term_count_is_capped() -> None:
    q = build_fts_query(" ".join(f"word{i}" for i in range(100)))
    assert q is not None and len(q.terms) == MAX_TERMS


@pytest.mark.parametrize("query", NASTY)
def test_hostile_queries_never_error(store: Store, query: str) -> None:
    store.store_fact("codebase", "The database migration rollback strategy uses savepoints")
    store.append_chunk("We chose pytest over unittest; config.py holds the settings.")
    keyword.hits(store, "fact", query)
    keyword.hits(store, "chunk", query)


def test_long_question_finds_the_relevant_chunk(store: Store) -> None:
    store.append_chunk("Lunch options near the office: tacos, ramen and a salad bar.")
    store.append_chunk(
        "Decision: database migrations run in one transaction each and roll back on failure."
    )
    store.append_chunk("The CI pipeline caches pip downloads between runs.")
    question = (
        "Hey, I was wondering whether you could remind me what exactly we agreed on last week "
        "about how our database migrations should behave when one of them fails halfway "
        "through, because I need to write the rollback handling for the new release today"
    )
    assert len(question.split()) >= 40
    hits = keyword.hits(store, "chunk", question, limit=3)
    assert hits and "migrations run in one transaction" in hits[0].text.replace("**", "")


def test_stemming_matches_other_word_forms(store: Store) -> None:
    store.store_fact("preference", "The user prefers running tests with pytest")
    assert keyword.hits(store, "fact", "which test runner is preferred")


def test_bm25_ranks_more_matching_terms_first(store: Store) -> None:
    store.store_fact("codebase", "Redis is used for caching sessions")
    store.store_fact("codebase", "Redis caching of sessions expires after ten minutes")
    store.store_fact("codebase", "Sessions are stored in PostgreSQL")
    hits = keyword.hits(store, "fact", "when does the redis session cache expire")
    assert hits[0].text == "Redis caching of sessions expires after ten minutes"


def test_keyword_queries_keep_working(store: Store) -> None:
    store.store_fact("decision", "We use apsw to load sqlite-vec")
    assert [h.text for h in keyword.hits(store, "fact", "apsw")] == [
        "We use apsw to load sqlite-vec"
    ]
    assert keyword.hits(store, "fact", "sqlite-vec")


def test_excerpt_centres_on_the_first_term_and_bolds_matches() -> None:
    from bigmind.search.terms import excerpt

    text = (
        " ".join(f"w{i}" for i in range(100))
        + " the migrations failed "
        + " ".join(f"z{i}" for i in range(100))
    )
    out = excerpt(text, ["migration", "fail"], width=20)
    assert "**migrations** **failed**" in out
    assert out.startswith("…") and out.endswith("…")
    assert len(out.replace("…", "").split()) == 20
    assert excerpt("short text", ["absent"]) == "short text"


def test_the_top_hits_of_each_question_are_counted_once(store: Store) -> None:
    for i in range(4):
        store.append_chunk(f"deploy step {i}: roll the canary")
    recall = Recall(store, None)
    tally = UsageTally()
    for query in ("canary deploy", "canary  DEPLOY", "roll the canary"):
        hits = recall.search(query, 4, ["chunk"], mode="keyword").hits
        assert len(hits) == 4
        tally.record(store.uid, query, [(h.kind, h.id) for h in hits[:USE_TOP]])
    assert store.db.query("SELECT * FROM memory_usage") == []  # searching wrote nothing
    touched = tally.flush(store.db)
    rows = store.db.query("SELECT access_count FROM memory_usage")
    assert len(rows) == touched >= USE_TOP
    assert sum(r["access_count"] for r in rows) == 2 * USE_TOP  # two distinct questions
    assert max(r["access_count"] for r in rows) == 2
    assert tally.flush(store.db) == 0


# -- ranking never degrades to id order; exact terms beat stem-only ones --------------------------
def _ids(store: Store, query: str, n: int = 10) -> list[int]:
    hits = Recall(store, None).search(query, n, ["fact"], mode="keyword").hits
    return [int(h.id) for h in hits]


def test_a_row_with_more_query_terms_leads_when_every_term_is_common(store: Store) -> None:
    # Each term is in half the rows: FTS5's BM25 gives it almost no weight (idf ~1e-6).
    one, _, _ = store.store_fact("codebase", "deploy the api with make")
    store.store_fact("codebase", "production database is big")
    both, _, _ = store.store_fact("codebase", "deploy production from main")
    store.store_fact("codebase", "lunch is at noon")
    assert _ids(store, "deploy production")[0] == both.id
    assert keyword.hits(store, "fact", "deploy production")[0].id == both.id
    assert one.id in _ids(store, "deploy production")


def test_equal_matches_rank_newest_first(store: Store) -> None:
    old, _, _ = store.store_fact("codebase", "deploy notes alpha")
    new, _, _ = store.store_fact("codebase", "deploy notes gamma")
    store.store_fact("codebase", "lunch is at noon")
    store.store_fact("codebase", "tabs over spaces")
    assert _ids(store, "deploy") == [new.id, old.id]
    assert [h.id for h in keyword.hits(store, "fact", "deploy")] == [new.id, old.id]


def test_equal_matches_of_equal_age_rank_the_more_important_first(store: Store) -> None:
    low, _, _ = store.store_fact("codebase", "deploy notes gamma", importance=3)
    high, _, _ = store.store_fact("codebase", "deploy notes alpha", importance=9)
    store.store_fact("codebase", "lunch is at noon")
    store.store_fact("codebase", "tabs over spaces")
    assert _ids(store, "deploy") == [high.id, low.id]


def _with_filler(store: Store) -> None:
    for i in range(8):  # the query's words are rare here, as in a real memory
        store.store_fact("codebase", f"Module m{i} formats dates as ISO strings")


def test_exact_terms_beat_stem_only_matches(store: Store) -> None:
    _with_filler(store)
    production, _, _ = store.store_fact(
        "codebase",
        "The production database runs PostgreSQL 16 with nightly snapshots to S3 and a warm "
        "standby in a second region",
    )
    product, _, _ = store.store_fact("codebase", "Product search is served by Elasticsearch")
    ids = _ids(store, "deploy to production")
    assert ids.index(production.id) < ids.index(product.id)
    # Inflected forms are still the word as written: "deployed" for "deploy", "caching"/"cache".
    deployed, _, _ = store.store_fact("codebase", "Billing was deployed to the production cluster")
    assert _ids(store, "deploy to production")[0] == deployed.id


def test_a_stem_only_match_is_still_found(store: Store) -> None:
    _with_filler(store)
    product, _, _ = store.store_fact("codebase", "Product search is served by Elasticsearch")
    assert _ids(store, "production") == [product.id]


def test_inflections_count_as_written_and_derivations_as_stems() -> None:
    m = TermMatcher(terms_of("deploy the cache to production"))
    assert m.terms == ["deploy", "cache", "production"]
    assert m.credit("Deployed: caching is on in production.") == (1.0, 3)
    share, exact = m.credit("Product deployment")  # both only through their stems
    assert share == pytest.approx(2 * STEM_ONLY / 3) and exact == 0
    assert m.credit("Lunch at noon") == (0.0, 0)
    assert TermMatcher(terms_of("migrat*")).credit("the migrations ran") == (1.0, 1)


def test_a_match_the_text_does_not_show_still_scores(store: Store) -> None:
    f, _, _ = store.store_fact("preference", "Tabs over spaces")  # matched by its category
    store.store_fact("codebase", "lunch is at noon")
    hits = Recall(store, None).search("preference", 5, ["fact"], mode="keyword").hits
    assert [h.id for h in hits] == [f.id] and hits[0].score > 0
