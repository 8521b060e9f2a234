"""People the agent works with: colleagues, owners, experts. Shared by every user of a database."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from bigmind import limits
from bigmind.errors import InvalidInput
from bigmind.limits import check_limit, check_text, optional_stored
from bigmind.models import now_ts
from bigmind.search import keyword
from bigmind.storage.people_table import People
from bigmind.storage.people_table import Person as Person
from bigmind.storage.store import Store

_USERNAME = re.compile(r"^[\w.@+\-]{1,100}$", re.UNICODE)


@dataclass(frozen=True, slots=True)
class Remembered:
    person: Person
    created: bool
    trimmed: list[str]  # what was dropped to stay within the caps, said in the reply


def _merge_list(old: str | None, new: str | None) -> tuple[str | None, int]:
    """Union of comma-separated items, old order first, case-insensitive; beyond
    :data:`limits.EXPERTISE_KEPT` characters the oldest items go. Returns it and how many went."""
    items: list[str] = []
    for part in limits.items(old or "") + limits.items(new or ""):
        p = part.strip()
        if p and p.lower() not in (i.lower() for i in items):
            items.append(p)
    dropped = 0
    while len(", ".join(items)) > limits.EXPERTISE_KEPT and len(items) > 1:
        items.pop(0)
        dropped += 1
    return ", ".join(items) or None, dropped


def _merge_notes(old: str | None, new: str | None) -> tuple[str | None, int]:
    """Append new notes as a dated line unless the text is already there; beyond
    :data:`limits.NOTES_KEPT` characters the oldest lines go, counted in a first line that
    says so. Returns the notes and how many lines went now."""
    if not new:
        return old, 0
    if old and new.casefold() in old.casefold():
        return old, 0
    lines = [*(old or "").split("\n"), f"[{now_ts()[:10]}] {new}"]
    lines = [line for line in lines if line]
    earlier = 0
    if lines and (m := _TRIMMED.match(lines[0])):
        earlier = int(m.group(1).replace(",", ""))
        lines.pop(0)
    dropped = 0
    while len(lines) > 1 and sum(len(line) + 1 for line in lines) + 40 > limits.NOTES_KEPT:
        lines.pop(0)
        dropped += 1
    if earlier + dropped:
        lines.insert(0, f"[{earlier + dropped:,} older note lines trimmed]")
    return "\n".join(lines), dropped


_TRIMMED = re.compile(r"^\[([\d,]+) older note lines trimmed\]$")


def get(store: Store, username: str) -> Person | None:
    return People(store.db, store.uid).get(username)


def remember(
    store: Store,
    username: str,
    display_name: str | None = None,
    role: str | None = None,
    team: str | None = None,
    expertise: str | Sequence[str] | None = None,
    notes: str | None = None,
) -> Remembered:
    """Create or update a person. Notes and expertise are merged, never overwritten; what
    grows beyond its cap loses its oldest part, and the result says what went."""
    name = check_text("username", username, limits.NAME)
    if not _USERNAME.match(name):
        raise InvalidInput(
            f"'username' must be a handle without spaces (letters, digits, . _ - @ +); got {name!r}."
        )
    fields = {
        "display_name": optional_stored("display_name", display_name, 200),
        "role": optional_stored("role", role, 200),
        "team": optional_stored("team", team, 200),
    }
    exp_text = expertise if expertise is None else ", ".join(limits.items(expertise))
    exp = optional_stored("expertise", exp_text, limits.SHORT)
    note = optional_stored("notes", notes, limits.NOTES)
    ts = now_ts()
    with store.db.transaction() as tx:
        tx.lock_shared()  # shared rows: one writer of them at a time
        table = People(store.db, store.uid)
        old = table.get(name, tx)
        expertise_now, items_gone = _merge_list(old.expertise if old else None, exp)
        notes_now, lines_gone = _merge_notes(old.notes if old else None, note)
        merged = {"expertise": expertise_now, "notes": notes_now}
        if old is not None:
            changes: dict[str, str | None] = {k: v for k, v in fields.items() if v is not None}
            table.update(tx, old.id, changes | merged, ts)
        else:
            table.add(tx, name, fields | merged, ts)
    person = get(store, name)
    assert person is not None
    trimmed = []
    if items_gone:
        trimmed.append(f"{items_gone} oldest expertise item{'s' if items_gone > 1 else ''}")
    if lines_gone:
        trimmed.append(f"{lines_gone} oldest note line{'s' if lines_gone > 1 else ''}")
    return Remembered(person, old is None, trimmed)


def recall(store: Store, query: str, limit: int = 5) -> list[tuple[Person, float, str]]:
    """People matching a name, role, team or expertise question, best first, with why."""
    q = check_text("query", query, limits.PERSON_QUERY)
    return keyword.people(store, q, check_limit(limit))


def list_(store: Store, limit: int = 20) -> list[Person]:
    return People(store.db, store.uid).recent(check_limit(limit))
