"""Contradictions in plain sight, and dedup that does not depend on timing (real MiniLM, both
backends, through a real MCP client where tools are involved).

- Conflicting facts are linked and shown together, marked ⚠️, newest first, with the call that
  settles them: in memory_get_context, memory_recall, memory_search_facts and the facts page.
- A fact that says it updates another is linked to it, never hides it: the older is marked
  "updated by" and comes after the newer in search; the packet shows the newer alone.
- A paraphrase written before the model is ready is merged once it is, and the merge is told
  in the next reply and in memory_diff_sessions.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from fastmcp import Client
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp_calls import BIGMIND, Cli, call
from model_fixture import ready
from starlette.testclient import TestClient

from bigmind.config import Settings
from bigmind.mcp.server import build_server
from bigmind.memory import dedup, gotchas
from bigmind.runtime import Runtime
from bigmind.search.embedder import Embedder, load_embedder
from bigmind.search.semantic import Semantic
from bigmind.service import pages as webdata
from bigmind.storage.connect import open_database
from bigmind.storage.db import SQLiteBackend
from bigmind.storage.migrations import MIGRATIONS, migrate
from bigmind.storage.store import Store
from bigmind.web.profile_app import create_app

pytestmark = pytest.mark.anyio

KAFKA = "The payments service uses Kafka"
RABBIT = "The payments service uses RabbitMQ, not Kafka"
PG14 = "The alpha database runs PostgreSQL 14"
PG16 = "We upgraded the alpha database to PostgreSQL 16"
PYTEST = "The user prefers pytest for all Python tests"
PYTEST_AGAIN = "For Python testing the user wants pytest"


def by_id(results: list[dict[str, Any]]) -> dict[int, dict[str, Any]]:
    return {int(r["id"]): r for r in results}


async def store(client: Cli, fact: str, category: str = "codebase", **more: Any) -> int:
    _, data = await call(client, "memory_store_fact", category=category, fact=fact, **more)
    return int(data["fact_id"])


# -- conflicts, shown together ------------------------------------------------------------------
async def test_rivals_are_shown_together_wherever_a_fact_is_shown(sem_runtime: Runtime) -> None:
    rt = sem_runtime
    async with Client(build_server(rt.settings, rt)) as client:
        await call(client, "memory_start_session")
        ready(rt)
        kafka = await store(client, KAFKA)
        rabbit = await store(client, RABBIT)
        ready(rt)  # checked in the background; told in the next reply
        packet, _ = await call(client, "memory_get_context")
        assert f"⚠️ Fact #{rabbit}" in packet and f"conflicts with #{kafka}" in packet
        assert f"memory_deprecate_fact({kafka}," in packet and "memory_update_fact" in packet
        assert KAFKA in packet and RABBIT in packet
        assert f"⚠️ conflicts with #{rabbit} (newer" in packet  # under the older fact
        assert f"⚠️ conflicts with #{kafka} (older" in packet  # under the newer one

        for tool in ("memory_recall", "memory_search_facts"):
            text, data = await call(client, tool, query="which message broker do payments use")
            hits = by_id(data["results"])
            assert {kafka, rabbit} <= set(hits), tool
            assert [r["fact_id"] for r in hits[kafka]["rivals"]] == [rabbit]
            assert [r["fact_id"] for r in hits[rabbit]["rivals"]] == [kafka]
            assert hits[kafka]["rivals"][0]["relation"] == "conflicts"
            assert f"⚠️ conflicts with #{rabbit} (newer" in text
            assert f'memory_deprecate_fact({kafka}, reason="superseded by #{rabbit}")' in text

        rows = {r.fact.id: r for r in webdata.facts(rt.store, rt.recall()).rows.items}
        (rival,) = rows[kafka].rivals
        assert (rival.fact_id, rival.warning, rival.newer) == (rabbit, True, True)
        with TestClient(create_app(rt), base_url="http://127.0.0.1:7700") as web:
            page = web.get("/facts").text
        assert page.count('class="rival conflict"') == 2  # under each of the two
        assert f'⚠️ conflicts with <a href="#fact-{rabbit}">#{rabbit}</a> (newer' in page
        assert f"memory_deprecate_fact({kafka}, reason=&#34;superseded by #{rabbit}&#34;)" in page

        # Settled: the older one deprecated, no rival is shown any more.
        await call(client, "memory_deprecate_fact", fact_id=kafka, reason="moved to RabbitMQ")
        packet, _ = await call(client, "memory_get_context")
        assert "⚠️" not in packet and KAFKA not in packet
        _, data = await call(client, "memory_search_facts", query="payments message broker")
        assert all(not r["rivals"] for r in data["results"])


async def test_several_rivals_come_newest_first(sem_runtime: Runtime) -> None:
    rt = sem_runtime
    async with Client(build_server(rt.settings, rt)) as client:
        ready(rt)
        ids = [await store(client, f"The session timeout is {m} minutes") for m in (30, 15, 60)]
        ready(rt)
        _, data = await call(client, "memory_search_facts", query="session timeout minutes")
        hits = by_id(data["results"])
        assert [r["fact_id"] for r in hits[ids[0]]["rivals"]] == [ids[2], ids[1]]
        assert [r["fact_id"] for r in hits[ids[2]]["rivals"]] == [ids[1], ids[0]]


# -- supersedes -----------------------------------------------------------------------------------
async def test_a_fact_that_says_it_updates_another_marks_it_and_comes_first(
    sem_runtime: Runtime,
) -> None:
    rt = sem_runtime
    async with Client(build_server(rt.settings, rt)) as client:
        ready(rt)
        old = await store(client, PG14)
        new = await store(client, PG16)
        ready(rt)
        packet, _ = await call(client, "memory_get_context")
        assert f"Fact #{new} looks like an update of #{old}" in packet  # told once
        packet, _ = await call(client, "memory_get_context")
        assert PG16 in packet and PG14 not in packet  # one line for the pair
        assert f"↪️ updates #{old}" in packet
        text, data = await call(
            client, "memory_search_facts", query="alpha database PostgreSQL version"
        )
        assert [r["id"] for r in data["results"]] == [new, old]  # what is current first
        hits = by_id(data["results"])
        assert not hits[old]["deprecated"]  # a guess never hides a fact
        assert hits[old]["rivals"][0]["relation"] == "superseded_by"
        assert f"↪️ updated by #{new}" in text and f"updated by #{new}" in hits[old]["why"]
        # A search that finds only the older brings its update along, first.
        _, data = await call(client, "memory_search_facts", query="PostgreSQL 14", limit=1)
        assert [r["id"] for r in data["results"]] == [new]

        page = webdata.facts(rt.store, None, status="all").rows.items
        rows = {r.fact.id: r for r in page}
        assert not rows[old].fact.deprecated
        assert [(r.relation, r.fact_id) for r in rows[old].rivals] == [("superseded_by", new)]
        assert [(r.relation, r.fact_id) for r in rows[new].rivals] == [("supersedes", old)]


# -- dedup that does not depend on timing --------------------------------------------------------
def gated(gate: threading.Event) -> Callable[[Settings], Embedder | None]:
    """The real model's loader, held until ``gate`` opens: the first second of a process."""

    def load(settings: Settings) -> Embedder | None:
        assert gate.wait(60)
        return load_embedder(settings)

    return load


async def test_a_paraphrase_written_before_the_model_is_ready_is_merged_and_told(
    sem_settings: Settings,
) -> None:
    gate = threading.Event()
    rt = Runtime(sem_settings, background=True, loader=gated(gate))
    try:
        async with Client(build_server(sem_settings, rt)) as client:
            _, started = await call(client, "memory_start_session")
            first = await store(client, PYTEST, "preference", importance=4)
            _, data = await call(
                client,
                "memory_store_fact",
                category="preference",
                fact=PYTEST_AGAIN,
                importance=8,
                session_id=started["session_id"],
                files=["pyproject.toml"],
            )
            second = data["fact_id"]
            assert data["created"]
            await call(client, "memory_search_facts", query=PYTEST_AGAIN)  # both used once
            rt.flush_usage()
            uses = {f: rt.store.get_fact(f).access_count for f in (first, second)}
            assert uses[second] >= 1

            gate.set()  # the model is ready: the background embedder checks what it missed
            ready(rt)
            packet, data = await call(client, "memory_get_context")
            # The newer wording is kept: the older says no more.
            assert f"Merged duplicate fact #{first} into #{second}" in packet
            assert data["shown"]["facts"] == 1 and PYTEST_AGAIN in packet
            again, _ = await call(client, "memory_get_context")
            assert "Merged duplicate" not in again and PYTEST not in again  # told once
            diff, data = await call(
                client, "memory_diff_sessions", since_session_id=started["session_id"]
            )
            assert "Duplicates merged (1)" in diff and f"→ merged into #{second}" in diff
            assert gotchas.of_facts(rt.store, [second]) == {second: ["pyproject.toml"]}
    finally:
        rt.close()
    kept, gone = rt_store_facts(sem_settings, second, first)
    assert gone.deprecated and gone.deprecation_reason == f"merged into #{second}"
    assert kept.importance == 8 and kept.access_count == uses[first] + uses[second]
    # Provenance of both: the kept fact had no session and takes the other's; the merged-away
    # fact keeps its own.
    assert kept.source_session == started["session_id"] == gone.source_session


def rt_store_facts(settings: Settings, *ids: int) -> list[Any]:
    backend = open_database(settings)
    try:
        store = Store(backend, "alice")
        return [store.get_fact(i) for i in ids]
    finally:
        backend.close()


def test_facts_of_a_server_without_model_are_checked_by_the_next(sem_settings: Settings) -> None:
    plain = Runtime(sem_settings)  # a process that never loads the model (or exits first)
    written = [
        plain.store.store_fact(cat, text)
        for cat, text in (
            ("preference", PYTEST),
            ("codebase", KAFKA),
            ("codebase", PG14),
            ("preference", PYTEST_AGAIN),
            ("codebase", RABBIT),
            ("codebase", PG16),
        )
    ]
    ids = [fact.id for fact, created, _ in written]
    assert all(created for _, created, _ in written)
    plain.close()

    rt = Runtime(sem_settings, background=True)
    try:
        sem = ready(rt)
        told = rt.notices()
        # The newer wording is kept (the older says no more).
        assert any(f"Merged duplicate fact #{ids[0]} into #{ids[3]}" in t for t in told)
        assert any(f"Fact #{ids[4]}" in t and f"conflicts with #{ids[1]}" in t for t in told)
        assert any(f"Fact #{ids[5]} looks like an update of #{ids[2]}" in t for t in told)
        active = {f.id for f in rt.store.top_facts(10)}
        assert active == {ids[1], ids[2], ids[3], ids[4], ids[5]}
        assert rt.store.links.count("conflict") == 1
        # Idempotent: nothing is left to check, and checking again changes nothing.
        assert dedup.check_pending(rt.store, sem) == dedup.CheckPass(0, [], False)
        assert rt.store.facts.unchecked(10) == []
    finally:
        rt.close()


def test_each_pass_is_bounded(sem_settings: Settings) -> None:
    backend = open_database(sem_settings)
    try:
        store = Store(backend, "alice")
        for text in (
            "Releases leave on Tuesdays",
            "The API server is written in Go",
            "Invoices are stored in S3",
            "The user likes short answers",
            "Flaky tests are quarantined for a week",
        ):
            store.store_fact("decision", text)
        sem = Semantic(backend, sem_settings)
        sem.load_now()  # in this thread: no background pass runs
        sem.embed_backlog()
        passes = []
        while (done := dedup.check_pending(store, sem, limit=2)).checked:
            passes.append((done.checked, done.more))
        assert passes == [(2, True), (2, True), (1, False)]
    finally:
        backend.close()


# -- links go with their facts ------------------------------------------------------------------
def test_links_are_settled_undone_and_deleted_with_their_facts(sem_runtime: Runtime) -> None:
    store = sem_runtime.store
    kafka, rabbit = (store.store_fact("codebase", t)[0].id for t in (KAFKA, RABBIT))
    ready(sem_runtime)
    assert store.links.count("conflict") == 1
    store.deprecate_fact(kafka, "settled")  # deprecating settles the conflict
    assert store.links.of_facts([kafka, rabbit]) == []
    old, new = (store.store_fact("codebase", t)[0].id for t in (PG14, PG16))
    ready(sem_runtime)
    assert [x.kind for x in store.links.of_facts([new])] == ["supersedes"]
    with store.db.transaction() as tx:  # what forgetting a fact does: its row goes
        tx.execute("DELETE FROM facts WHERE id = ?", (new,))
    assert store.links.of_facts([old]) == []  # ON DELETE CASCADE, on both backends


@pytest.mark.sqlite_only
def test_the_migration_counts_existing_facts_as_checked(db_path: Path) -> None:
    backend = SQLiteBackend(db_path)
    try:
        migrate(backend, [m for m in MIGRATIONS if m.name != "0016_fact_links"])
        store = Store(backend, "alice")
        store.store_fact("preference", PYTEST)
        store.store_fact("preference", PYTEST_AGAIN)
        assert migrate(backend) == ["0016_fact_links"]
        rows = backend.query("SELECT checked_at FROM facts")
        assert len(rows) == 2 and all(r["checked_at"] for r in rows)
        assert store.facts.unchecked(10) == []
    finally:
        backend.close()


# -- over stdio: one process without a model, the next with it ------------------------------------
def _stdio(settings: Settings, **env: str) -> StdioServerParameters:
    full = {k: v for k, v in os.environ.items() if not k.startswith("BIGMIND_")}
    full.update(BIGMIND_DB_PATH=str(settings.db_path), BIGMIND_USER=settings.user, **env)
    if settings.db_url:
        full["BIGMIND_DB_URL"] = settings.db_url
    return StdioServerParameters(command=str(BIGMIND), args=["serve"], env=full)


@pytest.mark.e2e
async def test_over_stdio_a_process_without_the_model_is_checked_by_the_next(
    settings: Settings, model_dir: Path, tmp_path: Path
) -> None:
    """A client that starts a server per call never gives it time to load the model: what it
    stored is merged and linked by the next server that has the model, and that server says so."""
    with (tmp_path / "err.log").open("w") as err:
        off = _stdio(settings, BIGMIND_EMBED_MODEL="off")
        async with stdio_client(off, errlog=err) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            r = await s.call_tool("memory_start_session", {})
            sid = (r.structured_content or {})["session_id"]
            ids = []
            for fact in (PYTEST, KAFKA, PYTEST_AGAIN, RABBIT):
                r = await s.call_tool("memory_store_fact", {"category": "codebase", "fact": fact})
                ids.append((r.structured_content or {})["fact_id"])
        on = _stdio(settings, BIGMIND_EMBED_MODEL=str(model_dir))
        async with stdio_client(on, errlog=err) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            diff = ""
            for _ in range(600):  # the model loads, then the backlog is embedded and checked
                r = await s.call_tool("memory_diff_sessions", {"since_session_id": sid})
                diff = r.content[0].text
                if "Duplicates merged" in diff and "Conflicts found" in diff:
                    break
                await anyio.sleep(0.1)
            assert f"#{ids[0]} {PYTEST} → merged into #{ids[2]}" in diff, diff
            assert f"⚠️ #{ids[3]} {RABBIT} conflicts with #{ids[1]}" in diff
            r = await s.call_tool("memory_recall", {"query": "which broker do payments use"})
            text = r.content[0].text
            assert "Since the last reply (memory upkeep)" in text
            assert f"Merged duplicate fact #{ids[0]} into #{ids[2]}" in text
            results = by_id((r.structured_content or {})["results"])
            assert [x["fact_id"] for x in results[ids[1]]["rivals"]] == [ids[3]]
            assert f"⚠️ conflicts with #{ids[3]} (newer" in text


async def test_every_automatic_judgement_is_undone_in_one_call(sem_runtime: Runtime) -> None:
    """A merge (the one thing the check hides) and an update mark (a guess) are each undone by
    the call the notice names: memory_update_fact(fact_id=<kept or newer>, replaces=[])."""
    rt = sem_runtime
    async with Client(build_server(rt.settings, rt)) as client:
        ready(rt)
        replies = []  # the check's notices come with whichever reply follows it
        ids = []
        for category, fact in (
            ("preference", PYTEST),
            ("preference", "For Python tests, the user prefers pytest"),
            ("codebase", PG14),
            ("codebase", PG16),
        ):
            text, data = await call(client, "memory_store_fact", category=category, fact=fact)
            replies.append(text)
            ids.append(int(data["fact_id"]))
        older, newer, old_pg, new_pg = ids
        ready(rt)
        replies.append((await call(client, "memory_get_context"))[0])
        told = "\n".join(replies)
        assert f"memory_update_fact(fact_id={newer}, replaces=[])" in told
        assert f"memory_update_fact(fact_id={new_pg}, replaces=[])" in told
        assert rt.store.get_fact(older).deprecated  # merged into the newer wording

        _, data = await call(client, "memory_update_fact", fact_id=newer, replaces=[])
        assert older in data["restored"] and not rt.store.get_fact(older).deprecated
        _, data = await call(client, "memory_update_fact", fact_id=new_pg, replaces=[])
        assert data["restored"] == [old_pg]
        _, data = await call(client, "memory_search_facts", query="alpha database PostgreSQL")
        hits = by_id(data["results"])
        assert "updated by" not in hits[old_pg]["why"] and hits[old_pg]["rivals"] == []
        assert rt.store.links.count("supersedes") == 0 and rt.store.links.count("merged") == 0
