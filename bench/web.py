"""Profile page latency on a large memory: every page over real HTTP, p50/p95 per page.

    python bench/seed.py --db /tmp/web.db                  # 100k facts, 100k chunks, 10k sessions
    python bench/web.py --db /tmp/web.db --user bench      # then time the pages

The page is served the way ``bigmind web`` serves it (uvicorn in this process, keyword search:
no model). Each page is fetched ``--runs`` times after one warm-up; the figures include
rendering and the HTTP round trip on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import urllib.request
from collections.abc import Sequence
from pathlib import Path

from bigmind.config import Settings
from bigmind.runtime import Runtime
from bigmind.web.profile_server import profile_server


def pages(rt: Runtime) -> list[str]:
    store = rt.store
    sid = store.list_sessions(1)[0].id
    total = store.count_active_facts()
    last = max(1, (total + 24) // 25)
    return [
        "/",
        "/activity",
        "/topics",
        "/sessions",
        "/sessions?page=200",
        f"/sessions/{sid}",
        "/facts",
        f"/facts?page={last // 2}",
        f"/facts?page={last}",
        "/facts?q=why+does+the+cache+invalidate",
        "/facts?q=postgres&category=decision",
        "/facts?status=deprecated",
        "/hypotheses",
        "/people",
        "/global",
    ]


def fetch(url: str) -> float:
    t = time.perf_counter()
    with urllib.request.urlopen(url, timeout=60) as r:
        r.read()
        assert r.status == 200, url
    return (time.perf_counter() - t) * 1000


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--db", type=Path, required=True, help="a database made by bench/seed.py")
    p.add_argument("--user", default="bench")
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--port", type=int, default=7790)
    args = p.parse_args(argv)
    if not args.db.exists():
        sys.exit(f"{args.db} does not exist: build it with bench/seed.py first")
    settings = Settings(db_path=args.db, user=args.user, port=args.port, embed_model="off")
    rt = Runtime(settings)
    try:
        base = profile_server(rt).url().rstrip("/")
        print(f"{rt.store.counts()}")
        print(f"{'page':44} {'p50 ms':>8} {'p95 ms':>8}")
        for path in pages(rt):
            fetch(base + path)  # warm-up
            times = sorted(fetch(base + path) for _ in range(args.runs))
            p95 = times[min(len(times) - 1, round(0.95 * (len(times) - 1)))]
            print(f"{path[:44]:44} {statistics.median(times):8.1f} {p95:8.1f}")
    finally:
        rt.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
