"""The standing reliability suite, bounded for CI: `bigmind serve` processes writing one database
at once, and killed (SIGKILL) mid-write and mid-import. Every acknowledged write is there after,
nothing is half-written, and the database passes its integrity checks.

The sizes come from the environment, so the same tests are the long soak
(``bench/reliability.py`` runs them with 8 × 500 writes, 30 kills and more fuzzing, and prints
the figures each test writes to ``BIGMIND_RELIABILITY_REPORT``)."""

from __future__ import annotations

import contextlib
import json
import os
import random
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_calls import BIGMIND, serve_env

from bigmind.config import Settings
from bigmind.memory.transfer import BATCH_PAUSE_S, BATCH_SECONDS
from bigmind.storage.connect import open_database
from bigmind.storage.db import Backend
from bigmind.storage.migrations import FTS_TABLES

pytestmark = [pytest.mark.slow, pytest.mark.e2e, pytest.mark.timeout(600)]

# In CI 4 servers × 120 writes: as many writes as 8 × 60, and more processes than cores, at
# half the cost of starting servers (~2 s of CPU each); the soak runs 8 × 500.
SERVERS = int(os.environ.get("BIGMIND_SOAK_SERVERS", "4"))
WRITES = int(os.environ.get("BIGMIND_SOAK_WRITES", "120"))  # per server
KILLS = int(os.environ.get("BIGMIND_SOAK_KILLS", "3"))
ANSWER_S = 60.0  # the longest one answer may take
# Read at collection: each test runs with BIGMIND_* settings cleared (tests/conftest.py).
REPORT = os.environ.get("BIGMIND_RELIABILITY_REPORT")


def report(name: str, **figures: object) -> None:
    """Add this test's figures to the soak's report, when one is being written."""
    if REPORT:
        with open(REPORT, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"test": name, **figures}) + "\n")


class Served:
    """One `bigmind serve` driven over raw JSON-RPC: calls are sent without waiting, answers
    read as they come (so a process can be killed between them)."""

    def __init__(self, env: dict[str, str], log: Path) -> None:
        self._log = log.open("wb")
        self.proc = subprocess.Popen(
            [str(BIGMIND), "serve"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            env=env,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._sel = selectors.DefaultSelector()
        self._sel.register(self.proc.stdout, selectors.EVENT_READ)
        self.sent: dict[int, str] = {}  # id → the fact it stores
        self._buffer = b""
        self.call(0, "initialize", None)
        init = self.answer()
        assert init is not None and "result" in init, init
        self._write({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _write(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def call(self, rid: int, method: str, tool: tuple[str, dict[str, Any]] | None) -> None:
        if method == "initialize":
            params: dict[str, Any] = {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "reliability", "version": "0"},
            }
        else:
            assert tool is not None
            params = {"name": tool[0], "arguments": tool[1]}
        self._write({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})

    def store(self, rid: int, fact: str) -> None:
        self.sent[rid] = fact
        self.call(rid, "tools/call", ("memory_store_fact", {"category": "decision", "fact": fact}))

    def answer(self, timeout: float = ANSWER_S) -> dict[str, Any] | None:
        """The next answer; None once stdout ends. (Read through our own buffer: a buffered
        reader would hold lines that select() no longer sees.)"""
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            if not self._sel.select(max(0.0, deadline - time.monotonic())):
                raise TimeoutError(f"no answer within {timeout} s")
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                return None
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return json.loads(line)

    def acknowledged(self, message: dict[str, Any]) -> tuple[int, str] | None:
        """(fact id, its text) if ``message`` says a fact was stored."""
        result = message.get("result") or {}
        data = result.get("structuredContent") or {}
        if result.get("isError") or "fact_id" not in data:
            return None
        return int(data["fact_id"]), self.sent[message["id"]]

    def finish(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        code = self.proc.wait(120)
        self.close()
        return code

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(30)
        self.close()

    def close(self) -> None:
        if self.proc.stdin is not None and not self.proc.stdin.closed:
            with contextlib.suppress(OSError):  # a killed server's pipe may be broken
                self.proc.stdin.close()
        self._sel.close()
        if self.proc.stdout is not None:
            self.proc.stdout.close()
        self._log.close()


@pytest.fixture
def database(settings: Settings) -> Iterator[Backend]:
    """The test's database, as BigMind opens it (for checking after the servers are gone), in
    the maintenance scope: every user's rows, whatever row-level security hides from others."""
    db = open_database(settings)
    yield db.maintenance()
    db.close()


def facts_by_id(db: Backend) -> dict[int, str]:
    return {int(r["id"]): r["fact"] for r in db.query("SELECT id, fact FROM facts")}


def lost_of(db: Backend, acked: dict[int, str]) -> tuple[dict[int, str], list[int]]:
    """What the database holds, and the acknowledged facts it lacks (or holds changed)."""
    stored = facts_by_id(db)
    return stored, [i for i, text in acked.items() if stored.get(i) != text]


def facts_of(db: Backend, username: str) -> list[str]:
    return [
        r["fact"]
        for r in db.query(
            "SELECT f.fact FROM facts f JOIN users u ON u.id = f.user_id WHERE u.username = ?",
            (username,),
        )
    ]


def check_integrity(db: Backend) -> None:
    """SQLite's integrity and foreign-key checks and every full-text index's own check; on
    PostgreSQL the same foreign keys, by query."""
    if db.dialect == "sqlite":
        assert db.query("PRAGMA integrity_check")[0]["integrity_check"] == "ok"
        assert db.query("PRAGMA foreign_key_check") == []
        for fts, _base, _cols in FTS_TABLES:
            with db.transaction() as tx:
                tx.execute(f"INSERT INTO {fts}({fts}, rank) VALUES ('integrity-check', 1)")
    orphans = db.query(
        "SELECT count(*) AS n FROM facts f WHERE f.source_session IS NOT NULL AND NOT EXISTS"
        " (SELECT 1 FROM sessions s WHERE s.id = f.source_session)"
    )
    assert orphans[0]["n"] == 0


def checked_facts(settings: Settings, username: str) -> list[str]:
    """The user's facts, once the database passed :func:`check_integrity`, through a new
    connection: FTS5's own check on a connection that has run it before reads the index as
    that connection last saw it, and reports another process's writes since as corruption."""
    root = open_database(settings)
    try:
        db = root.maintenance()
        check_integrity(db)
        return facts_of(db, username)
    finally:
        root.close()


def findable(db: Backend, text: str) -> bool:
    """Whether the full-text index has the fact too (not half-written)."""
    from bigmind.search import keyword
    from bigmind.storage.store import Store

    word = text.split()[-1]  # the token made for this fact alone
    users = [r["username"] for r in db.query("SELECT username FROM users")]
    return any(text in h.text for u in users for h in keyword.hits(Store(db, u), "fact", word))


def test_servers_writing_one_database_lose_nothing(
    settings: Settings, database: Backend, tmp_path: Path
) -> None:
    started = time.monotonic()
    servers = [
        Served(serve_env(settings, BIGMIND_USER=f"user{i % 4}"), tmp_path / f"s{i}.log")
        for i in range(SERVERS)
    ]

    def send(i: int, s: Served) -> None:  # every server gets its writes at once
        for n in range(WRITES):
            s.store(n + 1, f"Server {i} decision {n}: retries use the outbox token s{i}w{n}")

    # One sender thread each: a server whose answers wait to be read stops reading its stdin.
    senders = [threading.Thread(target=send, args=(i, s)) for i, s in enumerate(servers)]
    for t in senders:
        t.start()
    acked: dict[int, str] = {}
    refused = 0
    for s in servers:
        for _ in range(WRITES):
            message = s.answer()
            assert message is not None, "a server closed stdout with answers due"
            got = s.acknowledged(message)
            if got is None:
                refused += 1
            else:
                acked[got[0]] = got[1]
    for t in senders:
        t.join(60)
    codes = [s.finish() for s in servers]
    seconds = time.monotonic() - started
    stored, lost = lost_of(database, acked)
    report(
        "servers_writing_one_database",
        backend=database.dialect,
        servers=SERVERS,
        writes=SERVERS * WRITES,
        acknowledged=len(acked),
        errors=refused,
        lost=len(lost),
        seconds=round(seconds, 1),
    )
    assert codes == [0] * SERVERS
    assert refused == 0 and len(acked) == SERVERS * WRITES and lost == []
    assert len(stored) == SERVERS * WRITES
    check_integrity(database)
    sample = random.Random(7).sample(sorted(acked.values()), 5)
    assert all(findable(database, text) for text in sample)


def test_killed_servers_lose_no_acknowledged_write(
    settings: Settings, database: Backend, tmp_path: Path
) -> None:
    """SIGKILL in the middle of a stream of writes, again and again on the same database."""
    rng = random.Random(11)
    acked: dict[int, str] = {}
    for k in range(KILLS):
        s = Served(serve_env(settings), tmp_path / f"k{k}.log")
        burst = 400  # more than it answers before the kill: the kill lands mid-stream
        for n in range(burst):
            s.store(n + 1, f"Kill {k} write {n}: the broker keeps the outbox token k{k}n{n}")
        wait_for = rng.randrange(1, 50)
        seen = 0
        while seen < wait_for:
            message = s.answer()
            assert message is not None
            got = s.acknowledged(message)
            assert got is not None, message
            acked[got[0]] = got[1]
            seen += 1
        s.kill()  # with the rest of the burst in flight
    stored, lost = lost_of(database, acked)
    report(
        "killed_servers",
        backend=database.dialect,
        kills=KILLS,
        sent=KILLS * 400,
        acknowledged=len(acked),
        stored=len(stored),
        lost=len(lost),
    )
    assert lost == [] and len(stored) < KILLS * 400  # the kills cut streams short
    check_integrity(database)
    assert all(findable(database, text) for text in stored.values())  # none half-written


IMPORTED = 3_000  # rows: an import of several batches (BATCH_SECONDS each) on either backend


@pytest.fixture(scope="session")
def export_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An export of :data:`IMPORTED` facts, written once for both backends (as `bigmind
    export` writes it: the command itself is tested in tests/test_cli.py)."""
    from bigmind.memory import transfer
    from bigmind.storage.connect import connect
    from bigmind.storage.store import Store

    folder = tmp_path_factory.mktemp("export")
    db = connect(folder / "source.db")
    try:
        store = Store(db, "alice")
        for n in range(IMPORTED):
            store.store_fact("decision", f"Imported decision {n}: the cache keeps token imp{n}")
        transfer.write_export(store, folder / "all.json")
    finally:
        db.close()
    return folder / "all.json"


def test_a_killed_import_run_again_adds_every_row_once(
    settings: Settings, database: Backend, export_file: Path
) -> None:
    """An import writes in batches: killed at any moment, again and again, the database is
    intact and holds no row twice, and the same import run once more completes with every
    row exactly once."""
    rng = random.Random(13)
    env = serve_env(settings.model_copy(update={"user": "importer"}))
    outcomes = []
    for _ in range(3):
        before = len(facts_of(database, "importer"))
        imp = subprocess.Popen(
            [str(BIGMIND), "import", str(export_file)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        # Killed once this run has committed a batch, in the pause after it or inside the next
        # one: inside the import on any machine, with no time measured beforehand.
        deadline = time.monotonic() + 300  # a hang guard only
        while (
            imp.poll() is None
            and len(facts_of(database, "importer")) == before
            and time.monotonic() < deadline
        ):
            time.sleep(0.02)
        time.sleep(rng.uniform(0, BATCH_PAUSE_S + BATCH_SECONDS))
        finished = imp.poll() is not None
        imp.kill()
        imp.wait(30)
        texts = checked_facts(settings, "importer")
        assert len(texts) == len(set(texts)) <= IMPORTED  # cut short, never doubled
        outcomes.append((before, finished, len(texts)))
    rerun = subprocess.run(
        [str(BIGMIND), "import", str(export_file)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert rerun.returncode == 0, rerun.stderr
    texts = checked_facts(settings, "importer")
    assert len(texts) == len(set(texts)) == IMPORTED, f"killed at {outcomes}"
    report("killed_import", backend=database.dialect, facts=IMPORTED, runs=outcomes)


def test_a_killed_reindex_leaves_whole_vectors_and_a_rerun_finishes(
    settings: Settings, database: Backend, model_dir: Path
) -> None:
    """Each batch of vectors is one transaction: killed between or inside them, every vector
    row has its memory's embedding row, and running it again completes the rest."""
    from bigmind.storage.store import Store

    store = Store(database, settings.user)
    facts = 1_200
    for n in range(facts):
        store.store_fact("decision", f"Decision {n}: the payments service retries with token r{n}")
    env = serve_env(settings, BIGMIND_EMBED_MODEL=str(model_dir))

    def vectors() -> tuple[int, int]:
        rows = database.query("SELECT count(*) AS n FROM embeddings WHERE kind = 'fact'")
        has_table = database.table_exists("vec_fact")
        vec = database.query("SELECT count(*) AS n FROM vec_fact")[0]["n"] if has_table else 0
        return int(rows[0]["n"]), int(vec)

    run = subprocess.Popen(
        [str(BIGMIND), "reindex"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 120
    while vectors()[0] == 0 and run.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    run.send_signal(signal.SIGKILL)  # inside the run: some batches written, more to come
    run.wait(30)
    mapped, stored = vectors()
    report("killed_reindex", backend=database.dialect, facts=facts, vectors_at_kill=mapped)
    assert mapped == stored and 0 < mapped < facts  # killed mid-run, whole batches only
    check_integrity(database)
    again = subprocess.run(
        [str(BIGMIND), "reindex", "--json"], env=env, capture_output=True, text=True, timeout=300
    )
    assert again.returncode == 0, again.stderr
    assert vectors() == (facts, facts)
