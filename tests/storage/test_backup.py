"""Backups that hold everything: `bigmind backup` copies the SQLite memory, WAL included, while
it is in use; a clean exit folds the WAL into memory.db, so the file alone is the memory."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import threading
from pathlib import Path

import pytest
from cli_run import run_cli
from mcp_calls import send, spawn_serve

from bigmind.storage.connect import connect
from bigmind.storage.store import Store

pytestmark = pytest.mark.sqlite_only  # a SQLite file and its WAL


def bigmind(*args: str, db: Path, **env: str) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith("BIGMIND_")}
    return run_cli(*args, env=full, BIGMIND_DB_PATH=str(db), BIGMIND_USER="alice", **env)


def facts_in(path: Path) -> set[str]:
    """The facts a file holds, read from a copy of that file alone (no WAL beside it)."""
    alone = path.parent / "alone" / "memory.db"
    alone.parent.mkdir(exist_ok=True)
    shutil.copyfile(path, alone)
    db = connect(alone)
    try:
        return {r["fact"] for r in db.query("SELECT fact FROM facts")}
    finally:
        db.close()
        shutil.rmtree(alone.parent)


def test_a_backup_holds_what_only_the_wal_holds_while_the_memory_is_in_use(
    tmp_path: Path,
) -> None:
    source = tmp_path / "memory.db"
    db = connect(source)
    store = Store(db, "alice")
    written = {f"Decision {i}: retries go through the outbox" for i in range(40)}
    for fact in sorted(written):
        store.store_fact("decision", fact)
    try:
        assert (tmp_path / "memory.db-wal").stat().st_size > 0
        assert facts_in(source) < written  # memory.db alone lacks what is in the WAL

        stop = threading.Event()
        more: list[str] = []

        def keep_writing() -> None:  # another window goes on working during the backup
            while not stop.is_set() and len(more) < 500:
                more.append(f"Later note {len(more)}")
                store.store_fact("codebase", more[-1])

        writer = threading.Thread(target=keep_writing)
        writer.start()
        try:
            out = bigmind("backup", str(tmp_path / "b.db"), "--json", db=source)
        finally:
            stop.set()
            writer.join(60)
        assert out.returncode == 0, out.stderr
        report = json.loads(out.stdout)
        backup = Path(report["path"])
        assert backup == tmp_path / "b.db" and report["pages"] > 0
        assert stat.S_IMODE(backup.stat().st_mode) == 0o600
        assert not (tmp_path / "b.db-wal").exists() and not (tmp_path / "b.db-journal").exists()
        assert not [p for p in tmp_path.iterdir() if p.name.startswith(".bigmind-backup-")]
        copied = facts_in(backup)
        assert written <= copied  # all of it, from the WAL too
        assert copied <= written | set(more)  # a snapshot of what was written, nothing else
    finally:
        db.close()


def test_a_backup_never_replaces_a_file_unasked_nor_the_database_itself(tmp_path: Path) -> None:
    source = tmp_path / "memory.db"
    db = connect(source)
    Store(db, "alice").store_fact("decision", "Use the outbox")
    db.close()
    target = tmp_path / "b.db"
    target.write_text("mine")
    out = bigmind("backup", str(target), db=source)
    assert out.returncode == 2 and "already exists; pass --overwrite" in out.stderr
    assert target.read_text() == "mine"
    out = bigmind("backup", str(target), "--overwrite", db=source)
    assert out.returncode == 0 and "Backed up" in out.stdout and "To restore" in out.stdout
    assert facts_in(target) == {"Use the outbox"}
    out = bigmind("backup", str(source), "--overwrite", db=source)
    assert out.returncode == 2 and "is the database itself" in out.stderr
    out = bigmind("backup", str(tmp_path / "no" / "b.db"), db=source)
    assert out.returncode == 2 and "does not exist" in out.stderr
    out = bigmind("backup", str(tmp_path / "b2.db"), db=tmp_path / "none.db")
    assert out.returncode == 6 and "nothing to back up" in out.stderr
    assert not (tmp_path / "b2.db").exists() and not (tmp_path / "none.db").exists()


def test_postgres_is_pointed_to_pg_dump(tmp_path: Path) -> None:
    out = bigmind(
        "backup",
        str(tmp_path / "b.db"),
        db=tmp_path / "m.db",
        BIGMIND_DB_URL="postgresql://bigmind@127.0.0.1:9/bigmind",
    )
    assert out.returncode == 1 and "pg_dump" in out.stderr
    assert not (tmp_path / "b.db").exists()


@pytest.mark.e2e
def test_a_clean_exit_leaves_the_whole_memory_in_memory_db(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    proc = spawn_serve(db, BIGMIND_EMBED_MODEL="off", BIGMIND_WEB="0", BIGMIND_USER="alice")
    facts = [f"Fact {i}: the broker is kafka" for i in range(30)]
    send(proc, *[("memory_store_fact", {"category": "decision", "fact": f}) for f in facts])
    answers, _ = proc.communicate(timeout=60)  # the end of stdin: a clean exit
    assert proc.returncode == 0 and answers.count("\n") == 31
    wal = tmp_path / "memory.db-wal"
    assert not wal.exists() or wal.stat().st_size == 0
    assert facts_in(db) == set(facts)
