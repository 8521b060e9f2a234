"""Reminders (memory_remind): set for the next session or a date, leading the packet when due
until marked done; scoped to the project and to the user; through a real MCP client."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from fastmcp import Client
from mcp_calls import Cli, call, end, refused

from bigmind import project
from bigmind.config import Settings
from bigmind.errors import InvalidInput
from bigmind.mcp.server import build_server
from bigmind.memory import erasure, mirror, purge, reminders, transfer
from bigmind.memory.context import REMINDERS_SHOWN, build_context
from bigmind.project import Project
from bigmind.runtime import Runtime
from bigmind.storage.store import Store

pytestmark = pytest.mark.anyio
A = Project("github.com/acme/payments", "payments")
B = Project("github.com/acme/search", "search")


def reminder_lines(packet: str) -> list[str]:
    return [line for line in packet.splitlines() if line.startswith("> ⏰ Reminder #")]


async def context(client: Cli) -> str:
    text, _ = await call(client, "memory_get_context")
    return text


async def test_a_next_session_reminder_leads_the_next_sessions_packet_until_done(
    client: Cli,
) -> None:
    _, s = await call(client, "memory_start_session")
    await call(client, "memory_store_fact", category="decision", fact="Payments use Kafka")
    text, data = await call(client, "memory_remind", text="Rerun the flaky payments test")
    rid = data["reminder"]["id"]
    assert text == f"Reminder #{rid} set, due next session."
    assert reminder_lines(await context(client)) == []  # not in the session that set it
    await end(client, s["session_id"])
    packet, _ = await call(client, "memory_start_session")
    lines = packet.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith("> Recalled memory")) + 1
    assert lines[at].startswith(f"> ⏰ Reminder #{rid} (set 20")  # right after that line
    assert lines[at].endswith(
        f": Rerun the flaky payments test — memory_remind(done={rid}) when done"
    )
    assert at < next(i for i, ln in enumerate(lines) if "Payments use" in ln)
    text, data = await call(client, "memory_remind", done=rid)
    assert text == f"Reminder #{rid} is done." and data["reminder"]["done_at"]
    assert reminder_lines(await context(client)) == []
    again, _ = await call(client, "memory_remind", done=rid)  # done twice: no change
    assert again == text


async def test_a_dated_reminder_is_due_from_its_date(client: Cli) -> None:
    _, future = await call(client, "memory_remind", text="Renew the cert", when="2999-01-01")
    await call(client, "memory_remind", text="Upgrade Kafka", when="2020-03-04")
    text, at = await call(
        client, "memory_remind", text="Ping Dana", when="2020-03-04T09:30:00+02:00"
    )
    assert at["reminder"]["due_at"].startswith("2020-03-04 07:30:00")  # stored in UTC
    assert "due from 2020-03-04 07:30 UTC" in text
    assert future["reminder"]["due_at"].startswith("2999-01-01 00:00:00")
    shown = reminder_lines(await context(client))  # due at once, in this very session
    assert [ln.split(":", 1)[1].split(" — ")[0] for ln in shown] == [" Upgrade Kafka", " Ping Dana"]


async def test_bad_calls_are_refused_in_one_line(client: Cli) -> None:
    msg = await refused(client, "memory_remind", text="x", when="next tuesday")
    assert "\n" not in msg and "'next_session'" in msg and "ISO date" in msg
    assert "Pass text" in await refused(client, "memory_remind")
    assert "No reminder #999" in await refused(client, "memory_remind", done=999)
    assert "must not be empty" in await refused(client, "memory_remind", text="  ")


async def test_a_write_needs_no_started_session(client: Cli) -> None:
    text, data = await call(client, "memory_remind", text="Check the migration")
    assert "No session was open, so one was opened" in text and data["reminder"]["session_id"]


@pytest.fixture
async def bob(settings_for: Callable[[str], Settings]) -> AsyncIterator[Cli]:
    rt = Runtime(settings_for("bob"))
    async with Client(build_server(rt.settings, rt)) as c:
        yield c
    rt.close()


async def test_another_user_never_sees_or_settles_a_reminder(client: Cli, bob: Cli) -> None:
    _, data = await call(client, "memory_remind", text="Alice rotates keys", when="2020-01-01")
    rid = data["reminder"]["id"]
    assert "Alice rotates" not in await context(bob)
    assert await refused(bob, "memory_remind", done=rid) == (
        await refused(bob, "memory_remind", done=rid + 1000)
    ).replace(str(rid + 1000), str(rid))
    assert "Alice rotates" in await context(client)


def test_a_reminder_is_seen_in_its_project_and_one_set_outside_any_everywhere(
    store: Store,
) -> None:
    with project.using(A):
        reminders.add(store, "Payments: bump the SDK", "2020-01-01")
    with project.using(B):
        reminders.add(store, "Search: reindex", "2020-01-01")
    home = Store(store.db, "alice")  # no project at all
    with project.using(None):
        reminders.add(home, "Everywhere: renew the laptop", "2020-01-01")
    with project.using(A):
        seen_a = build_context(store).text
    with project.using(B):
        seen_b = build_context(store).text
    assert "bump the SDK" in seen_a and "reindex" not in seen_a and "renew the laptop" in seen_a
    assert "reindex" in seen_b and "bump the SDK" not in seen_b and "renew the laptop" in seen_b


async def test_roots_scope_a_reminder_to_their_project(
    settings: Settings, runtime: Runtime, tmp_path: Path
) -> None:
    pay, search = tmp_path / "pay", tmp_path / "search"
    pay.mkdir(), search.mkdir()

    def rooted(folder: Path) -> Cli:
        return Client(build_server(settings, runtime), roots=[folder.as_uri()], mode="legacy")

    async with rooted(pay) as a:
        await call(a, "memory_remind", text="Payments: rerun the refunds job")
        await end(a, None)
        assert "refunds job" in (await call(a, "memory_start_session"))[0]
    async with rooted(search) as b:
        assert "refunds job" not in (await call(b, "memory_start_session"))[0]


def test_due_reminders_stay_within_the_packet_budget(store: Store) -> None:
    for n in range(8):
        reminders.add(store, f"Reminder {n}: " + "word " * 95, "2020-01-01")
    store.store_fact("decision", "Payments use Kafka")
    packet = build_context(store, budget=300)
    assert packet.tokens <= 300
    shown = packet.shown["reminders"]
    assert 0 < shown == len(reminder_lines(packet.text)) < REMINDERS_SHOWN
    assert packet.omitted["reminders"] == 8 - shown
    assert f"{8 - shown} reminders (due: mark the shown ones done" in packet.text
    full = build_context(store)
    assert len(reminder_lines(full.text)) == REMINDERS_SHOWN == 8 - full.omitted["reminders"]


def test_when_accepts_the_documented_forms_only() -> None:
    assert reminders.due_at(None) is None and reminders.due_at(" Next_Session ") is None
    assert reminders.due_at("2025-07-01") == "2025-07-01 00:00:00.000000"
    assert reminders.due_at("2025-07-01T09:00Z") == "2025-07-01 09:00:00.000000"
    for bad in ("tomorrow", "2025-13-01", "07/01/2025"):
        with pytest.raises(InvalidInput, match="'when' must be"):
            reminders.due_at(bad)


async def test_compact_journal_sets_and_settles_a_reminder(
    settings: Settings, runtime: Runtime
) -> None:
    s = settings.model_copy(update={"tools": "compact"})
    async with Client(build_server(s, runtime)) as c:
        text, data = await call(
            c, "memory_journal", action="remind", text="Ship the docs", when="2020-01-01"
        )
        rid = data["reminder"]["id"]
        assert text.startswith(f"Reminder #{rid} set, due from 2020-01-01")
        packet, _ = await call(c, "memory_get", what="context")
        assert f"memory_remind(done={rid})" in packet
        assert "needs id" in await refused(c, "memory_journal", action="done")
        assert "needs text" in await refused(c, "memory_journal", action="remind")
        text, _ = await call(c, "memory_journal", action="done", id=rid)
        assert text == f"Reminder #{rid} is done."
        packet, _ = await call(c, "memory_get", what="context")
        assert reminder_lines(packet) == []


async def test_forget_erases_a_reminder_and_a_forgotten_session_keeps_its_own(
    client: Cli, runtime: Runtime
) -> None:
    _, s = await call(client, "memory_start_session")
    _, one = await call(client, "memory_remind", text="Erase me", when="2020-01-01")
    _, two = await call(client, "memory_remind", text="Keep me")
    text, data = await call(client, "memory_forget", kind="reminder", id=one["reminder"]["id"])
    assert data["removed"] == {"reminders": 1} and "Forgot reminder #" in text
    _, data = await call(client, "memory_forget", kind="session", id=s["session_id"])
    assert data["kept"] == {"reminders": [two["reminder"]["id"]]}
    left = reminders.pending(runtime.store)
    assert [(r.text, r.session_id) for r in left] == [("Keep me", None)]
    assert "Keep me" in await context(client)  # its session gone: due in every session
    found = purge.find(runtime.store, "keep me")
    assert [(t.kind, t.label) for t in found.targets] == [("reminder", "Keep me")]


def test_export_import_and_the_mirror_keep_reminders(store: Store, tmp_path: Path) -> None:
    r, _ = reminders.add(store, "Rotate the deploy key", "2030-01-01")
    reminders.done(store, reminders.add(store, "Done already")[0].id)
    data = transfer.export_data(store)
    assert [x["text"] for x in data["reminders"]] == ["Rotate the deploy key", "Done already"]
    erasure.forget(store, [erasure.resolve(store, "reminder", x["id"]) for x in data["reminders"]])
    assert reminders.pending(store) == []
    assert transfer.import_data(store, data).added["reminders"] == 2
    assert [x.text for x in reminders.pending(store)] == ["Rotate the deploy key"]
    assert transfer.import_data(store, data).added["reminders"] == 0  # merged once
    text, *_ = mirror.render(store)
    section = text.split("## Reminders")[1].split("##")[0]
    assert f"- (r{r.id}, due from 2030-01-01 00:00 UTC) Rotate the deploy key" in section
    assert "Done already" not in section
