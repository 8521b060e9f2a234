"""The people table: colleagues and experts, shared by every user of a database.

Rows are not private: ``uid`` is only recorded as who added a person (``added_by``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from bigmind.models import Record, column_list
from bigmind.storage.db import Row, Tx
from bigmind.storage.schema import matched
from bigmind.storage.table import Table, containing, containing_params

# The text a person is searched by: every descriptive field, lower-cased.
_TEXT = (
    "lower(coalesce(username,'') || ' ' || coalesce(display_name,'') || ' ' ||"
    " coalesce(role,'') || ' ' || coalesce(team,'') || ' ' || coalesce(expertise,'') ||"
    " ' ' || coalesce(notes,''))"
)
FIELDS = ("display_name", "role", "team", "expertise", "notes")


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


COLUMNS = column_list(Person)


class People(Table):
    """The shared people table."""

    def get(self, username: str, tx: Tx | None = None) -> Person | None:
        rows = self._run(tx)(f"SELECT {COLUMNS} FROM people WHERE username = ?", (username,))
        return Person(**rows[0]) if rows else None

    def by_id(self, person_id: int) -> Person | None:
        rows = self.db.query(f"SELECT {COLUMNS} FROM people WHERE id = ?", (person_id,))
        return Person(**rows[0]) if rows else None

    def added_by(self, person_id: int) -> str | None:
        """The user id that added this person (None: unknown)."""
        rows = self.db.query("SELECT added_by FROM people WHERE id = ?", (person_id,))
        return str(rows[0]["added_by"]) if rows and rows[0]["added_by"] else None

    def delete(self, tx: Tx, person_id: int) -> bool:
        return bool(tx.execute("DELETE FROM people WHERE id = ? RETURNING id", (person_id,)))

    def holding(self, text: str, limit: int) -> list[Person]:
        """People whose name or any note contains ``text``, any case, oldest first (a plain
        substring, unlike :meth:`containing`'s search words)."""
        cols = matched("people")
        rows = self.db.query(
            f"SELECT {COLUMNS} FROM people WHERE {containing(cols)} ORDER BY id LIMIT ?",
            (*containing_params(text, cols), limit),
        )
        return [Person(**r) for r in rows]

    def add(self, tx: Tx, username: str, fields: Mapping[str, str | None], ts: str) -> None:
        """A new person with these :data:`FIELDS` (others NULL), added by this user."""
        values = [fields.get(f) for f in FIELDS]
        tx.execute(
            "INSERT INTO people(username, display_name, role, team, expertise, notes,"
            " added_by, created_at, updated_at, last_seen) VALUES (?,?,?,?,?,?,?,?,?,?)",
            (username, *values, self.uid, ts, ts, ts),
        )

    def update(self, tx: Tx, person_id: int, changes: Mapping[str, str | None], ts: str) -> None:
        """Set these :data:`FIELDS`; the person counts as seen and updated at ``ts``."""
        unknown = set(changes) - set(FIELDS)
        if unknown:
            raise ValueError(f"not people fields: {sorted(unknown)}")
        sets = ", ".join(f"{k} = ?" for k in changes)
        tx.execute(
            f"UPDATE people SET {sets}, updated_at = ?, last_seen = ? WHERE id = ?",
            (*changes.values(), ts, ts, person_id),
        )

    def containing(self, fragments: Sequence[str], limit: int = 500) -> list[Person]:
        """People whose text contains any of the lower-case ``fragments``."""
        if not fragments:
            return []
        where = " OR ".join(f"{_TEXT} LIKE ?" for _ in fragments)
        rows = self.db.query(
            f"SELECT {COLUMNS} FROM people WHERE {where} LIMIT ?",
            (*(f"%{f}%" for f in fragments), limit),
        )
        return [Person(**r) for r in rows]

    def recent(self, limit: int) -> list[Person]:
        """Most recently seen (or updated, or added) first."""
        rows = self.db.query(
            f"SELECT {COLUMNS} FROM people"
            " ORDER BY coalesce(last_seen, updated_at, created_at) DESC, id DESC LIMIT ?",
            (limit,),
        )
        return [Person(**r) for r in rows]

    def count(self) -> int:
        return int(self.db.query("SELECT count(*) AS n FROM people")[0]["n"])

    def changed_since(self, ts: str, limit: int) -> tuple[int, list[Row]]:
        """(how many, the first ``limit`` by update) of those added or updated at or after
        ``ts``: username, display_name, role, created_at."""
        return self._count_and_first(
            "username, display_name, role, created_at",
            "people WHERE updated_at >= ?",
            (ts,),
            "updated_at",
            limit,
        )
