"""The embedding model's speed and memory: float against int8, in the same run.

    python bench/model_speed.py                      # throughput, latency, RSS (≈ 10 min here)
    python bench/model_speed.py --skip-server --json /tmp/m.json

Four measures, each configuration interleaved with the others round by round (a busy machine
slows all alike) and reported as medians, with the machine's busy share (/proc/stat) beside:

* **throughput** (texts/s) on chunk texts from ``textgen.py`` (2–9 sentences, as
  ``semantic_latency.py``), float and int8, 1 and 2 ONNX threads, batched as the embedder does
  (sorted by length, at most 32 rows and 2,048 tokens) or as it did before sorting (32 texts
  in the order given);
* **latency** of one text on 1 thread (the server's setting): a short question (on
  memory_recall's path) and a one-sentence fact (memory_store_fact's duplicate check);
* **memory of the embedder alone**, each in a fresh process: VmHWM after the imports, after
  loading the model, after a batch of chunks;
* **peak RSS of ``bigmind serve``** (VmHWM) with 2,000 facts, 100 chunks and 20 sessions,
  every vector in place (embedded once per precision, cached under ``--workdir``), the model
  loaded, after ``--queries`` memory_recall and ``--stores`` memory_store_fact calls.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

from mcpwire import StdioServer
from seed import seed
from textgen import TextGen

from bigmind.search.embedder import FORMAT_VERSION, INT8_FILE, OnnxEmbedder

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MODEL = ROOT / ".cache" / "bigmind-tests" / f"minilm-onnx-0.1.0-v{FORMAT_VERSION}"
PRECISIONS: tuple[Literal["float"], Literal["int8"]] = ("float", "int8")


def progress(msg: str) -> None:
    print(f"[model_speed] {msg}", file=sys.stderr, flush=True)


def cpu_ticks() -> list[int]:
    with open("/proc/stat") as fh:
        return [int(x) for x in fh.readline().split()[1:]]


def busy_share(before: list[int], after: list[int]) -> dict[str, float]:
    d = [b - a for a, b in zip(before, after, strict=False)]
    total = sum(d[:8]) or 1
    return {
        "busy_pct": round(100 * (total - d[3] - d[4]) / total, 1),
        "steal_pct": round(100 * d[7] / total, 1),
    }


def measured(fn: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    before = cpu_ticks()
    out = fn()
    out["cpu"] = busy_share(before, cpu_ticks())
    return out


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


# -- throughput and latency, in this process -------------------------------------------------
def embed_unsorted(emb: OnnxEmbedder, texts: list[str]) -> None:
    """What the embedder did before it sorted by length: 32 texts at a time, as given."""
    encodings = emb._tokenizer.encode_batch(texts)
    for start in range(0, len(encodings), 32):
        emb._run(encodings[start : start + 32])


def throughput(model: Path, texts: list[str], rounds: int) -> dict[str, Any]:
    configs = {
        f"{p}/{t}t/{b}": (OnnxEmbedder(model, threads=t, precision=p), b)
        for p in PRECISIONS
        for t in (1, 2)
        for b in ("sorted", "unsorted")
    }
    for emb, _ in configs.values():
        emb.embed(texts[:16])  # warm-up
    rates: dict[str, list[float]] = {name: [] for name in configs}
    for r in range(rounds):
        for name, (emb, batching) in configs.items():
            t0 = time.perf_counter()
            emb.embed(texts) if batching == "sorted" else embed_unsorted(emb, texts)
            rates[name].append(len(texts) / (time.perf_counter() - t0))
        progress(f"throughput round {r + 1}/{rounds}")
    return {
        name: {"per_s": round(statistics.median(v), 1), "runs": [round(x, 1) for x in v]}
        for name, v in rates.items()
    }


def latency(model: Path, questions: list[str], facts: list[str]) -> dict[str, Any]:
    embs = {p: OnnxEmbedder(model, threads=1, precision=p) for p in PRECISIONS}
    times: dict[str, list[float]] = {f"{p}/{k}": [] for p in PRECISIONS for k in ("q", "f")}
    for i, (q, f) in enumerate(zip(questions, facts, strict=True)):
        order = PRECISIONS if i % 2 == 0 else PRECISIONS[::-1]
        for p in order:
            for kind, text in (("q", q), ("f", f)):
                t0 = time.perf_counter()
                embs[p].embed([text])
                times[f"{p}/{kind}"].append((time.perf_counter() - t0) * 1000)
    names = {"q": "question", "f": "fact"}
    return {
        f"{k.split('/')[0]}/{names[k.split('/')[1]]}": {
            "p50_ms": round(statistics.median(v[10:]), 2),
            "p95_ms": round(percentile(v[10:], 0.95), 2),
        }
        for k, v in times.items()
    }


# -- memory of the embedder alone, one fresh process each ------------------------------------
CHILD = """
import sys, json
def hwm():
    for ln in open('/proc/self/status'):
        if ln.startswith('VmHWM'):
            return int(ln.split()[1]) / 1024
out = {}
import numpy, onnxruntime, tokenizers
from bigmind.search.embedder import OnnxEmbedder
out['imports_mb'] = hwm()
emb = OnnxEmbedder(sys.argv[1], threads=1, precision=sys.argv[2])
out['loaded_mb'] = hwm()
emb.embed(json.loads(sys.stdin.read()))
out['after_batch_mb'] = hwm()
print(json.dumps(out))
"""


def embedder_memory(model: Path, texts: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for p in PRECISIONS:
        r = subprocess.run(
            [sys.executable, "-c", CHILD, str(model), p],
            input=json.dumps(texts),
            capture_output=True,
            text=True,
            check=True,
        )
        out[p] = {k: round(v, 1) for k, v in json.loads(r.stdout).items()}
        progress(f"embedder memory, {p}: {out[p]}")
    return out


# -- peak RSS of the server ------------------------------------------------------------------
def seeded(workdir: Path, model: Path, precision: Literal["float", "int8"]) -> Path:
    """2,000 facts, 100 chunks, 20 sessions with every vector of ``precision`` in place."""
    db = workdir / f"seed-2000-100-20-{precision}.db"
    if db.exists():
        return db
    from bigmind.config import Settings
    from bigmind.search.semantic import Semantic
    from bigmind.storage.connect import connect

    tmp = db.with_suffix(".tmp")
    for suffix in ("", "-wal", "-shm"):
        Path(str(tmp) + suffix).unlink(missing_ok=True)
    seed(tmp, facts=2000, chunks=100, sessions=20, user="bench")
    backend = connect(tmp)
    try:
        settings = Settings(
            db_path=tmp, user="bench", embed_model=str(model), embed_precision=precision
        )
        sem = Semantic(backend, settings)
        sem.load_now()
        t0 = time.perf_counter()
        n = sem.embed_backlog()
        progress(f"seeded {precision}: {n} texts embedded in {time.perf_counter() - t0:.0f} s")
        backend.query("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        backend.close()
    tmp.rename(db)
    return db


def server_rss(workdir: Path, model: Path, queries: int, stores: int) -> dict[str, Any]:
    out: dict[str, Any] = {}
    gen = TextGen(7)
    questions = [gen.question() for _ in range(queries)]
    facts = [gen.fact() for _ in range(stores)]
    for p in PRECISIONS:
        copy = workdir / f"serve-{p}.db"
        for suffix in ("", "-wal", "-shm"):
            Path(str(copy) + suffix).unlink(missing_ok=True)
        shutil.copy(seeded(workdir, model, p), copy)
        env = {k: v for k, v in os.environ.items() if not k.startswith("BIGMIND_")}
        env |= {
            "BIGMIND_DB_PATH": str(copy),
            "BIGMIND_USER": "bench",
            "BIGMIND_EMBED_MODEL": str(model),
            "BIGMIND_EMBED_PRECISION": p,
            "BIGMIND_WEB": "0",
            "HOME": str(workdir / "home"),
        }
        with StdioServer([sys.executable, "-m", "bigmind", "serve"], env) as server:
            server.initialize()
            deadline = time.monotonic() + 300
            while True:
                stats = server.call_tool("memory_get_stats", {})
                sem = (stats.get("structuredContent") or {}).get("semantic", {})
                if sem.get("state") == "ready" and not sem.get("waiting"):
                    break
                if time.monotonic() > deadline:
                    raise RuntimeError(f"{p}: the semantic index never became ready: {sem}")
                time.sleep(0.5)
            ready_kb = server.memory_kb()
            for q in questions:
                server.call_tool("memory_recall", {"query": q, "limit": 10})
            for i, (category, text) in enumerate(facts):
                server.call_tool("memory_store_fact", {"category": category, "fact": f"{text} {i}"})
            end = server.memory_kb()
        out[p] = {
            "model": sem.get("model"),
            "ready_hwm_mb": round(ready_kb["VmHWM"] / 1024, 1),
            "peak_mb": round(end["VmHWM"] / 1024, 1),
            "rss_end_mb": round(end["VmRSS"] / 1024, 1),
            "anon_end_mb": round(end["RssAnon"] / 1024, 1),
        }
        progress(f"server, {p}: {out[p]}")
    return out


# (section, first column, [(column title, key)]) of the printed tables
TABLES = (
    ("throughput", "configuration", [("texts/s (median)", "per_s")]),
    ("latency", "one text, 1 thread", [("p50 ms", "p50_ms"), ("p95 ms", "p95_ms")]),
    (
        "embedder_memory",
        "embedder alone, VmHWM MB",
        [("imports", "imports_mb"), ("loaded", "loaded_mb"), ("after a batch", "after_batch_mb")],
    ),
    (
        "server",
        "bigmind serve, 2k facts",
        [
            ("ready VmHWM MB", "ready_hwm_mb"),
            ("peak VmHWM MB", "peak_mb"),
            ("RSS end MB", "rss_end_mb"),
        ],
    ),
)


def render(r: dict[str, Any]) -> str:
    lines: list[str] = []
    for section, first, columns in TABLES:
        if section not in r:
            continue
        lines += ["| " + " | ".join([first, *(c for c, _ in columns)]) + " |"]
        lines += ["|---|" + "---:|" * len(columns)]
        lines += [
            "| " + " | ".join([name, *(str(row[key]) for _, key in columns)]) + " |"
            for name, row in r[section].items()
            if name != "cpu"
        ]
        cpu = r[section]["cpu"]
        lines += [f"machine busy {cpu['busy_pct']} %, steal {cpu['steal_pct']} %", ""]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", type=Path, default=DEFAULT_MODEL, help="a model directory")
    p.add_argument("--texts", type=int, default=256, help="chunk texts per throughput run")
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--latency", type=int, default=110, help="texts of each kind timed")
    p.add_argument("--workdir", type=Path, default=Path("/work/benchcache/model-speed"))
    p.add_argument("--queries", type=int, default=50)
    p.add_argument("--stores", type=int, default=20)
    p.add_argument("--skip-server", action="store_true")
    p.add_argument("--server-only", action="store_true")
    p.add_argument("--json", type=Path)
    args = p.parse_args(argv)
    if not (args.model / INT8_FILE).is_file():
        print(
            f"no {INT8_FILE} in {args.model}: run the tests once, or pass --model", file=sys.stderr
        )
        return 2
    gen = TextGen(11)
    texts = [gen.chunk()[1] for _ in range(args.texts)]
    questions = [gen.question() for _ in range(args.latency)]
    facts = [gen.fact()[1] for _ in range(args.latency)]
    r: dict[str, Any] = {"model": str(args.model)}
    if not args.server_only:
        r["throughput"] = measured(lambda: throughput(args.model, texts, args.rounds))
        progress(json.dumps(r["throughput"]))
        r["latency"] = measured(lambda: latency(args.model, questions, facts))
        progress(json.dumps(r["latency"]))
        r["embedder_memory"] = measured(lambda: embedder_memory(args.model, texts[:128]))
    if not args.skip_server:
        args.workdir.mkdir(parents=True, exist_ok=True)
        r["server"] = measured(
            lambda: server_rss(args.workdir, args.model, args.queries, args.stores)
        )
    print(render(r))
    if args.json:
        args.json.write_text(json.dumps(r, indent=2), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
