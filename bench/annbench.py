"""The persisted approximate index's figures for ``semantic_latency.py``: build, searchable
after start (a fresh process), latency, agreement with exact KNN, memory.

    python bench/annbench.py DB INDEX_DIR UID QUERIES.npy MIN   # the child: one start, timed

The child is a new interpreter, as after a restart: it imports BigMind, opens the database,
opens the index files (header, checksum, memory map) and answers its first ``knn``; it prints
the wall-clock time of that answer, which the parent subtracts from the time it spawned it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent


def rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for ln in fh:
            if ln.startswith("VmRSS:"):
                return int(ln.split()[1]) / 1024
    return 0.0


def child(db_path: str, folder: str, uid: str, queries: str, ann_min: int) -> None:
    import numpy as np

    from bigmind.search.vectors import EXTRA_VECTORS, VectorStore
    from bigmind.storage.connect import connect

    started = rss_mb()
    db = connect(Path(db_path))
    vs = VectorStore(db, Path(folder), ann_min)
    qs = np.load(queries)
    found = vs.knn("chunk", uid, qs[0], 50)
    first = time.time()
    kinds = ("chunk", *EXTRA_VECTORS["chunk"])
    both = vs.knn(kinds[1], uid, qs[0], 50)
    second = time.time()
    after_first = rss_mb()
    times = []
    for q in qs[1:]:
        t = time.perf_counter()
        for kind in kinds:
            vs.knn(kind, uid, q, 50)
        times.append(time.perf_counter() - t)
    out = {
        "first_answer_at": first,
        "both_kinds_at": second,
        "hits": len(found) + len(both),
        "by_index": all((k, uid) in vs._anns for k in kinds),
        "rss_start_mb": round(started, 1),
        "rss_after_first_mb": round(after_first, 1),
        "rss_after_queries_mb": round(rss_mb(), 1),
        "both_kinds_ms": sorted(t * 1000 for t in times),
    }
    print(json.dumps(out))
    db.close()


def start_once(
    db_path: Path, folder: Path, uid: str, queries: Path, ann_min: int
) -> dict[str, Any]:
    """Spawn the child and time it from spawn to its first answer."""
    t0 = time.time()
    done = subprocess.run(
        [sys.executable, str(BENCH_DIR / "annbench.py"), str(db_path), str(folder), uid,
         str(queries), str(ann_min)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    r: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    r["searchable_s"] = round(r.pop("first_answer_at") - t0, 3)
    r["both_kinds_s"] = round(r.pop("both_kinds_at") - t0, 3)
    ms = r.pop("both_kinds_ms")
    r["knn_both_kinds_p50_ms"] = round(ms[len(ms) // 2], 2)
    r["knn_both_kinds_p95_ms"] = round(ms[int(len(ms) * 0.95)], 2)
    return r


if __name__ == "__main__":
    child(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], int(sys.argv[5]))
