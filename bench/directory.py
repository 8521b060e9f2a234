"""The MegaMind directory at company size: a page of every card, "who worked on X?", and what a
session costs its user's card.

Builds a SQLite database of ``--users`` users with ``--topics`` session topics each (written
straight into the directory tables, then ranked onto the cards as the store does), then times
``cards`` (every card with its top topics), ``who_knows`` for an exact topic, a word of one, a
rare and an absent topic, a session opened and ended by a user with ``--facts`` facts, and a
rebuild of every card (what migration 0023 does once).

    .venv/bin/python bench/directory.py                       # 1,000 users × 200 topics
    .venv/bin/python bench/directory.py --users 20 --topics 10 --facts 100 --runs 1
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from bigmind.memory import megamind
from bigmind.models import new_id, now_ts
from bigmind.storage import directory_table as table
from bigmind.storage.connect import connect
from bigmind.storage.db import SQLiteBackend
from bigmind.storage.store import Store

WORDS = ["kafka", "kafka-streams", "payments-api", "redis", "postgres", "release-process"]


def ms(fn: Callable[[], object], runs: int) -> float:
    """The median of ``runs`` timed calls, in milliseconds (one untimed call first)."""
    fn()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times)


def seed(db: SQLiteBackend, users: int, topics: int, facts: int) -> Store:
    """``users`` users with ``topics`` topics each; the first also holds ``facts`` facts."""
    rng = random.Random(7)
    pool = WORDS + [f"topic-{i}" for i in range(max(topics * 15, 100))]
    ts = now_ts()
    with db.transaction() as tx:
        ids = []
        for u in range(users):
            uid = new_id()
            ids.append(uid)
            tx.execute(
                "INSERT INTO users(id, username, role, created_at) VALUES (?, ?, 'member', ?)",
                (uid, f"user{u}", ts),
            )
            tx.execute(
                "INSERT INTO directory_cards(user_id, first_seen, last_seen, updated_at)"
                " VALUES (?, ?, ?, ?)",
                (uid, ts, ts, ts),
            )
            for t in rng.sample(pool, min(topics, len(pool))):
                tx.execute(
                    "INSERT INTO directory_topics(user_id, topic, sessions, last_at)"
                    " VALUES (?, ?, ?, ?)",
                    (uid, t, rng.randint(1, 50), ts),
                )
        table.rank_topics(tx, ids)
        for i in range(facts):
            tx.execute(
                "INSERT INTO facts(user_id, category, fact, deprecated, content_hash)"
                " VALUES (?, 'decision', ?, 0, ?)",
                (ids[0], f"fact {i}", str(i)),
            )
    db.optimize()
    return Store(db, "user0", mode="team")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--users", type=int, default=1000)
    p.add_argument("--topics", type=int, default=200, help="session topics per user")
    p.add_argument("--facts", type=int, default=100_000, help="facts of the user whose card moves")
    p.add_argument("--runs", type=int, default=20)
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = connect(Path(tmp) / "directory.db")
        assert isinstance(db, SQLiteBackend)
        try:
            me = seed(db, args.users, args.topics, args.facts)
            rows = args.users * args.topics
            print(f"directory: {args.users:,} users × {args.topics} topics ({rows:,} rows)")
            n = len(megamind.cards(me))
            t = ms(partial(megamind.cards, me), args.runs)
            print(f"  cards (all {n:,}, top topics)  {t:8.1f} ms")
            for q in ("kafka", "payments", "topic-7", "nothing-here"):
                found = len(megamind.who_knows(me, q))
                t = ms(partial(megamind.who_knows, me, q), args.runs)
                print(f"  who_knows({q!r:15}) {found:3} people  {t:8.1f} ms")

            def session() -> None:
                sid = me.start_session().session.id
                me.end_session(sid, "x", ["kafka", "redis", "ci"], None, None)

            print(f"  open + end, {args.facts:,} facts    {ms(session, args.runs):8.2f} ms")
            with db.transaction() as tx:
                t = time.perf_counter()
                table.rebuild(tx, now_ts())
            print(f"  rebuild every card             {(time.perf_counter() - t) * 1000:8.0f} ms")
        finally:
            db.close()


if __name__ == "__main__":
    main()
