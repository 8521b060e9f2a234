"""Failed approaches (issue 17, item 6): memory_record_attempt, and the warning a later focus
announcement, recall or session start gets when it comes close to an approach that failed —
in wording (no model needed) or in meaning (the real MiniLM). Both backends, through a real MCP
client; project scoping on the store."""

from __future__ import annotations

from typing import Any

import pytest
from fastmcp import Client
from mcp_calls import call, refused
from model_fixture import ready

from bigmind import project
from bigmind.config import Settings
from bigmind.mcp.server import build_server
from bigmind.memory import attempts, erasure, mirror, transfer
from bigmind.project import Project
from bigmind.runtime import Runtime
from bigmind.storage.store import Store
from bigmind.storage.vector_tables import VectorTables

pytestmark = pytest.mark.anyio

REDIS = "Cache user sessions in Redis with a five minute TTL"
WHY = "logins dropped whenever Redis restarted"
SAME_WORDS = "Caching the user sessions in Redis again"
SAME_MEANING = "Store the login sessions in a key-value store that expires them after 5 minutes"
UNRELATED = "Add a dark mode toggle to the settings page"


async def record(
    client: Any, approach: str = REDIS, outcome: str = "failed", why: str = WHY
) -> int:
    _, data = await call(
        client, "memory_record_attempt", approach=approach, outcome=outcome, why=why
    )
    return int(data["attempt_id"])


async def focus(client: Any, description: str) -> tuple[str, list[dict[str, Any]]]:
    text, data = await call(client, "memory_announce_focus", description=description)
    return text, data["failed_attempts"]


def warned(tried: list[dict[str, Any]]) -> list[int]:
    return [t["attempt_id"] for t in tried]


# -- in wording: no model ----------------------------------------------------------------------
async def test_a_focus_sharing_the_wording_of_a_failed_approach_is_warned(client: Any) -> None:
    aid = await record(client)  # no session started: the write opens one
    text, tried = await focus(client, SAME_WORDS)
    assert warned(tried) == [aid]
    assert tried[0]["why"] == WHY and tried[0]["similarity"] is None  # no model here
    day = tried[0]["tried_on"]
    assert f'⚠️ Tried on {day}, failed because {WHY} — "{REDIS}" (#{aid})' in text


async def test_unrelated_work_and_approaches_that_worked_never_warn(client: Any) -> None:
    await record(client)
    await record(client, "Use a regex to parse the invoice HTML", "worked", "the page is fixed")
    text, tried = await focus(client, UNRELATED)
    assert tried == [] and "⚠️" not in text
    _, tried = await focus(client, "Parse the invoice HTML with a regex again")
    assert tried == []  # it worked: nothing to warn of


async def test_recall_and_session_start_warn_too(client: Any) -> None:
    aid = await record(client)
    text, data = await call(client, "memory_recall", query="redis user sessions cache")
    assert warned(data["failed_attempts"]) == [aid] and f"(#{aid})" in text
    text, data = await call(client, "memory_recall", query=UNRELATED)
    assert data["failed_attempts"] == [] and "Tried on" not in text
    text, _ = await call(client, "memory_start_session", focus=SAME_WORDS)
    assert f"failed because {WHY}" in text


async def test_at_most_three_warnings_the_closest_first(client: Any) -> None:
    ids = [await record(client, f"Cache user sessions in Redis, try {n}") for n in range(4)]
    exact = await record(client, "Cache user sessions in Redis cluster mode")
    text, tried = await focus(client, "Cache user sessions in Redis cluster mode")
    assert len(tried) == 3 and warned(tried)[0] == exact
    assert set(warned(tried)[1:]) <= set(ids) and text.count("⚠️ Tried on") == 3


async def test_a_bad_outcome_or_a_failure_without_why_is_refused_in_one_line(client: Any) -> None:
    msg = await refused(client, "memory_record_attempt", approach=REDIS, outcome="maybe", why=WHY)
    assert "outcome" in msg and "\n" not in msg.strip()
    msg = await refused(client, "memory_record_attempt", approach=REDIS, outcome="failed", why=" ")
    assert "'why' must not be empty" in msg


async def test_a_forgotten_attempt_warns_no_more(client: Any) -> None:
    aid = await record(client)
    text, data = await call(client, "memory_forget", kind="attempt", id=str(aid))
    assert data["removed"]["attempts"] == 1, text
    _, tried = await focus(client, SAME_WORDS)
    assert tried == []


async def test_the_compact_journal_records_an_attempt(settings: Settings, runtime: Runtime) -> None:
    compact = settings.model_copy(update={"tools": "compact"})
    async with Client(build_server(compact, runtime)) as c:
        _, data = await call(
            c, "memory_journal", action="attempt", text=REDIS, outcome="failed", why=WHY
        )
        aid = data["attempt_id"]
        _, found = await call(c, "memory_recall", query=SAME_WORDS)
        assert warned(found["failed_attempts"]) == [aid]
        msg = await refused(c, "memory_journal", action="attempt", text=REDIS)
        assert "'why' must not be empty" in msg  # a failure needs its reason


# -- in meaning: the real model ------------------------------------------------------------------
async def test_a_focus_in_other_words_with_the_same_meaning_is_warned(
    sem_runtime: Runtime,
) -> None:
    rt = sem_runtime
    async with Client(build_server(rt.settings, rt)) as client:
        aid = await record(client)
        worked = await record(client, "Keep sessions in signed cookies", "worked", "stateless")
        ready(rt)  # embedded by the background embedder, as in the server
        assert attempts._wording(REDIS, SAME_MEANING) < attempts.WORDING_MIN  # not by wording
        text, tried = await focus(client, SAME_MEANING)
        assert warned(tried) == [aid] and f"(#{aid})" in text
        assert tried[0]["similarity"] >= attempts.MEANING_MIN
        _, tried = await focus(client, UNRELATED)
        assert tried == []
        _, tried = await focus(client, "Store sessions in signed cookies, no server state")
        assert worked not in warned(tried)


async def test_an_attempt_not_embedded_yet_is_compared_by_meaning_anyway(
    sem_runtime: Runtime,
) -> None:
    rt = sem_runtime
    async with Client(build_server(rt.settings, rt)) as client:
        await call(client, "memory_start_session")
        sem = ready(rt)
        sem.stop()  # the background embedder will not reach the attempt
        aid = await record(client)
        assert sem.vectors.similarity("attempt", [str(aid)], sem.embed_query(REDIS)) == {}
        _, tried = await focus(client, SAME_MEANING)
        assert warned(tried) == [aid]


# -- scoping, transfer, mirror -----------------------------------------------------------------
A = Project("github.com/acme/payments", "payments")
B = Project("github.com/acme/search", "search")


def test_an_attempt_warns_in_its_own_project_and_one_made_outside_any_warns_everywhere(
    store: Store,
) -> None:
    with project.using(A):
        mine, _ = attempts.record(store, REDIS, "failed", WHY)
        assert [e.attempt.id for e in attempts.warnings(store, SAME_WORDS)] == [mine.id]
    with project.using(B):
        assert attempts.warnings(store, SAME_WORDS) == []
    with project.using(None):
        store.end_session(
            None, "done", None, None, None
        )  # the next write opens a session outside any project
        anywhere, _ = attempts.record(store, REDIS + " cluster", "failed", WHY)
    assert anywhere.project is None and mine.project == A.key
    with project.using(B):
        assert [e.attempt.id for e in attempts.warnings(store, SAME_WORDS)] == [anywhere.id]


def test_export_and_import_keep_attempts(store: Store) -> None:
    a, _ = attempts.record(store, REDIS, "failed", WHY)
    data = transfer.export_data(store)
    assert [r["approach"] for r in data["attempts"]] == [REDIS]
    erasure.forget(store, [erasure.resolve(store, "attempt", a.id)])
    assert attempts.list_(store) == []
    assert transfer.import_data(store, data).added["attempts"] == 1
    assert attempts.list_(store) == [a]
    assert transfer.import_data(store, data).added["attempts"] == 0  # idempotent


def test_the_mirror_lists_the_approaches_that_failed(store: Store) -> None:
    a, _ = attempts.record(store, REDIS, "failed", WHY)
    attempts.record(store, "Keep sessions in signed cookies", "worked", "stateless")
    text, *_ = mirror.render(store)
    section = text.split("## Approaches that failed", 1)[1].split("##", 1)[0]
    assert f"(a{a.id}) {REDIS} — {WHY}" in section and "cookies" not in section


def test_an_upgraded_database_gets_the_attempt_vector_table(store: Store) -> None:
    """Vector tables are made when a model is adopted: a database that adopted one before
    attempts existed gets theirs when the model is next loaded, and nothing else changes."""
    tables = VectorTables(store.db)
    tables.adopt("some-model", 4)
    with store.db.transaction() as tx:
        tx.script("DROP TABLE vec_attempt")
    assert tables.ensure(4) == ["attempt"] and store.db.table_exists("vec_attempt")
    assert tables.ensure(4) == [] and tables.model() == ("some-model", 4)
