"""Tier G, company knowledge: promote, review, search, list, and its place in the packet."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack

import pytest
from fastmcp import Client
from mcp_calls import Cli, call, refused

from bigmind.config import Settings
from bigmind.mcp.server import build_server
from bigmind.memory import globalkb
from bigmind.memory.context import PACKET_BUDGET, TIER_G_BUDGET, build_context
from bigmind.memory.users import add_user, set_role
from bigmind.runtime import Runtime
from bigmind.search.ranking import Recall
from bigmind.storage.db import Backend
from bigmind.storage.store import Store
from bigmind.tokencount import count_tokens

pytestmark = pytest.mark.anyio
TeamClient = Callable[[str], Awaitable[Cli]]


def _tier_g(text: str) -> list[str]:
    """The entry lines of the packet's company knowledge section."""
    m = re.search(r"^### 🌐.*?(?=^### |^_|\Z)", text, re.S | re.M)
    return [ln for ln in (m.group(0) if m else "").splitlines() if ln.startswith("- ")]


@pytest.fixture
async def team(
    settings_for: Callable[[str], Settings], backend: Backend, store: Store
) -> AsyncIterator[TeamClient]:
    """Clients of several users of one database in team mode. An admin exists first, so every
    user a test opens registers as a member (alice, of the personal-mode ``client``, came
    first: she is the owner, an admin)."""
    add_user(backend, "root", "admin")
    async with AsyncExitStack() as stack:

        async def open_client(user: str) -> Cli:
            s = settings_for(user).model_copy(update={"mode": "team"})
            rt = Runtime(s)
            stack.callback(rt.close)  # after the client below has exited
            return await stack.enter_async_context(Client(build_server(s, rt)))

        yield open_client


async def _promote(client: Cli, title: str, content: str, **more: object) -> dict[str, object]:
    args: dict[str, object] = {"category": "standard", "title": title, "content": content}
    _, data = await call(client, "memory_promote_to_global", **(args | more))
    return data


# -- personal mode ---------------------------------------------------------------------------
async def test_personal_mode_approves_at_once_and_everything_sees_it(client: Cli) -> None:
    text, data = await call(
        client,
        "memory_promote_to_global",
        category="Decision",
        title="No deploys on Fridays",
        content="Production deploys happen Monday to Thursday; Friday is for fixes only.",
        importance=8,
    )
    assert data["status"] == "approved" and data["created"] is True
    assert f"Added company knowledge #{data['entry_id']} [decision]" in text

    text, found = await call(client, "memory_search_global", query="when can we deploy?")
    assert [r["id"] for r in found["results"]] == [data["entry_id"]]
    assert found["results"][0]["kind"] == "global" and "Friday" in found["results"][0]["text"]

    text, listed = await call(client, "memory_list_global")
    assert f"#{data['entry_id']} [decision] No deploys on Fridays** (importance 8)" in text
    assert listed["own_only"] is False

    text, _ = await call(client, "memory_start_session")
    assert _tier_g(text) == [
        "- **[decision] No deploys on Fridays** (importance 8): Production deploys happen "
        "Monday to Thursday; Friday is for fixes only."
    ]


async def test_exact_duplicate_returns_the_existing_entry(client: Cli) -> None:
    first = await _promote(client, "Use UTC", "Store every timestamp in UTC.")
    text, again = await call(
        client,
        "memory_promote_to_global",
        category="standard",
        title="use utc",
        content="  Store every   timestamp in UTC ",
    )
    assert again == {"entry_id": first["entry_id"], "status": "approved", "created": False}
    assert f"Already proposed as entry #{first['entry_id']} (approved); nothing added." == text
    other = await _promote(client, "Use UTC", "Store every timestamp in UTC, shown local.")
    assert other["created"] is True and other["entry_id"] != first["entry_id"]
    _, listed = await call(client, "memory_list_global")
    assert len(listed["entries"]) == 2


async def test_personal_owner_reviews_own_entries(client: Cli) -> None:
    e = await _promote(client, "Tabs", "Indent with tabs.")
    text, data = await call(
        client, "memory_approve_global", entry_id=e["entry_id"], action="deprecate", notes="spaces"
    )
    assert data["status"] == "deprecated" and "no longer shown" in text
    _, found = await call(client, "memory_search_global", query="indent tabs")
    assert found["results"] == []
    text, listed = await call(client, "memory_list_global", status="deprecated")
    assert "review: spaces" in text and listed["entries"][0]["review_notes"] == "spaces"
    _, data = await call(client, "memory_approve_global", entry_id=e["entry_id"], action="approve")
    assert data["status"] == "approved"
    msg = await refused(client, "memory_approve_global", entry_id=e["entry_id"], action="approve")
    assert "already approved" in msg


async def test_bad_input_is_refused_with_the_way_out(client: Cli) -> None:
    msg = await refused(client, "memory_promote_to_global", category="misc", title="t", content="c")
    assert "architecture, standard, decision, pattern, glossary" in msg
    msg = await refused(
        client, "memory_promote_to_global", category="standard", title="x" * 81, content="c"
    )
    assert "'title'" in msg and "limit is 80" in msg
    msg = await refused(
        client,
        "memory_promote_to_global",
        category="standard",
        title="t",
        content="c",
        importance=11,
    )
    assert "importance" in msg
    msg = await refused(
        client,
        "memory_promote_to_global",
        category="standard",
        title="t",
        content="c",
        source_session="no-such-session",
    )
    assert "No session 'no-such-session'" in msg
    e = await _promote(client, "Real", "A real entry.")
    msg = await refused(client, "memory_approve_global", entry_id=e["entry_id"], action="delete")
    assert "'approve' or 'deprecate'" in msg
    msg = await refused(client, "memory_approve_global", entry_id=999, action="approve")
    assert "No company knowledge entry #999" in msg
    msg = await refused(client, "memory_list_global", status="archived")
    assert "approved, pending, deprecated" in msg
    msg = await refused(client, "memory_list_global", category="misc")
    assert "glossary" in msg


async def test_odd_queries_never_error(client: Cli) -> None:
    await _promote(client, "C++ style", 'Use "clang-format" (LLVM style) for C++ code.')
    for q in ['"unbalanced', "AND OR NOT", "c++ (style)*", "the of and", "ünïcödé ✓", "NEAR(a b)"]:
        _, data = await call(client, "memory_search_global", query=q)
        assert isinstance(data["results"], list), q
    _, data = await call(client, "memory_search_global", query="c++ style?")
    assert data["results"] and "clang-format" in data["results"][0]["text"]


async def test_source_session_must_be_the_callers(client: Cli, team: TeamClient) -> None:
    bob = await team("bob")
    _, s = await call(bob, "memory_start_session")
    msg = await refused(
        client,
        "memory_promote_to_global",
        category="pattern",
        title="t",
        content="c",
        source_session=s["session_id"],
    )
    assert f"No session '{s['session_id']}'" in msg
    _, mine = await call(client, "memory_start_session")
    e = await _promote(
        client, "Retry", "Retry idempotent calls.", source_session=mine["session_id"]
    )
    _, listed = await call(client, "memory_list_global")
    assert listed["entries"][0]["source_session"] == mine["session_id"]
    assert e["created"] is True


# -- team mode: the curator workflow ---------------------------------------------------------
async def test_team_mode_curator_workflow(team: TeamClient, backend: Backend) -> None:
    bob, carol = await team("bob"), await team("carol")
    text, e = await call(
        bob,
        "memory_promote_to_global",
        category="architecture",
        title="Event bus",
        content="Services talk through the NATS event bus, never by direct HTTP calls.",
        importance=9,
    )
    assert e["status"] == "pending" and "pending until a curator approves" in text
    entry = e["entry_id"]

    # Pending entries are neither searched nor shown.
    _, found = await call(bob, "memory_search_global", query="NATS event bus")
    assert found["results"] == []
    text, _ = await call(carol, "memory_start_session")
    assert "Event bus" not in text

    # Members may not review, and list only their own pending entries.
    msg = await refused(bob, "memory_approve_global", entry_id=entry, action="approve")
    assert "Only a curator or admin" in msg and "'bob' is a member" in msg
    assert "bigmind user set-role bob curator" in msg
    text, listed = await call(carol, "memory_list_global", status="pending")
    assert listed == {"entries": [], "own_only": True}
    assert "you promoted" in text
    text, listed = await call(bob, "memory_list_global", status="pending")
    assert [x["id"] for x in listed["entries"]] == [entry] and listed["own_only"] is True
    assert "pending, by bob" in text

    # A curator (role given while carol's server runs) sees all pending entries and approves.
    set_role(backend, "carol", "curator")
    text, listed = await call(carol, "memory_list_global", status="pending")
    assert [x["id"] for x in listed["entries"]] == [entry] and listed["own_only"] is False
    text, data = await call(
        carol, "memory_approve_global", entry_id=entry, action="approve", notes="agreed in ADR-7"
    )
    assert data == {"entry_id": entry, "status": "approved"}
    assert "Approved company knowledge" in text and "every user now sees it" in text
    row = backend.query(
        "SELECT g.status, g.approved_by, g.review_notes, g.reviewed_at, g.updated_at,"
        " u.username FROM global_knowledge g JOIN users u ON u.id = g.approved_by WHERE g.id = ?",
        (entry,),
    )[0]
    assert row["username"] == "carol" and row["review_notes"] == "agreed in ADR-7"
    assert row["reviewed_at"] == row["updated_at"]

    # A brand-new user with no history gets it at session start.
    dave = await team("dave")
    text, _ = await call(dave, "memory_start_session")
    assert _tier_g(text) == [
        "- **[architecture] Event bus** (importance 9): Services talk through the NATS event "
        "bus, never by direct HTTP calls."
    ]
    _, found = await call(dave, "memory_search_global", query="how do services communicate?")
    assert [r["id"] for r in found["results"]] == [entry]

    # Deprecated: gone from search and the packet, listed as deprecated for curators.
    _, data = await call(carol, "memory_approve_global", entry_id=entry, action="deprecate")
    assert data["status"] == "deprecated"
    _, found = await call(dave, "memory_search_global", query="NATS event bus")
    assert found["results"] == []
    text, _ = await call(dave, "memory_get_context")
    assert "Event bus" not in text
    _, listed = await call(carol, "memory_list_global", status="deprecated")
    assert [x["id"] for x in listed["entries"]] == [entry]
    _, listed = await call(dave, "memory_list_global", status="deprecated")
    assert listed["entries"] == []


async def test_team_member_cannot_see_others_pending_entry_by_id(team: TeamClient) -> None:
    bob, dave = await team("bob"), await team("dave")
    e = await _promote(bob, "Draft", "A draft nobody approved.")
    msg = await refused(dave, "memory_approve_global", entry_id=e["entry_id"], action="approve")
    assert "Only a curator or admin" in msg  # the role is checked before the id
    # Proposing the same text does not reveal bob's proposal: dave gets one of his own.
    again = await _promote(dave, "draft", "A draft nobody approved.")
    assert again["entry_id"] != e["entry_id"] and again["created"] is True
    mine = await _promote(dave, "Draft", "A  draft nobody approved.")  # his own: matched
    assert mine["entry_id"] == again["entry_id"] and mine["created"] is False


# -- the bootstrap packet ----------------------------------------------------------------------
async def test_focus_brings_relevant_company_knowledge_forward(client: Cli) -> None:
    await _promote(
        client, "Kubernetes rollouts", "Roll out with kubectl canary steps.", importance=6
    )
    for i in range(6):  # newer, equally important, unrelated: they lead without a focus
        await _promote(client, f"Naming rule {i}", f"Name things clearly, rule {i}.", importance=6)
    await _promote(client, "Security", "Never log secrets or tokens.", importance=9)

    text, _ = await call(client, "memory_start_session")
    lines = _tier_g(text)
    assert len(lines) == 5 and "Security" in lines[0]
    assert not any("Kubernetes" in ln for ln in lines)
    assert "3 company entries (memory_search_global)" in text

    text, _ = await call(
        client, "memory_start_session", focus="help me with the kubernetes canary rollout"
    )
    lines = _tier_g(text)
    assert "Security" in lines[0]  # importance still leads: 9 over a matching 6
    assert "Kubernetes rollouts" in lines[1]  # ahead of every unrelated entry of importance 6
    assert len(lines) == 5


def test_relevance_lifts_at_most_one_importance_step(store: Store) -> None:
    low = globalkb.promote(store, "pattern", "Caching", "Cache reads with Redis.", 5).entry
    mid = globalkb.promote(store, "pattern", "Logging", "Log in JSON lines.", 6).entry
    high = globalkb.promote(store, "pattern", "Tracing", "Trace every request.", 7).entry
    ids = [e.id for e in globalkb.top(store, 5, {low.id: 1.0})]
    assert ids == [high.id, low.id, mid.id]
    assert [e.id for e in globalkb.top(store, 5)] == [high.id, mid.id, low.id]
    assert [e.id for e in globalkb.top(store, 5, {})] == [high.id, mid.id, low.id]


def test_five_long_entries_all_fit_the_tier_g_budget(store: Store) -> None:
    for i in range(5):
        globalkb.promote(store, "standard", f"Long rule {i}", f"Rule {i} says: " + "word " * 600)
    for i in range(40):
        store.store_fact("codebase", f"fact {i} " + "detail " * 20)
    store.update_profile(role="Engineer " * 30, preferences="Short answers. " * 80)
    p = build_context(store)
    lines = _tier_g(p.text)
    assert [ln.split("**")[1] for ln in lines] == [
        f"[standard] Long rule {i}" for i in (4, 3, 2, 1, 0)
    ]
    assert all(ln.endswith("…") for ln in lines)
    section = "\n".join(["### 🌐 Company knowledge (Tier G, recalled data)", *lines])
    assert count_tokens(section) <= TIER_G_BUDGET
    assert TIER_G_BUDGET - count_tokens(section) < 10  # the budget is used, not wasted
    assert p.tokens <= PACKET_BUDGET and p.shown["global"] == 5
    assert "company entries" not in p.omitted


def test_short_and_long_entries_share_the_budget_fairly(store: Store) -> None:
    globalkb.promote(store, "glossary", "SLO", "Service level objective.", 9)
    globalkb.promote(store, "standard", "Huge", "text " * 790, 8)
    p = build_context(store, budget=PACKET_BUDGET)
    lines = _tier_g(p.text)
    assert lines[0] == "- **[glossary] SLO** (importance 9): Service level objective."
    assert lines[1].startswith("- **[standard] Huge** (importance 8): text") and "…" in lines[1]


def test_focus_without_matches_keeps_importance_order(store: Store) -> None:
    a = globalkb.promote(store, "decision", "Alpha", "First decision.", 4).entry
    b = globalkb.promote(store, "decision", "Beta", "Second decision.", 8).entry
    p = build_context(store, focus="zzz qqq", recall=Recall(store, None))
    assert [ln.split("**")[1] for ln in _tier_g(p.text)] == [
        f"[decision] {b.title}",
        f"[decision] {a.title}",
    ]


def test_small_packet_budget_drops_entries_rather_than_shredding_them(store: Store) -> None:
    for i in range(5):
        globalkb.promote(store, "standard", f"Rule {i}", "word " * 200)
    p = build_context(store, budget=200)
    assert p.tokens <= 200
    assert 0 < p.shown["global"] < 5
    assert p.omitted["company entries"] == 5 - p.shown["global"]
