"""People the agent works with: colleagues, owners, experts. Shared by every user of a database."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from bigmind import limits
from bigmind.errors import InvalidInput
from bigmind.limits import check_limit, check_text, optional_text
from bigmind.models import Record, column_list, now_ts
from bigmind.search import terms_of
from bigmind.store import Store

_USERNAME = re.compile(r"^[\w.@+\-]{1,100}$", re.UNICODE)
# How much a query term found in each field counts when ranking people.
_WEIGHTS = {
    "username": 3.0,
    "display_name": 3.0,
    "role": 2.0,
    "team": 2.0,
    "expertise": 2.0,
    "notes": 1.0,
}


@dataclass(frozen=True, slots=True)
class Person(Record):
    id: int
    username: str
    display_name: str | None
    role: str | None
    team: str | None
    expertise: str | None
    notes: str | None
    created_at: str | None
    updated_at: str | None
    last_seen: str | None


_COLUMNS = column_list(Person)


def _merge_list(old: str | None, new: str | None) -> str | None:
    """Union of comma-separated items, old order first, case-insensitive."""
    items: list[str] = []
    for part in (old or "").split(",") + (new or "").split(","):
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
    rows = store.db.query(f"SELECT {_COLUMNS} FROM people WHERE username = ?", (username,))
    return Person(**rows[0]) if rows else None


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
        "display_name": optional_text("display_name", display_name, 200),
        "role": optional_text("role", role, 200),
        "team": optional_text("team", team, 200),
    }
    exp_text = (
        expertise if isinstance(expertise, str) or expertise is None else ", ".join(expertise)
    )
    exp = optional_text("expertise", exp_text, limits.SHORT)
    note = optional_text("notes", notes, limits.NOTES)
    ts = now_ts()
    with store.db.transaction() as tx:
        rows = tx.execute(f"SELECT {_COLUMNS} FROM people WHERE username = ?", (name,))
        if rows:
            old = Person(**rows[0])
            changes: dict[str, str | None] = {k: v for k, v in fields.items() if v is not None}
            changes["expertise"] = _merge_list(old.expertise, exp)
            changes["notes"] = _merge_notes(old.notes, note)
            sets = ", ".join(f"{k} = ?" for k in changes)
            tx.execute(
                f"UPDATE people SET {sets}, updated_at = ?, last_seen = ? WHERE id = ?",
                (*changes.values(), ts, ts, old.id),
            )
            created = False
        else:
            tx.execute(
                "INSERT INTO people(username, display_name, role, team, expertise, notes,"
                " added_by, created_at, updated_at, last_seen) VALUES (?,?,?,?,?,?,?,?,?,?)",
                (
                    name,
                    fields["display_name"],
                    fields["role"],
                    fields["team"],
                    _merge_list(None, exp),
                    _merge_notes(None, note),
                    store.uid,
                    ts,
                    ts,
                    ts,
                ),
            )
            created = True
    person = get(store, name)
    assert person is not None
    return person, created


def recall(store: Store, query: str, limit: int = 5) -> list[tuple[Person, float, str]]:
    """People matching a name, role, team or expertise question, best first, with why."""
    q = check_text("query", query, limits.PERSON_QUERY)
    n = check_limit(limit)
    terms = [t.rstrip("*") for t in terms_of(q)]
    stems = {t: t[: max(4, len(t) - 2)] for t in terms}  # also matches plurals and -ing forms
    if not terms:
        return []
    where = " OR ".join(
        "lower(coalesce(username,'') || ' ' || coalesce(display_name,'') || ' ' ||"
        " coalesce(role,'') || ' ' || coalesce(team,'') || ' ' || coalesce(expertise,'') ||"
        " ' ' || coalesce(notes,'')) LIKE ?"
        for _ in terms
    )
    rows = store.db.query(
        f"SELECT {_COLUMNS} FROM people WHERE {where} LIMIT 500",
        tuple(f"%{stems[t]}%" for t in terms),
    )
    scored = []
    for r in rows:
        p = Person(**r)
        score = 0.0
        why: list[str] = []
        for field, weight in _WEIGHTS.items():
            value = (getattr(p, field) or "").lower()
            hit = [t for t in terms if stems[t] in value]
            if hit:
                score += weight * len(hit)
                why.append(f"{field} ({', '.join(hit)})")
        if score:
            scored.append((p, score, "matched " + "; ".join(why)))
    scored.sort(key=lambda x: (-x[1], x[0].username))
    return scored[:n]


def list_(store: Store, limit: int = 20) -> list[Person]:
    rows = store.db.query(
        f"SELECT {_COLUMNS} FROM people"
        " ORDER BY coalesce(last_seen, updated_at, created_at) DESC, id DESC LIMIT ?",
        (check_limit(limit),),
    )
    return [Person(**r) for r in rows]
