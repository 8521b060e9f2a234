"""``bigmind consolidate``: merge duplicates, link contradictions, retire stale facts."""

from __future__ import annotations

import argparse
import json
import sys

from bigmind.cli.main import progress, runtime
from bigmind.errors import BigMindError


def consolidate_arguments(sp: argparse.ArgumentParser) -> None:
    from bigmind.service.consolidation import LOW_IMPORTANCE, STALE_DAYS

    sp.add_argument(
        "--stale-days",
        type=int,
        default=STALE_DAYS,
        help=f"retire from the packet facts unused this long (default {STALE_DAYS})",
    )
    sp.add_argument(
        "--max-importance",
        type=int,
        default=LOW_IMPORTANCE,
        help=f"only facts of this importance or lower are retired (default {LOW_IMPORTANCE})",
    )


def _unchecked(exc: BigMindError) -> None:
    """No model: duplicates and conflicts are not checked (the stale facts still retire)."""
    print(
        f"bigmind: duplicates and conflicts not checked: {exc.message_for('cli')}",
        file=sys.stderr,
    )


def cmd_consolidate(args: argparse.Namespace) -> int:
    """One full consolidation pass over the configured user's facts."""
    from bigmind.service.consolidation import consolidate

    rt = runtime()
    try:
        done = consolidate(
            rt,
            stale_days=args.stale_days,
            max_importance=args.max_importance,
            progress=progress("Embedding"),
            without_model=_unchecked,
        )
    finally:
        rt.close()
    counts = done.summary()
    if args.json:
        print(
            json.dumps(
                counts
                | {
                    "semantic": done.semantic,
                    "outcomes": [o.describe() for o in done.outcomes],
                    "retired_ids": [i for i, _ in done.retired],
                },
                ensure_ascii=False,
            )
        )
        return 0
    head = (
        f"Checked {counts['checked']} facts: {counts['merged']} duplicates merged, "
        f"{counts['superseded']} superseded, {counts['conflicts']} conflicts linked"
        if done.semantic
        else "Duplicates and conflicts not checked (no embedding model)"
    )
    print(f"{head}; {counts['retired']} stale low-importance facts retired from the packet.")
    for o in done.outcomes:
        print(f"- {o.describe()}")
    for fact_id, text in done.retired:
        print(f"- retired #{fact_id}: {text[:120]}")
    return 0
