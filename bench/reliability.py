"""The long soak of the reliability suite: the same tests CI runs bounded, at full size.

    .venv/bin/python bench/reliability.py            # 8 servers × 500 writes, 30 kills, 200 fuzz
    .venv/bin/python bench/reliability.py --quick    # CI's sizes (what `bench/run.py --quick` runs)

It runs tests/e2e/test_reliability.py and tests/mcp/test_fuzz_tools.py with larger sizes
(``BIGMIND_SOAK_*``, ``BIGMIND_FUZZ_EXAMPLES``) on both backends, collects the figures each test
writes to ``BIGMIND_RELIABILITY_REPORT`` and prints them as a table (``--json`` for a program).
Exit status: pytest's (0 only when every guarantee held).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FULL = {"servers": 8, "writes": 500, "kills": 30, "fuzz": 200}
QUICK = {"servers": 8, "writes": 60, "kills": 3, "fuzz": 25}


def run(sizes: dict[str, int], backend: str) -> tuple[int, list[dict[str, object]], float]:
    """Run the suite at ``sizes``; pytest's exit status, the figures, and the seconds it took."""
    with tempfile.TemporaryDirectory() as d:
        report = Path(d) / "report.jsonl"
        env = os.environ | {
            "BIGMIND_SOAK_SERVERS": str(sizes["servers"]),
            "BIGMIND_SOAK_WRITES": str(sizes["writes"]),
            "BIGMIND_SOAK_KILLS": str(sizes["kills"]),
            "BIGMIND_FUZZ_EXAMPLES": str(sizes["fuzz"]),
            "BIGMIND_RELIABILITY_REPORT": str(report),
        }
        began = time.monotonic()
        code = subprocess.call(
            [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "--backend",
                backend,
                "-o",
                "timeout=3600",
                "tests/e2e/test_reliability.py",
                "tests/mcp/test_fuzz_tools.py",
            ],
            cwd=ROOT,
            env=env,
        )
        seconds = time.monotonic() - began
        lines = report.read_text(encoding="utf-8").splitlines() if report.exists() else []
    return code, [json.loads(line) for line in lines], seconds


def table(figures: list[dict[str, object]]) -> str:
    rows = []
    for f in sorted(figures, key=lambda f: (str(f["test"]), str(f.get("backend")))):
        rest = ", ".join(f"{k} {v}" for k, v in f.items() if k not in ("test", "backend"))
        rows.append(f"{f['test']:<30} {f.get('backend', ''):<11} {rest}")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--quick", action="store_true", help="CI's sizes")
    p.add_argument("--backend", default="both", choices=["sqlite", "postgresql", "both"])
    p.add_argument("--json", action="store_true", help="the figures as JSON")
    args = p.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    code, figures, seconds = run(sizes, args.backend)
    if args.json:
        print(json.dumps({"sizes": sizes, "exit": code, "seconds": seconds, "figures": figures}))
    else:
        print(f"reliability soak {sizes}: exit {code} in {seconds:.0f} s")
        print(table(figures))
    return code


if __name__ == "__main__":
    sys.exit(main())
