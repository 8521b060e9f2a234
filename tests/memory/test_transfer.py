"""Export → import: every row reproduced, merge idempotent, bad files refused with no change."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bigmind.errors import InvalidInput, NotFound
from bigmind.memory import (
    correct,
    exportpath,
    focus,
    globalkb,
    gotchas,
    journal,
    people,
    savings,
    transfer,
)
from bigmind.search import keyword
from bigmind.storage.connect import connect
from bigmind.storage.db import SQLiteBackend
from bigmind.storage.store import Store

# Columns that legitimately differ between the source and the copy.
VOLATILE = {"user_id", "added_by", "promoted_by"}


def _populate(store: Store) -> None:
    s = store.start_session(ide_hint="vscode").session
    store.update_profile(role="Engineer", preferences="Terse", pinned_facts=["uses uv"])
    f, _, _ = store.store_fact("preference", "Prefers pytest", 0.9, s.id, 7)
    w, _, _ = store.store_fact("decision", "Use rollback journal mode", files=["bigmind/db.py"])
    correct.update_fact(store, None, w.id, fact="Use WAL mode", reason="WAL reads while writing")
    store.deprecate_fact(f.id, "switched")
    store.store_fact("preference", "Prefers pytest")  # same text again, after deprecation
    store.append_chunk("a decisive exchange", s.id, "user", "decision")
    store.append_chunk("another one", s.id)
    h, _ = journal.add(store, "It will work", 0.8, s.id)
    journal.resolve(store, h.id, "confirmed", "it did")
    focus.announce(store, s.id, "building import", ["bigmind/transfer.py"])
    savings.log(store, s.id, "recalled instead of reading", 1200, "memory")
    people.remember(store, "jdoe", "Jane", "SRE", "platform", "kafka", "pager")
    store.end_session(
        s.id, "Built import", ["io"], "done", "Long summary", ["k1"], "transfer.py", 8
    )
    store.start_session()  # one still open


def _rows(data: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    out = {}
    for t in transfer.TABLES:
        out[t.name] = [{k: v for k, v in r.items() if k not in VOLATILE} for r in data[t.name]]
    out["identity_profile"] = [
        {k: v for k, v in r.items() if k not in {"id", "user_id"}} for r in data["identity_profile"]
    ]
    return out


def _count(backend: SQLiteBackend) -> dict[str, int]:
    return {
        t.name: backend.query(f"SELECT count(*) AS n FROM {t.name}")[0]["n"]
        for t in transfer.TABLES
    }


@pytest.fixture
def exported(store: Store, tmp_path: Path) -> Path:
    _populate(store)
    target = tmp_path / "export.json"
    transfer.write_export(store, target)
    return target


def test_import_into_empty_database_reproduces_every_row(exported: Path, tmp_path: Path) -> None:
    fresh = connect(tmp_path / "other.db")
    copy = Store(fresh, "alice")
    report = transfer.import_data(copy, transfer.load_export(exported))
    assert report.total_added > 0 and not any(report.skipped.values())
    again = transfer.export_data(copy)
    assert _rows(again) == _rows(json.loads(exported.read_text()))
    assert keyword.hits(copy, "chunk", "decisive")  # the full-text index followed the import
    assert keyword.hits(copy, "fact", "WAL")
    fresh.close()


def test_a_facts_history_follows_it_to_a_new_id(exported: Path, tmp_path: Path) -> None:
    """Imported where the fact's id is taken: the fact gets a new id, its versions with it."""
    fresh = connect(tmp_path / "other.db")
    copy = Store(fresh, "bob")
    for i in range(5):
        copy.store_fact("filler", f"Bob's fact number {i}")
    report = transfer.import_data(copy, transfer.load_export(exported))
    assert report.added["fact_history"] == report.added["fact_files"] == 1
    [wal] = [f for f in transfer.export_data(copy)["facts"] if f["fact"] == "Use WAL mode"]
    assert gotchas.of_facts(copy, [wal["id"]]) == {wal["id"]: ["bigmind/db.py"]}
    _fact, versions = correct.history(copy, wal["id"])
    assert [(v.fact, v.reason) for v in versions] == [
        ("Use rollback journal mode", "WAL reads while writing")
    ]
    again = transfer.import_data(copy, transfer.load_export(exported))
    assert again.added["fact_history"] == again.added["fact_files"] == 0
    fresh.close()


def test_importing_twice_adds_nothing(exported: Path, tmp_path: Path) -> None:
    fresh = connect(tmp_path / "other.db")
    copy = Store(fresh, "bob")
    transfer.import_data(copy, transfer.load_export(exported))
    before = _count(fresh)
    report = transfer.import_data(copy, transfer.load_export(exported))
    assert report.total_added == 0 and _count(fresh) == before
    fresh.close()


def test_importing_into_the_same_memory_adds_nothing(exported: Path, store: Store) -> None:
    before = _count(store.db)  # type: ignore[arg-type]
    report = transfer.import_data(store, transfer.load_export(exported))
    assert report.total_added == 0 and _count(store.db) == before  # type: ignore[arg-type]


def test_an_existing_active_fact_is_not_duplicated(exported: Path, tmp_path: Path) -> None:
    fresh = connect(tmp_path / "other.db")
    copy = Store(fresh, "alice")
    copy.store_fact("decision", "use wal mode.")
    transfer.import_data(copy, transfer.load_export(exported))
    assert [h.text for h in keyword.hits(copy, "fact", "wal")] == ["use wal mode."]
    fresh.close()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "not valid JSON"),
        ('{"hello": "world"}', "not a BigMind export"),
        ('{"format": "bigmind-export", "version": 99}', "version 99"),
        (
            '{"format": "bigmind-export", "version": 1, "facts": "x", "user": {"username": "a"}}',
            "'facts' must be a list",
        ),
        (
            '{"format": "bigmind-export", "version": 1, "user": {"username": "a"},'
            ' "facts": [{"category": "x"}]}',
            "lacks fact",
        ),
        (
            '{"format": "bigmind-export", "version": 1, "user": {"username": "a"},'
            ' "facts": [{"category": "x", "fact": "y", "bad col; DROP": 1}]}',
            "invalid column",
        ),
        (
            '{"format": "bigmind-export", "version": 1, "user": {"username": "a"},'
            ' "conversation_chunks": [{"session_id": "s", "role": "user", "content": "c", "seq": 1}]}',
            "missing from the file",
        ),
    ],
)
def test_bad_files_are_refused_clearly(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(InvalidInput, match=message):
        transfer.load_export(path)


def test_a_failing_import_changes_nothing(exported: Path, tmp_path: Path) -> None:
    data = json.loads(exported.read_text())
    data["conversation_chunks"][1]["role"] = "robot"  # the last table's last row is bad
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(data))
    fresh = connect(tmp_path / "other.db")
    copy = Store(fresh, "alice")
    before = _count(fresh)
    with pytest.raises(InvalidInput, match=r"conversation_chunks\[1\]\.role must be one of"):
        transfer.import_data(copy, transfer.load_export(bad))
    assert _count(fresh) == before
    fresh.close()


def test_another_users_sessions_cannot_be_taken_over(
    exported: Path, backend: SQLiteBackend
) -> None:
    """Alice's export imported by bob: bob gets copies under ids of his own; alice's sessions
    stay hers, and nothing in the answer says the ids were taken."""
    alice = Store(backend, "alice")
    hers = {s.id: s.one_liner for s in alice.list_sessions()}
    bob = Store(backend, "bob")
    report = transfer.import_data(bob, transfer.load_export(exported))
    assert report.added["sessions"] == 2 and report.added["conversation_chunks"] == 2
    assert {s.id: s.one_liner for s in alice.list_sessions()} == hers
    mine = {s.id for s in bob.list_sessions()}
    assert len(mine) == 2 and not mine & set(hers)


def test_only_merge_mode(exported: Path, store: Store) -> None:
    with pytest.raises(InvalidInput, match="merge"):
        transfer.import_data(store, transfer.load_export(exported), mode="replace")


def test_import_path_resolution(tmp_path: Path, exported: Path) -> None:
    data_dir = tmp_path / "d"
    (data_dir / "exports").mkdir(parents=True)
    (data_dir / "exports" / "x.json").write_text(exported.read_text())
    assert exportpath.resolve_import_path("x.json", data_dir) == data_dir / "exports" / "x.json"
    with pytest.raises(NotFound, match="No export file at") as refused:
        exportpath.resolve_import_path("missing.json", data_dir)
    assert "memory_export" in refused.value.message_for("tool")
    assert "`bigmind export`" in refused.value.message_for("cli")


def test_company_knowledge_imported_into_a_team_waits_for_a_curator(
    store: Store, tmp_path: Path
) -> None:
    globalkb.promote(store, "standard", "Lint first", "Run ruff before every commit", 8)
    assert [e.title for e in globalkb.top(store)] == ["Lint first"]  # personal: approved
    path = tmp_path / "mine.json"
    transfer.write_export(store, path)
    team = Store(connect(tmp_path / "team.db"), "alice", mode="team")
    transfer.import_data(team, transfer.load_export(path))
    assert globalkb.top(team) == []  # a member's import is not an approval
    pending, own_only = globalkb.list_entries(team, status="pending")
    assert [(e.title, e.status, e.approved_by) for e in pending] == [
        ("Lint first", "pending", None)
    ]
    assert own_only
