"""Redaction on text we did not write: how much ordinary engineering text it changes (false
positives), how many secret placements it catches, and what ``scrub`` costs per call.

False positives are counted on real engineering text: codemem-dev's release notes
(``../shared/bench-data/codemem-dev``: flask, pytest and pip changelogs; their file names too)
and the descriptions of the Python packages installed beside BigMind (their READMEs, one line a
text), then on the project's own unit corpus (``tests/fixtures/secrets/ordinary.txt``).
Recall: the secrets corpus (``tests/fixtures/secrets/secrets.txt``) and each placement kind of
``tests/secret_corpus.PLACEMENTS`` (``--seeds`` fresh values each). Cost: the median CPU time
of ``scrub`` per call on a typical fact (codemem-dev's facts, one by one), on a 2,000-character
fact with configuration lines, and on a 100,000-character exchange.

    python bench/redaction.py                        # this checkout
    python bench/redaction.py --baseline /tmp/before # and another checkout, rounds interleaved
    python bench/redaction.py --quick                # CI: fewer rounds and seeds

A baseline checkout (``git worktree add /tmp/before REV``) is run as its own process with the
same corpora, alternately with this one, so a busy machine slows both alike.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CODEMEM = ROOT.parent / "shared" / "bench-data" / "codemem-dev"


def load(root: Path) -> Callable[[str], str]:
    """``scrub`` of the checkout at ``root`` (imported from there)."""
    sys.path.insert(0, str(root))
    sys.path.insert(1, str(ROOT / "tests"))
    from bigmind import redact

    assert Path(redact.__file__).resolve().is_relative_to(root.resolve()), redact.__file__
    scrub: Callable[[str], str] = redact.scrub
    return scrub


# -- the corpora ------------------------------------------------------------------------------
def corpus() -> Any:
    """tests/secret_corpus.py (imported after :func:`load`: it imports bigmind)."""
    import secret_corpus  # type: ignore[import-not-found]

    return secret_corpus


def codemem_texts(folder: Path) -> list[str]:
    items = json.loads((folder / "items.json").read_text(encoding="utf-8"))
    out = []
    for project in items["projects"].values():
        for session in project["sessions"]:
            for item in session["items"]:
                out.append(item["text"])
                out += item.get("files") or []
    return out


def package_lines() -> list[str]:
    """Each line (20+ characters) of the installed distributions' long descriptions."""
    lines: set[str] = set()
    for dist in metadata.distributions():
        body = dist.metadata.get_payload() or dist.metadata.get("Description") or ""  # type: ignore[attr-defined]
        lines.update(line.strip() for line in str(body).splitlines() if len(line.strip()) >= 20)
    return sorted(lines)


def changed(scrub: Callable[[str], str], texts: Sequence[str]) -> list[str]:
    return [t for t in texts if scrub(t) != t]


def recall(scrub: Callable[[str], str], seeds: int) -> dict[str, Any]:
    sc = corpus()
    cases = sc.secret_cases()
    missed = sum(1 for c in cases if any(s in scrub(c.text) for s in c.secrets))
    redacted: Counter[str] = Counter()
    for seed in range(seeds):
        for p in sc.placements(sc.Fakes(1_000 + seed)):
            if not any(s in scrub(p.text) for s in p.secrets):
                redacted[p.kind] += 1
    return {
        "corpus": [len(cases) - missed, len(cases)],
        "placements": {k: [redacted[k], seeds] for k in sc.PLACEMENTS},
    }


# -- the cost -----------------------------------------------------------------------------------
def texts_to_time(facts: Sequence[str]) -> dict[str, list[str]]:
    config = "\n".join(
        line
        for line in corpus().ordinary_lines()
        if "=" in line or ":" in line or "password" in line
    )
    prose = "\n".join(facts)
    return {
        "typical fact": list(facts),
        "2,000-char config fact": [config[:2_000]],
        "100,000-char exchange": [(prose * (1 + 100_000 // max(1, len(prose))))[:100_000]],
    }


def cost(scrub: Callable[[str], str], sets: dict[str, list[str]], rounds: int) -> dict[str, float]:
    """Median CPU µs per call of each set, over ``rounds`` rounds (the first one warms up)."""
    out = {}
    for name, texts in sets.items():
        repeat = max(1, 2_000 // len(texts)) if len(texts[0]) < 10_000 else 3
        per_call = []
        for _ in range(rounds + 1):
            start = time.process_time_ns()
            for _ in range(repeat):
                for t in texts:
                    scrub(t)
            per_call.append((time.process_time_ns() - start) / (repeat * len(texts)) / 1_000)
        out[name] = round(statistics.median(per_call[1:]), 1)
    return out


def measure(root: Path, rounds: int, seeds: int, data: Path) -> dict[str, Any]:
    scrub = load(root)
    codemem = codemem_texts(data) if (data / "items.json").is_file() else []
    facts = codemem or [
        "The retry loop now backs off exponentially; the flaky checkout test is fixed."
    ]
    corpora = {
        "codemem-dev release notes": codemem,
        "installed packages' descriptions": package_lines(),
        "unit corpus (ours)": corpus().ordinary_lines(),
    }
    fp = {}
    for name, texts in corpora.items():
        diff = changed(scrub, texts)
        fp[name] = {"texts": len(texts), "changed": len(diff), "examples": diff[:5]}
    return {
        "root": str(root),
        "false_positives": fp,
        "recall": recall(scrub, seeds),
        "cost_us": cost(scrub, texts_to_time(facts[:400]), rounds),
    }


def render(runs: dict[str, dict[str, Any]]) -> str:
    names = list(runs)
    first = runs[names[0]]
    lines = ["", "false positives (texts changed)  " + "  ".join(f"{n:>14}" for n in names)]
    for corpus in first["false_positives"]:
        cells = []
        for n in names:
            r = runs[n]["false_positives"][corpus]
            share = 100 * r["changed"] / r["texts"] if r["texts"] else 0.0
            cells.append(f"{r['changed']:>5}/{r['texts']:<5} {share:4.2f}%")
        lines.append(f"  {corpus:32}" + "  ".join(cells))
    lines.append("recall (redacted/total)")
    c = [f"{runs[n]['recall']['corpus'][0]:>3}/{runs[n]['recall']['corpus'][1]:<10}" for n in names]
    lines.append(f"  {'secrets corpus':32}" + "    ".join(c))
    for kind in first["recall"]["placements"]:
        cells = []
        for n in names:
            redacted, seeds = runs[n]["recall"]["placements"][kind]
            cells.append(f"{redacted:>3}/{seeds:<10}")
        lines.append(f"  {kind:32}" + "    ".join(cells))
    lines.append("scrub, median CPU µs per call")
    for name in first["cost_us"]:
        cells = [f"{runs[n]['cost_us'][name]:>14.1f}" for n in names]
        ratio = ""
        if len(names) == 2 and runs[names[1]]["cost_us"][name]:
            ratio = f"   ×{runs[names[0]]['cost_us'][name] / runs[names[1]]['cost_us'][name]:.2f}"
        lines.append(f"  {name:32}" + "  ".join(cells) + ratio)
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--root", type=Path, default=ROOT, help="the checkout whose bigmind to run")
    p.add_argument("--baseline", type=Path, help="another checkout, run alternately")
    p.add_argument("--data", type=Path, default=CODEMEM, help="codemem-dev's folder")
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--seeds", type=int, default=20)
    p.add_argument("--quick", action="store_true", help="2 rounds, 2 seeds")
    p.add_argument("--json", type=Path, help="write the figures here ('-': stdout only)")
    a = p.parse_args(argv)
    rounds, seeds = (2, 2) if a.quick else (a.rounds, a.seeds)
    if a.baseline is None:
        if a.json == Path("-"):
            print(json.dumps(measure(a.root, rounds, seeds, a.data)))
            return 0
        runs = {"this": measure(a.root, rounds, seeds, a.data)}
    else:
        runs = interleaved(a, rounds, seeds)
    if not (a.data / "items.json").is_file():
        print(f"(no codemem-dev data at {a.data}: its row is empty)", file=sys.stderr)
    print(render(runs))
    if a.json:
        a.json.write_text(json.dumps(runs, indent=2, ensure_ascii=False) + "\n")
    return 0


def interleaved(a: argparse.Namespace, rounds: int, seeds: int) -> dict[str, dict[str, Any]]:
    """Both checkouts, each in its own process, alternately: each cost figure is the median
    of the per-process medians."""
    roots = {"this": ROOT, "baseline": a.baseline}
    got: dict[str, list[dict[str, Any]]] = {n: [] for n in roots}
    env = {k: v for k, v in os.environ.items() if not k.startswith("BIGMIND_")}
    for _ in range(3):
        for name, root in roots.items():
            cmd = [sys.executable, __file__, "--root", str(root), "--json", "-"]
            cmd += ["--rounds", str(rounds), "--seeds", str(seeds), "--data", str(a.data)]
            out = subprocess.run(cmd, capture_output=True, text=True, check=True, env=env)
            got[name].append(json.loads(out.stdout))
    runs = {}
    for name, results in got.items():
        run = results[0]
        run["cost_us"] = {
            k: statistics.median(r["cost_us"][k] for r in results) for k in run["cost_us"]
        }
        runs[name] = run
    return runs


if __name__ == "__main__":
    sys.exit(main())
