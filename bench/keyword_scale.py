"""Keyword search at 100k and 1M chunks: the bounded planner against the previous code and
against unbounded BM25, side by side in one run.

    python bench/keyword_scale.py                                    # 100k and 1M (cached dbs)
    python bench/keyword_scale.py --sizes 100000 --queries 100 --json /tmp/k.json

For each size N a database is seeded once with ``seed.py`` (N chunks, 1,000 facts, N/100
sessions; no vectors: keyword search needs none) and kept under ``--workdir`` for later runs.
Queries come from ``textgen.py``: natural-language questions and 1–3-word keyword queries
(``--queries`` of each), asked of three searches over the same database in one process:

- **new**: this tree's ``keyword.ranked`` (the product's path);
- **old**: the same function with ``TextSearch`` (``textsearch.py``, ``terms.py``,
  ``fulltext.py``) loaded from ``--baseline`` (a git commit: the code before this bench);
- **exact**: unbounded BM25 — every query term OR-ed, every match scored — the reference
  the bounded searches are compared with.

Timed per query, old and new interleaved (the order alternating), each with its own caches
cleared at the start of the pass (term counts and plans then warm up over the pass as in a
running server): the keyword list of a hybrid chunk search (``ranked(…, "chunk", q, 50)``)
and keyword-only search (``Recall(store, None).search(q, 10, ["chunk"], mode="keyword")``).
Agreement: the share of exact BM25's top 10 / top 50 ids that a search also returns in its
top 10 / top 50, and hits per query. The machine's busy share (``/proc/stat``) is recorded per
section.
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import subprocess
import sys
import time
import types
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from run import CpuMeter, environment, summary_ms
from seed import seed
from smoke import progress
from textgen import TextGen

from bigmind.search import keyword
from bigmind.search.ranking import Recall
from bigmind.search.terms import build_fts_query
from bigmind.search.textsearch import Plan, TextSearch
from bigmind.storage.connect import connect
from bigmind.storage.db import Backend
from bigmind.storage.searchable import FULL_TEXT
from bigmind.storage.store import Store

ROOT = Path(__file__).resolve().parent.parent
USER = "bench"
BASELINE = "0fee888"  # the code before the bounded keyword search of issue 20
FETCH = 50  # what Recall asks each list for (RankParams.fetch)
BASE_FILES = {  # module name in the baseline → its file
    "kwbase_fulltext": "bigmind/storage/fulltext.py",
    "kwbase_terms": "bigmind/search/terms.py",
    "kwbase_textsearch": "bigmind/search/textsearch.py",
}


# -- the three searches ------------------------------------------------------------------------
def baseline_class(ref: str) -> type[TextSearch]:
    """``TextSearch`` as it was at ``ref``: its modules loaded from git under other names."""
    for name, path in BASE_FILES.items():
        src = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{ref}:{path}"],
            capture_output=True, text=True, check=True,
        ).stdout  # fmt: skip
        for other, other_path in BASE_FILES.items():
            dotted = other_path.removesuffix(".py").replace("/", ".")
            src = src.replace(f"from {dotted} import", f"from {other} import")
        mod = types.ModuleType(name)
        mod.__file__ = f"{ref}:{path}"
        sys.modules[name] = mod
        exec(compile(src, mod.__file__, "exec"), mod.__dict__)  # our own history, from git
    old = sys.modules["kwbase_textsearch"]
    for name, value in vars(Plan).get("__dataclass_fields__", {}).items():
        if not hasattr(old.Plan, name):  # fields added since: their defaults, for match_why
            setattr(old.Plan, name, value.default)
    cls: type[TextSearch] = old.TextSearch
    return cls


def exact(db: Backend, uid: str, query: str, limit: int) -> list[str]:
    """Unbounded BM25: every term OR-ed, every match scored, the owner's best ``limit`` ids."""
    q = build_fts_query(query)
    if q is None:
        return []
    ft = FULL_TEXT["chunk"]
    rows = db.query(
        f"SELECT b.id FROM {ft.fts} JOIN {ft.base} b ON b.rowid = {ft.fts}.rowid"
        f" WHERE {ft.fts} MATCH ? AND {ft.condition()}"
        f" ORDER BY bm25({ft.fts}, {ft.weights}), b.rowid DESC LIMIT ?",
        (q.expression, uid, limit),
    )
    return [str(r["id"]) for r in rows]


class Searches:
    """The old and new ``TextSearch`` of one database, swapped in as the product's."""

    def __init__(self, db: Backend, old_cls: type[TextSearch]) -> None:
        self.db = db
        self.impl = {"old": old_cls(db), "new": TextSearch(db)}

    def use(self, which: str) -> None:
        keyword._SEARCHES[self.db] = self.impl[which]

    def clear(self) -> None:
        for s in self.impl.values():
            s._df.clear()
            s._plans.clear()


# -- timing ------------------------------------------------------------------------------------
def timed_pair(
    searches: Searches, queries: Sequence[str], run: Callable[[str], Any]
) -> tuple[dict[str, list[float]], dict[str, list[Any]]]:
    """Per query, old then new or new then old (alternating); seconds and results of each."""
    secs: dict[str, list[float]] = {"old": [], "new": []}
    results: dict[str, list[Any]] = {"old": [], "new": []}
    searches.clear()
    gc.collect()
    gc.disable()
    try:
        for i, q in enumerate(queries):
            for which in ("old", "new") if i % 2 == 0 else ("new", "old"):
                searches.use(which)
                t = time.perf_counter()
                out = run(q)
                secs[which].append(time.perf_counter() - t)
                results[which].append(out)
    finally:
        gc.enable()
    return secs, results


def overlap(got: Sequence[str], ref: Sequence[str], k: int) -> float | None:
    """Share of ``ref``'s top ``k`` found in ``got``'s top ``k`` (None: ``ref`` is empty)."""
    want = set(ref[:k])
    return len(want & set(got[:k])) / len(want) if want else None


def mean(xs: Sequence[float | None]) -> float | None:
    v = [x for x in xs if x is not None]
    return round(sum(v) / len(v), 3) if v else None


def one_kind(
    store: Store, searches: Searches, queries: Sequence[str], cpu: CpuMeter, tag: str, agree: int
) -> dict[str, Any]:
    db, uid = store.db, store.uid

    def kw_list(q: str) -> list[str]:
        found, _ = keyword.ranked(store, "chunk", q, FETCH)
        return [i for i, _ in found.items]

    recall = Recall(store, None)

    def kw_only(q: str) -> list[str]:
        return [str(h.id) for h in recall.search(q, 10, ["chunk"], mode="keyword").hits]

    out: dict[str, Any] = {"queries": len(queries)}
    secs, lists = cpu.measure(f"{tag} list", lambda: timed_pair(searches, queries, kw_list))
    out["list"] = {w: summary_ms(v) for w, v in secs.items()}
    out["list"]["ratio_p50"] = round(out["list"]["new"]["p50_ms"] / out["list"]["old"]["p50_ms"], 2)
    out["list"]["cpu"] = cpu.sections[f"{tag} list"]
    secs, only = cpu.measure(f"{tag} only", lambda: timed_pair(searches, queries, kw_only))
    out["keyword_only"] = {w: summary_ms(v) for w, v in secs.items()}
    out["keyword_only"]["cpu"] = cpu.sections[f"{tag} only"]
    t = time.perf_counter()
    ref = [exact(db, uid, q, FETCH) for q in queries[:agree]]
    out["exact_ms_mean"] = round((time.perf_counter() - t) * 1000 / max(len(ref), 1), 1)
    out["agreement_queries"] = len(ref)
    out["agreement"] = {
        w: {
            "top10": mean([overlap(g, r, 10) for g, r in zip(lists[w], ref, strict=False)]),
            "top50": mean([overlap(g, r, 50) for g, r in zip(lists[w], ref, strict=False)]),
            "new_vs_old_top10": mean(
                [overlap(g, r, 10) for g, r in zip(lists["new"], lists["old"], strict=True)]
            ),
            "hits_per_query": mean([len(g) for g in lists[w]]),
            "no_hit_share": mean([float(not g) for g in lists[w]]),
            "only_hits_per_query": mean([len(g) for g in only[w]]),
        }
        for w in ("old", "new")
    }
    out["agreement"]["exact_hits_per_query"] = mean([len(r) for r in ref])
    out["agreement"]["queries"] = len(ref)
    return out


def one_size(
    n: int, args: argparse.Namespace, queries: dict[str, list[str]], cpu: CpuMeter
) -> dict[str, Any]:
    path = args.workdir / f"keyword-scale-{n}.db"
    out: dict[str, Any] = {"n": n, "db": str(path)}
    if not path.exists():
        progress(f"seeding {n:,} chunks into {path} (kept for later runs)")
        st = seed(path, facts=1000, chunks=n, sessions=max(10, n // 100), user=USER)
        out["seed_s"] = st.seconds
    db = connect(path)
    try:
        store = Store(db, USER)
        searches = Searches(db, baseline_class(args.baseline))
        warm = TextGen(seed=3).queries(20)  # page cache and statements, not the timed queries
        for which in ("old", "new"):
            searches.use(which)
            for q in warm:
                keyword.ranked(store, "chunk", q, FETCH)
        for kind, qs in queries.items():
            progress(f"{n:,}: {kind}")
            out[kind] = one_kind(store, searches, qs, cpu, f"{n} {kind}", args.agreement)
    finally:
        keyword._SEARCHES.pop(db, None)
        db.close()
    return out


# -- report ------------------------------------------------------------------------------------
def render(result: dict[str, Any]) -> str:
    def pp(d: dict[str, Any]) -> str:
        return f"{d['p50_ms']:.1f} / {d['p95_ms']:.1f} / {d['p99_ms']:.1f}"

    lines = [
        "| size, queries | search | old p50 / p95 / p99 ms | new p50 / p95 / p99 ms | busy |",
        "|---|---|---:|---:|---:|",
    ]
    for r in result["sizes"]:
        for kind in ("questions", "keywords"):
            x = r[kind]
            for key, label in (("list", "keyword list (50)"), ("keyword_only", "mode=keyword")):
                lines.append(
                    f"| {r['n']:,} {kind} | {label} | {pp(x[key]['old'])} | {pp(x[key]['new'])}"
                    f" | {x[key]['cpu']['busy_pct']:.0f} % |"
                )
    lines += [
        "",
        "| size, queries | top-10 / top-50 vs exact BM25: old | new | new vs old top-10"
        " | hits per query old / new / exact |",
        "|---|---:|---:|---:|---:|",
    ]
    for r in result["sizes"]:
        for kind in ("questions", "keywords"):
            a = r[kind]["agreement"]
            lines.append(
                f"| {r['n']:,} {kind} | {a['old']['top10']} / {a['old']['top50']}"
                f" | {a['new']['top10']} / {a['new']['top50']} | {a['new']['new_vs_old_top10']}"
                f" | {a['old']['hits_per_query']} / {a['new']['hits_per_query']}"
                f" / {a['exact_hits_per_query']} |"
            )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Keyword search latency and agreement at scale.")
    p.add_argument("--sizes", default="100000,1000000", help="comma-separated chunk counts")
    p.add_argument("--workdir", type=Path, default=Path("/work/benchcache/keyword"))
    p.add_argument("--queries", type=int, default=200, help="questions, and as many keyword ones")
    p.add_argument(
        "--agreement", type=int, default=100, help="queries per kind compared with exact BM25"
    )
    p.add_argument("--baseline", default=BASELINE, help="git commit of the old code")
    p.add_argument("--json", type=Path, help="write all figures here")
    a = p.parse_args(argv)
    a.workdir.mkdir(parents=True, exist_ok=True)
    gen = TextGen(seed=7)
    queries = {
        "questions": [gen.question() for _ in range(a.queries)],
        "keywords": [gen.keyword_query() for _ in range(a.queries)],
    }
    result: dict[str, Any] = {"env": environment(), "baseline": a.baseline, "sizes": []}
    cpu = CpuMeter()
    save = (lambda: a.json.write_text(json.dumps(result, indent=2))) if a.json else (lambda: 0)
    for n in (int(x) for x in a.sizes.split(",") if x.strip()):
        r = cpu.measure(str(n), functools.partial(one_size, n, a, queries, cpu))
        result["sizes"].append({**r, "cpu": cpu.sections[str(n)]})
        save()
    env = result["env"]
    head = f"Keyword search — {env['when']}, commit {env['git_commit']} (old: {a.baseline})"
    print(f"\n{head}, {env['cpus']} CPUs ({env['cpu']}), SQLite {env['sqlite']}\n")
    print(render(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
