"""Where memory_recall's time goes over stdio (2,000 facts, model loaded): a breakdown.

On the memory ``recall_stdio.py`` seeds (2,000 facts, 500 chunks, 50 sessions, all embedded):

1. in process, on distinct natural-language questions: the query embedding alone (the server's
   embedder, 1 thread), ``Recall.search`` end to end with a fresh query (embedding included),
   the same search again with the query vector cached (keyword + vector search + ranking), and
   the keyword-only search;
2. over stdio (``mcpwire``), interleaved call by call: a JSON-RPC ``ping``,
   ``memory_get_instructions`` (a tool that touches nothing: FastMCP's floor), ``memory_recall``
   with a fresh question, and the same call again (its vector cached by the server);
3. ``py-spy`` (``--py-spy``, 250 samples/s) on the server during fresh ``memory_recall`` calls:
   each sample of the event-loop thread (where the tools run) that is not the loop waiting is
   put in the first matching step of the tool's path, giving each step's mean milliseconds per
   call ("busy"; the rest of the wall time is the pipe, the stdio relay threads and waiting).

    python bench/recall_profile.py --py-spy /work/main/.venv/bin/py-spy
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import subprocess
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from mcpwire import StdioServer
from peers import copy_db
from recall_stdio import (
    add_env_option,
    add_memory_options,
    bigmind_server,
    prepare,
    wait_ready,
)
from run import CpuMeter, summary_ms
from textgen import TextGen

# The tool's path, in the order a sample is matched against it (first match wins): the marker
# is a substring of a py-spy frame, "function (file:line)".
STEPS: list[tuple[str, tuple[str, ...]]] = [
    ("query embedding (ONNX + tokenizer)", ("embed_query",)),
    ("vector search", ("_vector_candidates",)),
    ("keyword search", ("_keyword_candidates",)),
    ("ranking, loading rows, hits", ("recall.py",)),
    ("usage bookkeeping (rt.used)", ("usage.py", "used (")),
    ("rivals", ("rivals.py",)),
    ("failed-attempts warnings", ("attempts.py",)),
    ("file-bound gotchas", ("gotchas.py",)),
    ("rendering the text", ("render.py",)),
    ("rest of the tool (result, edge)", ()),
    ("FastMCP, MCP SDK, pydantic, JSON (outside the tool)", ()),
]


def questions(seed: int, n: int, skip: set[str]) -> list[str]:
    """``n`` distinct questions (none in ``skip``), so no query vector comes from a cache."""
    gen, out = TextGen(seed), list[str]()
    while len(out) < n:
        q = gen.question()
        key = " ".join(q.split()).lower()
        if key not in skip:
            skip.add(key)
            out.append(q)
    return out


def time_each(fn: Callable[[str], Any], items: Sequence[str]) -> list[float]:
    out = []
    for x in items:
        t0 = time.perf_counter()
        fn(x)
        out.append(time.perf_counter() - t0)
    return out


def in_process(db: Path, model: Path, qs: Sequence[str]) -> dict[str, Any]:
    from bigmind.config import Settings
    from bigmind.search.ranking import Recall
    from bigmind.search.semantic import Semantic
    from bigmind.storage.connect import connect
    from bigmind.storage.store import Store

    backend = connect(db)
    try:
        sem = Semantic(backend, Settings(db_path=db, user="bench", embed_model=str(model)))
        emb = sem.load_now()
        recall = Recall(Store(backend, "bench"), sem)
        for q in qs[:10]:  # warm-up: vector partitions, caches, first inference
            recall.search(q + " warm", 10)
        steps: list[tuple[str, Callable[[str], object]]] = [
            ("embed_query", lambda q: emb.embed([q])),
            ("search_fresh_query", lambda q: recall.search(q, 10)),
            ("search_vector_cached", lambda q: recall.search(q, 10)),
            ("search_keyword_only", lambda q: recall.search(q, 10, mode="keyword")),
        ]
        times: dict[str, list[float]] = {k: [] for k, _ in steps}
        for q in qs:  # interleaved, so the machine's drift hits every step alike
            for key, fn in steps:
                t0 = time.perf_counter()
                fn(q)
                times[key].append(time.perf_counter() - t0)
        return {k: summary_ms(v) for k, v in times.items()}
    finally:
        backend.close()


def over_stdio(server: StdioServer, qs: Sequence[str]) -> dict[str, Any]:
    times: dict[str, list[float]] = {k: [] for k in ("ping", "noop_tool", "fresh", "cached")}
    recall = "memory_recall"
    for q in qs:
        calls: list[tuple[str, Callable[[], object]]] = [
            ("ping", lambda: server.request("ping")),
            ("noop_tool", lambda: server.call_tool("memory_get_instructions", {})),
            ("fresh", lambda: server.call_tool(recall, {"query": q, "limit": 10})),  # noqa: B023
            ("cached", lambda: server.call_tool(recall, {"query": q, "limit": 10})),  # noqa: B023
        ]
        for key, call in calls:
            t0 = time.perf_counter()
            call()
            times[key].append(time.perf_counter() - t0)
    return {k: summary_ms(v) for k, v in times.items()}


def sampled(server: StdioServer, py_spy: Path, qs: Sequence[str], out: Path) -> dict[str, Any]:
    """py-spy on the server while it answers fresh memory_recall calls; ms per call by step."""
    raw = out.with_suffix(".txt")
    spy = subprocess.Popen(
        [str(py_spy), "record", "-p", str(server.pid), "-r", "250", "-f", "raw", "-o", str(raw)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(1.0)  # py-spy attaches
    t0 = time.perf_counter()
    for q in qs:
        server.call_tool("memory_recall", {"query": q, "limit": 10})
    wall = time.perf_counter() - t0
    spy.send_signal(signal.SIGINT)
    spy.wait(60)
    by_step: Counter[str] = Counter()
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack:
            continue
        n = int(count)
        frames = stack.split(";")
        if not any("run_until_complete" in f for f in frames) or "select (" in frames[-1]:
            continue  # another thread (stdio relays, flusher, embedder: mostly waiting), or idle
        tool = next((i for i, f in enumerate(frames) if "bigmind/mcp/tools/" in f), None)
        if tool is None:
            step = STEPS[-1][0]
        else:
            inner = frames[tool:]
            step = next(
                (name for name, marks in STEPS[:-2] if any(m in f for m in marks for f in inner)),
                STEPS[-2][0],
            )
        by_step[step] += n
    total = sum(by_step.values())
    per_call = 1000 / 250 / len(qs)
    return {
        "calls": len(qs),
        "wall_ms_per_call": round(1000 * wall / len(qs), 2),
        "samples": total,
        "busy_ms_per_call": round(total * per_call, 2),
        "ms_per_call": {name: round(by_step[name] * per_call, 2) for name, _ in STEPS},
        "raw_stacks": str(raw),
    }


def render(r: dict[str, Any]) -> str:
    def pair(d: dict[str, Any]) -> str:
        return f"{d['p50_ms']:.1f} / {d['p95_ms']:.1f} ms"

    ip, st = r["in_process"], r["over_stdio"]
    lines = [
        f"memory_recall breakdown — {r['facts']:,} facts, model loaded; {r['queries']} fresh "
        f"questions; "
        f"machine {r['busy_pct']:.0f}% busy (2 cores)",
        "",
        "IN PROCESS (p50 / p95)",
        f"  query embedding alone                       {pair(ip['embed_query'])}",
        f"  Recall.search, fresh query (embedding incl.) {pair(ip['search_fresh_query'])}",
        f"  Recall.search, query vector cached          {pair(ip['search_vector_cached'])}",
        f"  Recall.search, keyword only                 {pair(ip['search_keyword_only'])}",
        "OVER STDIO (p50 / p95)",
        f"  JSON-RPC ping                               {pair(st['ping'])}",
        f"  memory_get_instructions (no work)           {pair(st['noop_tool'])}",
        f"  memory_recall, fresh question               {pair(st['fresh'])}",
        f"  memory_recall, same question again (cached) {pair(st['cached'])}",
    ]
    if "sampled" in r:
        s = r["sampled"]
        lines += [
            f"PY-SPY on the server, fresh memory_recall: mean ms per call "
            f"({s['busy_ms_per_call']} ms busy of {s['wall_ms_per_call']} ms wall)",
        ]
        lines += [f"  {k:<43} {v:.2f}" for k, v in s["ms_per_call"].items() if v]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_memory_options(p, Path("/work/benchcache/peers"))
    p.add_argument("--bigmind-code", type=Path, help="a checkout whose bigmind/ to run")
    add_env_option(p, "--env", "set in the server's environment (e.g. OPENBLAS_NUM_THREADS=1)")
    p.add_argument("--queries", type=int, default=300)
    p.add_argument("--py-spy", type=Path, help="py-spy executable: sample the server too")
    p.add_argument("--out", type=Path, default=Path("/work/benchcache/peers/profile.json"))
    args = p.parse_args(argv)
    args.workdir.mkdir(parents=True, exist_ok=True)
    db = prepare(args.workdir, args.model, args.facts, args.chunks, args.sessions)
    seen: set[str] = set()
    cpu = CpuMeter()
    result: dict[str, Any] = {"facts": args.facts, "queries": args.queries, "cpu": cpu.sections}
    result["in_process"] = cpu.measure(
        "in_process",
        lambda: in_process(
            copy_db(db, args.workdir / "profile-inproc.db"), args.model,
            questions(3, args.queries, seen),
        ),
    )  # fmt: skip
    copy = copy_db(db, args.workdir / "profile-server.db")
    result["server_env"] = dict(args.env)
    with bigmind_server("profile", args.bigmind_code, copy, args.model, dict(args.env)) as server:
        wait_ready(server, "profile")
        for q in questions(5, 20, seen):  # warm-up
            server.call_tool("memory_recall", {"query": q, "limit": 10})
        qs = questions(7, args.queries, seen)
        result["over_stdio"] = cpu.measure("over_stdio", lambda: over_stdio(server, qs))
        if args.py_spy:
            qs = questions(9, args.queries, seen)
            result["sampled"] = cpu.measure(
                "sampled", lambda: sampled(server, args.py_spy, qs, args.out)
            )
    result["busy_pct"] = max(v["busy_pct"] for v in cpu.sections.values())
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(render(result))
    print(f"\nJSON written to {args.out}")
    shutil.rmtree(args.workdir / "home-profile", ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
