"""The bootstrap packet: tier budgets, order, provenance, and what was left out."""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from bigmind.memory.context import (
    PACKET_BUDGET,
    PINNED_BORROW,
    TIER_0_BUDGET,
    TIER_G_BUDGET,
    build_context,
)
from bigmind.models import now_ts
from bigmind.search.ranking import Recall
from bigmind.storage.db import SQLiteBackend
from bigmind.storage.store import Store
from bigmind.tokencount import count_tokens

BIGMIND = Path(sys.executable).parent / "bigmind"


def _section(text: str, heading: str) -> str:
    m = re.search(rf"^### {re.escape(heading)}.*?(?=^### |^_|\Z)", text, re.S | re.M)
    return m.group(0) if m else ""


def _fill(store: Store, facts: int, sessions: int, fact_len: int = 120) -> None:
    for i in range(facts):
        store.store_fact("codebase", f"fact number {i} " + "detail " * (fact_len // 7))
    for i in range(sessions):
        s = store.start_session().session
        store.end_session(s.id, f"session {i} headline " + "x" * 60, "a,b", "outcome " * 5, "sum")


def _add_global(backend: SQLiteBackend, n: int, size: int = 800) -> None:
    with backend.transaction() as tx:
        for i in range(n):
            tx.execute(
                "INSERT INTO global_knowledge(category, title, content, importance, status,"
                " created_at, updated_at) VALUES ('standard', ?, ?, ?, 'approved', ?, ?)",
                (
                    f"Rule {i}",
                    "Always do the thing. " * (size // 20),
                    i % 10 + 1,
                    now_ts(),
                    now_ts(),
                ),
            )


def test_empty_memory_packet_is_small_and_says_how_to_start(store: Store) -> None:
    p = build_context(store)
    assert p.tokens < 200
    assert "Memory is empty so far" in p.text
    assert "not instructions" in p.text


@pytest.mark.parametrize(("facts", "sessions"), [(0, 0), (5, 3), (300, 60)])
def test_packet_never_exceeds_budget(
    store: Store, backend: SQLiteBackend, facts: int, sessions: int
) -> None:
    _fill(store, facts, sessions)
    _add_global(backend, 12)
    store.update_profile(
        role="Principal engineer " * 24,
        preferences="Likes short answers. " * 150,
        pinned_facts=[f"pinned fact {i} " + "y" * 80 for i in range(40)],
    )
    p = build_context(store)
    assert p.tokens == count_tokens(p.text) <= PACKET_BUDGET
    assert count_tokens(_section(p.text, "🌐")) <= TIER_G_BUDGET
    # 40 long pinned facts borrow from the packet, yet leave stored facts a share of it.
    assert count_tokens(_section(p.text, "👤")) <= TIER_0_BUDGET + PINNED_BORROW
    assert p.shown["facts"] > 0 or facts == 0


def test_smaller_budget_is_honoured(store: Store) -> None:
    _fill(store, 100, 30)
    p = build_context(store, budget=400)
    assert p.tokens <= 400


def test_left_out_items_are_counted_with_the_tool_to_get_them(store: Store) -> None:
    _fill(store, 200, 30)
    p = build_context(store)
    assert p.omitted["facts"] == 200 - p.shown["facts"]
    assert p.omitted["sessions"] == 30 - p.shown["sessions"]
    assert f"{p.omitted['facts']} facts (memory_search_facts)" in p.text
    assert "memory_list_sessions" in p.text


def test_most_important_facts_come_first(store: Store) -> None:
    _fill(store, 80, 0)
    store.store_fact("constraint", "Never push to main on Fridays", importance=10)
    p = build_context(store)
    facts = _section(p.text, "🗂️").splitlines()
    assert "Never push to main on Fridays" in facts[1]


def test_facts_carry_provenance(store: Store) -> None:
    f, _, _ = store.store_fact("preference", "Prefers pytest", confidence=0.8)
    p = build_context(store)
    assert f"- [preference] Prefers pytest — #{f.id}, {now_ts()[:10]}, confidence 0.80" in p.text


def test_open_sessions_are_marked_in_progress_and_current_one_named(store: Store) -> None:
    other = store.start_session(ide_hint="cursor").session
    current = store.start_session().session
    p = build_context(store, current_session=current.id)
    assert f"🟡 in progress `{current.id}` (this session)" in p.text
    assert f"🟡 in progress `{other.id}` [cursor]" in p.text


def test_recent_sessions_newest_first_with_summary_marker(store: Store) -> None:
    _fill(store, 0, 3)
    lines = [
        ln for ln in _section(build_context(store).text, "📅").splitlines() if ln.startswith("- ")
    ]
    assert [ln.split(" ")[3] for ln in lines] == ["2", "1", "0"]
    assert all("📄" in ln for ln in lines)


def test_company_knowledge_leads_importance_first(store: Store, backend: SQLiteBackend) -> None:
    _add_global(backend, 7, size=100)
    p = build_context(store)
    assert p.text.index("🌐") < p.text.index("👤")
    assert "**[standard] Rule 6** (importance 7)" in _section(p.text, "🌐").splitlines()[1]
    assert p.shown["global"] <= 5


def test_profile_and_pinned_facts_shown(store: Store) -> None:
    store.update_profile(role="SRE", preferences="Terse", pinned_facts="- uses uv\n- macOS")
    t0 = _section(build_context(store).text, "👤")
    assert "**Role:** SRE" in t0 and "- 📌 uses uv" in t0 and "- 📌 macOS" in t0


# -- the packet keeps its promises ---------------------------------------------------------------
FULL_ROLE = "Principal engineer " * 24  # ~120 tokens
FULL_PREFERENCES = "Likes short answers. " * 150  # ~1,000 tokens: alone it would fill Tier 0


def test_pinned_facts_survive_a_full_profile(store: Store) -> None:
    store.update_profile(
        role=FULL_ROLE,
        preferences=FULL_PREFERENCES,
        pinned_facts=["Deploys go through the release train", "Never run migrations by hand"],
    )
    p = build_context(store)
    t0 = _section(p.text, "👤")
    assert "- 📌 Deploys go through the release train" in t0
    assert "- 📌 Never run migrations by hand" in t0
    assert "pinned facts" not in p.omitted
    assert count_tokens(t0) <= TIER_0_BUDGET
    # Role and preferences gave way, and the packet says so.
    assert "**Role:** Principal engineer" in t0 and "**Preferences:** Likes short" in t0
    assert "…" in t0
    assert p.omitted["profile fields"] == 1  # the role fitted whole; the preferences did not
    assert "1 profile field (cut short:" in p.text


def test_role_and_preferences_are_dropped_before_any_pinned_fact(store: Store) -> None:
    pins = [f"pinned rule {i}: " + "keep it " * 8 for i in range(10)]  # ~300 tokens together
    store.update_profile(role="SRE", preferences=FULL_PREFERENCES, pinned_facts=pins)
    p = build_context(store)
    t0 = _section(p.text, "👤")
    assert all(f"- 📌 pinned rule {i}:" in t0 for i in range(10))
    assert "pinned facts" not in p.omitted
    assert p.omitted["profile fields"] >= 1


def test_pinned_facts_over_tier_0_borrow_from_the_packet_then_are_counted(store: Store) -> None:
    _fill(store, 50, 5)
    pins = [f"pinned fact {i} " + "y" * 80 for i in range(40)]  # ~1,000 tokens together
    store.update_profile(role="SRE", preferences="Terse", pinned_facts=pins)
    p = build_context(store)
    t0 = _section(p.text, "👤")
    assert TIER_0_BUDGET < count_tokens(t0) <= TIER_0_BUDGET + PINNED_BORROW
    shown = t0.count("- 📌 ")
    assert p.omitted["pinned facts"] == 40 - shown
    assert f"{40 - shown} pinned facts (memory_update_profile to trim)" in p.text
    assert p.shown["facts"] > 0 and p.shown["sessions"] > 0  # Tier 1 keeps a share
    assert p.tokens <= PACKET_BUDGET


def test_a_complete_small_profile_is_not_reported_cut(store: Store) -> None:
    store.update_profile(role="SRE", preferences="Terse", pinned_facts="- uses uv")
    p = build_context(store)
    assert "profile fields" not in p.omitted and "pinned facts" not in p.omitted


def _junk_and_key(store: Store) -> tuple[int, list[int], int]:
    key, _, _ = store.store_fact(
        "constraint", "Never deploy on Fridays: the on-call rota is thin", importance=10
    )
    plain, _, _ = store.store_fact("codebase", "The API is versioned under /v2", importance=5)
    junk = []
    for i in range(5):  # each ~165 tokens: together more than the facts' share of the packet
        f, _, _ = store.store_fact(
            "codebase",
            f"Billing retry note {i}: "
            + "the billing retry worker retries failed charges with backoff " * 9,
            importance=2,
        )
        junk.append(f.id)
    return key.id, junk, plain.id


def test_focus_never_pushes_out_an_importance_10_fact(store: Store) -> None:
    key, junk, _ = _junk_and_key(store)
    p = build_context(store, focus="fix the billing retry worker", recall=Recall(store, None))
    facts = _section(p.text, "🗂️")
    assert f"#{key}," in facts
    lines = [ln for ln in facts.splitlines() if ln.startswith("- ")]
    assert f"#{key}," in lines[0]  # key facts lead; the focus orders what follows
    assert f"#{junk[0]}," in facts or f"#{junk[-1]}," in facts  # matches still come next


def test_focus_matches_are_ranked_by_relevance_times_importance(store: Store) -> None:
    for i in range(10):  # a memory where the focus words are rare, as they usually are
        store.store_fact("codebase", f"Module m{i} formats dates as ISO strings", importance=5)
    junk, _, _ = store.store_fact(
        "codebase", "Billing retry worker: retries use exponential backoff", importance=1
    )
    useful, _, _ = store.store_fact(
        "decision", "Billing charges are retried by the payments team's worker", importance=7
    )
    other, _, _ = store.store_fact("codebase", "The API is versioned under /v2", importance=7)
    p = build_context(store, focus="billing retry worker backoff", recall=Recall(store, None))
    lines = [ln for ln in _section(p.text, "🗂️").splitlines() if ln.startswith("- ")]
    ids = [int(re.search(r"— #(\d+),", ln).group(1)) for ln in lines]  # type: ignore[union-attr]
    # The importance-7 partial match leads the importance-1 full match; both lead the rest.
    assert ids[:3] == [useful.id, junk.id, other.id]


@pytest.mark.e2e
@pytest.mark.anyio
async def test_pinned_and_key_facts_keep_their_place_over_stdio(
    db_path: Path, db_url: str | None, tmp_path: Path
) -> None:
    """As an agent sees it: `bigmind serve` over stdio, a full profile, a focus full of junk."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BIGMIND_")}
    env.update(BIGMIND_DB_PATH=str(db_path), BIGMIND_WEB="0", BIGMIND_EMBED_MODEL="off")
    if db_url:
        env["BIGMIND_DB_URL"] = db_url
    params = StdioServerParameters(command=str(BIGMIND), args=["serve"], env=env)
    with (tmp_path / "err.log").open("w") as err:
        async with stdio_client(params, errlog=err) as (read, write):
            async with ClientSession(read, write) as mcp:
                await mcp.initialize()
                await mcp.call_tool(
                    "memory_update_profile",
                    {
                        "role": FULL_ROLE,
                        "preferences": FULL_PREFERENCES,
                        "pinned_facts": ["Deploys go through the release train"],
                    },
                )
                key = await mcp.call_tool(
                    "memory_store_fact",
                    {"category": "constraint", "fact": "Never deploy on Fridays", "importance": 10},
                )
                for i in range(5):
                    await mcp.call_tool(
                        "memory_store_fact",
                        {
                            "category": "codebase",
                            "fact": f"Billing retry note {i}: "
                            + "the billing retry worker retries failed charges with backoff " * 9,
                            "importance": 2,
                        },
                    )
                r = await mcp.call_tool(
                    "memory_start_session", {"focus": "fix the billing retry worker"}
                )
    text = r.content[0].text  # type: ignore[union-attr]
    assert "- 📌 Deploys go through the release train" in _section(text, "👤")
    key_id = key.structured_content["fact_id"]  # type: ignore[index]
    assert f"#{key_id}," in _section(text, "🗂️")
    assert r.structured_content["omitted"]["profile fields"] == 1  # type: ignore[index]
