"""Imports that can't poison: every imported value held to the tool's rules, a bad row refusing
the whole file with nothing written, and sessions that are not the importer's never revealed."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client
from mcp_calls import call, refused

from bigmind.errors import InvalidInput
from bigmind.memory import importcheck, transfer
from bigmind.models import new_id, now_ts
from bigmind.runtime import Runtime
from bigmind.storage.db import Backend
from bigmind.storage.migrations import GENERATED_COLUMNS
from bigmind.storage.store import Store

Cli = Client  # type: ignore[type-arg]
pytestmark = pytest.mark.anyio
SID = "0b3f6c4e-5a1d-4e8b-9f2a-7c6d5e4f3a2b"


def _file() -> dict[str, Any]:
    """A valid export with one row in every table."""
    ts = now_ts()
    data: dict[str, Any] = {
        "format": "bigmind-export",
        "version": 1,
        "user": {"username": "someone"},
        "sessions": [{"id": SID, "started_at": ts, "one_liner": "Built it", "topics": "io"}],
        "session_summaries": [{"id": SID, "summary": "Long summary"}],
        "facts": [
            {
                "id": 7,
                "category": "decision",
                "fact": "Use WAL",
                "confidence": 0.9,
                "importance": 6,
                "source_session": SID,
                "created_at": ts,
            }
        ],
        "fact_history": [
            {
                "fact_id": 7,
                "version": 1,
                "category": "decision",
                "fact": "Use rollback",
                "replaced_at": ts,
            }
        ],
        "fact_files": [{"fact_id": 7, "path": "bigmind/db.py", "name": "db.py", "created_at": ts}],
        "conversation_chunks": [{"session_id": SID, "role": "user", "content": "hi", "seq": 1}],
        "hypotheses": [{"hypothesis": "It works", "confidence": 0.5, "status": "open"}],
        "attempts": [{"approach": "Retry", "outcome": "failed", "created_at": ts}],
        "reminders": [{"text": "Check logs", "created_at": ts}],
        "focus_announcements": [{"session_id": SID, "description": "import", "files": '["a.py"]'}],
        "token_saves": [{"description": "recall", "tokens_saved": 100, "method_used": "memory"}],
        "people": [{"username": "jdoe", "notes": "pager"}],
        "global_knowledge": [
            {
                "category": "standard",
                "title": "Lint",
                "content": "ruff",
                "importance": 5,
                "status": "approved",
            }
        ],
        "identity_profile": [{"role": "Engineer"}],
    }
    for table in transfer.TABLES:  # as an export has them: the natural keys are complete
        for row in data[table.name]:
            row.setdefault("created_at", ts)
    return data


# (table, column, bad value, words of the refusal): one poisoned file each.
POISON: list[tuple[str, str, Any, str]] = [
    ("facts", "confidence", "abc", 'must be a number from 0.0 to 1.0, got "abc"'),
    ("facts", "confidence", 5, "must be between 0.0 and 1.0"),
    ("facts", "confidence", [0.5], "must be a number"),
    ("facts", "importance", "x", "must be an integer from 1 to 10"),
    ("facts", "importance", 11, "must be an integer from 1 to 10"),
    ("facts", "importance", 2.5, "must be an integer"),
    ("facts", "fact", "x" * 50_000, "is 50,000 characters; the limit is 2,000"),
    ("facts", "fact", {"a": 1}, "must be text"),
    ("facts", "fact", "a\x00b", "NUL"),
    ("facts", "fact", "a\ud800b", "lone surrogate"),
    ("facts", "category", "Not A Category!", "short lowercase word"),
    ("facts", "category", 3, "must be text"),
    ("facts", "id", 2**63, "must be an integer from 1"),
    ("facts", "id", "seven", "must be an integer"),
    ("facts", "deprecated", 2, "must be 0 or 1"),
    ("facts", "scope", "everywhere", "must be one of project, global"),
    ("facts", "created_at", "yesterday", "must be a timestamp"),
    ("facts", "created_at", 12345, "must be a timestamp"),
    ("facts", "access_count", -1, "must be an integer from 0"),
    ("facts", "confidence", float("nan"), "must be a number"),
    ("global_knowledge", "importance", "x", "must be an integer from 1 to 10"),
    ("global_knowledge", "status", "live", "must be one of approved, pending, deprecated"),
    ("global_knowledge", "title", "t" * 81, "the limit is 80"),
    ("sessions", "started_at", "not a time", "must be a timestamp"),
    ("sessions", "one_liner", "o" * 201, "the limit is 200"),
    ("sessions", "topics", ["a", "b"], "must be text"),
    ("sessions", "importance", 0, "must be an integer from 1 to 10"),
    ("sessions", "has_tier2", "yes", "must be 0 or 1"),
    ("session_summaries", "summary", "s" * 300_000, "the limit is 40,000"),
    ("conversation_chunks", "content", "c" * 300_000, "the limit is 100,000"),
    ("conversation_chunks", "role", "robot", "must be one of user, assistant, system"),
    ("conversation_chunks", "seq", 2**64, "must be an integer"),
    ("hypotheses", "status", "maybe", "must be one of open, confirmed"),
    ("hypotheses", "confidence", True, "must be a number"),
    ("attempts", "outcome", "meh", "must be one of failed, worked"),
    ("reminders", "text", "r" * 501, "the limit is 500"),
    ("focus_announcements", "files", "not json", "JSON text of a list"),
    ("token_saves", "tokens_saved", 10**12, "must be an integer from 0 to 10,000,000"),
    ("people", "notes", ["a"], "must be text"),
    ("fact_history", "version", 0, "must be an integer from 1"),
    ("fact_files", "path", "p" * 1_001, "the limit is 1,000"),
    ("identity_profile", "preferences", "p" * 4_001, "the limit is 4,000"),
]


def _fingerprint(backend: Backend) -> str:
    """Every row of every copied table, hashed: equal before and after means nothing changed."""
    digest = hashlib.sha256()
    for t in (*transfer.TABLES, transfer.Table("identity_profile", ("user_id",), ())):
        rows = backend.query(f"SELECT * FROM {t.name} ORDER BY id")
        digest.update(json.dumps(rows, sort_keys=True, default=str).encode())
    return digest.hexdigest()


def _write(tmp_path: Path, name: str, data: dict[str, Any]) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(data), encoding="utf-8")  # \ud800 is written escaped, as JSON may
    return path


def test_the_valid_file_imports(store: Store, tmp_path: Path) -> None:
    report = transfer.import_data(store, transfer.load_export(_write(tmp_path, "ok.json", _file())))
    assert all(n == 1 for n in report.added.values()), report.added


def test_every_stored_column_has_a_rule(backend: Backend) -> None:
    for table, rules in importcheck.RULES.items():
        assert backend.columns(table) - GENERATED_COLUMNS == set(rules), table


async def test_each_poisoned_file_is_refused_and_changes_nothing(
    client: Cli, runtime: Runtime, tmp_path: Path
) -> None:
    await call(client, "memory_store_fact", category="decision", fact="Adopt ruff")
    before = _fingerprint(runtime.store.db)
    for n, (table, column, value, words) in enumerate(POISON):
        data = _file()
        data[table][0][column] = value
        path = _write(tmp_path, f"poison-{n}.json", data)
        msg = await refused(client, "memory_import", input_path=str(path))
        assert f"{table}[0].{column}" in msg and words in msg, (table, column, msg)
        assert "nothing was imported" in msg
    assert _fingerprint(runtime.store.db) == before
    # Memory still works afterwards: the packet, and the facts themselves.
    text, _ = await call(client, "memory_start_session")
    assert "Adopt ruff" in text
    await call(client, "memory_get_context")


def test_the_cli_refuses_a_poisoned_file_with_exit_code_2(tmp_path: Path) -> None:
    assert InvalidInput.exit_code == 2
    data = _file()
    data["facts"][0]["confidence"] = "abc"
    with pytest.raises(InvalidInput, match=r"facts\[0\]\.confidence must be a number"):
        transfer.load_export(_write(tmp_path, "p.json", data))


def test_a_list_where_a_row_should_be_names_the_row(tmp_path: Path) -> None:
    data = _file()
    data["facts"].append({"category": "x", "fact": "y", "source_session": {"id": SID}})
    with pytest.raises(InvalidInput, match=r"facts\[1\]\.source_session must be text"):
        transfer.load_export(_write(tmp_path, "p.json", data))


TEXTS = [
    ("facts", "fact"),
    ("fact_history", "fact"),
    ("hypotheses", "hypothesis"),
    ("attempts", "approach"),
    ("reminders", "text"),
    ("token_saves", "description"),
    ("global_knowledge", "title"),
    ("people", "username"),
]


def _others_session(backend: Backend) -> str:
    alice = Store(backend, "alice", mode="team")
    return alice.start_session(ide_hint="vscode").session.id


@pytest.mark.parametrize(
    ("table", "column"),
    [
        ("facts", "source_session"),
        ("hypotheses", "session_id"),
        ("attempts", "session_id"),
        ("reminders", "session_id"),
        ("token_saves", "session_id"),
    ],
)
def test_another_users_session_is_refused_like_an_unknown_one(
    backend: Backend, tmp_path: Path, table: str, column: str
) -> None:
    theirs = _others_session(backend)
    bob = Store(backend, "bob", mode="team")
    before = _fingerprint(backend)
    said = []
    for sid in (theirs, new_id()):
        data = _file()
        data[table][0][column] = sid
        with pytest.raises(InvalidInput) as exc:
            transfer.import_data(bob, transfer.load_export(_write(tmp_path, "r.json", data)))
        said.append(str(exc.value).replace(sid, "<id>"))
    assert said[0] == said[1]
    assert "is not in the file nor yours" in said[0] and "another user" not in said[0]
    assert _fingerprint(backend) == before


def test_company_knowledge_keeps_no_link_to_a_session_not_yours(
    backend: Backend, tmp_path: Path
) -> None:
    """global_knowledge.source_session has no foreign key (a forgotten session's id may remain
    in an export): one that is not in the file nor the importer's is dropped, alike for another
    user's session and an unknown id."""
    theirs = _others_session(backend)
    bob = Store(backend, "bob", mode="team")
    for n, sid in enumerate((theirs, new_id())):
        data = _file()
        data["global_knowledge"][0] |= {"source_session": sid, "title": f"Lint {n}"}
        transfer.import_data(bob, transfer.load_export(_write(tmp_path, f"g{n}.json", data)))
    rows = backend.query("SELECT source_session FROM global_knowledge WHERE title LIKE 'Lint %'")
    assert [r["source_session"] for r in rows] == [None, None]


def test_a_file_session_with_another_users_id_is_imported_like_a_new_one(
    backend: Backend, tmp_path: Path
) -> None:
    """Another user's session id and a random one in the file's sessions: both imported, the
    same rows added, and the other user's session untouched (bob's copy gets its own id)."""
    theirs = _others_session(backend)
    bob = Store(backend, "bob", mode="team")
    reports, paths = [], []
    for n, sid in enumerate((theirs, new_id())):
        data = json.loads(json.dumps(_file()).replace(SID, sid))
        for table, col in TEXTS:  # rows of their own, so the second file is not a duplicate
            data[table][0][col] += f" {n}"
        paths.append(_write(tmp_path, f"s{n}.json", data))
        reports.append(transfer.import_data(bob, transfer.load_export(paths[-1])))
    del reports[0].added["identity_profile"], reports[1].added["identity_profile"]
    assert reports[0].added == reports[1].added and reports[0].skipped == reports[1].skipped
    alice = Store(backend, "alice", mode="team")
    [hers] = alice.list_sessions()
    assert hers.id == theirs and hers.one_liner != "Built it"
    mine = [s.id for s in bob.list_sessions()]
    assert theirs not in mine and len(mine) == 2
    # Bob's fact links to his own copy of the session, never to alice's.
    facts = transfer.export_data(bob)["facts"]
    assert all(f["source_session"] in mine for f in facts)
    again = transfer.import_data(bob, transfer.load_export(paths[0]))
    assert again.total_added == 0, {
        k: v for k, v in again.added.items() if v
    }  # renamed session is found again: nothing twice
    assert len(bob.list_sessions()) == 2


class _Stop(Exception):
    """Stands for a kill: raised from inside a batch."""


def test_an_import_stopped_mid_way_completes_when_run_again(store: Store, tmp_path: Path) -> None:
    """Batches commit one by one; a re-run adds what the stopped one had not, each row once,
    and the history of facts added by the first run still follows them."""
    ts = now_ts()
    data = _file()
    data["facts"] = [
        {"id": i, "category": "decision", "fact": f"Decision number {i}", "created_at": ts}
        for i in range(1, 1_201)
    ]
    data["fact_history"] = [
        {"fact_id": i, "version": 1, "category": "decision", "fact": f"Was {i}", "replaced_at": ts}
        for i in range(1, 1_201, 3)
    ]
    del data["fact_files"]
    path = _write(tmp_path, "big.json", data)
    calls = []

    def stop(seen: int, total: int) -> None:
        calls.append(seen)
        if len(calls) == 3:  # row 1,500: inside fact_history
            raise _Stop

    with pytest.raises(_Stop):
        transfer.import_data(store, transfer.load_export(path), progress=stop, batch_rows=100)
    count = store.db.query
    assert count("SELECT count(*) AS n FROM facts")[0]["n"] == 1_200
    assert 0 < count("SELECT count(*) AS n FROM fact_history")[0]["n"] < 400
    report = transfer.import_data(store, transfer.load_export(path), batch_rows=100)
    assert report.added["facts"] == 0 and report.skipped["facts"] == 1_200
    assert count("SELECT count(DISTINCT fact) AS n FROM facts")[0]["n"] == 1_200
    rows = count("SELECT fact_id, count(*) AS n FROM fact_history GROUP BY fact_id")
    assert len(rows) == 400 and {r["n"] for r in rows} == {1}
    assert count("SELECT count(*) AS n FROM hypotheses")[0]["n"] == 1
