"""Sessions inferred for an agent that never calls memory_start_session: a silence longer than
the session gap splits its implicit session, and an implicit session closed without
memory_end_session gets an ``[auto]`` one-liner and topics made from what it holds."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from fastmcp import Client
from fastmcp.client.transports import StdioTransport
from mcp_calls import BIGMIND, Cli, call, end, serve_env

from bigmind.config import Settings
from bigmind.mcp.server import build_server
from bigmind.memory import focus
from bigmind.models import AUTO_CLOSED_ONE_LINER, ts_ago
from bigmind.project import Project
from bigmind.runtime import Runtime
from bigmind.storage.autoline import EMPTY_ONE_LINER
from bigmind.storage.db import Backend
from bigmind.storage.store import Store

DECISION = "The orders API pages with opaque cursors, never offsets"


def _silent(backend: Backend, session_id: str, minutes: int) -> None:
    """Move the session's clock back: started and last active ``minutes`` ago."""
    with backend.transaction() as tx:
        tx.execute(
            "UPDATE sessions SET started_at = ?, last_activity_at = ? WHERE id = ?",
            (ts_ago(minutes=minutes), ts_ago(minutes=minutes), session_id),
        )


async def _work_then_silence(client: Cli, backend: Backend) -> str:
    """A forgetful agent flags an exchange and stores a fact, then goes quiet for 45 minutes."""
    _, c = await call(
        client,
        "memory_flag_important",
        content="Chose cursor pagination for the orders API",
        flag_reason="decision",
    )
    await call(client, "memory_store_fact", category="decision", fact=DECISION, importance=8)
    _silent(backend, c["session_id"], 45)
    return str(c["session_id"])


@pytest.mark.anyio
async def test_silence_splits_an_implicit_session(client: Cli, runtime: Runtime) -> None:
    first = await _work_then_silence(client, runtime.store.db)
    text, f = await call(
        client, "memory_store_fact", category="codebase", fact="Deploys go through staging"
    )
    assert f"The open session `{first}` had been silent" in text
    closed = runtime.store.get_session(first)
    assert not closed.is_open and closed.auto_closed
    assert closed.one_liner.startswith(f"[auto] {DECISION}")
    assert closed.topics is not None and closed.topics.split(",")[0] == "decision"
    # The late fact went to a new implicit session, which later writes join.
    second = runtime.store.get_fact(f["fact_id"]).source_session
    assert second not in (None, first) and runtime.store.get_session(str(second)).is_open
    _, c = await call(client, "memory_append_chunk", content="next step")
    assert c["session_id"] == second and not c["opened_session"]
    # The next packet lists the inferred session like any other.
    packet, _ = await call(client, "memory_get_context")
    assert f"[auto] {DECISION}" in packet and "topics: decision" in packet
    packet, _ = await call(client, "memory_start_session")
    assert f"[auto] {DECISION}" in packet


@pytest.mark.anyio
async def test_ending_after_a_silence_ends_the_silent_session(
    client: Cli, runtime: Runtime
) -> None:
    first = await _work_then_silence(client, runtime.store.db)
    data = await end(client, None, "Paginated the orders API")
    assert data["session_id"] == first
    closed = runtime.store.get_session(first)
    assert closed.one_liner == "Paginated the orders API" and not closed.auto_closed


@pytest.fixture
async def no_gap_client(settings: Settings) -> AsyncIterator[tuple[Cli, Runtime]]:
    s = settings.model_copy(update={"session_gap_minutes": 0})
    rt = Runtime(s)
    async with Client(build_server(s, rt)) as c:
        yield c, rt
    rt.close()


@pytest.mark.anyio
async def test_gap_zero_never_splits(no_gap_client: tuple[Cli, Runtime]) -> None:
    client, rt = no_gap_client
    first = await _work_then_silence(client, rt.store.db)
    text, f = await call(
        client, "memory_store_fact", category="codebase", fact="Deploys go through staging"
    )
    assert "silent" not in text
    assert rt.store.get_fact(f["fact_id"]).source_session == first
    assert rt.store.get_session(first).is_open


@pytest.mark.anyio
async def test_an_explicit_session_is_never_split(client: Cli, runtime: Runtime) -> None:
    _, s = await call(client, "memory_start_session")
    _silent(runtime.store.db, s["session_id"], 600)
    text, c = await call(client, "memory_append_chunk", content="back from lunch")
    assert c["session_id"] == s["session_id"] and "silent" not in text
    assert runtime.store.get_session(s["session_id"]).is_open


def test_a_day_old_implicit_session_closes_with_an_auto_line(store: Store) -> None:
    _, ref = store.append_chunk("Benchmarked the ranking", flag_reason="result")
    store.store_fact("decision", DECISION, importance=9)
    explicit = store.start_session().session
    with store.db.transaction() as tx:  # both started 30 h ago, the implicit one active since
        tx.execute(
            "UPDATE sessions SET started_at = ? WHERE id IN (?, ?)",
            (ts_ago(hours=30), ref.session.id, explicit.id),
        )
    closed = store.start_session().auto_closed
    assert set(closed) == {ref.session.id, explicit.id}
    assert store.get_session(ref.session.id).one_liner == f"[auto] {DECISION}"
    assert store.get_session(explicit.id).one_liner == AUTO_CLOSED_ONE_LINER


def test_close_stale_sums_up_implicit_sessions(store: Store) -> None:
    _, ref = store.append_chunk("Saw a flaky test in CI", flag_reason="bug")
    keep = store.start_session().session
    empty = Store(store.db, "alice", project=Project("name:other", "other"))
    _, bare = focus.announce(empty, None, "Reading the docs")  # opens a session, stores nothing
    closed = focus.close_stale(store, keep.id, force=True)
    assert {s.id for s in closed} == {ref.session.id, bare.session.id}
    assert store.get_session(ref.session.id).one_liner == "[auto] Saw a flaky test in CI"
    assert store.get_session(bare.session.id).one_liner == EMPTY_ONE_LINER


def test_the_gap_closes_only_this_projects_and_users_session(store: Store) -> None:
    here = Store(store.db, "alice", project=Project("name:here", "here"))
    there = Store(store.db, "alice", project=Project("name:there", "there"))
    bob = Store(store.db, "bob", project=Project("name:here", "here"))
    _, mine = here.append_chunk("here")
    _silent(store.db, mine.session.id, 45)
    _, other = there.append_chunk("there")
    _, his = bob.append_chunk("bob's")
    assert other.opened and his.opened and here.get_session(mine.session.id).is_open
    _, again = here.append_chunk("here, later")
    assert again.split is not None and again.split.id == mine.session.id
    assert there.get_session(other.session.id).is_open
    assert bob.get_session(his.session.id).is_open


@pytest.mark.anyio
@pytest.mark.e2e
@pytest.mark.timeout(120)
async def test_over_stdio(settings: Settings, backend: Backend, tmp_path: Path) -> None:
    env = serve_env(settings, **({"BIGMIND_MODE": "enterprise"} if settings.db_url else {}))
    async with Client(StdioTransport(str(BIGMIND), ["serve"], env=env, cwd=str(tmp_path))) as c:
        first = await _work_then_silence(c, backend)
        text, _ = await call(c, "memory_store_fact", category="codebase", fact="Deploys: staging")
        assert f"The open session `{first}` had been silent" in text
        packet, _ = await call(c, "memory_get_context")
        assert f"[auto] {DECISION}" in packet
