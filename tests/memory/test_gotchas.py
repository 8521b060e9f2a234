"""Facts bound to files: stored with memory_store_fact(files=…), shown when memory_announce_focus
names an overlapping file and when memory_recall's question names one; never a deprecated or
forgotten fact, another project's or another user's."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastmcp import Client
from mcp_calls import Cli, call, refused

from bigmind import limits, project
from bigmind.config import Settings
from bigmind.mcp.server import build_server
from bigmind.memory import gotchas, mirror
from bigmind.project import Project
from bigmind.runtime import Runtime
from bigmind.storage.store import Store

pytestmark = pytest.mark.anyio

LOCK = "SQLite locks db.py's writer for 5 s under load: open it with busy_timeout"


async def _gotcha(client: Cli, files: object, fact: str = LOCK, category: str = "gotcha") -> int:
    _, data = await call(client, "memory_store_fact", category=category, fact=fact, files=files)
    return int(data["fact_id"])


async def _focus(client: Cli, *files: str) -> tuple[str, list[dict[str, object]]]:
    text, data = await call(
        client, "memory_announce_focus", description="Fixing the writer", files=list(files)
    )
    return text, data["gotchas"]


async def test_focus_on_the_same_file_spelled_otherwise_returns_its_gotcha(client: Cli) -> None:
    fid = await _gotcha(client, "./src\\db.py")
    text, found = await _focus(client, "/abs/repo/src/db.py", "README.md")
    assert f"⚠️ Gotcha for /abs/repo/src/db.py: #{fid} SQLite locks" in text
    assert found == [
        {
            "file": "/abs/repo/src/db.py",
            "path": "src/db.py",
            "fact_id": fid,
            "category": "gotcha",
            "fact": LOCK,
        }
    ]


async def test_focus_on_other_files_returns_none(client: Cli) -> None:
    await _gotcha(client, ["src/db.py"])
    # Same name in another folder, a longer name, a folder: other files.
    text, found = await _focus(client, "lib/db.py", "src/mydb.py", "src")
    assert found == [] and "Gotcha" not in text


async def test_recall_naming_the_file_leads_with_its_gotcha(client: Cli) -> None:
    fid = await _gotcha(client, ["src/db.py"])
    text, data = await call(client, "memory_recall", query="why does `db.py` lock?")
    assert text.startswith(f"⚠️ Gotcha for db.py: #{fid} SQLite locks")
    assert [g["fact_id"] for g in data["gotchas"]] == [fid]
    _, plain = await call(client, "memory_recall", query="why does the writer lock")
    assert "gotchas" not in plain
    _, chunks = await call(client, "memory_recall", query="db.py", kinds=["chunk"])
    assert "gotchas" not in chunks  # facts were not asked for


async def test_gotchas_come_first_then_other_facts_of_the_file(client: Cli) -> None:
    note = await _gotcha(client, ["src/db.py"], "db.py wraps apsw", category="codebase")
    fid = await _gotcha(client, ["src/db.py"])
    text, found = await _focus(client, "src/db.py")
    assert [g["fact_id"] for g in found] == [fid, note]
    assert f"#{note} [codebase] db.py wraps apsw" in text


async def test_a_deprecated_or_forgotten_fact_is_never_shown(client: Cli, runtime: Runtime) -> None:
    old = await _gotcha(client, ["src/db.py"])
    await call(client, "memory_deprecate_fact", fact_id=old, reason="fixed in v2")
    assert (await _focus(client, "src/db.py"))[1] == []
    _, data = await call(client, "memory_recall", query="db.py locks")
    assert "gotchas" not in data
    gone = await _gotcha(client, ["src/db.py"], "db.py needs WAL before any reader opens")
    assert gotchas.of_facts(runtime.store, [gone]) == {gone: ["src/db.py"]}
    await call(client, "memory_forget", kind="fact", id=gone)
    assert gotchas.of_facts(runtime.store, [gone]) == {}  # the rows went with the fact


async def test_a_repeat_adds_its_new_files(client: Cli) -> None:
    fid = await _gotcha(client, ["src/db.py"])
    text, data = await call(
        client, "memory_store_fact", category="gotcha", fact=LOCK, files="src/db.py, src/pg.py"
    )
    assert data["fact_id"] == fid and not data["created"] and "Bound to" in text
    assert [g["fact_id"] for g in (await _focus(client, "src/pg.py"))[1]] == [fid]


@pytest.mark.parametrize(
    ("files", "says"),
    [
        ([f"f{i}.py" for i in range(limits.FILES + 1)], f"at most {limits.FILES} files per fact"),
        (["a/" * 600 + "b.py"], "longer than 1,000 characters"),
    ],
)
async def test_bad_files_are_refused_in_one_line(
    client: Cli, runtime: Runtime, files: list[str], says: str
) -> None:
    msg = await refused(
        client, "memory_store_fact", category="gotcha", fact="Never stored", files=files
    )
    assert says in msg and "\n" not in msg
    assert runtime.store.facts.count() == 0  # nothing was written


async def test_the_compact_profile_binds_files_too(settings: Settings, runtime: Runtime) -> None:
    s = settings.model_copy(update={"tools": "compact"})
    async with Client(build_server(s, runtime)) as compact:
        _, data = await call(
            compact, "memory_store_fact", category="gotcha", fact=LOCK, files=["src/db.py"]
        )
        assert data["files"] == ["src/db.py"]
        _, found = await call(compact, "memory_recall", query="src/db.py")
        assert [g["fact_id"] for g in found["gotchas"]] == [data["fact_id"]]


A = Project("github.com/acme/payments", "payments")
B = Project("github.com/acme/search", "search")


def test_a_project_fact_is_shown_in_its_project_only(store: Store) -> None:
    with project.using(A):
        fact, _, _ = store.store_fact("gotcha", LOCK, files=["src/db.py"])
        assert [b.fact.id for b in gotchas.for_files(store, ["src/db.py"])] == [fact.id]
    with project.using(B):
        assert gotchas.for_files(store, ["src/db.py"]) == []
        shared, _, _ = store.store_fact(
            "gotcha", "db.py is shared", scope="global", files=["db.py"]
        )
    with project.using(A):
        found = gotchas.for_files(store, ["src/db.py"])
        assert {b.fact.id for b in found} == {fact.id, shared.id}


def test_another_users_gotchas_never_show(store: Store) -> None:
    store.store_fact("gotcha", LOCK, files=["src/db.py"])
    bob = Store(store.db, "bob")
    assert gotchas.for_files(bob, ["src/db.py"]) == []


@pytest.mark.parametrize(
    ("question", "files"),
    [
        ("why does db.py lock?", ["db.py"]),
        ("see src/app/main.ts and ./lib\\x.h", ["src/app/main.ts", "lib/x.h"]),
        ("(`bigmind/storage/db.py`), e.g. v1.2", ["bigmind/storage/db.py", "e.g"]),
        ("which broker do payments use", []),
    ],
)
def test_the_files_a_question_names(question: str, files: list[str]) -> None:
    assert gotchas.named_in(question) == files


def test_the_mirror_shows_files_and_a_pull_keeps_them(store: Store, tmp_path: Path) -> None:
    with project.using(A):
        fact, _, _ = store.store_fact("gotcha", LOCK, files=["src/db.py", "src/pg.py"])
        path = tmp_path / "mirror.md"
        mirror.write(store, path)
        text = path.read_text(encoding="utf-8")
        assert f"- [#{fact.id}] {LOCK}\n  files: `src/db.py`, `src/pg.py`\n" in text
        path.write_text(text.replace("for 5 s", "for 9 s"), encoding="utf-8")
        pulled = mirror.pull(store, None, path)
    assert pulled.updated == [fact.id] and pulled.added == []
    assert "for 9 s" in store.get_fact(fact.id).fact
    assert gotchas.of_facts(store, [fact.id]) == {fact.id: ["src/db.py", "src/pg.py"]}
