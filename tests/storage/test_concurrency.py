"""Several server processes sharing one database file, and data surviving restarts.

Each writer is a separate Python process (tests/fixtures/concurrent_writer.py) that
opens the same file with ``bigmind.storage.db.connect`` and a ``Store``, exactly like a second
IDE starting its own BigMind server. A stdin/stdout handshake starts them together:
all open the (empty) file at once, so they also race on migrating it, then all write
at once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bigmind.search import keyword
from bigmind.storage.connect import connect
from bigmind.storage.db import SQLiteBackend
from bigmind.storage.migrations import FTS_TABLES, MIGRATIONS, applied, migrate
from bigmind.storage.store import Store

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

REPO = Path(__file__).resolve().parents[2]
WRITER = Path(__file__).parents[1] / "fixtures" / "concurrent_writer.py"
WORKERS = 4
PER_WORKER = 200
FAILURE_MARKERS = ("database is locked", "BusyError", "BackendUnavailable", "Traceback")


# -- driving the writer processes ----------------------------------------------------------------
def _spawn(db_path: Path, username: str, worker: int, count: int, *extra: str) -> Any:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
    return subprocess.Popen(
        [sys.executable, str(WRITER), str(db_path), username, str(worker), str(count), *extra],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env=env,
    )


def _expect(proc: Any, word: str) -> None:
    line = proc.stdout.readline().strip()
    if line != word:
        proc.kill()
        _out, err = proc.communicate()
        pytest.fail(f"writer printed {line!r} instead of {word!r}; stderr:\n{err}")


def _send(procs: list[Any], word: str) -> None:
    for p in procs:
        p.stdin.write(word + "\n")
        p.stdin.flush()


def run_writers(db_path: Path, usernames: list[str], count: int, *extra: str) -> list[Any]:
    """Start one writer per username, open together, write together; return their results.

    The writers create the file together: they race on the journal-mode switch (retried by
    SQLiteBackend), on the migrations and on every write.
    """
    procs = [_spawn(db_path, name, i, count, *extra) for i, name in enumerate(usernames)]
    try:
        for p in procs:
            _expect(p, "started")  # interpreters up and bigmind imported
        _send(procs, "open")
        for p in procs:
            _expect(p, "ready")  # database opened and migrated by everyone
        _send(procs, "go")
        for p in procs:
            _expect(p, "half")  # everyone has written half: the second halves interleave
        _send(procs, "rest")
        outputs = [p.communicate(timeout=120) for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.communicate()
    results = []
    for p, (out, err) in zip(procs, outputs, strict=True):
        assert p.returncode == 0, f"writer exited {p.returncode}:\n{err}"
        for marker in FAILURE_MARKERS:
            assert marker not in err, err
        results.append(json.loads(out.strip().splitlines()[-1]))
    return results


def one(backend: SQLiteBackend, sql: str, params: tuple[Any, ...] = ()) -> Any:
    rows = backend.query(sql, params)
    assert len(rows) == 1, rows
    return next(iter(rows[0].values()))


def check_database(backend: SQLiteBackend) -> None:
    assert one(backend, "PRAGMA integrity_check") == "ok"
    assert backend.query("PRAGMA foreign_key_check") == []
    for fts, _base, _cols in FTS_TABLES:
        with backend.transaction() as tx:
            tx.execute(f"INSERT INTO {fts}({fts}, rank) VALUES ('integrity-check', 1)")
    assert applied(backend) == [m.name for m in MIGRATIONS]


# -- tests ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("same_user", [True, False], ids=["same-user", "different-users"])
def test_four_processes_write_concurrently(db_path: Path, same_user: bool) -> None:
    usernames = ["alice"] * WORKERS if same_user else [f"user{i}" for i in range(WORKERS)]
    results = run_writers(db_path, usernames, PER_WORKER)

    fact_ids = [f for r in results for f in r["facts"]]
    chunk_ids = [c for r in results for c in r["chunks"]]
    assert len(fact_ids) == len(set(fact_ids)) == WORKERS * PER_WORKER
    assert len(chunk_ids) == len(set(chunk_ids)) == WORKERS * PER_WORKER
    assert len({r["user_id"] for r in results}) == (1 if same_user else WORKERS)
    # The writers really overlapped: some worker's id range interleaves with another's.
    spans = sorted((min(r["facts"]), max(r["facts"])) for r in results)
    assert any(spans[k][1] > spans[k + 1][0] for k in range(WORKERS - 1)), spans

    backend = connect(db_path)
    try:
        assert migrate(backend) == []
        assert one(backend, "SELECT count(*) FROM facts") == WORKERS * PER_WORKER
        assert one(backend, "SELECT count(*) FROM conversation_chunks") == WORKERS * PER_WORKER
        assert {r["id"] for r in backend.query("SELECT id FROM facts")} == set(fact_ids)
        assert {r["id"] for r in backend.query("SELECT id FROM conversation_chunks")} == set(
            chunk_ids
        )
        assert one(backend, "SELECT count(*) FROM users") == len(set(usernames))
        # Chunks without a session id all went to the user's one open session, and their
        # per-session sequence numbers are gapless and unique (taken inside the write lock).
        assert one(backend, "SELECT count(*) FROM sessions") == len(set(usernames))
        for row in backend.query(
            "SELECT session_id, count(*) AS n, count(DISTINCT seq) AS d, min(seq) AS lo,"
            " max(seq) AS hi FROM conversation_chunks GROUP BY session_id"
        ):
            assert row["n"] == row["d"] == row["hi"] and row["lo"] == 1, row
        for w in range(WORKERS):
            assert (
                one(backend, "SELECT count(*) FROM facts WHERE fact LIKE ?", (f"Worker {w} %",))
                == PER_WORKER
            )

        # Full-text search sees every row, through the index and through the store.
        assert (
            one(backend, "SELECT count(*) FROM facts_fts WHERE facts_fts MATCH 'throughput'")
            == WORKERS * PER_WORKER
        )
        assert (
            one(
                backend,
                "SELECT count(*) FROM conversation_chunks_fts"
                " WHERE conversation_chunks_fts MATCH 'concurrency'",
            )
            == WORKERS * PER_WORKER
        )
        for w, i in ((0, 0), (WORKERS - 1, PER_WORKER - 1), (1, PER_WORKER // 2)):
            store = Store(backend, usernames[w])
            hits = keyword.hits(store, "fact", f"Which throughput sample had token w{w}f{i}?")
            assert hits and f"w{w}f{i}" in hits[0].text, hits[:3]
            chunks = keyword.hits(store, "chunk", f"the chunk with marker w{w}c{i}")
            assert chunks and f"w{w}c{i}" in chunks[0].text, chunks[:3]
            expected = WORKERS * PER_WORKER if same_user else PER_WORKER
            assert store.counts()["facts"] == expected
            assert store.counts()["chunks"] == expected
        check_database(backend)
    finally:
        backend.close()


def test_data_survives_closing_and_reopening(db_path: Path) -> None:
    backend = connect(db_path)
    store = Store(backend, "alice")
    session = store.start_session(ide_hint="vscode").session
    fact, created, _ = store.store_fact(
        "decision", "Release builds are signed with the team's hardware key.", importance=9
    )
    assert created
    chunk, _ = store.append_chunk(
        "We agreed to rotate the signing key every twelve months.", session.id, "user", "policy"
    )
    store.update_profile(role="Release manager", preferences="Terse answers.")
    store.end_session(
        session.id,
        "Signing policy for release builds",
        ["release", "signing"],
        "Hardware key, yearly rotation.",
        "Decided how release builds are signed and how often the key rotates.",
    )
    backend.close()

    reopened = connect(db_path)
    try:
        assert migrate(reopened) == []
        again = Store(reopened, "alice")
        assert again.uid == store.uid
        assert again.get_fact(fact.id).fact == fact.fact
        assert [h.id for h in keyword.hits(again, "fact", "How are release builds signed?")][
            :1
        ] == [fact.id]
        assert [h.id for h in keyword.hits(again, "chunk", "how often do we rotate the key?")][
            :1
        ] == [chunk.id]
        s, summary, chunks = again.session_detail(session.id)
        assert s.one_liner == "Signing policy for release builds" and not s.is_open
        assert summary is not None and "how often the key rotates" in summary.summary
        assert [c.id for c in chunks] == [chunk.id]
        assert again.get_profile().role == "Release manager"
        check_database(reopened)
    finally:
        reopened.close()


def test_committed_writes_survive_a_killed_process(db_path: Path) -> None:
    """A writer that dies without closing the database loses nothing it committed."""
    count = 50
    [result] = run_writers(db_path, ["alice"], count, "--no-close")
    assert Path(str(db_path) + "-wal").exists()  # nothing checkpointed it on the way out

    backend = connect(db_path)
    try:
        assert one(backend, "SELECT count(*) FROM facts") == count
        assert one(backend, "SELECT count(*) FROM conversation_chunks") == count
        assert {r["id"] for r in backend.query("SELECT id FROM facts")} == set(result["facts"])
        store = Store(backend, "alice")
        hits = keyword.hits(store, "fact", f"throughput sample token w0f{count - 1}")
        assert hits and f"w0f{count - 1}" in hits[0].text
        check_database(backend)
    finally:
        backend.close()
