"""Secrets in ordinary phrasing, on every write path: each way a sentence may hold a secret
(``secret_corpus.PLACEMENTS``: prose in four languages, "pw for …", a value on the next line, a
key split by a newline, a zero-width or a bidi character, full-width letters, a base64 or a
percent-encoded database URL…) through every MCP tool that stores text, a file list of a focus
announcement and of a fact, and an import; then looked for in every table's raw rows, an
export, the Markdown mirror and the replies. Prints the matrix (path × placement).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from mcp_calls import Cli, call
from secret_corpus import PLACEMENTS, Fakes, Placement, database_text, placements

from bigmind import redact
from bigmind.config import Settings
from bigmind.memory import mirror, transfer
from bigmind.models import now_ts
from bigmind.runtime import Runtime
from bigmind.storage.connect import open_database
from bigmind.storage.fact_files_table import FactFiles
from bigmind.storage.focus_table import FocusAnnouncements
from bigmind.storage.store import Store

pytestmark = pytest.mark.anyio


@dataclass
class Matrix:
    client: Cli
    tmp: Path
    fakes: Fakes = field(default_factory=lambda: Fakes(41))
    cells: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)
    replies: dict[str, list[str]] = field(default_factory=dict)
    session: str = ""

    def cases(self, path: str) -> list[Placement]:
        out = placements(self.fakes)
        for p in out:
            self.cells[(path, p.kind)] = p.secrets
        return out

    async def call(self, path: str, tool: str, **args: Any) -> dict[str, Any]:
        text, data = await call(self.client, tool, **args)
        self.replies.setdefault(path, []).append(text + json.dumps(data, ensure_ascii=False))
        return data


Path_ = Callable[[Matrix, str], Awaitable[None]]
PATHS: dict[str, Path_] = {}


def path(name: str) -> Callable[[Path_], Path_]:
    def register(fn: Path_) -> Path_:
        PATHS[name] = fn
        return fn

    return register


@path("memory_store_fact")
async def _fact(m: Matrix, name: str) -> None:
    for i, p in enumerate(m.cases(name)):
        await m.call(name, "memory_store_fact", category="codebase", fact=f"{name} {i}: {p.text}")


@path("memory_store_fact(files)")
async def _fact_files(m: Matrix, name: str) -> None:
    for i, p in enumerate(m.cases(name)):
        fact = f"Gotcha {i} of the deploy scripts"
        await m.call(name, "memory_store_fact", category="gotcha", fact=fact, files=[p.text])


@path("memory_update_fact")
async def _update(m: Matrix, name: str) -> None:
    for i, p in enumerate(m.cases(name)):
        data = await m.call(name, "memory_store_fact", category="codebase", fact=f"Step {i} done")
        await m.call(
            name, "memory_update_fact", fact_id=data["fact_id"], fact=f"{name} {i}: {p.text}"
        )


@path("memory_deprecate_fact")
async def _deprecate(m: Matrix, name: str) -> None:
    for i, p in enumerate(m.cases(name)):
        data = await m.call(name, "memory_store_fact", category="codebase", fact=f"Rule {i} holds")
        await m.call(name, "memory_deprecate_fact", fact_id=data["fact_id"], reason=p.text)


@path("memory_end_session")
async def _end(m: Matrix, name: str) -> None:
    for p in m.cases(name):
        data = await m.call(name, "memory_start_session", ide_hint="test")
        await m.call(
            name,
            "memory_end_session",
            session_id=data["session_id"],
            one_liner="Rotated the deploy credentials",
            topics=None,
            outcome=None,
            summary=p.text,
        )


@path("memory_flag_important")
async def _flag(m: Matrix, name: str) -> None:
    for p in m.cases(name):
        await m.call(
            name,
            "memory_flag_important",
            content=p.text,
            flag_reason="the deploy fix",
            session_id=m.session,
        )


@path("memory_append_chunk")
async def _chunk(m: Matrix, name: str) -> None:
    for p in m.cases(name):
        await m.call(name, "memory_append_chunk", content=p.text, role="user", session_id=m.session)


@path("memory_update_profile")
async def _profile(m: Matrix, name: str) -> None:
    """The pinned facts replace the list: one call with every placement."""
    await m.call(name, "memory_update_profile", pinned_facts=[p.text for p in m.cases(name)])


@path("memory_announce_focus")
async def _focus(m: Matrix, name: str) -> None:
    for p in m.cases(name):
        await m.call(name, "memory_announce_focus", session_id=m.session, description=p.text)


@path("memory_announce_focus(files)")
async def _focus_files(m: Matrix, name: str) -> None:
    for p in m.cases(name):
        await m.call(
            name,
            "memory_announce_focus",
            session_id=m.session,
            description="Editing the deploy scripts",
            files=["deploy/run.sh", p.text],
        )


@path("memory_log_token_save")
async def _save(m: Matrix, name: str) -> None:
    for p in m.cases(name):
        await m.call(
            name,
            "memory_log_token_save",
            session_id=m.session,
            description=p.text,
            tokens_saved=100,
            method_used="memory",
        )


@path("memory_add_hypothesis")
async def _hypothesis(m: Matrix, name: str) -> None:
    for p in m.cases(name):
        await m.call(name, "memory_add_hypothesis", hypothesis=p.text, session_id=m.session)


@path("memory_resolve_hypothesis")
async def _resolve(m: Matrix, name: str) -> None:
    for i, p in enumerate(m.cases(name)):
        data = await m.call(name, "memory_add_hypothesis", hypothesis=f"Cause {i} is the cache")
        await m.call(
            name,
            "memory_resolve_hypothesis",
            hypothesis_id=data["hypothesis_id"],
            status="confirmed",
            resolution=p.text,
        )


@path("memory_record_attempt")
async def _attempt(m: Matrix, name: str) -> None:
    for p in m.cases(name):
        await m.call(
            name,
            "memory_record_attempt",
            approach=p.text,
            outcome="failed",
            why="the job timed out",
            session_id=m.session,
        )


@path("memory_remind")
async def _remind(m: Matrix, name: str) -> None:
    for p in m.cases(name):
        await m.call(name, "memory_remind", text=p.text, when="2020-01-01", session_id=m.session)


@path("memory_remember_person")
async def _person(m: Matrix, name: str) -> None:
    for i, p in enumerate(m.cases(name)):
        await m.call(name, "memory_remember_person", username=f"dev{i}", notes=p.text)


@path("memory_promote_to_global")
async def _promote(m: Matrix, name: str) -> None:
    for i, p in enumerate(m.cases(name)):
        await m.call(
            name, "memory_promote_to_global", category="standard", title=f"Rule {i}", content=p.text
        )


@path("memory_approve_global")
async def _approve(m: Matrix, name: str) -> None:
    for i, p in enumerate(m.cases(name)):
        data = await m.call(
            name, "memory_promote_to_global", category="pattern", title=f"Retry {i}", content="x"
        )
        await m.call(
            name,
            "memory_approve_global",
            entry_id=data["entry_id"],
            action="deprecate",
            notes=p.text,
        )


IMPORTED = ("memory_import(facts)", "memory_import(focus files)", "memory_import(fact files)")


async def _import(m: Matrix) -> None:
    """An export of a version that stored these raw: facts, focus file lists, fact files."""
    old = open_database(Settings(db_path=m.tmp / "old" / "memory.db", db_url=None, user="alice"))
    try:
        store = Store(old, "alice")
        sid = "5e55e55e-0000-4000-8000-000000000002"
        facts, focus, files = (m.cases(name) for name in IMPORTED)
        ts = now_ts()
        with old.transaction() as tx:
            store.sessions.insert(tx, sid, ts)
            for i, (a, b, c) in enumerate(zip(facts, focus, files, strict=True)):
                fact = store.facts.insert(
                    tx,
                    category="codebase",
                    fact=f"import {i}: {a.text}",
                    source_session=sid,
                    confidence=1.0,
                    importance=5,
                    digest=f"raw-{i}",
                    ts=ts,
                )
                FocusAnnouncements(old, store.uid).add(tx, sid, f"Focus {i}", [b.text], None, ts)
                FactFiles(old, store.uid).add(tx, fact.id, [c.text], ts)
        target = m.tmp / "old-export.json"
        transfer.write_export(store, target)
    finally:
        old.close()
    await m.call(IMPORTED[0], "memory_import", input_path=str(target))


async def test_every_placement_on_every_path(
    client: Cli, runtime: Runtime, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    m = Matrix(client, tmp_path)
    _, data = await call(client, "memory_start_session", ide_hint="claude-code")
    m.session = data["session_id"]
    for name, write in PATHS.items():
        await write(m, name)
    await _import(m)
    _, data = await call(client, "memory_export", output_path="after.json")
    sinks = {
        "stored": database_text(runtime.store.db),
        "export": Path(data["path"]).read_text(encoding="utf-8").lower(),
        "mirror": mirror.render(runtime.store)[0].lower(),
    }
    paths = [*PATHS, *IMPORTED]
    leaks: dict[tuple[str, str], list[str]] = {}
    for (p, kind), secrets in m.cells.items():
        seen = {**sinks, "reply": "\n".join(m.replies.get(p, [])).lower()}
        where = [k for k, text in seen.items() if any(s.lower() in text for s in secrets)]
        if where:
            leaks[(p, kind)] = where
    total = len(m.cells)
    assert total == len(paths) * len(PLACEMENTS)
    with capsys.disabled():
        print(f"\nplacements × paths: {total - len(leaks)}/{total} redacted")
        for sink in ("stored", "export", "mirror", "reply"):
            print(f"  raw in {sink}: {sum(sink in w for w in leaks.values())}")
        for p in paths:
            missed = [k for (q, k) in leaks if q == p]
            print(
                f"  {p:32} {len(PLACEMENTS) - len(missed):2}/{len(PLACEMENTS)}  {' '.join(missed)}"
            )
        for kind in PLACEMENTS:
            n = sum(1 for (_, k) in leaks if k == kind)
            print(f"  {kind:32} {len(paths) - n:2}/{len(paths)}")
    assert 100 * (total - len(leaks)) / total >= 98.0, leaks
    assert [p for p in paths if sum(q == p for q, _ in leaks) > 1] == [], leaks
    assert "[redacted:password]" in sinks["stored"]


async def test_a_token_word_before_a_hash_is_kept(client: Cli, runtime: Runtime) -> None:
    """The other way round: "token" before a 32-hex id in prose is no secret."""
    fact = "The cache token 9fceb02d0ae598e95dc970b74767f193 names the build, not a credential"
    text, data = await call(client, "memory_store_fact", category="codebase", fact=fact)
    assert "redacted" not in data or not data["redacted"], text
    assert runtime.store.get_fact(data["fact_id"]).fact == fact
    assert redact.redact(fact).text == fact
