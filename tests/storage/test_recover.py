"""A damaged or unreadable SQLite memory: every surface names the fix, and ``bigmind recover``
salvages the readable rows into a new file without touching the old one."""

from __future__ import annotations

import hashlib
import json
import os
import random
import subprocess
from pathlib import Path

import apsw
import pytest
from cli_run import run_cli
from mcp_calls import Cli, refused

from bigmind.errors import BackendUnavailable, DatabaseDamaged
from bigmind.search.ranking import Recall
from bigmind.storage import sqlitefile
from bigmind.storage.connect import connect
from bigmind.storage.db import SQLiteBackend
from bigmind.storage.sqlite_recover import recover
from bigmind.storage.store import Store

pytestmark = pytest.mark.sqlite_only  # the recovery of a SQLite file
FACTS = 200
PAGE = 4096


def bigmind(*args: str, db: Path, **env: str) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("BIGMIND_")}
    return run_cli(*args, env=full, BIGMIND_DB_PATH=str(db), BIGMIND_USER="alice", **env)


def make_memory(path: Path) -> None:
    """A real memory: facts and flagged exchanges, spread over many pages."""
    db = connect(path)
    store = Store(db, "alice")
    for i in range(FACTS):
        store.store_fact("decision", f"Decision {i}: payments retry through the kafka broker " * 4)
        store.append_chunk(f"Exchange {i}: we discussed the retry policy of the kafka broker " * 3)
    db.close()


def pages_of(path: Path, table: str, kind: str = "leaf") -> list[int]:
    conn = apsw.Connection(str(path))
    try:
        return [
            int(r[0])
            for r in conn.execute(
                "SELECT pageno FROM dbstat WHERE name = ? AND pagetype = ? ORDER BY pageno",
                (table, kind),
            )
        ]
    finally:
        conn.close()


def scribble(path: Path, pages: list[int]) -> None:
    """Overwrite whole pages with garbage, as a bad disk or a stray write would."""
    garbage = random.Random(16).randbytes(PAGE)
    with path.open("r+b") as fh:
        for page in pages:
            fh.seek((page - 1) * PAGE)
            fh.write(garbage)


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def damaged(db_path: Path) -> Path:
    """The test's memory with a facts page and an index page in the middle overwritten."""
    make_memory(db_path)
    leaves = pages_of(db_path, "facts")
    assert len(leaves) > 5
    scribble(db_path, [leaves[len(leaves) // 2], pages_of(db_path, "idx_facts_user_rank")[1]])
    return db_path


@pytest.fixture
def not_a_database(db_path: Path) -> Path:
    db_path.parent.mkdir(parents=True, exist_ok=True)
    db_path.write_text("These are my notes, not a database.\n" * 200)
    return db_path


def assert_one_line(stderr: str, *says: str) -> None:
    assert stderr.startswith("bigmind: ") and stderr.count("\n") == 1, stderr
    for s in says:
        assert s in stderr, stderr


# -- what each surface says -------------------------------------------------------------------
# The client's runtime opens the database on the first call, after the fixture spoiled it.
@pytest.mark.anyio
async def test_a_tool_on_a_damaged_memory_says_so_and_names_the_fix(
    damaged: Path, client: Cli
) -> None:
    msg = await refused(client, "memory_search_facts", query="kafka broker decision")
    assert "\n" not in msg and "is damaged" in msg and "`bigmind recover`" in msg
    assert "Tell the user" in msg


@pytest.mark.anyio
async def test_a_tool_on_a_file_that_is_no_database_says_so(
    not_a_database: Path, client: Cli
) -> None:
    msg = await refused(client, "memory_get_context")
    assert "is not a SQLite database" in msg and "BIGMIND_DB_PATH" in msg


def test_the_cli_and_doctor_name_recover_for_a_damaged_file(damaged: Path) -> None:
    before = digest(damaged)
    r = bigmind("export", "--output", str(damaged.parent / "backup.json"), db=damaged)
    assert r.returncode == DatabaseDamaged.exit_code
    assert_one_line(r.stderr, "is damaged", "`bigmind recover`")
    assert not (damaged.parent / "backup.json").exists()
    r = bigmind("search", "kafka", db=damaged)
    assert r.returncode == DatabaseDamaged.exit_code and "`bigmind recover`" in r.stderr
    r = bigmind("doctor", "--quick", "--json", db=damaged)
    assert r.returncode == 1
    check = next(c for c in json.loads(r.stdout)["checks"] if c["name"] == "database")
    assert check["status"] == "fail" and "damaged" in check["detail"]
    assert "`bigmind recover`" in check["detail"]
    assert "permission" not in r.stdout
    assert digest(damaged) == before


def test_the_cli_and_doctor_on_a_file_that_is_no_database(not_a_database: Path) -> None:
    r = bigmind("export", db=not_a_database)
    assert r.returncode == DatabaseDamaged.exit_code
    assert_one_line(r.stderr, "is not a SQLite database", "BIGMIND_DB_PATH")
    r = bigmind("doctor", "--quick", "--json", db=not_a_database)
    check = next(c for c in json.loads(r.stdout)["checks"] if c["name"] == "database")
    assert check["status"] == "fail" and "not a SQLite database" in check["detail"]


# -- recover ----------------------------------------------------------------------------------
def test_recover_salvages_the_readable_rows_and_leaves_the_file_alone(
    damaged: Path, tmp_path: Path
) -> None:
    before = digest(damaged)
    new = tmp_path / "saved.db"
    r = bigmind("recover", "--to", str(new), "--json", db=damaged)
    assert r.returncode == 0, r.stderr
    done = json.loads(r.stdout)
    rows = {t["table"]: t for t in done["tables"]}
    assert done["method"] == "salvage" and not done["complete"]
    assert 0 < rows["facts"]["rows"] < FACTS and rows["facts"]["gaps"] >= 1
    assert rows["conversation_chunks"]["rows"] == FACTS  # undamaged: every row
    assert digest(damaged) == before and new.is_file()
    assert not Path(f"{damaged}-wal").exists()
    db = connect(new)
    try:
        store = Store(db, "alice")
        assert store.count_active_facts() == rows["facts"]["rows"]
        found = Recall(store, None).search("kafka broker", 5, ["fact"], mode="keyword")
        assert len(found.hits) == 5
    finally:
        db.close()
    r = bigmind("doctor", "--quick", "--json", db=new)
    check = next(c for c in json.loads(r.stdout)["checks"] if c["name"] == "database")
    assert check["status"] == "ok" and f"facts {rows['facts']['rows']}" in check["detail"]


def test_recover_prints_rows_per_table_and_how_to_switch(damaged: Path, tmp_path: Path) -> None:
    new = tmp_path / "saved.db"
    r = bigmind("recover", "--to", str(new), db=damaged)
    assert r.returncode == 0, r.stderr
    assert "row by row, around the damaged pages" in r.stdout
    assert "damaged stretch" in r.stdout and "conversation_chunks" in r.stdout
    assert f"BIGMIND_DB_PATH={new}" in r.stdout and "--replace" in r.stdout


def test_recover_replace_keeps_the_damaged_file_beside_the_new_one(damaged: Path) -> None:
    before = digest(damaged)
    r = bigmind("recover", "--replace", db=damaged)
    assert r.returncode == 0, r.stderr
    kept = [p for p in damaged.parent.iterdir() if p.name.startswith("memory.db.corrupt-")]
    assert len(kept) == 1 and digest(kept[0]) == before
    assert not list(damaged.parent.glob("memory.recovered-*"))
    r = bigmind("doctor", "--quick", "--json", db=damaged)
    check = next(c for c in json.loads(r.stdout)["checks"] if c["name"] == "database")
    assert check["status"] == "ok", check
    r = bigmind("search", "kafka", "--kind", "facts", "--limit", "3", db=damaged)
    assert r.returncode == 0 and r.stdout.count("fact #") == 3


def test_recover_of_an_intact_file_copies_everything(db_path: Path, tmp_path: Path) -> None:
    make_memory(db_path)
    done = recover(db_path, tmp_path / "copy.db")
    rows = {t.table: t.rows for t in done.tables}
    assert done.method == "vacuum" and done.complete
    assert rows["facts"] == FACTS and rows["conversation_chunks"] == FACTS


def test_damage_in_an_index_loses_no_row(db_path: Path, tmp_path: Path) -> None:
    make_memory(db_path)
    scribble(db_path, pages_of(db_path, "idx_facts_user_rank")[1:3])
    done = recover(db_path, tmp_path / "copy.db")
    assert done.complete and {t.table: t.rows for t in done.tables}["facts"] == FACTS


def test_recover_of_a_file_that_is_no_database_writes_nothing(
    not_a_database: Path, tmp_path: Path
) -> None:
    before = digest(not_a_database)
    new = tmp_path / "saved.db"
    r = bigmind("recover", "--to", str(new), db=not_a_database)
    assert r.returncode == DatabaseDamaged.exit_code
    assert_one_line(r.stderr, "Nothing can be read", "not a SQLite database", ".recover")
    assert not new.exists() and digest(not_a_database) == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".bigmind-recover")] == []


def test_recover_refuses_to_overwrite(damaged: Path, tmp_path: Path) -> None:
    taken = tmp_path / "taken.db"
    taken.write_text("mine")
    r = bigmind("recover", "--to", str(taken), db=damaged)
    assert r.returncode == 2 and "--to" in r.stderr and taken.read_text() == "mine"


def test_recover_on_postgresql_says_what_to_do_instead(tmp_path: Path) -> None:
    r = bigmind(
        "recover",
        db=tmp_path / "unused.db",
        BIGMIND_DB_URL="postgresql://nobody@127.0.0.1:1/none",
        BIGMIND_MODE="enterprise",
    )
    assert r.returncode == 1
    assert_one_line(r.stderr, "SQLite", "PostgreSQL", "pg_dump")


# -- opening errors, each with its fix ---------------------------------------------------------
def test_a_folder_given_as_the_database_is_named(tmp_path: Path) -> None:
    with pytest.raises(BackendUnavailable, match="is a folder, not a database file"):
        SQLiteBackend(tmp_path)


def test_a_missing_folder_is_named() -> None:
    exc = sqlitefile.open_failure(apsw, "/nowhere/at/all/memory.db", apsw.CantOpenError("x"))
    assert "The folder /nowhere/at/all does not exist" in str(exc)


def test_a_locked_file_is_named(db_path: Path) -> None:
    make_memory(db_path)
    holder = apsw.Connection(str(db_path))
    holder.execute("PRAGMA locking_mode=EXCLUSIVE").fetchall()
    holder.execute("BEGIN EXCLUSIVE; CREATE TABLE held(x); COMMIT")
    try:
        with pytest.raises(BackendUnavailable, match="locked by another program") as exc:
            SQLiteBackend(db_path, busy_timeout_ms=50)
        assert "BIGMIND_BUSY_TIMEOUT_MS" in str(exc.value)
        assert not isinstance(exc.value, DatabaseDamaged)
    finally:
        holder.close()


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_a_file_without_permission_is_named(db_path: Path) -> None:
    make_memory(db_path)
    db_path.chmod(0)
    try:
        with pytest.raises(BackendUnavailable, match="permission denied") as exc:
            SQLiteBackend(db_path)
        assert "chmod u+rw" in str(exc.value)
    finally:
        db_path.chmod(0o600)
