"""Build a large, realistic BigMind database fast, for the benchmarks.

    python bench/seed.py --db /tmp/bench.db                      # 100k facts, 100k chunks, 10k sessions
    python bench/seed.py --db /tmp/small.db --facts 5000 --chunks 5000 --sessions 500

The schema comes from ``bigmind.storage.db.connect`` (so migrations and FTS triggers are
the real ones) and the user row from ``bigmind.storage.store.Store``. Rows are then
written with multi-row ``INSERT … VALUES`` statements, one write transaction per
table, through the backend's public transaction API, with the same columns the
store writes (``Store.start_session`` / ``end_session``, ``append_chunk``,
``store_fact``). The FTS indexes are filled by bigmind's own triggers.

Text is synthetic engineering prose (see ``textgen.py``), deterministic for a
given ``--seed``; timestamps spread over the past ``--years`` years, in
bigmind's stored UTC format. Every seeded session is closed (an old open session
would be auto-closed by the first ``memory_start_session`` and skew it).
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from textgen import TextGen

from bigmind.models import AUTO_CLOSED_ONE_LINER, TS_FORMAT, content_hash
from bigmind.storage.connect import connect
from bigmind.storage.db import Tx
from bigmind.storage.store import Store

DAY = 86_400.0
BATCH_ROWS = 400  # rows per INSERT statement (≤ 12 columns → < 5,000 parameters)
IMPORTANCE_WEIGHTS = [2, 3, 6, 10, 30, 18, 12, 9, 6, 4]  # importance 1..10


@dataclass(frozen=True, slots=True)
class SeedStats:
    path: str
    user: str
    facts: int
    deprecated_facts: int
    chunks: int
    sessions: int
    summaries: int
    seconds: float
    file_mb: float


def _ts(epoch: float) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime(TS_FORMAT)


def _insert(tx: Tx, table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> int:
    """Insert rows with multi-row VALUES statements; return how many were written."""
    head = f"INSERT INTO {table}({', '.join(columns)}) VALUES "
    one = "(" + ", ".join("?" * len(columns)) + ")"
    batch: list[Any] = []
    n = pending = 0
    for row in rows:
        batch.extend(row)
        pending += 1
        if pending == BATCH_ROWS:
            tx.execute(head + ", ".join([one] * pending), batch)
            n += pending
            batch, pending = [], 0
    if pending:
        tx.execute(head + ", ".join([one] * pending), batch)
        n += pending
    return n


def _remove(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        Path(str(path) + suffix).unlink(missing_ok=True)


SESSION_COLUMNS = ("id", "user_id", "started_at", "ended_at", "one_liner", "topics", "outcome",
                   "importance", "has_tier2", "ide_hint", "last_activity_at", "auto_closed")  # fmt: skip
SUMMARY_COLUMNS = ("id", "summary", "key_facts", "code_refs", "created_at")
CHUNK_COLUMNS = ("session_id", "user_id", "role", "content", "flag_reason", "seq", "created_at")
FACT_COLUMNS = ("user_id", "category", "fact", "source_session", "confidence", "importance",
                "content_hash", "created_at", "updated_at", "deprecated", "deprecation_reason",
                "deprecated_at", "access_count", "last_accessed_at")  # fmt: skip


def set_profile(store: Store, gen: TextGen) -> None:
    store.update_profile(
        role="Staff engineer on the platform team",
        preferences="Prefers pytest, small pull requests, type hints everywhere, and "
        "explicit error messages. Reviews in the morning; deploys never on Fridays.",
        pinned_facts=[gen.fact()[1] for _ in range(4)],
    )


class MemoryRows:
    """One user's memory as rows, table by table, in the order they must be written:
    :meth:`sessions` first (it places the sessions the chunks and facts belong to), then
    :meth:`chunk_rows` and :meth:`fact_rows` (generators: rows are made as they are written)."""

    def __init__(self, gen: TextGen, me: str, years: float, summary_ratio: float = 0.85) -> None:
        self.gen, self.rng, self.me = gen, gen.rng, me
        self.now = time.time()
        self.span = years * 365 * DAY
        self.summary_ratio = summary_ratio
        self.sess: list[tuple[str, float, float]] = []  # (id, start, end)
        self.topics: list[Any] = []  # what each session is about; its chunks and facts follow
        self.deprecated = 0

    def _uid(self) -> str:
        return str(uuid.UUID(int=self.rng.getrandbits(128), version=4))

    def sessions(self, n: int) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
        """(session rows, summary rows): chronological, closed, most with a Tier-2 summary."""
        rng, gen, me = self.rng, self.gen, self.me
        session_rows: list[tuple[Any, ...]] = []
        summary_rows: list[tuple[Any, ...]] = []
        for start in sorted(self.now - rng.uniform(2 * 3600, self.span) for _ in range(n)):
            sid = self._uid()
            auto = rng.random() < 0.02
            end = start + (rng.uniform(24.5, 30) * 3600 if auto else rng.uniform(300, 4 * 3600))
            end = min(end, self.now - 60)
            self.sess.append((sid, start, end))
            gen.topic = gen.new_topic()
            self.topics.append(gen.topic)
            hint = rng.choice(["claude-code", "cursor", "vscode", "windsurf", None])
            importance = rng.choices(range(1, 11), weights=IMPORTANCE_WEIGHTS)[0]
            if auto:
                session_rows.append((sid, me, _ts(start), _ts(end), AUTO_CLOSED_ONE_LINER, None,
                                     None, 5, 0, hint, _ts(start), 1))  # fmt: skip
                continue
            s = gen.session_summary()
            has_summary = rng.random() < self.summary_ratio
            session_rows.append(
                (sid, me, _ts(start), _ts(end), s["one_liner"], s["topics"], s["outcome"],
                 importance, int(has_summary), hint, _ts(end), 0)
            )  # fmt: skip
            if has_summary:
                summary_rows.append((sid, s["summary"], s["key_facts"], s["code_refs"], _ts(end)))
        return session_rows, summary_rows

    def chunk_rows(self, n: int) -> Iterator[tuple[Any, ...]]:
        """Chunks spread over the sessions, seq per session, ids in time order."""
        rng, sess = self.rng, self.sess
        per_session = [0] * len(sess)
        for _ in range(n):
            per_session[rng.randrange(len(sess))] += 1
        placed: list[tuple[float, int, int]] = []  # (created_at epoch, session index, seq)
        for i, count in enumerate(per_session):
            _sid, start, end = sess[i]
            step = (end - start) / (count + 1)
            placed.extend((start + step * (k + 1), i, k + 1) for k in range(count))
        placed.sort()
        for when, i, seq in placed:
            self.gen.topic = self.topics[i]
            role, content, flag = self.gen.chunk()
            yield (sess[i][0], self.me, role, content, flag, seq, _ts(when))

    def fact_rows(self, n: int) -> Iterator[tuple[Any, ...]]:
        """Unique active facts, most from a session, some deprecated (counted in .deprecated)."""
        rng, gen, sess, now = self.rng, self.gen, self.sess, self.now
        when_from: list[tuple[float, int | None]] = []  # (created_at, session index)
        for _ in range(n):
            if rng.random() < 0.7:
                i = rng.randrange(len(sess))
                when_from.append((rng.uniform(sess[i][1], sess[i][2]), i))
            else:
                when_from.append((now - rng.uniform(3600, self.span), None))
        when_from.sort(key=lambda x: x[0])
        seen: set[str] = set()
        for created, at in when_from:
            gen.topic = None if at is None else self.topics[at]
            sid = None if at is None else sess[at][0]
            cat, text = gen.fact()
            digest = content_hash(text)
            while digest in seen:
                cat, text = gen.fact()
                digest = content_hash(text)
            seen.add(digest)
            updated = created if rng.random() < 0.8 else rng.uniform(created, now - 60)
            dep = rng.random() < 0.05
            self.deprecated += dep
            accessed = rng.choice([0, 0, 0, 1, 2, 3, 5, 8, 13])
            yield (
                self.me, cat, text, sid, rng.choice([1.0, 1.0, 0.9, 0.8, 0.7, 0.5, 0.3]),
                rng.choices(range(1, 11), weights=IMPORTANCE_WEIGHTS)[0], digest,
                _ts(created), _ts(updated), int(dep),
                "superseded by a later decision" if dep else None,
                _ts(updated) if dep else None, accessed,
                _ts(rng.uniform(updated, now)) if accessed else None,
            )  # fmt: skip
        gen.topic = None


def seed(
    db_path: Path | str,
    *,
    facts: int = 100_000,
    chunks: int = 100_000,
    sessions: int = 10_000,
    user: str = "bench",
    seed: int = 42,
    years: float = 2.0,
    summary_ratio: float = 0.85,
    overwrite: bool = False,
) -> SeedStats:
    """Create ``db_path`` with one user's memory of the given size."""
    path = Path(db_path)
    if path.exists():
        if not overwrite:
            raise FileExistsError(f"{path} exists; pass overwrite=True (--force) to replace it")
        _remove(path)
    if sessions < 1:
        raise ValueError("at least one session is needed")
    t0 = time.perf_counter()
    gen = TextGen(seed)
    backend = connect(path)
    try:
        store = Store(backend, user)
        set_profile(store, gen)
        memory = MemoryRows(gen, store.uid, years, summary_ratio)
        session_rows, summary_rows = memory.sessions(sessions)
        with backend.transaction() as tx:
            n_sessions = _insert(tx, "sessions", SESSION_COLUMNS, session_rows)
            n_summaries = _insert(tx, "session_summaries", SUMMARY_COLUMNS, summary_rows)
        with backend.transaction() as tx:
            n_chunks = _insert(tx, "conversation_chunks", CHUNK_COLUMNS, memory.chunk_rows(chunks))
        with backend.transaction() as tx:
            n_facts = _insert(tx, "facts", FACT_COLUMNS, memory.fact_rows(facts))
        backend.query("PRAGMA wal_checkpoint(TRUNCATE)")
        size = backend.file_size()
    finally:
        backend.close()
    return SeedStats(
        path=str(path),
        user=user,
        facts=n_facts,
        deprecated_facts=memory.deprecated,
        chunks=n_chunks,
        sessions=n_sessions,
        summaries=n_summaries,
        seconds=round(time.perf_counter() - t0, 2),
        file_mb=round(size / 1e6, 1),
    )


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Build a large BigMind database for benchmarks.")
    p.add_argument("--db", type=Path, required=True, help="SQLite file to create")
    p.add_argument("--facts", type=int, default=100_000)
    p.add_argument("--chunks", type=int, default=100_000)
    p.add_argument("--sessions", type=int, default=10_000)
    p.add_argument("--user", default="bench", help="the memory's owner (BIGMIND_USER)")
    p.add_argument("--seed", type=int, default=42, help="random seed for the text")
    p.add_argument("--years", type=float, default=2.0, help="how far back dates go")
    p.add_argument("--force", action="store_true", help="replace an existing file")
    a = p.parse_args(argv)
    try:
        stats = seed(
            a.db,
            facts=a.facts,
            chunks=a.chunks,
            sessions=a.sessions,
            user=a.user,
            seed=a.seed,
            years=a.years,
            overwrite=a.force,
        )
    except FileExistsError as exc:
        print(f"seed: {exc}", file=sys.stderr)
        return 1
    for k, v in asdict(stats).items():
        print(f"{k:>17}: {v}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
