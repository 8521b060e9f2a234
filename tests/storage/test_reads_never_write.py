"""A tool marked read-only (and a GET of the REST API) commits nothing, on either backend; usage is counted off the read path.

The database itself is the witness: SQLite's ``PRAGMA data_version`` seen from a second
connection changes whenever another connection commits; on PostgreSQL every inserted or
updated row gets a new ``xmin`` and deletes change the counts. The backend's own count of
write transactions must not move either (an empty write transaction still takes the lock).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import apsw
import pytest
from fastmcp import Client
from mcp_calls import Cli, call, end
from rest_client import api_as

from bigmind import runtime as runtime_module
from bigmind.config import Settings
from bigmind.mcp.server import build_server
from bigmind.memory import globalkb
from bigmind.runtime import Runtime
from bigmind.storage.db import Backend
from bigmind.web import rest

pytestmark = pytest.mark.anyio


def _witness(settings: Settings) -> Callable[[], object]:
    """A function returning something that changes whenever any row of the database changes."""
    if settings.db_url is None:
        conn = apsw.Connection(str(settings.db_path))
        return lambda: conn.execute("PRAGMA data_version").fetchone()

    import psycopg

    def fingerprint() -> object:
        with psycopg.connect(settings.db_url, autocommit=True) as pg:
            # Every user's rows: the maintenance scope of the tables' owner (pgpolicies).
            pg.execute("SELECT set_config('bigmind.maintenance', 'on', false)")
            tables = [
                r[0]
                for r in pg.execute(
                    "SELECT tablename FROM pg_tables WHERE schemaname = 'public' ORDER BY 1"
                )
            ]
            return {
                t: pg.execute(f"SELECT count(*), max(xmin::text::bigint) FROM {t}").fetchone()
                for t in tables
            }

    return fingerprint


@contextmanager
def _commits_nothing(version: Callable[[], object], db: Backend, what: str) -> Iterator[None]:
    """The block changes no row and begins no write transaction."""
    before, tx_before = version(), db.transactions
    yield
    assert version() == before, f"{what} changed the database"
    assert db.transactions == tx_before, f"{what} began a write transaction"


async def _seed(client: Cli) -> dict[str, Any]:
    """A little of everything, through the tools, so every read has something to read."""
    _, s = await call(client, "memory_start_session", ide_hint="tests")
    sid = s["session_id"]
    _, fact = await call(
        client, "memory_store_fact", category="decision", fact="Payments use Kafka"
    )
    await call(client, "memory_append_chunk", content="We chose Kafka for payments events")
    await call(
        client, "memory_flag_important", content="Kafka retention is 7 days", flag_reason="ops"
    )
    await call(client, "memory_add_hypothesis", hypothesis="Kafka lag causes the payment delay")
    await call(client, "memory_remind", text="Check the Kafka lag", when="2020-01-01")
    await call(client, "memory_remind", text="Rerun the payments consumer")
    # A failed approach the reads below come close to: their warning reads it, writes nothing.
    await call(
        client,
        "memory_record_attempt",
        approach="Raise the Kafka partitions for payments",
        outcome="failed",
        why="ordering broke",
    )
    await call(client, "memory_remember_person", username="dana", role="SRE", expertise=["kafka"])
    await call(
        client,
        "memory_promote_to_global",
        title="Event bus",
        content="Kafka carries payment events",
        category="architecture",
    )
    await call(
        client,
        "memory_announce_focus",
        session_id=sid,
        description="payments consumer",
        files=["pay.py"],
    )
    await end(client, sid, "Chose Kafka", summary="Kafka for payments", topics=["kafka"])
    return {"session": sid, "fact": fact["fact_id"]}


def _arguments(seeded: dict[str, Any]) -> dict[str, dict[str, Any]]:
    q = {"query": "kafka payments"}
    return {
        "memory_get_context": {},
        "memory_get_session_detail": {"session_id": seeded["session"]},
        "memory_list_sessions": {},
        "memory_recall": q,
        "memory_search_semantic": q,
        "memory_search_facts": q,
        "memory_search_chunks": q,
        "memory_search_global": q,
        "memory_list_global": {},
        "memory_list_hypotheses": {},
        "memory_scan_hypotheses": {},
        "memory_recall_person": {"query": "kafka"},
        "memory_list_people": {},
        "memory_who_knows": {"topic": "kafka"},
        "memory_get_active_sessions": {},
        "memory_diff_sessions": {"since_session_id": seeded["session"]},
        "memory_get_stats": {},
        "memory_get_instructions": {},
        "memory_health_check": {},
        "memory_get_profile_url": {},
        "memory_open_profile": {},
    }


async def test_read_only_tools_commit_nothing(
    client: Client,  # type: ignore[type-arg]
    runtime: Runtime,
    settings: Settings,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)  # memory_open_profile: no browser to start
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    seeded = await _seed(client)
    args = _arguments(seeded)
    tools = await client.list_tools()
    read_only = sorted(
        t.name for t in tools if t.annotations is not None and t.annotations.read_only_hint
    )
    assert set(read_only) == set(args), "give every read-only tool arguments here"
    version = _witness(settings)
    db = runtime.store.db
    for name in read_only:
        for _ in range(2):  # the second call also meets whatever the first one cached
            with _commits_nothing(version, db, name):
                await client.call_tool(name, args[name])


async def test_reading_a_resource_commits_nothing(
    client: Client,  # type: ignore[type-arg]
    runtime: Runtime,
    settings: Settings,
) -> None:
    seeded = await _seed(client)
    uris = {
        "bigmind://context": "bigmind://context",
        "bigmind://sessions/{session_id}": f"bigmind://sessions/{seeded['session']}",
        "bigmind://facts/{fact_id}": f"bigmind://facts/{seeded['fact']}",
    }
    listed = [str(r.uri) for r in await client.list_resources()]
    listed += [t.uri_template for t in await client.list_resource_templates()]
    assert set(listed) == set(uris), "give every resource a URI to read here"
    version = _witness(settings)
    db = runtime.store.db
    for uri in uris.values():
        for _ in range(2):
            with _commits_nothing(version, db, f"reading {uri}"):
                await client.read_resource(uri)
    assert runtime.flush_usage() == 0  # no use was counted either


async def test_the_rest_apis_get_endpoints_commit_nothing(
    client: Client,  # type: ignore[type-arg]
    runtime: Runtime,
    settings: Settings,
) -> None:
    seeded = await _seed(client)
    entry = globalkb.list_entries(runtime.store)[0][0].id
    paths = {
        "/recall": "/recall?q=kafka%20payments%20pay.py",
        "/facts/search": "/facts/search?q=kafka&include_deprecated=true",
        "/facts": "/facts?status=all",
        "/facts/{fact_id}": f"/facts/{seeded['fact']}",
        "/sessions": "/sessions",
        "/sessions/{session_id}": f"/sessions/{seeded['session']}",
        "/global": "/global",
        "/global/search": "/global/search?q=event%20bus",
        "/global/{entry_id}": f"/global/{entry}",
        "/directory": "/directory?topic=kafka",
        "/openapi.json": "/openapi.json",
    }
    gets = {e.path for e in rest.endpoints(runtime) if e.method == "GET"} | {"/openapi.json"}
    assert gets == set(paths), "give every GET endpoint a path here"
    version = _witness(settings)
    db = runtime.store.db
    with api_as(runtime, "alice") as api:
        for path in [*paths.values(), "/directory"]:
            for _ in range(2):
                with _commits_nothing(version, db, f"GET {path}"):
                    assert api.get(path).status_code == 200, path


async def test_a_use_is_the_top_of_an_agents_search_counted_once_per_question(
    client: Client,  # type: ignore[type-arg]
    runtime: Runtime,
) -> None:
    await _seed(client)
    _, data = await call(client, "memory_search_facts", query="kafka payments")
    fact = data["results"][0]["id"]
    for _ in range(3):  # the same question again is not a new use
        await call(client, "memory_search_facts", query="Kafka   payments")
    await call(client, "memory_recall", query="which event bus for payments")
    await call(client, "memory_get_context")  # shown in the packet: not a use
    assert runtime.store.get_fact(fact).access_count == 0  # nothing written yet
    assert runtime.flush_usage() > 0
    assert runtime.store.get_fact(fact).access_count == 2
    usage = runtime.store.db.query("SELECT kind, access_count FROM memory_usage ORDER BY kind")
    assert usage and all(u["access_count"] >= 1 for u in usage)
    assert runtime.flush_usage() == 0  # nothing left to write
    _, again = await call(client, "memory_search_facts", query="kafka")
    shown = next(h for h in again["results"] if h["id"] == fact)
    assert "recalled 2×" in shown["why"]


async def test_uses_are_written_by_the_background_flusher_and_at_close(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(runtime_module, "FLUSH_AFTER_S", 0.05)
    rt = Runtime(settings.model_copy(update={"embed_model": "off", "web": False}), background=True)
    try:
        async with Client(build_server(rt.settings, rt)) as client:
            await call(client, "memory_store_fact", category="decision", fact="Use ruff to lint")
            await call(client, "memory_search_facts", query="lint")
            deadline = time.monotonic() + 30  # bounded wait for the flusher; no timing asserted
            while rt.store.db.query("SELECT access_count FROM facts")[0]["access_count"] == 0:
                assert time.monotonic() < deadline, "the flusher never wrote the use"
                time.sleep(0.02)
            monkeypatch.setattr(runtime_module, "FLUSH_AFTER_S", 3600.0)
            await call(client, "memory_search_facts", query="ruff lint")
    finally:
        rt.close()  # writes the second use
    reopened = Runtime(settings)
    try:
        assert reopened.store.db.query("SELECT access_count FROM facts")[0]["access_count"] == 2
    finally:
        reopened.close()


def test_the_witness_sees_a_write(settings: Settings, runtime: Runtime, tmp_path: Path) -> None:
    """The test above can fail: a plain write changes what the witness reads."""
    runtime.store.store_fact("decision", "Witness check")
    version = _witness(settings)
    before = version()
    runtime.store.store_fact("decision", "Another write")
    assert version() != before
