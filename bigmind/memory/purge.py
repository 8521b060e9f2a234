"""``bigmind purge``: a text found wherever BigMind keeps it, listed, then forgotten everywhere.

:func:`find` matches every column the registry (:mod:`bigmind.storage.schema`) sorts as text
a user or an agent wrote or chose, in every table, and each table's rows are dealt with as its
entry's ``forget`` says: the memories holding it are forgotten whole
(:func:`bigmind.memory.erasure.forget`); rows that are not memories (the profile,
token-savings notes, company knowledge, a link's reason, a display name, a token's label) keep
everything but the text, cut out; the directory's topics are made again. The user's Markdown
mirrors lose every line holding it. What no purge reaches — exports, backups, logs, the user's
own copies — is always listed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from bigmind import limits
from bigmind.errors import Forbidden, InvalidInput
from bigmind.limits import check_text
from bigmind.memory import globalkb, mirror
from bigmind.memory.erasure import (
    CUT_NAMES,
    Forgotten,
    Places,
    Target,
    excerpt,
    forget,
    left,
    may_forget_person,
)
from bigmind.storage import purge_rows as purge_rows
from bigmind.storage import schema
from bigmind.storage.attempts_table import Attempts
from bigmind.storage.fact_files_table import FactFiles
from bigmind.storage.fact_history_table import FactHistory
from bigmind.storage.focus_table import FocusAnnouncements
from bigmind.storage.hypotheses_table import Hypotheses
from bigmind.storage.people_table import People
from bigmind.storage.reminders_table import Reminders
from bigmind.storage.store import Store

FIND_LIMIT = 100_000  # matches per kind a purge lists at most
MIN_MATCH = 3  # characters a purge's text needs at least


@dataclass(slots=True)
class Found:
    """Everything of the user's holding a text: memories to forget, rows to cut it out of,
    whether the directory holds it, the mirrors holding it; what the user may not touch, and
    the copies no purge reaches."""

    text: str
    targets: list[Target] = field(default_factory=list)
    cuts: list[purge_rows.Cut] = field(default_factory=list)
    directory: bool = False
    mirrors: list[Path] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)  # matches the user may not touch
    left: list[str] = field(default_factory=list)

    @property
    def anything(self) -> bool:
        return bool(self.targets or self.cuts or self.directory or self.mirrors)

    def cut_lines(self) -> list[str]:
        """Each row to cut the text out of, on one line."""
        return [
            f"{CUT_NAMES[c.table]}: {excerpt(' | '.join(c.texts), self.text)}" for c in self.cuts
        ]


def find(store: Store, text: str, places: Places | None = None) -> Found:
    """Everything of ``store``'s user holding ``text`` (any case, a plain substring, not
    words); a memory inside a matching session is not listed again. With ``places``, the
    Markdown mirrors holding it and the copies left are listed too."""
    needle = check_text("text", text, limits.QUERY)
    if len(needle) < MIN_MATCH:
        raise InvalidInput(f"Give at least {MIN_MATCH} characters to match; got {needle!r}.")
    found = Found(needle)
    _memories(store, found)
    _rows(store, found)
    if places is not None:
        found.mirrors = mirror.holding(places.mirrors, store.user.username, needle)
        found.left = left(places, needle)
    return found


def purge(store: Store, found: Found, places: Places | None = None) -> Forgotten:
    """Forget what :func:`find` found, cut the text out of the rest, rewrite the mirrors."""
    return forget(store, found.targets, places=places, cuts=found.cuts, match=found.text)


def _memories(store: Store, found: Found) -> None:
    db, uid, needle, out = store.db, store.uid, found.text, found.targets

    def label(t: str | None) -> str:
        return excerpt(t, needle)

    sessions = {r["id"]: r for r in store.sessions.holding(needle, FIND_LIMIT)}
    for r in sessions.values():
        out.append(Target("session", r["id"], f"{r['started_at'][:10]} {label(r['one_liner'])}"))
    for r in store.sessions.summaries_holding(needle, FIND_LIMIT):
        if r["id"] not in sessions:
            out.append(
                Target("summary", r["id"], f"{r['started_at'][:10]} {label(r['one_liner'])}")
            )
    for r in store.chunks.holding(needle, FIND_LIMIT):
        if r["session_id"] not in sessions:
            out.append(Target("chunk", str(r["id"]), label(r["content"])))
    facts = {int(r["id"]): r for r in store.facts.holding(needle, FIND_LIMIT)}
    for fid, r in facts.items():
        out.append(Target("fact", str(fid), f"[{r['category']}] {label(r['fact'])}"))
    for where, ids in (
        ("an earlier version", FactHistory(db, uid).holding(needle, FIND_LIMIT)),
        ("a file it is bound to", FactFiles(db, uid).holding(needle, FIND_LIMIT)),
    ):
        for fid in ids:
            f = None if fid in facts else store.facts.get(fid)
            if f is not None:
                facts[fid] = {}
                line = f"[{f.category}] {label(f.fact)} ({where} matches)"
                out.append(Target("fact", str(fid), line))
    for r in Hypotheses(db, uid).holding(needle, FIND_LIMIT):
        out.append(Target("hypothesis", str(r["id"]), label(r["hypothesis"])))
    for r in Attempts(db, uid).holding(needle, FIND_LIMIT):
        out.append(Target("attempt", str(r["id"]), label(r["approach"])))
    for r in Reminders(db, uid).holding(needle, FIND_LIMIT):
        out.append(Target("reminder", str(r["id"]), label(r["text"])))
    for fa in FocusAnnouncements(db, uid).holding(needle, FIND_LIMIT):
        if fa.session_id not in sessions:
            out.append(Target("focus", str(fa.id), label(fa.description)))
    for p in People(db, uid).holding(needle, FIND_LIMIT):
        try:
            may_forget_person(store, p.id, p.username)
        except Forbidden as exc:
            found.refused.append(f"person #{p.id} @{p.username}: {exc}")
            continue
        out.append(Target("person", str(p.id), f"@{p.username} {label(p.notes or p.role)}"))


def _rows(store: Store, found: Found) -> None:
    """The rows that are not memories: the user's own, and company knowledge they promoted
    or may curate (another's is named, untouched)."""
    for table in schema.cut_tables():
        shared = table == "global_knowledge"
        for c in purge_rows.holding(
            store.db, table, None if shared else store.uid, found.text, 1000
        ):
            if shared and c.owner != store.uid and not globalkb.may_curate(store):
                found.refused.append(
                    f"company knowledge #{c.key}: promoted by another user; a curator or "
                    "admin can purge it"
                )
            else:
                found.cuts.append(c)
    found.directory = any(
        purge_rows.holding(store.db, t, store.uid, found.text, 1) for t in schema.rebuilt_tables()
    )
