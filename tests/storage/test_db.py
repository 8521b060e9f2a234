"""The SQLite backend: configuration, transactions, extension loading, clear failures."""

from __future__ import annotations

from pathlib import Path

import pytest

from bigmind.errors import BackendUnavailable
from bigmind.storage.connect import connect
from bigmind.storage.db import SQLiteBackend


@pytest.mark.sqlite_only
def test_connection_is_configured_for_concurrent_use(backend: SQLiteBackend) -> None:
    assert backend.query("PRAGMA journal_mode")[0]["journal_mode"] == "wal"
    assert backend.query("PRAGMA foreign_keys")[0]["foreign_keys"] == 1
    assert backend.query("PRAGMA busy_timeout")[0]["timeout"] == 10_000


@pytest.mark.sqlite_only
def test_sqlite_vec_loads_through_apsw(backend: SQLiteBackend) -> None:
    assert backend.vec_version and backend.vec_version.startswith("v")
    row = backend.query("SELECT vec_length(vec_f32('[1.0, 2.0, 3.0]')) AS n")[0]
    assert row["n"] == 3


@pytest.mark.sqlite_only
def test_fts5_is_available(backend: SQLiteBackend) -> None:
    opts = {r["compile_options"] for r in backend.query("PRAGMA compile_options")}
    assert "ENABLE_FTS5" in opts


def test_transaction_commits(backend: SQLiteBackend) -> None:
    with backend.transaction() as tx:
        tx.execute("CREATE TABLE t (x INTEGER)")
        tx.execute("INSERT INTO t VALUES (1)")
    assert backend.query("SELECT x FROM t") == [{"x": 1}]


def test_transaction_rolls_back_everything_on_error(backend: SQLiteBackend) -> None:
    with backend.transaction() as tx:
        tx.execute("CREATE TABLE t (x INTEGER)")
    with pytest.raises(RuntimeError), backend.transaction() as tx:
        tx.execute("INSERT INTO t VALUES (1)")
        tx.execute("INSERT INTO t VALUES (2)")
        raise RuntimeError("boom")
    assert backend.query("SELECT count(*) AS n FROM t")[0]["n"] == 0


def test_rows_are_dicts_and_empty_results_are_empty_lists(backend: SQLiteBackend) -> None:
    assert backend.query("SELECT 1 AS a, 'x' AS b") == [{"a": 1, "b": "x"}]
    assert backend.query("SELECT 1 AS a WHERE 1 = 0") == []


def test_database_folder_and_file_are_created_private(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "memory.db"
    b = connect(path)
    b.close()
    assert path.exists()
    assert path.stat().st_mode & 0o077 == 0


def test_unusable_path_names_the_setting(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(BackendUnavailable, match="BIGMIND_DB_PATH"):
        connect(blocker / "memory.db")


def test_not_a_database_is_refused_clearly(tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(BackendUnavailable, match="BIGMIND_DB_PATH"):
        connect(path)
