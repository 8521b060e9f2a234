"""BigMind against mcp-memory-service over stdio: 2,000 facts, model loaded, the same client.

Both servers get the same 2,000 facts (BigMind: the seeded memory of ``recall_stdio.py``, embedded
before the server starts; the peer: the same fact texts, stored once through its own
``memory_store`` tool, which embeds each one before it answers, and cached), then are timed with
one ``mcpwire.StdioServer`` client each, interleaved call by call so that a busy machine slows
both alike:

* recall: ``memory_recall`` against the peer's ``memory_search`` (semantic mode, its default), on
  the same natural-language questions (``textgen.TextGen.question``), ``limit`` 10;
* store: ``memory_store_fact`` against the peer's ``memory_store`` (both run their duplicate
  check), on the same new fact texts;
* the peak resident set (``VmHWM``) of each server process at the end;
* cold start: spawn → ``initialize`` → ``tools/list`` answered, and until the first recall is
  answered with the model loaded (BigMind: ``memory_get_stats`` says the semantic index is ready).

The whole timed part runs ``--runs`` times with fresh servers on fresh copies; the table gives
the median of each figure over the runs, and the JSON every run. Without ``--peer-cmd`` (or
``BENCH_PEER_CMD``) it measures BigMind alone. Installing the peer: bench/README.md, "Peers".

    python bench/peers.py --peer-cmd "/work/peer-venv/bin/memory server" --runs 3
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from functools import partial
from pathlib import Path
from typing import Any

import apsw
from mcpwire import StdioServer
from recall_stdio import (
    add_env_option,
    add_memory_options,
    bigmind_server,
    prepare,
    wait_ready,
)
from run import CpuMeter, environment, summary_ms
from textgen import TextGen

BENCH_DIR = Path(__file__).resolve().parent
PEER_HOME = Path("/work/peer-home")
GOALS = {"recall_p95_ms": 12.0, "recall_ratio": 0.5, "rss_mb": 200.0, "store_p50_ms": 4.0}
SERVERS = ("bigmind", "peer")


def progress(msg: str) -> None:
    print(f"[peers] {msg}", file=sys.stderr, flush=True)


# -- the peer -----------------------------------------------------------------------------------
def peer_env(home: Path, db: Path) -> dict[str, str]:
    """mcp-memory-service on its sqlite-vec backend and ONNX embedder, offline, data in ``db``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MCP_", "BIGMIND_"))}
    env.pop("PYTHONPATH", None)
    env |= {
        "HOME": str(home),  # the model is under ~/.cache/mcp_memory/onnx_models/
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "MCP_MEMORY_STORAGE_BACKEND": "sqlite_vec",
        "MCP_MEMORY_SQLITE_PATH": str(db),
        "MCP_MEMORY_BASE_DIR": str(db.parent / f"{db.stem}-base"),
        "MCP_MEMORY_ONNX_ALLOW_DOWNLOAD": "0",
    }
    return env


def peer_server(argv: Sequence[str], home: Path, db: Path) -> StdioServer:
    server = StdioServer(argv, peer_env(home, db))
    server.initialize()
    return server


def text_of(result: dict[str, Any]) -> str:
    return " ".join(c.get("text", "") for c in result.get("content", []))


def seed_facts(db: Path, n: int) -> list[tuple[str, str]]:
    """(category, text) of the first ``n`` facts of BigMind's seeded memory."""
    conn = apsw.Connection(str(db), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        rows = conn.execute("SELECT category, fact FROM facts ORDER BY id LIMIT ?", (n,))
        return [(str(c), str(f)) for c, f in rows]
    finally:
        conn.close()


def copy_db(src: Path, dest: Path) -> Path:
    """Copy a SQLite database with its -wal/-shm files (so an unmerged WAL comes along)."""
    for suffix in ("", "-wal", "-shm"):
        Path(f"{dest}{suffix}").unlink(missing_ok=True)
        if Path(f"{src}{suffix}").exists():
            shutil.copy(f"{src}{suffix}", f"{dest}{suffix}")
    return dest


def prepare_peer(
    argv: Sequence[str], home: Path, workdir: Path, facts: list[tuple[str, str]]
) -> tuple[Path, dict[str, Any]]:
    """The peer's database holding ``facts``, stored through its tool once and kept in workdir."""
    db = workdir / f"peer-seed-{len(facts)}.db"
    info_file = workdir / f"peer-seed-{len(facts)}.json"
    if db.exists() and info_file.exists():
        info: dict[str, Any] = json.loads(info_file.read_text())
        return db, info
    tmp = workdir / "peer-seeding.db"
    copy_db(workdir / "absent.db", tmp)  # removes leftovers of an interrupted seeding
    shutil.rmtree(workdir / "peer-seeding-base", ignore_errors=True)
    t0 = time.perf_counter()
    stored = duplicates = 0
    with peer_server(argv, home, tmp) as server:
        for i, (category, text) in enumerate(facts):
            result = server.call_tool(
                "memory_store", {"content": text, "metadata": {"tags": category}}, check=False
            )
            if not result.get("isError"):
                stored += 1
            elif "Duplicate" in text_of(result):
                duplicates += 1  # its semantic duplicate check refused a near-copy
            else:
                raise RuntimeError(f"peer: memory_store failed: {text_of(result)}")
            if (i + 1) % 250 == 0:
                progress(f"peer seeding {i + 1}/{len(facts)}")
        stats = text_of(server.call_tool("memory_stats", {}))
    info = {
        "stored": stored,
        "refused_as_duplicates": duplicates,
        "seconds": round(time.perf_counter() - t0, 1),
        "stats": stats[:2000],
    }
    copy_db(tmp, db)
    info_file.write_text(json.dumps(info, indent=2))
    progress(f"peer seeded: {stored} stored, {duplicates} refused as duplicates")
    return db, info


# -- measurements -------------------------------------------------------------------------------
Starter = Callable[[Path], StdioServer]


def cold_once(name: str, start: Starter, db: Path, question: str) -> dict[str, float]:
    t0 = time.perf_counter()
    server = start(db)
    try:
        server.list_tools()
        t_list = time.perf_counter() - t0
        if name == "bigmind":
            wait_ready(server, name, poll=0.02)
            server.call_tool("memory_recall", {"query": question, "limit": 10})
        else:
            server.call_tool("memory_search", {"query": question, "limit": 10})
        t_ready = time.perf_counter() - t0
        return {
            "tools_list_s": t_list,
            "first_recall_s": t_ready,
            "rss_mb": server.memory_kb()["VmHWM"] / 1024,
        }
    finally:
        server.close()


def recall_call(name: str, server: StdioServer, question: str) -> dict[str, Any]:
    if name == "bigmind":
        return server.call_tool("memory_recall", {"query": question, "limit": 10})
    return server.call_tool("memory_search", {"query": question, "limit": 10})


def store_call(name: str, server: StdioServer, category: str, text: str) -> dict[str, Any]:
    if name == "bigmind":
        return server.call_tool("memory_store_fact", {"category": category, "fact": text})
    result = server.call_tool(
        "memory_store", {"content": text, "metadata": {"tags": category}}, check=False
    )
    if result.get("isError") and "Duplicate" not in text_of(result):
        raise RuntimeError(f"peer: memory_store failed: {text_of(result)}")
    return result


def timed_run(
    starters: dict[str, Starter], dbs: dict[str, Path], workdir: Path, args: argparse.Namespace
) -> dict[str, Any]:
    """One run: fresh copies, fresh servers, interleaved recall then store calls."""
    servers: dict[str, StdioServer] = {}
    try:
        for name, start in starters.items():
            server = start(copy_db(dbs[name], workdir / f"run-{name}.db"))
            if name == "bigmind":
                wait_ready(server, name)
            servers[name] = server
        gen = TextGen(7)
        questions = [gen.question() for _ in range(args.queries + args.warmup)]
        times: dict[str, dict[str, list[float]]] = {n: {"recall": [], "store": []} for n in servers}
        refused = dict.fromkeys(servers, 0)
        order = list(servers)
        for q in questions[: args.warmup]:
            for name, server in servers.items():
                recall_call(name, server, q)
        for i, q in enumerate(questions[args.warmup :]):
            for name in order if i % 2 == 0 else order[::-1]:
                t0 = time.perf_counter()
                recall_call(name, servers[name], q)
                times[name]["recall"].append(time.perf_counter() - t0)
        for i in range(args.stores):
            category, text = gen.fact()
            for name in order if i % 2 == 0 else order[::-1]:
                t0 = time.perf_counter()
                result = store_call(name, servers[name], category, f"{text} ({i})")
                times[name]["store"].append(time.perf_counter() - t0)
                refused[name] += bool(result.get("isError"))
        out: dict[str, Any] = {}
        for name, server in servers.items():
            mem = server.memory_kb()
            out[name] = {
                "recall": summary_ms(times[name]["recall"]),
                "store": {**summary_ms(times[name]["store"]), "refused": refused[name]},
                "rss_mb": round(mem["VmHWM"] / 1024, 1),
                "rss_end_anon_mb": round(mem["RssAnon"] / 1024, 1),
                "rss_end_file_mb": round(mem["RssFile"] / 1024, 1),
                "cpu_s": server.cpu_seconds(),
            }
        return out
    finally:
        for server in servers.values():
            server.close()


def median_of(runs: list[dict[str, Any]], *path: str) -> float:
    values = []
    for r in runs:
        v: Any = r
        for key in path:
            v = v[key]
        values.append(float(v))
    return round(statistics.median(values), 2)


def run(args: argparse.Namespace) -> dict[str, Any]:
    args.workdir.mkdir(parents=True, exist_ok=True)
    progress("preparing BigMind's memory")
    bm_db = prepare(args.workdir, args.model, args.facts, args.chunks, args.sessions)
    code = args.bigmind_code

    def start_bigmind(db: Path) -> StdioServer:
        return bigmind_server("bigmind", code, db, args.model, dict(args.bigmind_env))

    starters: dict[str, Starter] = {"bigmind": start_bigmind}
    dbs = {"bigmind": bm_db}
    result: dict[str, Any] = {
        "when": datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
        "env": environment(),
        "bigmind_code": str(code) if code else "the interpreter's bigmind",
        "bigmind_env": dict(args.bigmind_env),
        "sizes": {
            "facts": args.facts,
            "chunks": args.chunks,
            "sessions": args.sessions,
            "queries": args.queries,
            "warmup": args.warmup,
            "stores": args.stores,
            "runs": args.runs,
            "cold_runs": args.cold_runs,
        },
        "goals": GOALS,
    }
    if args.peer_cmd:
        argv = shlex.split(args.peer_cmd)
        home = args.peer_home

        def start_peer(db: Path) -> StdioServer:
            return peer_server(argv, home, db)

        progress("preparing the peer's memory")
        peer_db, info = prepare_peer(argv, home, args.workdir, seed_facts(bm_db, args.facts))
        starters["peer"] = start_peer
        dbs["peer"] = peer_db
        result["peer"] = {"argv": argv, "home": str(home), "seed": info}
    cpu = CpuMeter()
    result["cpu"] = cpu.sections
    question = TextGen(11).question()
    cold: dict[str, list[dict[str, float]]] = {n: [] for n in starters}
    for i in range(args.cold_runs):
        for name, start in starters.items():  # interleaved
            db = copy_db(dbs[name], args.workdir / f"cold-{name}.db")
            cold[name].append(
                cpu.measure(f"cold_{i}_{name}", partial(cold_once, name, start, db, question))
            )
        progress(f"cold start {i + 1}/{args.cold_runs}")
    result["cold_start"] = {
        name: {
            "tools_list_median_s": round(statistics.median(r["tools_list_s"] for r in rows), 2),
            "first_recall_median_s": round(statistics.median(r["first_recall_s"] for r in rows), 2),
            "rss_mb_median": round(statistics.median(r["rss_mb"] for r in rows), 1),
            "runs": rows,
        }
        for name, rows in cold.items()
    }
    runs = []
    for i in range(args.runs):
        r = cpu.measure(f"run_{i}", lambda: timed_run(starters, dbs, args.workdir, args))
        r["busy_pct"] = cpu.sections[f"run_{i}"]["busy_pct"]
        runs.append(r)
        figures = ", ".join(f"{n} recall p95 {r[n]['recall']['p95_ms']} ms" for n in starters)
        progress(f"run {i + 1}/{args.runs}: {figures}, machine {r['busy_pct']}% busy")
    result["runs"] = runs
    med: dict[str, Any] = {}
    for name in starters:
        med[name] = {
            f"{op}_{k}": median_of(runs, name, op, k)
            for op in ("recall", "store")
            for k in ("p50_ms", "p95_ms", "p99_ms")
        } | {"rss_mb": median_of(runs, name, "rss_mb")}
    if "peer" in starters:
        ratios = [
            {
                f"{op}_{k}": r["bigmind"][op][k] / r["peer"][op][k]
                for op in ("recall", "store")
                for k in ("p50_ms", "p95_ms")
            }
            | {"rss": r["bigmind"]["rss_mb"] / r["peer"]["rss_mb"]}
            for r in runs
        ]
        med["ratio_bigmind_to_peer"] = {
            k: round(statistics.median(x[k] for x in ratios), 2) for k in ratios[0]
        }
    med["busy_pct"] = median_of(runs, "busy_pct")
    result["median"] = med
    return result


# -- output -------------------------------------------------------------------------------------
def render(r: dict[str, Any]) -> str:
    med, cold = r["median"], r["cold_start"]
    names = [n for n in SERVERS if n in cold]
    label = {"bigmind": "BigMind", "peer": "mcp-memory-service"}
    width = 20
    lines = [
        f"BigMind vs peers over stdio — {r['sizes']['facts']:,} facts, model loaded, "
        f"{r['sizes']['queries']} questions × {r['sizes']['runs']} runs (medians of runs), "
        f"machine {med['busy_pct']:.0f}% busy (2 cores)",
        f"bigmind at {r['env']['git_commit']} ({r['bigmind_code']}"
        + "".join(f", {k}={v}" for k, v in r["bigmind_env"].items())
        + f"); {r['when']}",
        "",
        f"{'figure':<34}"
        + "".join(f"{label[n]:>{width}}" for n in names)
        + (f"{'ratio BM/peer':>{width}}" if "peer" in names else "")
        + "   goal",
        "-" * (34 + width * (len(names) + (1 if "peer" in names else 0)) + 30),
    ]
    ratio = med.get("ratio_bigmind_to_peer", {})

    def row(title: str, fmt: Callable[[str], str], rkey: str | None, goal: str) -> None:
        cells = "".join(f"{fmt(n):>{width}}" for n in names)
        rcell = f"{ratio[rkey]:.2f}×" if rkey and rkey in ratio else ""
        lines.append(f"{title:<34}{cells}" + (f"{rcell:>{width}}" if "peer" in names else "")
                     + f"   {goal}")  # fmt: skip

    row("recall p50", lambda n: f"{med[n]['recall_p50_ms']:.1f} ms", "recall_p50_ms", "")
    row("recall p95", lambda n: f"{med[n]['recall_p95_ms']:.1f} ms", "recall_p95_ms",
        f"≤ {GOALS['recall_p95_ms']:.0f} ms, ≤ {GOALS['recall_ratio']}× peer")  # fmt: skip
    row("recall p99", lambda n: f"{med[n]['recall_p99_ms']:.1f} ms", None, "")
    row("store p50", lambda n: f"{med[n]['store_p50_ms']:.1f} ms", "store_p50_ms",
        f"≤ {GOALS['store_p50_ms']:.0f} ms")  # fmt: skip
    row("store p95", lambda n: f"{med[n]['store_p95_ms']:.1f} ms", "store_p95_ms", "")
    row("peak RSS (VmHWM) at the end", lambda n: f"{med[n]['rss_mb']:.0f} MB", "rss",
        f"≤ {GOALS['rss_mb']:.0f} MB")  # fmt: skip
    row("cold start: tools/list", lambda n: f"{cold[n]['tools_list_median_s']:.2f} s", None, "")
    row("cold start: first recall, model", lambda n: f"{cold[n]['first_recall_median_s']:.2f} s",
        None, "")  # fmt: skip
    row("cold start: peak RSS then", lambda n: f"{cold[n]['rss_mb_median']:.0f} MB", None, "")
    if "peer" in r:
        s = r["peer"]["seed"]
        lines += [
            "",
            f"peer seeded through memory_store: {s['stored']} stored, "
            f"{s['refused_as_duplicates']} refused as semantic duplicates ({s['seconds']} s)",
        ]
    per_run = "; ".join(
        " / ".join(f"{n} {x[n]['recall']['p95_ms']:.1f}" for n in names)
        + f" ms ({x['busy_pct']:.0f}% busy)"
        for x in r["runs"]
    )
    lines.append(f"recall p95 per run: {per_run}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--peer-cmd",
        default=os.environ.get("BENCH_PEER_CMD"),
        help="the peer's stdio command, e.g. '/work/peer-venv/bin/memory server' "
        "(default: $BENCH_PEER_CMD; none: BigMind alone)",
    )
    p.add_argument("--peer-home", type=Path, default=PEER_HOME, help="HOME for the peer")
    p.add_argument(
        "--bigmind-code", type=Path, help="a checkout whose bigmind/ to run (PYTHONPATH)"
    )
    add_memory_options(p, Path("/work/benchcache/peers"))
    add_env_option(
        p, "--bigmind-env", "set in BigMind's server environment (e.g. OPENBLAS_NUM_THREADS=1)"
    )
    p.add_argument("--queries", type=int, default=300)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--stores", type=int, default=100)
    p.add_argument("--runs", type=int, default=3)
    p.add_argument("--cold-runs", type=int, default=3)
    p.add_argument("--out", type=Path, default=BENCH_DIR / "results" / "peers-latest.json")
    args = p.parse_args(argv)
    if not any(args.model.glob("*.onnx")):
        print(
            f"no ONNX model in {args.model}: run the tests once, or pass --model", file=sys.stderr
        )
        return 2
    result = run(args)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    print(render(result))
    print(f"\nJSON written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
