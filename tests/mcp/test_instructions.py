"""The whole rules card reaches the agent: every ritual step, each naming its tool, in
memory_get_instructions and in every instruction snippet `bigmind install` writes; the packet
reminds the agent of open hypotheses and stale sessions when there are any."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from fastmcp import Client
from mcp_calls import Cli, call

from bigmind.cli import clients
from bigmind.config import Settings
from bigmind.mcp.instructions import RITUAL, SERVER_INSTRUCTIONS, ritual, rules
from bigmind.mcp.server import build_server
from bigmind.runtime import Runtime
from bigmind.tokencount import count_tokens

pytestmark = pytest.mark.anyio

CARD = Path(__file__).parents[1] / "fixtures" / "rules_card.txt"  # a copy of shared/seeds/001_…
SERVER_INSTRUCTIONS_CAP = 400  # tokens: the server instructions cost context every connection


def card_ritual_tools() -> set[str]:
    """The tools the rules card's ritual names: every section before its tool reference, and
    the reference's People and Diff rows (the card asks for them by category only)."""
    text = CARD.read_text(encoding="utf-8")
    ritual_part, reference = text.split("BigMind Tool Reference", 1)
    people_and_diff = reference[reference.index("| People |") :]
    names = re.findall(r"memory_[a-z_]*[a-z]", ritual_part + people_and_diff)
    return set(names) - {"memory_search"}  # "memory_search_*()": the three named beside it


def test_the_card_ritual_is_parsed() -> None:
    """The parser can fail: it finds the card's steps, not an empty set."""
    found = card_ritual_tools()
    assert {
        "memory_list_hypotheses",
        "memory_close_stale_sessions",
        "memory_log_token_save",
        "memory_remember_person",
        "memory_diff_sessions",
        "memory_resolve_hypothesis",
    } <= found
    assert "memory_vacuum" not in found  # maintenance is reference, not ritual


def test_every_tool_of_the_card_ritual_is_a_step_or_named_by_one() -> None:
    named = {s.tool for s in RITUAL} | {t for s in RITUAL for t in s.also}
    assert card_ritual_tools() <= named


def _covers(text: str) -> None:
    for tool in card_ritual_tools():
        assert tool in text, f"{tool} is missing"
    for step in RITUAL:
        assert step.call in text, f"step {step.call} is missing"
    assert "Every ~5 exchanges" in text and "🧠 BigMind Session: `<id>`" in text


async def test_memory_get_instructions_covers_every_step_with_a_served_tool(
    client: Client,  # type: ignore[type-arg]
) -> None:
    served = {t.name for t in await client.list_tools()}
    assert {s.tool for s in RITUAL} | {t for s in RITUAL for t in s.also} <= served
    text, _ = await call(client, "memory_get_instructions")
    _covers(text)


def test_every_installed_snippet_covers_every_step(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "proj"
    texts = {}
    for place in (None, project):
        for client in clients.CLIENTS:
            for t in clients.targets(client, place, home=home, exe="/x/bigmind"):
                if t.what in ("instructions", "rule"):
                    texts[str(t.path)] = t.apply(None).text or ""
    assert {Path(p).name for p in texts} == {"CLAUDE.md", "copilot-instructions.md", "bigmind.mdc"}
    texts["jetbrains"] = clients.rules_snippet()  # printed for the IDE's Rules dialog
    for where, text in texts.items():
        try:
            _covers(text)
        except AssertionError as exc:
            raise AssertionError(f"{where}: {exc}") from exc


def test_the_server_instructions_stay_short_and_point_to_the_whole_ritual() -> None:
    assert count_tokens(SERVER_INSTRUCTIONS) <= SERVER_INSTRUCTIONS_CAP
    assert "memory_get_instructions()" in SERVER_INSTRUCTIONS


def test_a_smaller_tool_set_names_only_the_tools_it_serves() -> None:
    served = {"memory_start_session", "memory_recall", "memory_end_session", "memory_search_facts"}
    text = ritual(served)
    assert "memory_start_session(" in text and "memory_end_session(" in text
    assert "memory_search_facts" in text and "memory_search_chunks" not in text
    assert "memory_list_hypotheses" not in text and "During:" not in text
    assert "memory_list_hypotheses" not in rules(served).split("## Child tasks")[0]


# -- the packet's reminders ------------------------------------------------------------------


async def _packet(client: Cli) -> str:
    text, _ = await call(client, "memory_get_context")
    return text


async def test_no_reminder_when_nothing_is_open(client: Client) -> None:  # type: ignore[type-arg]
    _, s = await call(client, "memory_start_session")
    assert "🔮" not in await _packet(client) and "⏳" not in await _packet(client)
    text, _ = await call(client, "memory_start_session", session_id=s["session_id"])
    assert "🔮" not in text and "⏳" not in text


async def test_open_hypotheses_are_recalled_until_resolved(
    client: Client,  # type: ignore[type-arg]
) -> None:
    await call(client, "memory_start_session")
    _, h = await call(client, "memory_add_hypothesis", hypothesis="The cache causes the lag")
    await call(client, "memory_add_hypothesis", hypothesis="Kafka is not the bottleneck")
    packet = await _packet(client)
    line = next(x for x in packet.splitlines() if "🔮" in x)
    assert "2 open hypotheses" in line and "memory_resolve_hypothesis(" in line
    for hid in (h["hypothesis_id"], h["hypothesis_id"] + 1):
        await call(
            client,
            "memory_resolve_hypothesis",
            hypothesis_id=hid,
            status="confirmed",
            resolution="yes",
        )
    assert "🔮" not in await _packet(client)


async def test_other_open_sessions_are_recalled_with_the_call_that_closes_them(
    client: Client,  # type: ignore[type-arg]
) -> None:
    _, first = await call(client, "memory_start_session", ide_hint="cursor")
    text, second = await call(client, "memory_start_session", ide_hint="vscode")
    line = next(x for x in text.splitlines() if "⏳" in x)
    assert "1 other open session:" in line and "memory_close_stale_sessions(" in line
    await call(client, "memory_close_stale_sessions", session_id=second["session_id"], force=True)
    text, _ = await call(client, "memory_start_session", session_id=second["session_id"])
    assert "⏳" not in text
    assert first["session_id"] != second["session_id"]


async def test_another_users_hypotheses_and_sessions_are_not_recalled(
    settings_for: Callable[[str], Settings], runtime: Runtime
) -> None:
    bob = settings_for("bob")
    bob_rt = Runtime(bob)
    try:
        async with Client(build_server(bob, bob_rt)) as c:
            await call(c, "memory_start_session")
            await call(c, "memory_add_hypothesis", hypothesis="Bob's guess")
        async with Client(build_server(runtime.settings, runtime)) as c:
            text, _ = await call(c, "memory_start_session")
        assert "🔮" not in text and "⏳" not in text
    finally:
        bob_rt.close()
