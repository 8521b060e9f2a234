"""memory_update_fact through a real MCP client: a correction in place, its history, a restore,
the duplicate guard, full-text and vectors following the new words."""

from __future__ import annotations

import pytest
from fastmcp import Client
from mcp_calls import Cli, call, refused
from model_fixture import ready

from bigmind.mcp.server import build_server
from bigmind.memory import correct
from bigmind.models import content_hash
from bigmind.runtime import Runtime
from bigmind.search.vectors import fact_embedding_text
from bigmind.storage.db import Backend

pytestmark = pytest.mark.anyio


def fact_row(db: Backend, fact_id: int) -> dict[str, object]:
    return db.query(
        "SELECT fact, category, importance, content_hash FROM facts WHERE id = ?", (fact_id,)
    )[0]


def history_rows(db: Backend, fact_id: int) -> list[dict[str, object]]:
    return db.query(
        "SELECT version, fact, reason FROM fact_history WHERE fact_id = ? ORDER BY version",
        (fact_id,),
    )


async def found_ids(client: Cli, query: str) -> list[int]:
    _, data = await call(client, "memory_search_facts", query=query)
    return [r["id"] for r in data["results"]]


async def test_a_correction_keeps_history_and_is_restorable(client: Cli, runtime: Runtime) -> None:
    db = runtime.store.db
    _, s = await call(client, "memory_start_session")
    _, f = await call(
        client, "memory_store_fact", category="decision", fact="Payments publish events to Kafka"
    )
    fid = f["fact_id"]
    text, data = await call(
        client,
        "memory_update_fact",
        fact_id=fid,
        fact="Payments publish events to RabbitMQ",
        reason="we moved off Kafka in May",
    )
    assert f"Updated fact #{fid} (fact); version 1 is kept" in text
    assert data["changed"] == ["fact"] and data["replaced_version"] == 1
    row = fact_row(db, fid)
    assert row["fact"] == "Payments publish events to RabbitMQ"
    assert row["content_hash"] == content_hash("Payments publish events to RabbitMQ")
    # The full-text index follows the new words and forgets the old ones.
    assert await found_ids(client, "RabbitMQ") == [fid]
    assert fid not in await found_ids(client, "Kafka")
    # Its provenance: the versions, with when and why.
    text, data = await call(client, "memory_update_fact", fact_id=fid)
    assert "version 2" in text and "v1 [decision]" in text
    assert "we moved off Kafka in May: Payments publish events to Kafka" in text
    assert [v["fact"] for v in data["versions"]] == ["Payments publish events to Kafka"]
    # A second correction (importance only), then version 1 back.
    _, data = await call(client, "memory_update_fact", fact_id=fid, importance=9)
    assert data["changed"] == ["importance"] and fact_row(db, fid)["importance"] == 9
    text, data = await call(client, "memory_update_fact", fact_id=fid, restore_version=1)
    assert (
        "restored version 1" in text and data["fact"]["fact"] == "Payments publish events to Kafka"
    )
    assert fact_row(db, fid)["importance"] == 5
    assert [(h["version"], h["reason"]) for h in history_rows(db, fid)] == [
        (1, "we moved off Kafka in May"),
        (2, None),
        (3, "restored version 1"),
    ]
    assert await found_ids(client, "Kafka") == [fid] and fid not in await found_ids(
        client, "RabbitMQ"
    )
    # The restored text is this fact's again: storing it once more finds it.
    _, again = await call(
        client, "memory_store_fact", category="decision", fact="payments publish events to kafka."
    )
    assert again["fact_id"] == fid and again["created"] is False
    # The diff since the session names the correction.
    text, data = await call(client, "memory_diff_sessions", since_session_id=s["session_id"])
    assert data["counts"]["Corrected facts"] == 3 and f"#{fid} now: Payments publish" in text


async def test_nothing_to_change_and_bad_versions(client: Cli, runtime: Runtime) -> None:
    _, f = await call(client, "memory_store_fact", category="codebase", fact="The API uses gRPC")
    fid = f["fact_id"]
    text, data = await call(client, "memory_update_fact", fact_id=fid, fact="The API uses gRPC")
    assert "already says that; nothing changed" in text and data["changed"] == []
    text, data = await call(client, "memory_update_fact", fact_id=fid)
    assert "never corrected" in text and data["versions"] == []
    msg = await refused(client, "memory_update_fact", fact_id=fid, restore_version=4)
    assert f"Fact #{fid} has no version 4" in msg
    msg = await refused(client, "memory_update_fact", fact_id=fid, restore_version=1, fact="x")
    assert "restore_version alone" in msg
    msg = await refused(client, "memory_update_fact", fact_id=fid, category="Not A Category!")
    assert "category" in msg
    msg = await refused(client, "memory_update_fact", fact_id=987_654, fact="x")
    assert "No fact #987654" in msg
    assert history_rows(runtime.store.db, fid) == []


async def test_a_correction_may_not_duplicate_an_active_fact(client: Cli, runtime: Runtime) -> None:
    _, a = await call(client, "memory_store_fact", category="tooling", fact="CI runs on Jenkins")
    _, b = await call(
        client, "memory_store_fact", category="tooling", fact="CI runs on GitHub Actions"
    )
    msg = await refused(
        client, "memory_update_fact", fact_id=a["fact_id"], fact="ci runs on github actions."
    )
    assert f"Fact #{b['fact_id']} already says this" in msg and "Nothing changed" in msg
    assert fact_row(runtime.store.db, a["fact_id"])["fact"] == "CI runs on Jenkins"
    assert history_rows(runtime.store.db, a["fact_id"]) == []
    # A deprecated fact is no rival: it may say anything (restoring it is what is guarded).
    await call(client, "memory_deprecate_fact", fact_id=a["fact_id"], reason="gone")
    await call(client, "memory_update_fact", fact_id=a["fact_id"], fact="CI runs on GitHub Actions")
    with pytest.raises(Exception, match="would duplicate it"):
        runtime.store.restore_fact(a["fact_id"])


# -- vectors ---------------------------------------------------------------------------------------
def vector_hash(db: Backend, fact_id: int) -> str | None:
    rows = db.query(
        "SELECT content_hash FROM embeddings WHERE kind = 'fact' AND item_id = ?", (str(fact_id),)
    )
    return str(rows[0]["content_hash"]) if rows else None


def embedded(category: str, text: str) -> str:
    return content_hash(fact_embedding_text(category, text))


async def test_a_corrected_fact_is_embedded_again(sem_runtime: Runtime) -> None:
    store = sem_runtime.store
    first, _, _ = store.store_fact("codebase", "The cache is Redis with a one hour TTL")
    other, _, _ = store.store_fact("preference", "Reviews happen before noon")
    sem = ready(sem_runtime)
    assert vector_hash(store.db, first.id) == embedded("codebase", first.fact)
    # Corrected where no model runs (the CLI, the profile page): the old vector goes at once…
    correct.update_fact(store, None, first.id, fact="The cache is Memcached, no expiry")
    assert vector_hash(store.db, first.id) is None
    hits = sem.vectors.knn("fact", store.uid, sem.embed_query("Redis one hour TTL"), 5)
    assert str(first.id) not in [h.item_id for h in hits]
    # …and the background embedder makes the new one, though the fact's id is behind its scan.
    assert ready(sem_runtime)
    assert vector_hash(store.db, first.id) == embedded(
        "codebase", "The cache is Memcached, no expiry"
    )
    assert vector_hash(store.db, other.id) == embedded("preference", other.fact)
    # Through the tool, with the model ready: the new vector is written with the correction.
    async with Client(build_server(sem_runtime.settings, sem_runtime)) as client:
        text, _ = await call(
            client,
            "memory_update_fact",
            fact_id=other.id,
            category="process",
            fact="Reviews happen after lunch",
        )
        assert "version 1 is kept" in text
        assert vector_hash(store.db, other.id) == embedded("process", "Reviews happen after lunch")
        _, data = await call(
            client, "memory_search_semantic", query="when are code reviews done?", kinds="fact"
        )
        assert data["results"][0]["id"] == other.id


async def test_a_paraphrase_of_another_fact_is_refused(sem_runtime: Runtime) -> None:
    store = sem_runtime.store
    a, _, _ = store.store_fact("preference", "The user prefers pytest for all Python tests")
    b, _, _ = store.store_fact("preference", "Deploys go out on Tuesdays")
    sem = ready(sem_runtime)
    with pytest.raises(Exception, match=rf"Fact #{a.id} already says this in other words"):
        correct.update_fact(
            store, sem, b.id, fact="The user prefers pytest for all of the Python tests"
        )
    assert store.get_fact(b.id).fact == "Deploys go out on Tuesdays"
