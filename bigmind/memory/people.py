"""People the agent works with: colleagues, owners, experts. Shared by every user of a database."""

from __future__ import annotations

import re
from collections.abc import Sequence

from bigmind import limits
from bigmind.errors import InvalidInput
from bigmind.limits import check_limit, check_text, optional_stored
from bigmind.models import now_ts
from bigmind.search import keyword
from bigmind.storage.people import People
from bigmind.storage.people import Person as Person
from bigmind.storage.store import Store

_USERNAME = re.compile(r"^[\w.@+\-]{1,100}$", re.UNICODE)


def _merge_list(old: str | None, new: str | None) -> str | None:
    """Union of comma-separated items, old order first, case-insensitive."""
    items: list[str] = []
    for part in limits.items(old or "") + limits.items(new or ""):
        p = part.strip()
        if p and p.lower() not in (i.lower() for i in items):
            items.append(p)
    return ", ".join(items) or None


def _merge_notes(old: str | None, new: str | None) -> str | None:
    """Append new notes as a dated line unless the text is already there."""
    if not new:
        return old
    if old and new.casefold() in old.casefold():
        return old
    line = f"[{now_ts()[:10]}] {new}"
    return f"{old}\n{line}" if old else line


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
) -> tuple[Person, bool]:
    """Create or update a person. Notes and expertise are merged, never overwritten."""
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
        table = People(store.db, store.uid)
        old = table.get(name, tx)
        if old is not None:
            changes: dict[str, str | None] = {k: v for k, v in fields.items() if v is not None}
            changes["expertise"] = _merge_list(old.expertise, exp)
            changes["notes"] = _merge_notes(old.notes, note)
            table.update(tx, old.id, changes, ts)
            created = False
        else:
            new = fields | {"expertise": _merge_list(None, exp), "notes": _merge_notes(None, note)}
            table.add(tx, name, new, ts)
            created = True
    person = get(store, name)
    assert person is not None
    return person, created


def recall(store: Store, query: str, limit: int = 5) -> list[tuple[Person, float, str]]:
    """People matching a name, role, team or expertise question, best first, with why."""
    q = check_text("query", query, limits.PERSON_QUERY)
    return keyword.people(store, q, check_limit(limit))


def list_(store: Store, limit: int = 20) -> list[Person]:
    return People(store.db, store.uid).recent(check_limit(limit))
