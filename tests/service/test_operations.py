"""bigmind/service/operations.py: the figures, a backup, a recovery, the runtime role's SQL and a
scan for stored secrets, as the commands run them."""

from __future__ import annotations

from pathlib import Path

import pytest

from bigmind.config import Settings
from bigmind.errors import BigMindError, InvalidInput, NoMemoryYet
from bigmind.runtime import Runtime
from bigmind.service import operations


def test_stats_read_the_vectors_without_the_model(runtime: Runtime) -> None:
    runtime.store.store_fact("codebase", "The payments service uses Kafka")
    data = operations.stats(runtime)
    assert (data["user"], data["counts"]["facts"]) == ("alice", 1)
    assert data["semantic"]["configured_model"] == runtime.settings.embed_model
    assert data["semantic"]["vectors"] == 0
    assert runtime.semantic is None  # nothing was loaded


def test_a_backup_is_taken_of_sqlite_only(runtime: Runtime, tmp_path: Path) -> None:
    runtime.store.store_fact("codebase", "The payments service uses Kafka")
    target = tmp_path / "backup.db"
    if runtime.settings.db_url:
        with pytest.raises(BigMindError, match="PostgreSQL"):
            operations.backup(runtime.settings, target)
        return
    done = operations.backup(runtime.settings, target)
    assert done.target == target and target.stat().st_size == done.bytes > 0
    with pytest.raises(InvalidInput, match="--overwrite"):
        operations.backup(runtime.settings, target)


@pytest.mark.sqlite_only
def test_a_recovered_file_can_take_the_damaged_ones_place(runtime: Runtime) -> None:
    runtime.store.store_fact("codebase", "The payments service uses Kafka")
    runtime.close()
    source = runtime.settings.db_path
    beside = operations.recover(source)
    assert (beside.done.method, beside.kept) == ("vacuum", None)
    assert Path(beside.done.target).parent == source.parent and source.is_file()
    swapped = operations.recover(source, source.with_name("new.db"), replace=True)
    assert swapped.kept is not None and swapped.kept.is_file()
    assert not source.with_name("new.db").exists() and source.is_file()


def test_the_runtime_roles_sql_names_a_role_only() -> None:
    assert 'GRANT USAGE ON SCHEMA "public" TO "bigmind_runtime";' in operations.runtime_grants(
        "bigmind_runtime"
    )
    with pytest.raises(InvalidInput, match="Not a role name"):
        operations.runtime_grants("x; DROP TABLE facts")


def test_a_scan_reads_every_users_memory_and_makes_none(runtime: Runtime) -> None:
    if not runtime.settings.db_url:
        with pytest.raises(NoMemoryYet):
            operations.scan_secrets(runtime.settings, apply=False)
    runtime.store.store_fact("codebase", "The payments service uses Kafka")
    done = operations.scan_secrets(runtime.settings, apply=False)
    assert (done.report.total, done.report.applied) == (0, False)
    assert done.location == runtime.store.db.location


def test_the_serve_check_opens_the_database_and_closes_it(settings: Settings) -> None:
    operations.check_database(settings)  # what `bigmind serve` runs for PostgreSQL
    assert settings.db_url or settings.db_path.is_file()
