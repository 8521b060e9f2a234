"""One user with a million memories in PostgreSQL: build time, search and start-session latency.

    python bench/pg_scale.py                       # 1,000,000 rows: 700k chunks, 300k facts, 10k sessions
    python bench/pg_scale.py --rows 50000          # smoke run
    python bench/pg_scale.py --vectors --vector-rows 200000   # + pgvector HNSW recall and KNN

The schema comes from ``bigmind.storage.pg.connect_pg`` (the real migrations: ``tsv`` generated
columns, GIN and b-tree indexes), the user row and profile from ``bigmind.storage.store.Store``. Rows
(the same columns and the same synthetic text as ``seed.py`` / ``textgen.py``) are then streamed
with ``COPY … FROM STDIN`` (psycopg ``cursor.copy``); PostgreSQL computes every ``tsv`` itself.
As any bulk load does, the secondary indexes the migrations made are dropped before the COPY and
re-created from their own definitions (``pg_indexes.indexdef``) afterwards, then ``VACUUM
ANALYZE``. Timed in-process, through the store as the tools call it:

* ``keyword.hits`` of chunks / facts (limit 10), 200 natural-language questions and
  200 keyword queries (``TextGen.question`` / ``keyword_query``), after 20 warm-up queries, with
  the store's term-frequency cache warm (as in a running server) and cold (cleared before each
  query: a query whose terms the server has not seen for 5 minutes);
* ``Recall.search(q, 10, ["chunk"])`` and ``["fact"]``: what ``memory_search_chunks`` /
  ``memory_search_facts`` run (keyword only: no model);
* ``Store.start_session`` + ``build_context``: what ``memory_start_session`` runs.

Every SQL statement of every timed search is traced (time and text), so a slow search names its
slow statement; the slowest are re-run under ``EXPLAIN (ANALYZE, BUFFERS)``. See
bench/README.md, "PostgreSQL at a million memories".
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from load import PgServer, database_of, progress, scalar, with_database  # noqa: E402
from pg_vectors import FETCH_K, RECALL_K, vectors  # noqa: E402
from run import CpuMeter, environment, source_fingerprint, summary_ms  # noqa: E402
from seed import (  # noqa: E402
    CHUNK_COLUMNS,
    FACT_COLUMNS,
    SESSION_COLUMNS,
    SUMMARY_COLUMNS,
    MemoryRows,
    set_profile,
)
from textgen import TextGen  # noqa: E402

from bigmind.memory.context import build_context  # noqa: E402
from bigmind.search import keyword  # noqa: E402
from bigmind.storage.connect import connect_pg  # noqa: E402
from bigmind.storage.pg import PostgresBackend, translate  # noqa: E402
from bigmind.storage.store import Store  # noqa: E402

USER = "bench"
DAY = 86_400.0
GOAL_P95_MS = 30.0
BULK_TABLES = ("sessions", "session_summaries", "conversation_chunks", "facts")


# -- building ---------------------------------------------------------------------------------
class Copier:
    """COPY rows into a table on a psycopg connection; returns how many went in."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def __call__(self, table: str, columns: Sequence[str], rows: Iterator[Sequence[Any]]) -> int:
        n = 0
        with self.conn.cursor() as cur:
            with cur.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as cp:
                for row in rows:
                    cp.write_row(row)
                    n += 1
        return n


def secondary_indexes(conn: Any) -> list[tuple[str, str]]:
    """(name, definition) of the non-unique, non-primary indexes of the bulk-loaded tables."""
    rows = conn.execute(
        "SELECT i.indexname, i.indexdef FROM pg_indexes i JOIN pg_class c ON c.relname ="
        " i.indexname JOIN pg_index x ON x.indexrelid = c.oid WHERE i.schemaname ="
        " current_schema() AND i.tablename = ANY(%s) AND NOT x.indisunique"
        " AND NOT x.indisprimary ORDER BY i.indexname",
        (list(BULK_TABLES),),
    ).fetchall()
    return [(r[0], r[1]) for r in rows]


def build(url: str, rows: int, seed: int, years: float = 2.0) -> dict[str, Any]:
    """Migrate, then COPY ``rows`` memories (70 % chunks, 30 % facts) for one user."""
    import psycopg

    chunks = round(rows * 0.7)
    facts = rows - chunks
    sessions = max(1, rows // 100)
    stats: dict[str, Any] = {"chunks": chunks, "facts": facts, "sessions": sessions}
    t_all = time.perf_counter()
    t = time.perf_counter()
    backend = connect_pg(url)
    gen = TextGen(seed)
    try:
        store = Store(backend, USER)
        set_profile(store, gen)
        memory = MemoryRows(gen, store.uid, years)
    finally:
        backend.close()
    stats["migrate_s"] = round(time.perf_counter() - t, 2)

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET maintenance_work_mem = '1GB'")
        copy = Copier(conn)
        indexes = secondary_indexes(conn)
        for name, _ in indexes:
            conn.execute(f'DROP INDEX "{name}"')
        stats["indexes_rebuilt"] = [n for n, _ in indexes]

        # -- the same memory as seed.py, streamed with COPY ------------------------------------
        t = time.perf_counter()
        srows, mrows = memory.sessions(sessions)
        stats["sessions"] = copy("sessions", SESSION_COLUMNS, iter(srows))
        stats["summaries"] = copy("session_summaries", SUMMARY_COLUMNS, iter(mrows))
        stats["sessions_s"] = round(time.perf_counter() - t, 2)
        t = time.perf_counter()
        stats["chunks"] = copy("conversation_chunks", CHUNK_COLUMNS, memory.chunk_rows(chunks))
        stats["chunks_s"] = round(time.perf_counter() - t, 2)
        progress(f"chunks: {stats['chunks']:,} in {stats['chunks_s']} s")
        t = time.perf_counter()
        stats["facts"] = copy("facts", FACT_COLUMNS, memory.fact_rows(facts))
        stats["deprecated_facts"] = memory.deprecated
        stats["facts_s"] = round(time.perf_counter() - t, 2)
        progress(f"facts: {stats['facts']:,} in {stats['facts_s']} s")

        # -- indexes back, statistics -----------------------------------------------------------
        t = time.perf_counter()
        per_index = {}
        for name, ddl in indexes:
            ti = time.perf_counter()
            conn.execute(ddl)
            per_index[name] = round(time.perf_counter() - ti, 2)
        stats["index_s"] = round(time.perf_counter() - t, 2)
        stats["index_s_each"] = per_index
        t = time.perf_counter()
        for table in BULK_TABLES:
            conn.execute(f"VACUUM (ANALYZE) {table}")
        stats["vacuum_analyze_s"] = round(time.perf_counter() - t, 2)
        stats["total_s"] = round(time.perf_counter() - t_all, 2)
        stats["db_mb"] = round(scalar(conn, "SELECT pg_database_size(current_database())") / 1e6, 1)
        stats["table_mb"] = {
            table: round(scalar(conn, "SELECT pg_total_relation_size(%s)", (table,)) / 1e6, 1)
            for table in BULK_TABLES
        }
        stats["tsv_gin_mb"] = {
            name: round(scalar(conn, "SELECT pg_relation_size(%s)", (name,)) / 1e6, 1)
            for name, ddl in indexes
            if "gin" in ddl
        }
    return stats


def existing(url: str) -> dict[str, Any]:
    """What a kept database holds (for --reuse-database)."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        n = {t: scalar(conn, f"SELECT count(*) FROM {t}") for t in BULK_TABLES}
        mb = scalar(conn, "SELECT pg_database_size(current_database())") / 1e6
        dep = scalar(conn, "SELECT count(*) FROM facts WHERE deprecated = 1")
    return {"reused": database_of(url), "chunks": n["conversation_chunks"], "facts": n["facts"],
            "sessions": n["sessions"], "summaries": n["session_summaries"],
            "deprecated_facts": dep, "db_mb": round(mb, 1)}  # fmt: skip


# -- measuring --------------------------------------------------------------------------------
class Tracer:
    """Wraps ``PostgresBackend.query`` (the class's: the store reads through per-user views of
    the backend) to record (seconds, sql, params) of every read statement."""

    def __init__(self) -> None:
        self.log: list[tuple[float, str, tuple[Any, ...]]] = []
        orig = PostgresBackend.query

        def traced(
            backend: PostgresBackend, sql: str, params: Sequence[Any] = ()
        ) -> list[dict[str, Any]]:
            t = time.perf_counter()
            try:
                return orig(backend, sql, params)
            finally:
                self.log.append((time.perf_counter() - t, sql, tuple(params)))

        PostgresBackend.query = traced  # type: ignore[method-assign,assignment]

    def take(self) -> list[tuple[float, str, tuple[Any, ...]]]:
        out, self.log = self.log, []
        return out


def statement_kind(sql: str) -> str:
    if "ts_rank" in sql:
        return "rank"
    if "tsv @@" in sql and "count(*)" in sql:
        return "count"
    if "tsv @@" in sql and "OFFSET" in sql:
        return "floor"
    if "memory_usage" in sql:
        return "usage"
    return "other"


def time_queries(
    name: str,
    fn: Callable[[str], Any],
    queries: Sequence[str],
    tracer: Tracer,
    before: Callable[[], None] | None = None,
    warm: int = 20,
) -> dict[str, Any]:
    """Run ``fn`` on every query (after ``warm`` warm-up calls); per-call time and statements."""
    for q in queries[:warm]:
        if before:
            before()
        fn(q)
    tracer.take()
    times, per_query = [], []
    gc.disable()
    try:
        for q in queries:
            if before:
                before()
            t = time.perf_counter()
            res = fn(q)
            dt = time.perf_counter() - t
            stmts = tracer.take()
            times.append(dt)
            per_query.append((dt, q, stmts, len(res) if hasattr(res, "__len__") else None))
    finally:
        gc.enable()
    out: dict[str, Any] = {**summary_ms(times)}
    sql_ms: dict[str, list[float]] = {}
    for _dt, _q, stmts, _n in per_query:
        by: dict[str, float] = {}
        for st, sql, _p in stmts:
            k = statement_kind(sql)
            by[k] = by.get(k, 0.0) + st
        for k, v in by.items():
            sql_ms.setdefault(k, []).append(v)
    out["sql_by_kind"] = {k: summary_ms(v) | {"queries": len(v)} for k, v in sql_ms.items()}
    by_sql: dict[str, list[float]] = {}
    for _dt, _q, stmts, _n in per_query:
        for st, sql, _p in stmts:
            by_sql.setdefault(" ".join(sql.split()), []).append(st)
    top = sorted(by_sql.items(), key=lambda kv: -sum(kv[1]))[:8]
    out["top_statements"] = [
        {"sql": sql[:300], "calls": len(v), "total_ms": round(sum(v) * 1000, 1)} | summary_ms(v)
        for sql, v in top
    ]
    out["statements_per_query_mean"] = round(
        sum(len(s) for _, _, s, _ in per_query) / len(per_query), 2
    )
    hits = [n for *_, n in per_query if n is not None]
    out["mean_hits"] = round(sum(hits) / len(hits), 2) if hits else None
    out["zero_hits"] = sum(1 for n in hits if n == 0)  # a fast search that finds nothing is no win
    slow = sorted(per_query, key=lambda x: -x[0])[:5]
    out["slowest"] = [
        {"ms": round(dt * 1000, 1), "query": q,
         "statements": [{"ms": round(st * 1000, 2), "kind": statement_kind(sql), "sql": sql,
                         "params": list(params)}
                        for st, sql, params in sorted(stmts, key=lambda s: -s[0])[:3]]}
        for dt, q, stmts, _n in slow
    ]  # fmt: skip
    out["name"] = name
    progress(f"{name}: p50 {out['p50_ms']} / p95 {out['p95_ms']} ms")
    return out


def identifier_query(gen: TextGen) -> str:
    """An identifier as an agent pastes it: a function (snake_case), a file path or its file
    name, alone or with a word."""
    func, path = gen.pick("func"), gen.pick("file")
    ident = gen.rng.choice([func, func, path, path.rsplit("/", 1)[-1]])
    return gen.rng.choice([ident, f"{ident} {gen.w('noun')}", f"where is {ident} called"])


def explain(url: str, sql: str, params: Sequence[Any]) -> str:
    import psycopg
    from psycopg.types.numeric import FloatLoader

    with psycopg.connect(url, autocommit=True) as conn:
        conn.adapters.register_loader("numeric", FloatLoader)
        rows = conn.execute(
            "EXPLAIN (ANALYZE, BUFFERS, SETTINGS) " + translate(sql), tuple(params)
        ).fetchall()
    return "\n".join(r[0] for r in rows)


def measure(url: str, n_queries: int, cpu: CpuMeter) -> dict[str, Any]:
    from bigmind.search.ranking import Recall

    backend = connect_pg(url)
    tracer = Tracer()
    out: dict[str, Any] = {}
    try:
        store = Store(backend, USER)
        gen = TextGen(seed=7)
        questions = [gen.question() for _ in range(n_queries)]
        keywords = [gen.keyword_query() for _ in range(n_queries)]
        idents = [identifier_query(gen) for _ in range(n_queries)]
        text = keyword.text_search(store.db)

        def cold() -> None:
            text._df.clear()
            text._plans.clear()
            getattr(text, "_whole", {}).clear()  # identifiers held whole (migration 0025)

        def recall(kind: str) -> Callable[[str], Any]:
            return lambda q: Recall(store, None).search(q, 10, [kind]).hits

        runs = [
            ("search_chunks questions", lambda q: keyword.hits(store, "chunk", q, 10), questions, None),
            ("search_chunks keywords", lambda q: keyword.hits(store, "chunk", q, 10), keywords, None),
            ("search_chunks questions, cold term cache", lambda q: keyword.hits(store, "chunk", q, 10), questions, cold),
            ("search_facts questions", lambda q: keyword.hits(store, "fact", q, 10), questions, None),
            ("search_facts keywords", lambda q: keyword.hits(store, "fact", q, 10), keywords, None),
            ("search_facts questions, cold term cache", lambda q: keyword.hits(store, "fact", q, 10), questions, cold),
            ("search_chunks identifiers", lambda q: keyword.hits(store, "chunk", q, 10), idents, None),
            ("search_facts identifiers", lambda q: keyword.hits(store, "fact", q, 10), idents, None),
            ("Recall chunk (memory_search_chunks) questions", recall("chunk"), questions, None),
            ("Recall fact (memory_search_facts) questions", recall("fact"), questions, None),
        ]  # fmt: skip
        for name, fn, qs, before in runs:
            cold()  # each run starts from an empty cache; its warm-up fills it
            out[name] = cpu.measure(
                name, functools.partial(time_queries, name, fn, qs, tracer, before)
            )

        def start(_q: str) -> Any:
            sid = store.start_session("bench").session.id
            return build_context(store, current_session=sid).shown

        name = "start_session + build_context"
        out[name] = cpu.measure(
            name, lambda: time_queries(name, start, ["x"] * n_queries, tracer, warm=5)
        )
    finally:
        backend.close()
    return out


def explain_slowest(url: str, results: dict[str, Any], limit: int = 4) -> list[dict[str, Any]]:
    """EXPLAIN ANALYZE the slowest statement of the slowest queries of each search run."""
    seen: set[tuple[str, tuple[str, ...]]] = set()
    out = []
    for name, r in results.items():
        if r.get("p95_ms", 0) <= GOAL_P95_MS or name.startswith("start_session"):
            continue
        for slow in r["slowest"][:limit]:
            if not slow["statements"]:
                continue
            st = slow["statements"][0]
            key = (st["sql"], tuple(st["params"]))
            if key in seen:
                continue
            seen.add(key)
            try:
                plan = explain(url, st["sql"], st["params"])
            except Exception as exc:  # noqa: BLE001
                plan = f"EXPLAIN failed: {exc}"
            out.append({"run": name, "query": slow["query"], "query_ms": slow["ms"],
                        "statement_ms": st["ms"], "kind": st["kind"], "sql": translate(st["sql"]),
                        "params": st["params"], "plan": plan})  # fmt: skip
    return out


def migrate_pending(url: str) -> dict[str, Any]:
    """Open a kept database as BigMind does (``connect_pg``): the migrations it still lacks
    run, timed (e.g. 0025, which computes every row's ``tsv`` again)."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        before = {r[0] for r in conn.execute("SELECT name FROM bigmind_migrations").fetchall()}
    t = time.perf_counter()
    connect_pg(url).close()
    dt = time.perf_counter() - t
    with psycopg.connect(url, autocommit=True) as conn:
        after = {r[0] for r in conn.execute("SELECT name FROM bigmind_migrations").fetchall()}
        mb = scalar(conn, "SELECT pg_database_size(current_database())") / 1e6
    return {"applied": sorted(after - before), "seconds": round(dt, 2), "db_mb": round(mb, 1)}


def identifier_statements(url: str, n: int) -> dict[str, Any]:
    """One count statement per identifier (snake_case names taken from stored chunks), as the
    phrase of its words (before migration 0025) and as its whole lexeme (after), interleaved
    in the same run on the same database: what indexing identifiers whole buys per statement."""
    import re

    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        texts = [r[0] for r in conn.execute(
            "SELECT content FROM conversation_chunks WHERE id % 53 = 0 AND strpos(content, '_') > 0"
            " LIMIT 2000").fetchall()]  # fmt: skip
        found: list[str] = []
        for text in texts:
            for m in re.findall(r"(?<![\w./-])[a-z]+(?:_[a-z]+)+(?![\w./-])", text):
                if m not in found:
                    found.append(m)
        idents = found[:n]
        sql = "SELECT count(*) FROM conversation_chunks WHERE tsv @@ {q}"
        spelled = {"phrase of its words": "websearch_to_tsquery('english', %s)",
                   "whole lexeme": "CAST(%s AS tsquery)"}  # fmt: skip
        times: dict[str, list[float]] = {k: [] for k in spelled}
        counts: dict[str, list[int]] = {k: [] for k in spelled}
        for ident in idents:
            for name, q in spelled.items():
                param = f'"{ident}"' if name.startswith("phrase") else f"'{ident}'"
                t = time.perf_counter()
                counts[name].append(scalar(conn, sql.format(q=q), (param,)))
                times[name].append(time.perf_counter() - t)
    out: dict[str, Any] = {"identifiers": len(idents), "examples": idents[:5]}
    for name in spelled:
        out[name] = summary_ms(times[name]) | {
            "mean_rows": round(sum(counts[name]) / len(idents), 1)
        }
        progress(
            f"identifier count, {name}: p50 {out[name]['p50_ms']} / p95 {out[name]['p95_ms']} ms"
        )
    return out


# -- report -----------------------------------------------------------------------------------
def render(r: dict[str, Any]) -> str:
    env, b = r["env"], r["build"]
    lines = [
        f"BigMind on PostgreSQL at scale — {env['when']}, {env['cpu']} × {env['cpus']}, "
        f"PostgreSQL {r['pg'].get('server_version', '?')} (shared_buffers "
        f"{r['pg'].get('shared_buffers', '?')}), bigmind at {env['git_commit']}"
        f"{' + uncommitted changes' if env['bigmind_tree_dirty'] else ''}",
        "",
        f"{'Built' if 'total_s' in b else 'Reused database ' + b.get('reused', '') + ':'} "
        f"{b['chunks']:,} chunks + {b['facts']:,} facts ({b['deprecated_facts']:,} deprecated) "
        f"+ {b['sessions']:,} sessions ({b['summaries']:,} summaries) for one user"
        + (
            f" in {b['total_s']} s: migrate {b['migrate_s']} s, COPY sessions {b['sessions_s']} s,"
            f" chunks {b['chunks_s']} s, facts {b['facts_s']} s, indexes {b['index_s']} s, VACUUM"
            f" ANALYZE {b['vacuum_analyze_s']} s"
            if "total_s" in b
            else ""
        )
        + f"; database {b['db_mb']:,} MB."
        + (
            f" Migrations it lacked, applied in {m['seconds']} s: {', '.join(m['applied'])}"
            f" (database then {m['db_mb']:,} MB)."
            if (m := b.get("pending_migrations", {})).get("applied")
            else ""
        ),
        "",
        f"| operation ({r['queries']} calls each) | p50 ms | p95 ms | p99 ms | max ms | mean hits | no hit | goal p95 ≤ {GOAL_P95_MS:.0f} ms |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for name, s in r.get("measure", {}).items():
        verdict = "PASS" if s["p95_ms"] <= GOAL_P95_MS else "**MISS**"
        hits = "" if name.startswith("start_session") else s.get("mean_hits")
        none = "" if name.startswith("start_session") else s.get("zero_hits", "")
        lines.append(f"| {name} | {s['p50_ms']:.1f} | {s['p95_ms']:.1f} | {s['p99_ms']:.1f} | "
                     f"{s['max_ms']:.1f} | {hits} | {none} | {verdict} |")  # fmt: skip
    lines.append("")
    lines.append("SQL time per search, p50 / p95 ms, by statement (count = term frequencies, "
                 "floor = recency floor, rank = ts_rank):")  # fmt: skip
    for name, s in r.get("measure", {}).items():
        parts = ", ".join(f"{k} {v['p50_ms']:.1f} / {v['p95_ms']:.1f} ({v['queries']} q)"
                          for k, v in s["sql_by_kind"].items())  # fmt: skip
        lines.append(f"  {name}: {parts}; {s['statements_per_query_mean']} statements per call")
    if r.get("vectors"):
        v = r["vectors"]
        built = (f"COPY {v['copy_s']} s, HNSW build {v['hnsw_build_s']} s" if "copy_s" in v
                 else "kept from an earlier run")  # fmt: skip
        if v.get("hnsw_with"):
            built += f", HNSW built again WITH ({v['hnsw_with']}) in {v['hnsw_build_s']} s"
        lines += ["", f"Vectors: {v['rows']:,} in vec_chunk ({v['real_sample']:,} real embeddings "
                  f"of chunks by {v['model']}, the rest mixes of them), {built}, "
                  f"{v['vec_chunk_mb']} MB (HNSW {v['hnsw_mb']} MB); BigMind's hnsw.ef_search "
                  f"{v['ef_search']}; warm() {v.get('warm_s')} s",
                  f"HNSW recall@{RECALL_K} against exact KNN ({r['queries']} question embeddings, "
                  f"k = {FETCH_K} as recall asks), by hnsw.ef_search:",
                  "| ef_search | recall@10 | worst query | similarity found / exact | p50 ms | p95 ms | results |",
                  "|---|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
        for ef, s in v["recall"].items():
            lines.append(f"| {ef} | {s['recall_at_10']:.3f} | {s.get('recall_at_10_min', 1.0)} | "
                         f"{s.get('similarity_ratio', 1.0)} | {s['p50_ms']:.1f} | {s['p95_ms']:.1f} | "
                         f"{s.get('mean_results', '')} |")  # fmt: skip
        for k, s in v.items():
            if isinstance(s, dict) and "p95_ms" in s:
                lines.append(f"  {k}: p50 {s['p50_ms']:.1f} / p95 {s['p95_ms']:.1f} / p99 "
                             f"{s['p99_ms']:.1f} ms, {s['mean_results']} results")  # fmt: skip
            elif isinstance(s, dict) and "error" in s:
                lines.append(f"  {k}: ERROR {s['error']}")
    if r.get("identifier_statements"):
        s = r["identifier_statements"]
        lines += ["", f"One count statement per identifier ({s['identifiers']} snake_case names from "
                  "the chunks, interleaved, same database), p50 / p95 ms (rows):"]  # fmt: skip
        for name in ("phrase of its words", "whole lexeme"):
            lines.append(f"  {name}: {s[name]['p50_ms']:.1f} / {s[name]['p95_ms']:.1f} "
                         f"({s[name]['mean_rows']})")  # fmt: skip
    if r.get("explain"):
        lines += ["", "Slowest statements (EXPLAIN ANALYZE in the JSON):"]
        for e in r["explain"]:
            lines.append(f"  [{e['run']}] {e['query_ms']} ms query, {e['kind']} statement "
                         f"{e['statement_ms']} ms: {e['query'][:90]!r}")  # fmt: skip
    cpu = r.get("cpu", {})
    if cpu:
        busy = sorted(v["busy_pct"] for v in cpu.values())
        lines += ["", f"Machine CPU busy while measuring (all {env['cpus']} cores): "
                  f"{busy[0]:.0f}–{busy[-1]:.0f} %; steal ≤ {max(v['steal_pct'] for v in cpu.values()):.0f} %"]  # fmt: skip
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--rows", type=int, default=1_000_000, help="memories: 70 %% chunks, 30 %% facts"
    )
    p.add_argument("--queries", type=int, default=200, help="timed calls per operation")
    p.add_argument("--seed", type=int, default=42)
    p.add_argument("--shared-buffers", default="1GB",
                   help="set on a server started here (restart); '' keeps the default")  # fmt: skip
    p.add_argument("--vectors", action="store_true", help="also time vector KNN (pgvector)")
    p.add_argument(
        "--vector-rows",
        type=int,
        default=0,
        help="vectors (default: every chunk; more than the chunks: the rest name none)",
    )
    p.add_argument("--hnsw-with", default="", metavar="OPTIONS",
                   help="on kept vectors: build the HNSW index again WITH (OPTIONS), e.g. "
                   "'m = 24, ef_construction = 128'")  # fmt: skip
    p.add_argument("--fresh-vectors", action="store_true",
                   help="make the vectors anew even if an earlier run kept some")  # fmt: skip
    p.add_argument("--real-sample", type=int, default=1000,
                   help="chunks embedded for real; the other vectors are mixes of them")  # fmt: skip
    p.add_argument("--skip-search", action="store_true", help="no search/start-session timings")
    p.add_argument("--identifiers", type=int, default=0, metavar="N",
                   help="also time N identifiers' count statements, phrase vs whole lexeme")  # fmt: skip
    p.add_argument("--json", type=Path, help="write every figure to this JSON file")
    p.add_argument("--keep", action="store_true", help="keep the database (prints its URL)")
    p.add_argument("--reuse-database", metavar="NAME",
                   help="measure a database kept by an earlier --keep run on the server of "
                   "BIGMIND_BENCH_PG_URL instead of building one")  # fmt: skip
    a = p.parse_args(argv)

    env = environment()
    env["source_before"] = source_fingerprint()
    r: dict[str, Any] = {"env": env, "rows": a.rows, "queries": a.queries}
    pg = PgServer()
    url = ""
    try:
        if a.shared_buffers and pg.configure(shared_buffers=a.shared_buffers):
            progress(f"server restarted with shared_buffers = {a.shared_buffers}")
        r["pg"] = pg.settings()
        r["load_before"] = os.getloadavg()
        if a.reuse_database:
            url = with_database(pg.url, a.reuse_database)
            r["build"] = existing(url)
            progress(f"reusing database {a.reuse_database}: {r['build']}")
            r["build"]["pending_migrations"] = migrate_pending(url)
            progress(f"pending migrations: {r['build']['pending_migrations']}")
        else:
            url = pg.create_database("bigmind_scale")
            progress(f"building {a.rows:,} rows in database {database_of(url)}")
            r["build"] = build(url, a.rows, a.seed)
            progress(f"built in {r['build']['total_s']} s ({r['build']['db_mb']} MB)")
        cpu = CpuMeter()
        r["cpu"] = cpu.sections
        if not a.skip_search:
            r["measure"] = measure(url, a.queries, cpu)
            r["explain"] = explain_slowest(url, r["measure"])
        if a.identifiers:
            r["identifier_statements"] = identifier_statements(url, a.identifiers)
        if a.vectors:
            n = a.vector_rows or r["build"]["chunks"]
            r["vectors"] = vectors(url, USER, n, a.queries, a.real_sample, a.seed, a.fresh_vectors,
                                   a.hnsw_with)  # fmt: skip
        r["load_after"] = os.getloadavg()
    finally:
        if url and not a.keep and not a.reuse_database:
            try:
                pg.drop_database(url)
            except Exception as exc:  # noqa: BLE001
                progress(f"could not drop the database: {exc}")
        elif url:
            progress(f"kept: {url} (the server stops when this process exits unless external)")
        pg.close()
    env["source_after"] = source_fingerprint()
    print(render(r))
    if env["source_before"] != env["source_after"]:
        print("\nWARNING: bigmind/ changed during this run; the figures mix code versions.")
    if a.json:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps(r, indent=2, default=str) + "\n")
        print(f"\nJSON written to {a.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
