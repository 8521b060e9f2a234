"""memory_recall and memory_store_fact over stdio, model loaded: this checkout against another.

Seeds one memory (2,000 facts, 500 chunks, 50 sessions by default), embeds it once, then
starts one ``bigmind serve`` per code base on its own copy — this checkout, and optionally a
``--baseline`` checkout of another revision (``git worktree add /tmp/before REV``) — and
times the same calls on both, interleaved call by call (so a busy machine slows both
alike): ``--queries`` memory_recall questions, then ``--stores`` new facts (``--block N``: N
stores per server in a row, so each server's background check follows its own stores;
``--gap-ms``: a pause after each store, an agent's pace). Reports p50 / p95 per server and the
ratio of this checkout to the baseline.

    python bench/recall_stdio.py --baseline /tmp/before --workdir /tmp/recall-bench
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mcpwire import StdioServer
from seed import seed
from textgen import TextGen

from bigmind.search.embedder import FORMAT_VERSION

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MODEL = ROOT / ".cache" / "bigmind-tests" / f"minilm-onnx-0.1.0-v{FORMAT_VERSION}"


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def summary(samples_s: Sequence[float]) -> dict[str, float]:
    ms = [s * 1000 for s in samples_s]
    return {
        "p50_ms": round(statistics.median(ms), 2),
        "p95_ms": round(percentile(ms, 0.95), 2),
        "n": len(ms),
    }


def prepare(workdir: Path, model: Path, facts: int, chunks: int, sessions: int) -> Path:
    """The seeded memory with every vector in place and every fact checked against its
    neighbours, as in a memory whose facts were checked as they came (kept in ``workdir`` for
    later runs): a server started on it has no background work left that would be timed."""
    name = f"seed-{facts}-{chunks}-{sessions}-checked"
    db = workdir / f"{name}.db"
    if db.exists():
        return db
    part = workdir / f"{name}.partial.db"  # renamed once embedded and checked
    seed(part, facts=facts, chunks=chunks, sessions=sessions, user="bench", overwrite=True)
    from bigmind.config import Settings
    from bigmind.memory.dedup import store_many
    from bigmind.search.semantic import Semantic
    from bigmind.storage.connect import connect
    from bigmind.storage.store import Store

    backend = connect(part)
    try:
        sem = Semantic(backend, Settings(db_path=part, user="bench", embed_model=str(model)))
        sem.load_now()
        t0 = time.perf_counter()
        n = sem.embed_backlog()
        print(f"embedded {n} texts in {time.perf_counter() - t0:.0f} s", file=sys.stderr)
        t0 = time.perf_counter()
        done = store_many(Store(backend, "bench"), sem, [])  # the background check, at once
        print(
            f"checked the facts in {time.perf_counter() - t0:.0f} s: "
            f"{len(done.outcomes)} merges, supersessions and conflicts",
            file=sys.stderr,
        )
        backend.query("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        backend.close()
    for suffix in ("-wal", "-shm"):
        Path(f"{part}{suffix}").unlink(missing_ok=True)
    part.rename(db)
    return db


def bigmind_server(
    name: str, code: Path | None, db: Path, model: Path, extra: Mapping[str, str] | None = None
) -> StdioServer:
    """``bigmind serve`` on ``db`` with the model, initialised (the model loads on first use);
    ``extra`` is added to its environment."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BIGMIND_")}
    env |= extra or {}
    env |= {
        "BIGMIND_DB_PATH": str(db),
        "BIGMIND_USER": "bench",
        "BIGMIND_EMBED_MODEL": str(model),
        "BIGMIND_WEB": "0",
        "HOME": str(db.parent / f"home-{name}"),
    }
    if code is not None:  # that checkout's package first, ahead of the editable install
        env["PYTHONPATH"] = str(code)
    # `python -m bigmind` exists in every revision (the console script's target moved).
    server = StdioServer([sys.executable, "-m", "bigmind", "serve"], env)
    server.initialize()
    return server


def wait_ready(server: StdioServer, name: str, poll: float = 0.5) -> None:
    """Until the semantic index is ready and nothing waits to be embedded."""
    deadline = time.monotonic() + 300
    while True:  # the first call opens the memory and starts the model loading
        stats = server.call_tool("memory_get_stats", {})
        sem = (stats.get("structuredContent") or {}).get("semantic", {})
        if sem.get("state") == "ready" and not sem.get("waiting"):
            return
        if time.monotonic() > deadline:
            raise RuntimeError(f"{name}: the semantic index never became ready: {sem}")
        time.sleep(poll)


def start(
    name: str, code: Path | None, db: Path, model: Path, extra: Mapping[str, str] | None = None
) -> StdioServer:
    server = bigmind_server(name, code, db, model, extra)
    wait_ready(server, name)
    return server


def run(args: argparse.Namespace) -> dict[str, Any]:
    args.workdir.mkdir(parents=True, exist_ok=True)
    db = prepare(args.workdir, args.model, args.facts, args.chunks, args.sessions)
    servers: dict[str, StdioServer] = {}
    try:
        for name, code in (("current", None), ("baseline", args.baseline)):
            if name == "baseline" and code is None:
                continue
            copy = args.workdir / f"{name}.db"
            for suffix in ("", "-wal", "-shm"):
                Path(str(copy) + suffix).unlink(missing_ok=True)
            shutil.copy(db, copy)
            servers[name] = start(
                name, code, copy, args.model, dict(args.env) if name == "current" else None
            )
        gen = TextGen(7)
        questions = [gen.question() for _ in range(args.queries)]
        times: dict[str, dict[str, list[float]]] = {n: {"recall": [], "store": []} for n in servers}
        order = list(servers)
        for q in questions[: args.warmup]:
            for s in servers.values():
                s.call_tool("memory_recall", {"query": q, "limit": 10})
        for i, q in enumerate(questions):
            for name in order if i % 2 == 0 else order[::-1]:
                t0 = time.perf_counter()
                servers[name].call_tool("memory_recall", {"query": q, "limit": 10})
                times[name]["recall"].append(time.perf_counter() - t0)
        # Stores in blocks of ``--block`` per server, the order of servers alternating (1:
        # call by call). A server's background work after a store (the check by meaning) then
        # competes with its own next store, not the other server's; ``--gap-ms`` between
        # stores is an agent's pace (the model's caches go cold between calls).
        facts = [gen.fact() for _ in range(args.stores)]
        for b, first in enumerate(range(0, args.stores, args.block)):
            for name in order if b % 2 == 0 else order[::-1]:
                for i in range(first, min(first + args.block, args.stores)):
                    category, text = facts[i]
                    t0 = time.perf_counter()
                    servers[name].call_tool(
                        "memory_store_fact", {"category": category, "fact": f"{text} ({i})"}
                    )
                    times[name]["store"].append(time.perf_counter() - t0)
                    time.sleep(args.gap_ms / 1000)
        out: dict[str, Any] = {
            n: {op: summary(v) for op, v in ops.items()} for n, ops in times.items()
        }
        if "baseline" in out:
            out["ratio_current_to_baseline"] = {
                op: {
                    k: round(out["current"][op][k] / out["baseline"][op][k], 2)
                    for k in ("p50_ms", "p95_ms")
                }
                for op in ("recall", "store")
            }
        return out
    finally:
        for s in servers.values():
            s.close()


def env_pair(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key, value


def add_env_option(p: argparse.ArgumentParser, flag: str, help: str) -> None:
    """A repeatable ``flag KEY=VALUE`` for a server's environment (a list of pairs)."""
    p.add_argument(flag, type=env_pair, action="append", default=[], metavar="KEY=VALUE", help=help)


def add_memory_options(p: argparse.ArgumentParser, workdir: Path) -> None:
    """The seeded memory's options: the model, where it is cached, its size."""
    p.add_argument("--model", type=Path, default=DEFAULT_MODEL, help="exported ONNX model dir")
    p.add_argument("--workdir", type=Path, default=workdir)
    p.add_argument("--facts", type=int, default=2_000)
    p.add_argument("--chunks", type=int, default=500)
    p.add_argument("--sessions", type=int, default=50)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--baseline", type=Path, help="a checkout of the revision to compare with")
    add_memory_options(p, Path("/tmp/bigmind-recall-bench"))
    add_env_option(
        p,
        "--env",
        "set in this checkout's server only (e.g. OPENBLAS_NUM_THREADS=1 against a "
        "--baseline of the same checkout: an A/B of the setting)",
    )
    p.add_argument("--queries", type=int, default=300)
    p.add_argument("--warmup", type=int, default=20)
    p.add_argument("--stores", type=int, default=100)
    p.add_argument(
        "--block", type=int, default=1, help="stores per server in a row (1: interleaved)"
    )
    p.add_argument("--gap-ms", type=float, default=0.0, help="pause after each store")
    args = p.parse_args(argv)
    if not (args.model / "model.onnx").exists() and not any(args.model.glob("*.onnx")):
        print(
            f"no ONNX model in {args.model}: run the tests once, or pass --model", file=sys.stderr
        )
        return 2
    print(json.dumps(run(args), indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
