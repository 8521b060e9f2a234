"""``bigmind search``, ``recall``, ``stats`` and ``user``: memory from the terminal.

Each command opens the store once, prints human-readable lines on stdout (JSON with
``--json``) and notes on stderr. They read the memory without changing it: unlike the
agent's tools, a search here does not count as a use of the memories it finds.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import re
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from bigmind import project
from bigmind.cli.main import foreground_recall, runtime
from bigmind.errors import NoMemoryYet
from bigmind.project import SEARCH_SCOPES
from bigmind.service.display import quoted

if TYPE_CHECKING:
    from bigmind.models import Hit, User
    from bigmind.runtime import Runtime
    from bigmind.service.recall import Recollection

# The store, recall and users modules are imported inside the commands that use them, so
# `bigmind COMMAND --help` never pays for them.

SEARCH_KINDS: dict[str, list[str] | None] = {"facts": ["fact"], "chunks": ["chunk"], "all": None}
ROLES_HELP = "member, curator or admin"
_BOLD = re.compile(r"\*\*(\S(?:.*?\S)?)\*\*")  # excerpts mark the query's terms **like this**
TEXT_WIDTH = 160  # characters of a memory shown on its line; --json has it whole


def emit(args: argparse.Namespace, data: dict[str, Any], human: str) -> None:
    """Print ``data`` as JSON with ``--json``, else the human text."""
    if getattr(args, "json", False):
        print(json.dumps(data, ensure_ascii=False, indent=1))
    elif human:
        print(human)


# -- search and recall -------------------------------------------------------------------------
def search_arguments(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("query", nargs="+", help="keywords or a question (quotes optional)")
    sp.add_argument("--limit", "-n", type=int, default=10, help="most results (1-100, default 10)")
    sp.add_argument(
        "--kind",
        choices=list(SEARCH_KINDS),
        default="all",
        help="facts, flagged exchanges (chunks), or every kind of memory (default all)",
    )
    _project_arguments(sp)


def _project_arguments(sp: argparse.ArgumentParser) -> None:
    sp.add_argument(
        "--project",
        help="search as from this project: a folder, a project key or a known project's name "
        "(default: the current directory's git repository, else BIGMIND_PROJECT)",
    )
    sp.add_argument(
        "--scope",
        choices=SEARCH_SCOPES,
        default="all",
        help="all: the project's memories first, others labelled (default); project: only its "
        "own and global ones",
    )


def recall_arguments(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("query", nargs="+", help="a question or keywords (quotes optional)")
    sp.add_argument("--limit", "-n", type=int, default=10, help="most results (1-100, default 10)")
    sp.add_argument(
        "--kinds",
        help="comma-separated: fact, chunk, summary, hypothesis, person, global (default all)",
    )
    _project_arguments(sp)


def cmd_search(args: argparse.Namespace) -> int:
    """Keyword search (BM25, as the search tools rank it), no model: fast."""
    from bigmind.service.recall import recall

    query = " ".join(args.query)
    rt = runtime()  # no semantic index: the runtime's recall ranks by keywords alone
    try:
        with _in_project(rt, args.project):
            found = recall(
                rt,
                query,
                args.limit,
                SEARCH_KINDS[args.kind],
                mode="keyword",
                scope=args.scope,
                extras=False,
                count_use=False,
            )
    except NoMemoryYet as exc:
        return _no_memory(args, query, exc)
    finally:
        rt.close()
    emit(args, _hits_data(query, found), render_hits(found.hits, query, tty=sys.stdout.isatty()))
    return 0


def cmd_recall(args: argparse.Namespace) -> int:
    """Hybrid recall, as ``memory_recall``: keyword and vector rankings fused."""
    from bigmind.service.recall import recall

    query = " ".join(args.query)
    rt = runtime()
    try:
        model = foreground_recall(rt)
        with _in_project(rt, args.project):
            found = recall(
                rt,
                query,
                args.limit,
                args.kinds,
                scope=args.scope,
                ranker=model.ranker,
                extras=False,
                count_use=False,
            )
        if model.semantic is not None:
            if found.note:
                print(f"bigmind: {found.note.strip('()')}", file=sys.stderr)
            waiting = model.waiting()
            if waiting:
                print(
                    f"bigmind: {waiting} memories have no vector yet and are found by keywords "
                    "only (the running server embeds them; or run `bigmind reindex`).",
                    file=sys.stderr,
                )
    except NoMemoryYet as exc:
        return _no_memory(args, query, exc)
    finally:
        rt.close()
    emit(args, _hits_data(query, found), render_hits(found.hits, query, tty=sys.stdout.isatty()))
    return 0


def _no_memory(args: argparse.Namespace, query: str, exc: NoMemoryYet) -> int:
    """No memory to search: no results, and the note saying why (nothing was created)."""
    emit(args, {"query": query, "results": [], "note": str(exc)}, str(exc))
    return 0


def _in_project(rt: Runtime, value: str | None) -> contextlib.AbstractContextManager[None]:
    """Run as from the project ``--project`` names (the process's own when not given)."""
    return project.using(rt.store.find_project(value) if value else None)


def _hits_data(query: str, found: Recollection) -> dict[str, Any]:
    return {
        "query": query,
        "results": [h.as_dict() for h in found.hits],
        "note": found.note or None,
        "nothing_relevant": found.nothing_relevant,
    }


def render_hits(hits: Sequence[Hit], query: str, *, tty: bool = False) -> str:
    """Two lines per hit: what and when, with the text; then why it ranked.

    Matched terms are bold on a terminal (``tty``); elsewhere their markers are dropped.
    """
    if not hits:
        return f"No memories match {query!r}. Try other words, or `bigmind recall` for meaning."
    lines = [f"Nothing clearly relevant to {query!r}; the closest:"] if hits[0].weak else []
    for h in hits:
        label = f"{h.kind} #{h.id}"
        if h.category:
            label += f" [{quoted(h.category)}]"
        if h.deprecated:
            label += " (deprecated)"
        if h.weak:
            label += " (weak match)"
        if h.project:
            label += f" (other project: {project.name_of(h.project)})"
        text = quoted(h.text)  # one line, no escape sequences: a stored text may hold anything
        if len(text) > TEXT_WIDTH:
            text = text[: TEXT_WIDTH - 1].rstrip() + "…"
        # After the cut: a marker it split is dropped by the replace.
        text = _BOLD.sub("\033[1m\\1\033[0m" if tty else "\\1", text).replace("**", "")
        lines.append(f"{label}  {h.date}  {h.score:.3f}  {text}")
        lines.append(f"    why: {quoted(h.why)}")
        lines += [f"    {r['note']}" for r in h.rivals] + [f"    {m}" for m in h.marks]
    return "\n".join(lines)


# -- stats ------------------------------------------------------------------------------------
def cmd_stats(args: argparse.Namespace) -> int:
    """What ``memory_get_stats`` reports; the semantic part without loading the model."""
    from bigmind.service import operations

    rt = runtime()
    try:
        data = operations.stats(rt)
    finally:
        rt.close()
    emit(args, data, render_stats(data))
    return 0


def render_stats(d: dict[str, Any]) -> str:
    c = d["counts"]
    cats = ", ".join(f"{k} {n}" for k, n in d["facts_by_category"].items())
    rows = [
        ("User", f"{d['user']} ({d['role']}, {d['mode']} mode)"),
        (
            "Database",
            f"{d['db_location']} ({_size(d['db_bytes'])}, schema {d['schema_version']}, "
            f"bigmind {d['bigmind_version']})",
        ),
        (
            "Sessions",
            f"{c['sessions']} ({c['open_sessions']} open, {c['summaries']} with summaries)"
            + (f", {d['first_session'][:10]} → {d['last_session'][:10]}" if c["sessions"] else ""),
        ),
        (
            "Facts",
            f"{c['facts']} active, {c['deprecated_facts']} deprecated"
            + (f": {cats}" if cats else ""),
        ),
        ("Exchanges", str(c["chunks"])),
        ("Hypotheses", str(c["hypotheses"]) + _calibration(d["hypothesis_calibration"])),
        ("Company", f"{c['global_approved']} approved entries"),
        ("Semantic", _semantic(d["semantic"])),
        ("Tokens saved", _savings(d["token_savings"])),
    ]
    width = max(len(k) for k, _ in rows)
    return "\n".join(f"{k:<{width}}  {v}" for k, v in rows)


def _size(n: int) -> str:
    return f"{n / 1e6:.1f} MB" if n >= 100_000 else f"{n / 1e3:.0f} kB"


def _calibration(bands: list[dict[str, Any]]) -> str:
    resolved = [b for b in bands if b["resolved"]]
    if not resolved:
        return ""
    parts = [f"{b['band']}: {b['confirmed']}/{b['resolved']}" for b in resolved]
    return "; confirmed per confidence band: " + ", ".join(parts)


def _semantic(s: dict[str, Any]) -> str:
    if not s["sqlite_vec"]:
        return f"unavailable (sqlite-vec not loaded; `pip install sqlite-vec`), model {s['configured_model']}"
    held = s["vector_model"] or "no vectors yet"
    return f"{s['vectors']} vectors ({held}), {s['waiting']} waiting; configured {s['configured_model']}"


def _savings(t: dict[str, Any]) -> str:
    if not t["entries"]:
        return "none logged"
    methods = ", ".join(f"{m} {n:,}" for m, n in t["per_method"].items())
    return f"{t['total']:,} in {t['entries']} entries ({methods})"


# -- users ------------------------------------------------------------------------------------
def actions(sp: argparse.ArgumentParser) -> Callable[[str, str, str], argparse.ArgumentParser]:
    """A command's ACTIONs (``bigmind user list``): adds one by name, help and example."""
    sub = sp.add_subparsers(dest="action", metavar="ACTION", required=True)

    def action(name: str, text: str, example: str) -> argparse.ArgumentParser:
        p = sub.add_parser(
            name,
            help=text,
            description=text,
            epilog=f"example: {example}",
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        # SUPPRESS: `bigmind user --json list` keeps the flag the parent parser set.
        p.add_argument(
            "--json", action="store_true", default=argparse.SUPPRESS, help="machine-readable output"
        )
        return p

    return action


def user_arguments(sp: argparse.ArgumentParser) -> None:
    action = actions(sp)

    action("list", "List the users of this database and their roles.", "bigmind user list")
    add = action("add", "Register a user.", "bigmind user add bob --role curator")
    add.add_argument("name", help="the username (what BIGMIND_USER is set to)")
    add.add_argument("--role", default="member", help=ROLES_HELP)
    change = action("set-role", "Change a user's role.", "bigmind user set-role bob admin")
    change.add_argument("name", help="the username")
    change.add_argument("role", help=ROLES_HELP)


def cmd_user(args: argparse.Namespace) -> int:
    """List users, add one, or change a role.

    Adding a user or changing a role acts as BIGMIND_USER, who must be an admin once the
    database has one (PostgreSQL checks it too); running the command does not register
    BIGMIND_USER.
    """
    from bigmind.cli.main import load_settings
    from bigmind.service import accounts

    settings = load_settings()
    if args.action == "add":
        u = accounts.add_user(settings, args.name, args.role)
        emit(args, {"user": u.as_dict()}, f"Added user {u.username} ({u.role}).")
    elif args.action == "set-role":
        u, before = accounts.set_role(settings, args.name, args.role)
        change = f"{before} → {u.role}" if before != u.role else f"already {u.role}"
        data = {"user": u.as_dict(), "previous_role": before}
        emit(args, data, f"{u.username}: {change}.")
    else:
        everyone = accounts.list_users(settings)
        emit(args, {"users": [u.as_dict() for u in everyone]}, _user_table(everyone))
    return 0


def _user_table(everyone: Sequence[User]) -> str:
    width = max([len("USER"), *(len(u.username) for u in everyone)])
    lines = [f"{'USER':<{width}}  {'ROLE':<7}  LAST SEEN"]
    for u in everyone:
        lines.append(f"{u.username:<{width}}  {u.role:<7}  {(u.last_seen or '—')[:16]}")
    return "\n".join(lines)
