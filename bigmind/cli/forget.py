"""``bigmind forget`` and ``bigmind purge``: delete memories for good from the terminal.

``forget KIND ID`` deletes one memory the user names (the id is the confirmation). ``purge
--match TEXT`` finds everything of the user holding a text (any case, a plain substring) —
memories, rows it cuts the text out of, Markdown mirror lines — lists it with the copies no
purge reaches, and asks before deleting (``--yes`` skips the question, ``--dry-run`` only
lists). Exit codes: 0 done (or nothing matched), 1 not confirmed, 2 bad input, 3 no such
memory, 4 not yours to forget.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from bigmind.cli.commands import emit
from bigmind.cli.main import runtime
from bigmind.errors import NoMemoryYet, NotFound

if TYPE_CHECKING:
    from bigmind.service.forgetting import Forgotten, Found, Target

KINDS_HELP = "fact, chunk, summary, session, hypothesis, person, focus, attempt or reminder"


def forget_arguments(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("kind", help=KINDS_HELP)
    sp.add_argument("id", help="its id: #N, a session id, or a person's @username")
    sp.add_argument("--reason", help="why (printed; nothing about a forgotten memory is kept)")


def purge_arguments(sp: argparse.ArgumentParser) -> None:
    sp.add_argument(
        "--match", required=True, metavar="TEXT", help="the text to find (any case, substring)"
    )
    sp.add_argument("--dry-run", action="store_true", help="list what matches; delete nothing")
    sp.add_argument("--yes", "-y", action="store_true", help="do not ask before deleting")


def cmd_forget(args: argparse.Namespace) -> int:
    """Delete one memory for good."""
    from bigmind.service import forgetting

    rt = runtime()
    try:
        _, done = forgetting.forget(rt, args.kind, args.id)
    except NoMemoryYet as exc:  # the memory named is not there: as for a wrong id
        raise NotFound(f"No memory yet at {exc.where}: nothing to forget.") from exc
    finally:
        rt.close()
    human = done.summary() + (f"\nReason: {args.reason}" if args.reason else "")
    emit(args, _done_data(done), human)
    return 0


def cmd_purge(args: argparse.Namespace) -> int:
    """Find everything holding a text, list it, and (once confirmed) forget it all."""
    from bigmind.service import forgetting

    rt = runtime()
    try:
        found = forgetting.find(rt, args.match)
        listing = _listing(found)
        if not found.anything or args.dry_run:
            emit(args, _found_data(found, None), listing)
            return 0
        if not args.yes and not _confirmed(found, listing, args):
            print("Nothing was forgotten.", file=sys.stderr)
            return 1
        done = forgetting.purge(rt, found)
    finally:
        rt.close()
    emit(args, _found_data(found, done), done.summary())
    return 0


def _confirmed(found: Found, listing: str, args: argparse.Namespace) -> bool:
    """Show the list (on stderr under --json) and read y/yes from stdin."""
    out = sys.stderr if args.json else sys.stdout
    print(listing, file=out)
    n = len(found.targets) + len(found.cuts) + len(found.mirrors) + found.directory
    print(f"Forget {'it' if n == 1 else f'all {n}'} for good? [y/N] ", end="", file=out, flush=True)
    answer = sys.stdin.readline() if sys.stdin is not None else ""
    if sys.stdin is None or not sys.stdin.isatty():
        print(file=out)  # the answer came without an echo
    if not answer:
        print("\n(no answer: pass --yes to run without the question)", file=sys.stderr)
    return answer.strip().lower() in ("y", "yes")


def _listing(found: Found) -> str:
    if not found.anything:
        lines = [f"Nothing in your memory contains {found.text!r}."]
    elif not found.targets:
        lines = [f"No memory contains {found.text!r}; other text does:"]
    else:
        n = len(found.targets)
        lines = [f"{n} {'memory contains' if n == 1 else 'memories contain'} {found.text!r}:"]
        width = max(len(t.kind) for t in found.targets)
        lines += [f"  {t.kind:<{width}}  {_id(t)}  {t.label}" for t in found.targets]
    if found.cuts:
        lines.append("Cut out of these (the rest of each stays):")
        lines += [f"  {line}" for line in found.cut_lines()]
    if found.directory:
        lines.append("The directory's topics: made again without it.")
    if found.mirrors:
        lines.append("Lines holding it in your Markdown mirrors, dropped:")
        lines += [f"  {p}" for p in found.mirrors]
    for note in found.refused:
        lines.append(f"Not yours to forget: {note}")
    if found.left:
        lines.append("Purge does not reach these copies (BigMind does not control them):")
        lines += [f"  - {line}" for line in found.left]
    return "\n".join(lines)


def _id(t: Target) -> str:
    return t.id if t.kind in ("session", "summary") else f"#{t.id}"


def _found_data(found: Found, done: Forgotten | None) -> dict[str, Any]:
    data: dict[str, Any] = {
        "match": found.text,
        "found": [{"kind": t.kind, "id": t.id, "label": t.label} for t in found.targets],
        "cuts": found.cut_lines(),
        "directory": found.directory,
        "mirrors": [str(p) for p in found.mirrors],
        "refused": found.refused,
        "left": found.left,
    }
    if done is not None:
        data |= _done_data(done)
    return data


def _done_data(done: Forgotten) -> dict[str, Any]:
    return {
        "forgotten": [{"kind": t.kind, "id": t.id} for t in done.targets],
        "removed": done.removed,
        "kept": done.kept,
        "scrub": done.scrub,
        "cut": done.cut,
        "mirrors": [str(p) for p in done.mirrors],
        "left": done.left,
        "seconds": round(done.seconds, 3),
    }
