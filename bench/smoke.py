"""``bench/run.py --quick``'s second half: every other benchmark at a tiny size, each in its
own process, so that none of them can rot. What needs PostgreSQL, the exported model or the
LoCoMo, codemem-dev or curation-dev data is skipped with the reason."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent


def progress(msg: str) -> None:
    """One line of progress on stderr (the benchmarks' shared helper)."""
    print(f"  … {msg}", file=sys.stderr, flush=True)


@dataclass(frozen=True, slots=True)
class Smoke:
    script: str
    args: list[str]
    skip: str | None = None  # why it cannot run here


def exported_model_dir() -> Path | None:
    """The ONNX model the tests export (``.cache/bigmind-tests/``), or BIGMIND_BENCH_MODEL."""
    from bigmind.search.embedder import METADATA_FILE

    given = os.environ.get("BIGMIND_BENCH_MODEL")
    if given:
        return Path(given) if (Path(given) / METADATA_FILE).is_file() else None
    found = sorted((BENCH_DIR.parent / ".cache" / "bigmind-tests").glob("minilm-onnx-*"))
    return next((d for d in reversed(found) if (d / METADATA_FILE).is_file()), None)


def smoke_runs(db_path: Path, user: str) -> list[Smoke]:
    """The other benchmarks, tiny: ``db_path`` is this run's seeded database of ``user``
    (for web.py)."""
    import importlib.util

    locomo_data = BENCH_DIR.parent.parent / "shared" / "bench-data" / "locomo" / "locomo-dev.json"
    model = exported_model_dir()
    has_pg = bool(os.environ.get("BIGMIND_BENCH_PG_URL")) or all(
        importlib.util.find_spec(m) is not None for m in ("pgserver", "psycopg")
    )
    no_pg = None if has_pg else "no PostgreSQL: pip install -e '.[dev]' or set BIGMIND_BENCH_PG_URL"
    # The SQLite side of load.py; its PostgreSQL side shares PgServer with pg_scale.py below.
    load = ["--backend", "sqlite", "--processes", "2", "--seconds", "1", "--preseed", "10"]
    pg = ["--rows", "2000", "--queries", "5", "--shared-buffers", ""]
    sem = ["--sizes", "500", "--sample", "10", "--queries", "5", "--recall-queries", "5",
           "--throughput-texts", "0", "--ann-min", "200", "--starts", "1", "--workdir", str(db_path.parent), "--model", str(model)]  # fmt: skip
    web = ["--db", str(db_path), "--user", user, "--runs", "1", "--port", str(free_port())]
    locomo = ["--data", str(locomo_data), "--method", "fts", "--conversations", "0",
              "--limit-questions", "5"]  # fmt: skip
    no_model = (
        None
        if model
        else "no exported model: the tests export one to .cache/bigmind-tests/, "
        "or set BIGMIND_BENCH_MODEL"
    )
    no_data = None if locomo_data.is_file() else f"no LoCoMo data at {locomo_data}"
    codemem = BENCH_DIR.parent.parent / "shared" / "bench-data" / "codemem-dev"
    judgement = ["--set", "codemem", "--size", "tiny", "--data", str(codemem),
                 "--model", str(model)]  # fmt: skip
    no_codemem = None if (codemem / "items.json").is_file() else f"no codemem-dev data at {codemem}"
    curation_data = BENCH_DIR / "data" / "curation-dev" / "pairs.json"
    curation = ["--size", "tiny", "--model", str(model)]
    no_curation = None if curation_data.is_file() else f"no curation data at {curation_data}"
    return [
        Smoke("load.py", load),
        Smoke("pg_scale.py", pg, no_pg),
        Smoke("semantic_latency.py", sem, no_model),
        Smoke("web.py", web),
        Smoke("directory.py", ["--users", "20", "--topics", "10", "--facts", "100", "--runs", "1"]),
        Smoke("locomo.py", locomo, no_data),
        Smoke("judgement.py", judgement, no_model or no_codemem),
        Smoke("curation.py", curation, no_model or no_curation),
        Smoke("redaction.py", ["--quick", "--data", str(codemem)]),
    ]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def run_smoke(smokes: Sequence[Smoke]) -> list[dict[str, Any]]:
    """Run each benchmark in its own process; one result per benchmark (its output on failure)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BIGMIND_") or "_BENCH_" in k}
    out: list[dict[str, Any]] = []
    for s in smokes:
        row: dict[str, Any] = {"script": s.script, "args": s.args}
        if s.skip:
            out.append(row | {"status": "skipped", "why": s.skip})
            progress(f"{s.script}: skipped: {s.skip}")
            continue
        progress(f"{s.script} {' '.join(s.args)}")
        t = time.perf_counter()
        try:
            r = subprocess.run(
                [sys.executable, str(BENCH_DIR / s.script), *s.args],
                capture_output=True,
                text=True,
                env=env,
                cwd=BENCH_DIR.parent,
                timeout=300,
            )
            code, text = r.returncode, r.stdout + r.stderr
        except subprocess.TimeoutExpired as exc:
            code, text = -1, f"timed out after {exc.timeout} s"
        row["seconds"] = round(time.perf_counter() - t, 1)
        row["status"] = "ok" if code == 0 else f"failed (exit {code})"
        if code != 0:
            row["output"] = "\n".join(text.splitlines()[-40:])
        out.append(row)
    return out


def render_smoke(rows: Sequence[dict[str, Any]]) -> str:
    lines = ["", "every other benchmark at a tiny size (--quick: it runs, so it cannot rot):"]
    for r in rows:
        what = f"{r['status']}, {r['seconds']:.1f} s" if "seconds" in r else r["status"]
        lines.append(f"  {r['script']:<20} {what}{': ' + r['why'] if r.get('why') else ''}")
        if "output" in r:
            lines += ["    " + line for line in r["output"].splitlines()]
    return "\n".join(lines)
