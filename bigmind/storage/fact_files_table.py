"""The fact_files table: the files a fact is about (a gotcha of ``src/db.py``), seen by one user.

Paths come normalised (:func:`bigmind.memory.focus.normalise_path`); ``name`` is a path's last
component, lower-cased, so the facts of a file are found by an indexed lookup of its name and
then matched as focus conflicts are (:func:`bigmind.memory.focus.same_file`). Rows go with
their fact (``ON DELETE CASCADE``): forgetting a fact removes its files.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from bigmind.models import FACT_COLUMNS, Fact
from bigmind.storage.db import Tx
from bigmind.storage.facts_table import ACTIVE, fact_from_row, visible
from bigmind.storage.schema import matched
from bigmind.storage.table import ANYWHERE, Table, containing, containing_params, marks


def file_name(path: str) -> str:
    """The lookup key of a normalised path: its last component, lower-cased."""
    return path.rstrip("/").rsplit("/", 1)[-1].lower()


class FactFiles(Table):
    """One user's fact ↔ file bindings."""

    def add(self, tx: Tx, fact_id: int, paths: Iterable[str], ts: str) -> int:
        """Bind ``paths`` to the fact (those already bound are skipped); how many were new."""
        n = 0
        for p in paths:
            rows = tx.execute(
                "INSERT INTO fact_files(fact_id, user_id, path, name, created_at)"
                " VALUES (?, ?, ?, ?, ?) ON CONFLICT (fact_id, path) DO NOTHING RETURNING id",
                (fact_id, self.uid, p, file_name(p), ts),
            )
            n += len(rows)
        return n

    def count(self) -> int:
        """How many files this user's facts are bound to (a file bound to two facts: two)."""
        rows = self.db.query("SELECT count(*) AS n FROM fact_files WHERE user_id = ?", (self.uid,))
        return int(rows[0]["n"])

    def holding(self, text: str, limit: int) -> list[int]:
        """Ids of the facts bound to a file whose path contains ``text`` (any case)."""
        cols = matched("fact_files")
        rows = self.db.query(
            f"SELECT DISTINCT fact_id FROM fact_files WHERE user_id = ? AND {containing(cols)}"
            " ORDER BY fact_id LIMIT ?",
            (self.uid, *containing_params(text, cols), limit),
        )
        return [int(r["fact_id"]) for r in rows]

    def move(self, tx: Tx, from_id: int, to_id: int, ts: str) -> None:
        """Bind fact ``to_id`` to every file of fact ``from_id`` (a merge keeps them)."""
        tx.execute(
            "INSERT INTO fact_files(fact_id, user_id, path, name, created_at)"
            " SELECT ?, user_id, path, name, ? FROM fact_files WHERE fact_id = ? AND user_id = ?"
            " ON CONFLICT (fact_id, path) DO NOTHING",
            (to_id, ts, from_id, self.uid),
        )

    def of_facts(self, fact_ids: Sequence[int], tx: Tx | None = None) -> dict[int, list[str]]:
        """The files of each given fact that has some, in the order they were bound."""
        if not fact_ids:
            return {}
        rows = self._run(tx)(
            f"SELECT fact_id, path FROM fact_files WHERE fact_id IN ({marks(fact_ids)})"
            " AND user_id = ? ORDER BY id",
            (*fact_ids, self.uid),
        )
        out: dict[int, list[str]] = {}
        for r in rows:
            out.setdefault(int(r["fact_id"]), []).append(str(r["path"]))
        return out

    def named(
        self, names: Sequence[str], limit: int, project: str | None = ANYWHERE
    ) -> list[tuple[str, Fact]]:
        """(bound path, fact) of the active facts seen from ``project`` bound to a file with
        one of these last components: gotchas first, then by importance, newest first."""
        if not names:
            return []
        seen, args = visible("f", project)
        rows = self.db.query(
            f"SELECT ff.path AS bound_path, {FACT_COLUMNS} FROM fact_files ff"
            " JOIN facts f ON f.id = ff.fact_id"
            f" WHERE ff.user_id = ? AND ff.name IN ({marks(names)}) AND f.user_id = ?"
            f" AND {ACTIVE} AND {seen}"
            " ORDER BY CASE WHEN f.category = 'gotcha' THEN 0 ELSE 1 END, f.importance DESC,"
            " f.id DESC LIMIT ?",
            (self.uid, *names, self.uid, *args, limit),
        )
        out: list[tuple[str, Fact]] = []
        for r in rows:
            row = dict(r)
            path = str(row.pop("bound_path"))
            out.append((path, fact_from_row(row)))
        return out
