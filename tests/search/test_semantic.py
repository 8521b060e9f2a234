"""Semantic recall with the real MiniLM on ONNX: background embedding, sqlite-vec, ranking."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastmcp import Client
from mcp_calls import call
from model_fixture import ready

from bigmind.config import Settings
from bigmind.mcp.server import build_server
from bigmind.memory import claims
from bigmind.memory.context import build_context
from bigmind.runtime import Runtime
from bigmind.search.ranking import Recall
from bigmind.search.vectors import VectorStore
from bigmind.storage.connect import open_database
from bigmind.storage.db import Backend
from bigmind.storage.store import Store

pytestmark = pytest.mark.anyio

FACTS = [
    ("preference", "The user prefers pytest for all Python tests"),
    ("codebase", "The database is PostgreSQL 16 with the pgvector extension"),
    ("decision", "Deployments go out through GitHub Actions on every merge to main"),
    ("preference", "Answers should be short and use bullet points"),
    ("bugfix", "The login flake came from a timezone bug in token expiry"),
]


def test_paraphrase_finds_fact_that_keywords_miss(sem_runtime: Runtime) -> None:
    for cat, text in FACTS:
        sem_runtime.store.store_fact(cat, text)
    sem = ready(sem_runtime)
    assert sem.status(counts=True).backlog == 0
    recall = sem_runtime.recall()
    for question, answer in [
        ("Which testing library do we use?", "pytest"),  # the example
        ("keep responses brief", "bullet points"),
        ("why did sign-in fail intermittently", "timezone bug"),
        ("which SQL server do we run", "PostgreSQL"),
    ]:
        hits = recall.search(question, 3, ["fact"], mode="semantic").hits
        assert answer in hits[0].text and "semantic #1" in hits[0].why, question
    # No word in common: keywords find nothing, hybrid recall still answers.
    assert recall.search("keep responses brief", 5, ["fact"], mode="keyword").hits == []
    assert "bullet" in recall.search("keep responses brief", 5, ["fact"]).hits[0].text
    both = sem_runtime.recall().search("where do we deploy from", 3).hits
    assert "GitHub Actions" in both[0].text


def test_vectors_are_backfilled_after_a_restart(sem_settings: Settings) -> None:
    plain = Runtime(sem_settings)  # no background work: writes get no vectors
    for cat, text in FACTS:
        plain.store.store_fact(cat, text)
    plain.store.append_chunk("We chose Redis streams for the job queue")
    plain.close()
    rt = Runtime(sem_settings, background=True)
    try:
        sem = ready(rt)
        assert sem.vectors.count() == {"fact": len(FACTS), "chunk": 1, "chunk_context": 1}
        hits = rt.recall().search("message broker for background jobs", 1, ["chunk"]).hits
        assert hits and "Redis" in hits[0].text
    finally:
        rt.close()


def test_every_kind_is_embedded_and_recalled(sem_runtime: Runtime) -> None:
    from bigmind.memory import journal, people

    store = sem_runtime.store
    s = store.start_session("vscode")
    store.end_session(
        s.session.id, "Moved CI to self-hosted runners", "ci", "done", "Runners on our own VMs"
    )
    journal.add(store, "The memory leak comes from the image cache", 0.6, None)
    people.remember(store, "dana", "Dana Lee", "SRE", None, ["kubernetes", "on-call"], None)
    store.db.query(
        "INSERT INTO global_knowledge(category, title, content, importance, status)"
        " VALUES ('standard', 'Code review', 'Every change needs one approving review', 7,"
        " 'approved')"
    )
    sem = ready(sem_runtime)
    assert set(sem.vectors.count()) == {"summary", "hypothesis", "person", "global"}
    recall = sem_runtime.recall()
    assert recall.search("who is on call for kubernetes", 1).hits[0].kind == "person"
    assert recall.search("RAM keeps growing because of pictures", 1).hits[0].kind == "hypothesis"
    assert recall.search("pull requests must be approved", 1).hits[0].kind == "global"
    top = recall.search("where do our CI jobs run", 1).hits[0]
    assert (top.kind, top.id) == ("summary", s.session.id)


def test_texts_that_change_are_embedded_again(sem_runtime: Runtime) -> None:
    from bigmind.memory import people

    people.remember(sem_runtime.store, "omar", None, "designer", None, None, None)
    sem = ready(sem_runtime)
    people.remember(sem_runtime.store, "omar", None, None, None, ["postgres query tuning"], None)
    ready(sem_runtime)
    hit = sem_runtime.recall().search("slow SQL queries expert", 1, ["person"], mode="semantic")
    assert hit.hits and "omar" in hit.hits[0].text
    assert sem.vectors.count() == {"person": 1}


def test_other_users_and_deprecated_facts_stay_out(sem_settings: Settings) -> None:
    rt = Runtime(sem_settings, background=True)
    bob = Store(rt.store.db, "bob")
    bob.store_fact("preference", "Bob prefers unittest over pytest")
    f, _c, _r = rt.store.store_fact("preference", "Alice writes tests with pytest")
    old, _c, _r = rt.store.store_fact("preference", "Alice used nose for tests in 2015")
    rt.store.deprecate_fact(old.id, "outdated")
    try:
        ready(rt)
        hits = rt.recall().search("test framework", 10, ["fact"]).hits
        assert [h.id for h in hits] == [f.id]
        shown = rt.recall().search("test framework", 10, ["fact"], include_deprecated=True).hits
        assert {h.id for h in shown} == {f.id, old.id}
        bob_recall = Recall(bob, rt.semantic).search("test framework", 10, ["fact"]).hits
        assert [h.text for h in bob_recall] == ["Bob prefers unittest over pytest"]
    finally:
        rt.close()


def test_usage_is_counted_and_shown(sem_runtime: Runtime) -> None:
    sem_runtime.store.append_chunk("Rate limits are 100 requests per minute per token")
    ready(sem_runtime)
    for query in ("API throttling quota", "request limits", "API throttling quota"):
        hits = sem_runtime.recall().search(query, 1).hits
        sem_runtime.used(query, hits)  # what the search tools do
    assert "recalled" not in hits[0].why  # counted, not written yet: the search wrote nothing
    sem_runtime.flush_usage()
    row = sem_runtime.store.db.query("SELECT access_count FROM memory_usage")
    assert row == [{"access_count": 2}]  # the repeated question counted once
    assert "recalled 2×" in sem_runtime.recall().search("API throttling quota", 1).hits[0].why


def test_duplicates_and_conflicts(sem_runtime: Runtime) -> None:
    store = sem_runtime.store
    first, _, _ = store.store_fact("preference", "The user prefers pytest for testing")
    sem = ready(sem_runtime)
    written = [
        store.store_fact(cat, text)[0]
        for cat, text in (
            ("preference", "For testing, the user prefers pytest"),
            ("codebase", "The project indents with tabs"),
            ("codebase", "The project indents with spaces"),
            ("decision", "We deploy on Fridays"),
            ("decision", "We never deploy on Fridays"),
        )
    ]
    again, tabs, spaces, deploy, never = (f.id for f in written)
    ready(sem_runtime)  # the write woke the background check
    told = sem_runtime.notices()
    assert any(f"Merged duplicate fact #{first.id} into #{again}" in t for t in told)
    assert any(f"Fact #{spaces}" in t and f"conflicts with #{tabs}" in t for t in told)
    # A negation is a conflict, not a duplicate.
    assert any(f"Fact #{never}" in t and f"conflicts with #{deploy}" in t for t in told)
    assert len(told) == 3 and store.facts.unchecked(10) == []
    assert sem.vectors.count()["fact"] == 6
    assert claims.same_claims("Uses Python 3.11", "uses python 3.11.") is True
    assert claims.same_claims("Uses Python 3.11", "Uses Python 3.12") is False


def test_model_change_is_detected_and_reindex_recovers(sem_settings: Settings) -> None:
    backend = open_database(sem_settings)
    store = Store(backend, "alice")
    store.store_fact("preference", "The user prefers pytest for all Python tests")
    VectorStore(backend.maintenance()).adopt("some-older-model", 384)
    backend.close()
    rt = Runtime(sem_settings, background=True)
    try:
        sem = rt.semantic
        assert sem is not None and sem.wait_idle(60)
        status = sem.status()
        assert status.state == "stale-model" and "bigmind reindex" in status.detail
        found = rt.recall().search("pytest", 5)
        assert found.hits and "keyword results only" in found.note  # search keeps working
        seen: list[tuple[int, int]] = []
        assert sem.reindex(lambda done, total: seen.append((done, total))) == 1
        assert seen[-1] == (1, 1) and sem.ready
        assert rt.recall().search("testing library", 1, mode="semantic").hits
    finally:
        rt.close()


def test_until_the_model_loads_search_falls_back_and_says_so(db_path: Path) -> None:
    missing = Settings(db_path=db_path, user="alice", embed_model="no-such-model")
    rt = Runtime(missing, background=True)
    try:
        rt.store.store_fact("preference", "The user prefers pytest")
        sem = rt.semantic
        assert sem is not None and sem.wait_idle(30)
        found = rt.recall().search("pytest", 5, mode="semantic")
        assert [h.text for h in found.hits] == ["The user prefers pytest"]
        assert "bigmind model export" in found.note and "keyword results only" in found.note
    finally:
        rt.close()


def test_a_reply_is_found_through_the_question_before_it(sem_runtime: Runtime) -> None:
    store = sem_runtime.store
    sid = store.start_session("test").session.id
    store.append_chunk("Which message broker should the billing service use?", sid, "user")
    reply, _ref = store.append_chunk("Go with RabbitMQ, we already run it.", sid, "assistant")
    store.append_chunk("Unrelated: the logo needs a darker blue.", sid, "user")
    sem = ready(sem_runtime)
    text = sem.vectors.pending("chunk_context", 10)  # all embedded: nothing pending
    assert text == []
    row = store.db.query(
        "SELECT e.item_id FROM embeddings e WHERE e.kind = 'chunk_context'"
        " ORDER BY CAST(e.item_id AS INTEGER)"
    )
    assert [r["item_id"] for r in row] == [str(i) for i in range(1, 4)]
    q = sem.embed_query("billing queue technology")
    alone = sem.vectors.similarity("chunk", [str(reply.id)], q)[str(reply.id)]
    in_context = sem.vectors.similarity("chunk_context", [str(reply.id)], q)[str(reply.id)]
    assert in_context > alone + 0.1
    hits = sem_runtime.recall().search("billing queue technology", 3, ["chunk"], mode="semantic")
    top = hits.hits[0]
    assert top.id in (reply.id, reply.id - 1) and f"{in_context:.2f}" in " ".join(
        h.why for h in hits.hits
    )


def test_in_memory_search_agrees_with_the_database(sem_runtime: Runtime) -> None:
    words = ["pytest", "docker", "kafka", "redis", "nginx", "celery", "grafana", "terraform"]
    for i in range(80):
        sem_runtime.store.append_chunk(f"note {i}: we tuned {words[i % 8]} for service {i % 5}")
    sem = ready(sem_runtime)
    uid = sem_runtime.store.uid
    q = sem.embed_query("message queue streaming")
    exact = sem.vectors._sql_knn("chunk", uid, q, 10)  # sqlite-vec / pgvector
    item = {
        int(r["id"]): r["item_id"]
        for r in sem_runtime.store.db.query("SELECT id, item_id FROM embeddings")
    }
    got = sem.vectors.knn("chunk", uid, q, 10)
    assert [n.item_id for n in got][:5] == [item[rid] for rid, _ in exact][:5]
    for n, (_rid, sim) in zip(got, exact, strict=True):  # int8 codes: cosine within 0.01
        assert abs(n.similarity - sim) < 0.01


def test_focus_brings_relevant_facts_first(sem_runtime: Runtime) -> None:
    for i in range(30):
        sem_runtime.store.store_fact("codebase", f"Module m{i} formats dates as ISO strings", 1.0)
    sem_runtime.store.store_fact("constraint", "Schema migrations must be reversible", 0.9, None, 3)
    ready(sem_runtime)
    plain = build_context(sem_runtime.store)
    assert "reversible" not in plain.text.split("### 📅")[0].split("\n- ")[1]
    packet = build_context(
        sem_runtime.store, focus="write a database migration", recall=sem_runtime.recall()
    )
    first_fact = packet.text.split("### 🗂️ Stored facts")[1].split("\n")[1]
    assert "reversible" in first_fact
    assert packet.tokens <= 1300


async def test_mcp_tools_recall_and_semantic(sem_settings: Settings) -> None:
    rt = Runtime(sem_settings, background=True)
    async with Client(build_server(sem_settings, rt)) as client:
        text, data = await call(client, "memory_start_session", focus="set up the test suite")
        for cat, fact in FACTS:
            await call(client, "memory_store_fact", category=cat, fact=fact)
        ready(rt)
        text, data = await call(
            client, "memory_search_semantic", query="Which testing library do we use?", limit=2
        )
        assert "pytest" in data["results"][0]["text"] and data["note"] is None
        text, data = await call(client, "memory_recall", query="how do releases ship", kinds="fact")
        assert "GitHub Actions" in data["results"][0]["text"] and "why:" in text
        text, data = await call(
            client,
            "memory_store_fact",
            category="preference",
            fact="The user prefers pytest for all of the Python tests",
        )
        assert data["created"] is True  # checked by meaning in the background
        ready(rt)
        text, _ = await call(client, "memory_get_context")
        assert f"Merged duplicate fact #1 into #{data['fact_id']}" in text  # newer wording
    rt.close()


def test_vec_tables_live_in_the_database_file(sem_runtime: Runtime, backend: Backend) -> None:
    sem_runtime.store.store_fact("preference", "Tabs over spaces")
    ready(sem_runtime)
    for name in ("vec_fact", "vec_chunk", "vec_summary", "embeddings"):
        assert backend.table_exists(name), name
    row = backend.query("SELECT model, dim FROM embeddings")[0]
    assert row == {"model": "all-MiniLM-L6-v2-int8", "dim": 384}


def test_vacuum_deletes_the_vectors_of_deleted_chunks(sem_runtime: Runtime) -> None:
    from bigmind.memory import maintenance

    store = sem_runtime.store
    old, _ref = store.append_chunk("An old exchange about CSS grid layouts")
    store.append_chunk("A new exchange about Kafka consumer groups")
    sem = ready(sem_runtime)
    store.db.query(
        "UPDATE conversation_chunks SET created_at = '2020-01-01 00:00:00' WHERE id = ?", (old.id,)
    )
    assert maintenance.vacuum(store, 30) == 1
    assert sem.vectors.count() == {"chunk": 1, "chunk_context": 1}
    for table in ("vec_chunk", "vec_chunk_context"):
        assert store.db.query(f"SELECT count(*) AS n FROM {table}")[0]["n"] == 1
    hits = sem_runtime.recall().search("page layout styling", 5, ["chunk"], mode="semantic").hits
    assert [h.id for h in hits if h.id == old.id] == []


async def test_health_and_stats_report_the_semantic_index(sem_settings: Settings) -> None:
    rt = Runtime(sem_settings, background=True)
    async with Client(build_server(sem_settings, rt)) as client:
        await call(client, "memory_store_fact", category="preference", fact="Tabs over spaces")
        ready(rt)
        text, data = await call(client, "memory_health_check")
        check = next(c for c in data["checks"] if c["name"] == "semantic index")
        assert check["ok"] and "ready: all-MiniLM-L6-v2-int8 (384 d); 1 vectors, 0 waiting" in text
        _text, data = await call(client, "memory_get_stats")
        assert data["semantic"]["vectors"] == 1 and data["semantic"]["state"] == "ready"
    rt.close()


async def test_store_fact_says_when_only_the_exact_check_ran(db_path: Path) -> None:
    missing = Settings(db_path=db_path, user="alice", embed_model="no-such-model")
    rt = Runtime(missing, background=True)
    async with Client(build_server(missing, rt)) as client:
        await call(client, "memory_get_stats")  # opens the store; the model load fails
        assert rt.semantic is not None and rt.semantic.wait_idle(30)
        text, data = await call(client, "memory_store_fact", category="x", fact="Prefers tabs")
        assert data["created"] and "Only an exact-repeat check ran: semantic search error" in text
    rt.close()


def test_a_second_process_sees_new_and_replaced_vectors(sem_runtime: Runtime) -> None:
    """Two VectorStores on one file stand for two server processes (two IDE windows)."""
    from bigmind.memory import people

    store = sem_runtime.store
    store.append_chunk("The staging cluster runs on three ARM nodes")
    people.remember(store, "lee", None, "frontend developer", None, None, None)
    sem = ready(sem_runtime)
    opened = open_database(sem_runtime.settings)
    other = VectorStore(opened.maintenance())  # the server's embedder reads every user's
    q = sem.embed_query("kubernetes nodes for staging")
    assert len(other.knn("chunk", store.uid, q, 5)) == 1  # loads its own in-memory copy
    store.append_chunk("Production runs on six x86 nodes in two zones")
    people.remember(store, "lee", None, None, None, ["kubernetes operators"], None)
    ready(sem_runtime)
    assert len(other.knn("chunk", store.uid, q, 5)) == 2  # caught up by rowid
    who = other.knn("person", "", sem.embed_query("kubernetes operator expert"), 1)
    mine = sem.vectors.knn("person", "", sem.embed_query("kubernetes operator expert"), 1)
    assert who[0].item_id == mine[0].item_id and abs(who[0].similarity - mine[0].similarity) < 1e-6
    opened.close()


def test_a_big_partition_is_searched_in_sqlite_vec_until_loaded_in_background(
    sem_runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    from bigmind.search import vectors

    for text in ("Kafka consumer lag alerts", "CSS grid layout", "Postgres vacuum tuning"):
        sem_runtime.store.append_chunk(text)
    sem = ready(sem_runtime)
    monkeypatch.setattr(vectors, "LOAD_ON_DEMAND_MAX", 0)  # every partition counts as big
    fresh = VectorStore(sem_runtime.store.db)
    q = sem.embed_query("message streaming backlog")
    first = fresh.knn("chunk", sem_runtime.store.uid, q, 3)  # exact KNN in sqlite-vec
    assert first[0].item_id == "1"
    for _ in range(200):
        if ("chunk", sem_runtime.store.uid) in fresh._parts:
            break
        time.sleep(0.02)
    later = fresh.knn("chunk", sem_runtime.store.uid, q, 3)  # now from memory
    assert [n.item_id for n in later] == [n.item_id for n in first]


def test_a_hybrid_recall_costs_at_most_twenty_statements(sem_runtime: Runtime) -> None:
    """Every kind searched by keywords and by vectors, the model loaded: the vectors' freshness
    is read once per search, not once per kind (each statement is a round trip on PostgreSQL)."""
    from bigmind.memory import journal, people

    store = sem_runtime.store
    for cat, text in FACTS:
        store.store_fact(cat, text)
    s = store.start_session("vscode")
    store.append_chunk("We moved the deploys to GitHub Actions runners", s.session.id)
    store.append_chunk("Yes, and the tests run there too", s.session.id)
    store.end_session(s.session.id, "CI on runners", "ci", "done", "Deploys and tests on runners")
    journal.add(store, "Deploys fail when the runner cache is cold", 0.6, None)
    people.remember(store, "dana", "Dana Lee", "SRE", None, ["deploys", "on-call"], None)
    sem = ready(sem_runtime)
    sem.stop()  # the background thread stops; the loaded model still answers
    recall = sem_runtime.recall()
    db = store.db
    for query in ("how do deploys run", "how do deploys run", "which tests run on runners"):
        before = db.statements
        found = recall.search(query, 10)
        assert found.hits and not found.note
        assert {h.kind for h in found.hits} >= {"fact", "chunk", "summary"}
        assert db.statements - before <= 20, (query, db.statements - before)
