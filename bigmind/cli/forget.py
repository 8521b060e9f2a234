"""``bigmind forget`` and ``bigmind purge``: delete memories for good from the terminal.

``forget KIND ID`` deletes one memory the user names (the id is the confirmation). ``purge
--match TEXT`` finds every memory of the user holding a text (any case, a plain substring),
lists them, and asks before deleting them all (``--yes`` skips the question, ``--dry-run``
only lists). Exit codes: 0 done (or nothing matched), 1 not confirmed, 2 bad input,
3 no such memory, 4 not yours to forget.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from bigmind.cli.commands import emit
from bigmind.cli.main import runtime
from bigmind.errors import NoMemoryYet, NotFound

if TYPE_CHECKING:
    from bigmind.memory.forget import Forgotten, Found, Target

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
    from bigmind.memory import forget

    rt = runtime()
    try:
        target = forget.resolve(rt.store, args.kind, args.id)
        done = forget.forget(rt.store, [target])
    except NoMemoryYet as exc:  # the memory named is not there: as for a wrong id
        raise NotFound(f"No memory yet at {exc.where}: nothing to forget.") from exc
    finally:
        rt.close()
    human = done.summary() + (f"\nReason: {args.reason}" if args.reason else "")
    emit(args, _done_data(done), human)
    return 0


def cmd_purge(args: argparse.Namespace) -> int:
    """Find every memory holding a text, list it, and (once confirmed) forget it all."""
    from bigmind.memory import forget

    rt = runtime()
    try:
        found = forget.find(rt.store, args.match)
        listing = _listing(found)
        if not found.targets or args.dry_run:
            emit(args, _found_data(found, None), listing)
            return 0
        if not args.yes and not _confirmed(found, listing, args):
            print("Nothing was forgotten.", file=sys.stderr)
            return 1
        done = forget.forget(rt.store, found.targets)
    finally:
        rt.close()
    emit(args, _found_data(found, done), done.summary())
    return 0


def _confirmed(found: Found, listing: str, args: argparse.Namespace) -> bool:
    """Show the list (on stderr under --json) and read y/yes from stdin."""
    out = sys.stderr if args.json else sys.stdout
    print(listing, file=out)
    n = len(found.targets)
    print(f"Forget {'it' if n == 1 else f'all {n}'} for good? [y/N] ", end="", file=out, flush=True)
    answer = sys.stdin.readline() if sys.stdin is not None else ""
    if sys.stdin is None or not sys.stdin.isatty():
        print(file=out)  # the answer came without an echo
    if not answer:
        print("\n(no answer: pass --yes to run without the question)", file=sys.stderr)
    return answer.strip().lower() in ("y", "yes")


def _listing(found: Found) -> str:
    if not found.targets:
        lines = [f"Nothing in your memory contains {found.text!r}."]
    else:
        n = len(found.targets)
        lines = [f"{n} {'memory contains' if n == 1 else 'memories contain'} {found.text!r}:"]
        width = max(len(t.kind) for t in found.targets)
        lines += [f"  {t.kind:<{width}}  {_id(t)}  {t.label}" for t in found.targets]
    for note in found.refused:
        lines.append(f"Not yours to forget: {note}")
    for note in found.elsewhere:
        lines.append(f"Also in {note}: purge leaves it.")
    return "\n".join(lines)


def _id(t: Target) -> str:
    return t.id if t.kind in ("session", "summary") else f"#{t.id}"


def _found_data(found: Found, done: Forgotten | None) -> dict[str, Any]:
    data: dict[str, Any] = {
        "match": found.text,
        "found": [{"kind": t.kind, "id": t.id, "label": t.label} for t in found.targets],
        "refused": found.refused,
        "elsewhere": found.elsewhere,
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
        "seconds": round(done.seconds, 3),
    }
