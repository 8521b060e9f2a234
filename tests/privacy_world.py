"""Two users on one database for the privacy matrix (tests/storage/test_privacy.py): alice's memory,
filled through the tools with marker words, bob's baseline, and alice's side before and after."""

from __future__ import annotations

import json
import re
import threading
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import anyio
import pytest
from fastmcp import Client
from fastmcp.exceptions import ToolError
from mcp_calls import Cli, call

from bigmind.config import Settings
from bigmind.mcp.server import build_server
from bigmind.memory import transfer
from bigmind.memory.users import set_role
from bigmind.models import ts_ago
from bigmind.runtime import Runtime

MARKER = "zebrasecret"  # in every private row alice writes
PENDING = "yakpending"  # in alice's pending company entry: hers and the curators' only
SHARED = "okapishared"  # in what alice shares: a person, an approved company entry
LURE = "quasar vault"  # words alice's texts and bob's share, so bob's searches reach hers
BOB = "quokka"  # in bob's own memory: his reads must still find it
SHARED_FILE = "src/billing.py"  # announced by alice and bob: no cross-user conflict
UNKNOWN_INT = 987_654  # an id nobody has
Settings_for = Callable[[str], Settings]


# -- the two users -------------------------------------------------------------------------------
@dataclass
class Alice:
    """Alice's ids, as her tools reported them."""

    uid: str = ""
    closed: str = ""  # session ended with a summary (chunks, flag, focus, savings, hypotheses)
    open: str = ""  # session still open, with a focus on files
    fact: int = 0
    old_fact: int = 0  # deprecated
    chunk: int = 0
    flagged: int = 0
    hypothesis: int = 0  # open
    resolved: int = 0
    reminder: int = 0  # due since 2020: in every packet of hers
    focus: int = 0  # a focus announcement of her closed session
    attempt: int = 0  # a failed approach, in her closed session
    approved_entry: int = 0  # company knowledge she promoted and approved (shared)
    pending_entry: int = 0


@dataclass
class World:
    bob: Cli
    alice_rt: Runtime
    bob_rt: Runtime
    tmp: Path
    exits: list[int]
    exited: threading.Event
    clients: AsyncExitStack  # alice's client, once opened
    a: Alice = field(default_factory=Alice)
    bob_session: str = ""
    bob_fact: int = 0
    bob_chunk: int = 0
    called: set[str] = field(default_factory=set)
    _n: int = 0
    _alice: Cli | None = None

    async def alice(self) -> Cli:
        """Alice's client, her server built on first use: building a server is most of a
        world's start, and most of bob's cases never call her tools."""
        if self._alice is None:
            server = build_server(self.alice_rt.settings, self.alice_rt)
            self._alice = await self.clients.enter_async_context(Client(server))
        return self._alice

    def forbidden(self) -> list[str]:
        return [MARKER, PENDING, self.a.closed, self.a.open]

    def check(
        self, what: str, text: str, args: dict[str, Any] | None = None, allow: Sequence[str] = ()
    ) -> None:
        """No private string of alice's in ``text``, once bob's own arguments (and ``allow``,
        what bob handed over otherwise) are blanked out: a refusal names the id bob gave, a
        search repeats his query."""
        for value in [*_strings(args or {}), *allow]:
            text = text.replace(value, "<arg>")
        for secret in self.forbidden():
            assert secret not in text, f"{what} leaked {secret!r}:\n{text[:2000]}"

    async def call(self, tool: str, **args: Any) -> tuple[str, dict[str, Any]]:
        """Bob calls ``tool``; the answer (text and structured content) must leak nothing."""
        self.called.add(tool)
        r = await self.bob.call_tool(tool, args)
        text = "\n".join(getattr(c, "text", "") for c in r.content)
        data = r.structured_content or {}
        self.check(tool, text + "\n" + json.dumps(data, ensure_ascii=False), args)
        return text, data

    async def refused(self, tool: str, _allow: Sequence[str] = (), **args: Any) -> str:
        """Bob's call must fail; its message must leak nothing either."""
        self.called.add(tool)
        with pytest.raises(ToolError) as exc:
            await self.bob.call_tool(tool, args)
        msg = str(exc.value)
        self.check(tool, msg, args, _allow)
        return msg

    async def refused_like_unknown(
        self, tool: str, key: str, foreign: str | int, unknown: str | int, **args: Any
    ) -> str:
        """Alice's id in ``key`` is refused with the very words an unknown id gets."""
        mine = await self.refused(tool, **args, **{key: foreign})
        other = await self.refused(tool, **args, **{key: unknown})
        assert _blank(mine, foreign) == _blank(other, unknown), (tool, mine, other)
        return mine

    def path(self, name: str) -> Path:
        self._n += 1
        return self.tmp / f"{self._n}-{name}"


def _strings(value: Any) -> list[str]:
    """String arguments worth blanking (short ones like 'all' could hide nothing)."""
    if isinstance(value, str):
        return [value] if len(value) >= 8 else []
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list | tuple):
        return [s for v in value for s in _strings(v)]
    return []


def _blank(msg: str, value: str | int) -> str:
    return re.sub(rf"(?<![\w-]){re.escape(str(value))}(?![\w-])", "<id>", msg)


def new_sid() -> str:
    return str(uuid.uuid4())


@dataclass(frozen=True)
class Seed:
    """The ids of a world already written to a database, for the copies of that database."""

    a: Alice
    bob_session: str
    bob_fact: int
    bob_chunk: int


@asynccontextmanager
async def open_world(
    settings_for: Settings_for, tmp: Path, model: Path | None = None, seed: Seed | None = None
) -> AsyncIterator[World]:
    """Alice's and bob's servers (team mode) on one database; bob's session opens first (so a
    diff since it would cover all of alice's writes), then alice fills her memory. With a
    ``model``, both embed in the background as the real server does. With a ``seed``, the
    database is a copy of one already filled so (see :func:`fill_seed`): the servers start on
    it and nothing is written."""
    exits: list[int] = []
    exited = threading.Event()

    def fake_exit(code: int) -> None:
        exits.append(code)
        exited.set()

    update: dict[str, Any] = {"mode": "team"} | ({"embed_model": str(model)} if model else {})
    s_a = settings_for("alice").model_copy(update=update)
    s_b = settings_for("bob").model_copy(update=update)
    a_rt = Runtime(s_a, exit_process=fake_exit, background=model is not None)
    b_rt = Runtime(s_b, exit_process=fake_exit, background=model is not None)
    try:
        if seed is None:
            set_role(a_rt.store.db, "alice", "admin")  # `bigmind user set-role`; bob is a member
        async with AsyncExitStack() as clients, Client(build_server(s_b, b_rt)) as bob:
            w = World(bob, a_rt, b_rt, tmp, exits, exited, clients)
            if seed is None:
                await _bob_baseline(w)
                await _fill_alice(w)
            else:
                w.a = replace(seed.a)
                w.bob_session, w.bob_fact, w.bob_chunk = (
                    seed.bob_session,
                    seed.bob_fact,
                    seed.bob_chunk,
                )
            yield w
    finally:
        a_rt.close()
        b_rt.close()


def fill_seed(settings_for: Settings_for, tmp: Path) -> Seed:
    """Fill the database of ``settings_for`` as :func:`open_world` does, once, for copies:
    the ~40 tool calls are most of a privacy test's time, a copy of the file or of the
    PostgreSQL database a fraction of it. Returns the ids every copy shares."""

    async def fill() -> Seed:
        async with open_world(settings_for, tmp) as w:
            return Seed(replace(w.a), w.bob_session, w.bob_fact, w.bob_chunk)

    return anyio.run(fill)


def embedded(w: World) -> None:
    """Both servers' background embedders have embedded everything written so far."""
    for rt in (w.alice_rt, w.bob_rt):
        sem = rt.semantic
        assert sem is not None
        rt.wrote()
        assert sem.wait_idle(60) and sem.ready, sem.status()


async def _bob_baseline(w: World) -> None:
    _, s = await call(w.bob, "memory_start_session", ide_hint="vim")
    w.bob_session = s["session_id"]
    _, f = await call(
        w.bob, "memory_store_fact", category="preference", fact=f"{BOB} keeps the {LURE} tidy"
    )
    w.bob_fact = f["fact_id"]
    _, c = await call(w.bob, "memory_append_chunk", content=f"{BOB} asked about the {LURE}")
    w.bob_chunk = c["chunk_id"]


async def _fill_alice(w: World) -> None:
    a, cl = w.a, await w.alice()
    a.uid = w.alice_rt.store.uid
    _, s = await call(cl, "memory_start_session", ide_hint="vscode")
    a.closed = s["session_id"]
    _, c = await call(
        cl,
        "memory_append_chunk",
        content=f"{MARKER} chunk: the {LURE} passphrase is kept in the attic",
        session_id=a.closed,
        role="user",
        flag_reason=f"{MARKER} reason",
    )
    a.chunk = c["chunk_id"]
    _, c = await call(
        cl,
        "memory_flag_important",
        content=f"{MARKER} flagged: we chose the {LURE} for secrets",
        flag_reason="decision",
        session_id=a.closed,
    )
    a.flagged = c["chunk_id"]
    _, f = await call(
        cl,
        "memory_store_fact",
        category=MARKER,
        fact=f"{MARKER} fact: the {LURE} opens on tuesdays",
        confidence=0.4,
        session_id=a.closed,
        importance=9,
        files=[SHARED_FILE],  # a gotcha of hers for a file bob edits too
    )
    a.fact = f["fact_id"]
    _, f = await call(
        cl, "memory_store_fact", category="decision", fact=f"{MARKER} old: the {LURE} was blue"
    )
    a.old_fact = f["fact_id"]
    await call(
        cl,
        "memory_update_fact",
        fact_id=a.old_fact,
        fact=f"{MARKER} old: the {LURE} was navy blue",
        reason=f"{MARKER} it was navy",
    )
    await call(cl, "memory_deprecate_fact", fact_id=a.old_fact, reason=f"{MARKER} repainted")
    _, h = await call(
        cl, "memory_add_hypothesis", hypothesis=f"{MARKER} guess: the {LURE} holds", confidence=0.9
    )
    a.hypothesis = h["hypothesis_id"]
    _, h = await call(
        cl,
        "memory_add_hypothesis",
        hypothesis=f"{MARKER} bet: the {LURE} leaks",
        session_id=a.closed,
    )
    a.resolved = h["hypothesis_id"]
    _, r = await call(cl, "memory_remind", text=f"{MARKER} check the {LURE}", when="2020-01-01")
    a.reminder = r["reminder"]["id"]
    await call(cl, "memory_remind", text=f"{MARKER} next time: the {LURE}", session_id=a.closed)
    await call(
        cl,
        "memory_resolve_hypothesis",
        hypothesis_id=a.resolved,
        status="refuted",
        resolution=f"{MARKER} it held",
    )
    await call(
        cl,
        "memory_update_profile",
        role=f"{MARKER} {LURE} keeper",
        preferences=f"{MARKER} likes terse answers",
        pinned_facts=[f"{MARKER} pinned: the {LURE} key is green"],
    )
    _, fo = await call(
        cl,
        "memory_announce_focus",
        session_id=a.closed,
        description=f"{MARKER} focus on the {LURE}",
        files=[f"src/{MARKER}_vault.py", SHARED_FILE],
    )
    a.focus = fo["focus_id"]
    _, t = await call(
        cl,
        "memory_record_attempt",
        approach=f"{MARKER} tried: open the {LURE} with a crowbar",
        outcome="failed",
        why=f"{MARKER} the crowbar bent",
        session_id=a.closed,
    )
    a.attempt = t["attempt_id"]
    await call(
        cl,
        "memory_log_token_save",
        session_id=a.closed,
        description=f"{MARKER} skipped reading the {LURE} docs",
        tokens_saved=4321,
        method_used=MARKER,
    )
    await call(
        cl,
        "memory_end_session",
        session_id=a.closed,
        one_liner=f"{MARKER} {LURE} session",
        topics=[MARKER, "vault"],
        outcome=f"{MARKER} outcome",
        summary=f"{MARKER} summary: we moved the {LURE}",
        key_facts=[f"{MARKER} key fact"],
        code_refs=f"src/{MARKER}_vault.py",
        importance=9,
    )
    _, s = await call(cl, "memory_start_session", ide_hint="cursor")
    a.open = s["session_id"]
    await call(
        cl,
        "memory_announce_focus",
        session_id=a.open,
        description=f"{MARKER} now on the {LURE} again",
        files=[SHARED_FILE],
    )
    # Shared: a colleague (the team directory).
    await call(
        cl,
        "memory_remember_person",
        username="jdoe",
        display_name="Jane Doe",
        role="vault engineer",
        expertise=[SHARED],
        notes=f"{SHARED}: owns the {LURE}",
    )
    # Company knowledge: one entry approved (shared), one left pending.
    _, e = await call(
        cl,
        "memory_promote_to_global",
        category="standard",
        title=f"{SHARED} vault policy",
        content=f"{SHARED}: the {LURE} rotates keys monthly",
        importance=7,
    )
    a.approved_entry = e["entry_id"]
    await call(cl, "memory_approve_global", entry_id=a.approved_entry, action="approve")
    _, e = await call(
        cl,
        "memory_promote_to_global",
        category="decision",
        title=f"{PENDING} proposal",
        content=f"{PENDING}: move the {LURE} to the cellar",
        source_session=a.closed,
    )
    a.pending_entry = e["entry_id"]
    assert e["status"] == "pending"
    # Old enough that an unscoped vacuum, auto-close, stale-session or stale-fact check of bob's
    # would touch or count them.
    with w.alice_rt.store.db.transaction() as tx:
        tx.execute(
            "UPDATE conversation_chunks SET created_at = ? WHERE user_id = ?",
            (ts_ago(days=10), a.uid),
        )
        tx.execute(
            "UPDATE sessions SET started_at = ?, last_activity_at = ? WHERE id = ?",
            (ts_ago(hours=30), ts_ago(hours=30), a.open),
        )
        tx.execute("UPDATE facts SET updated_at = ? WHERE user_id = ?", (ts_ago(days=60), a.uid))


# -- alice's side, before and after ----------------------------------------------------------------
PRIVATE_TABLES = (
    "user",
    "identity_profile",
    "sessions",
    "session_summaries",
    "facts",
    "fact_history",
    "fact_files",
    "conversation_chunks",
    "hypotheses",
    "focus_announcements",
    "token_saves",
)


async def alice_snapshot(w: World) -> dict[str, Any]:
    """Every private row of alice's, all columns, as her memory_export writes them (its
    ``export_data``, as JSON), read on her side of the database."""
    data = json.loads(json.dumps(transfer.export_data(w.alice_rt.store), ensure_ascii=False))
    return {k: data[k] for k in PRIVATE_TABLES}


def assert_alice_intact(snap: dict[str, Any], a: Alice) -> None:
    facts = {f["id"]: f for f in snap["facts"]}
    assert facts[a.fact]["deprecated"] == 0 and facts[a.old_fact]["deprecated"] == 1
    hyps = {h["id"]: h["status"] for h in snap["hypotheses"]}
    assert hyps == {a.hypothesis: "open", a.resolved: "refuted"}
    sessions = {s["id"]: s for s in snap["sessions"]}
    assert sessions[a.open]["ended_at"] is None and sessions[a.closed]["has_tier2"] == 1
    assert MARKER in snap["session_summaries"][0]["summary"]
    assert {c["id"] for c in snap["conversation_chunks"]} == {a.chunk, a.flagged}
    assert MARKER in snap["identity_profile"][0]["role"]
    assert len(snap["focus_announcements"]) == 2 and len(snap["token_saves"]) == 1
    assert [v["fact"] for v in snap["fact_history"]] == [f"{MARKER} old: the {LURE} was blue"]
