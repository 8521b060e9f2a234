"""The bootstrap packet: tier budgets, order, provenance, and what was left out."""

from __future__ import annotations

import re

import pytest

from bigmind.memory.context import (
    PACKET_BUDGET,
    TIER_0_BUDGET,
    TIER_G_BUDGET,
    build_context,
)
from bigmind.models import now_ts
from bigmind.storage.db import SQLiteBackend
from bigmind.storage.store import Store
from bigmind.tokens import count_tokens


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
    assert count_tokens(_section(p.text, "👤")) <= TIER_0_BUDGET


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
