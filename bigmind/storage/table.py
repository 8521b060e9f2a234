"""What every table module shares: the backend, the owner, and a way to run inside a write."""

from __future__ import annotations

from collections.abc import Callable, Sequence, Sized

from bigmind.storage.db import Backend, Params, Row, Tx

Run = Callable[[str, Params], list[Row]]


class Table:
    """One table's (or aggregate's) SQL, seen by one user (``uid``; '' for shared rows)."""

    def __init__(self, db: Backend, uid: str) -> None:
        self.db = db
        self.uid = uid

    def _run(self, tx: Tx | None) -> Run:
        """Statements run in ``tx`` when given (a write in progress), else as a plain read."""
        return tx.execute if tx is not None else self.db.query

    def _count_and_first(
        self, columns: str, source: str, params: Params, order: str, limit: int
    ) -> tuple[int, list[Row]]:
        """How many rows ``FROM {source}`` (a table and its WHERE) has, and the first ``limit``
        of them by ``order``, with ``columns``: a list with its size (the diff's sections)."""
        n = int(self.db.query(f"SELECT count(*) AS n FROM {source}", params)[0]["n"])
        rows = self.db.query(
            f"SELECT {columns} FROM {source} ORDER BY {order} LIMIT ?", (*params, limit)
        )
        return n, rows

    def _newest(
        self, table: str, columns: str, equal: dict[str, object], limit: int, project: str | None
    ) -> list[Row]:
        """``columns`` of this user's rows of ``table`` seen from ``project`` (see
        :func:`in_project`) whose columns equal ``equal``'s values (None: any), newest first."""
        seen, more = in_project("project", project)
        where, args = f"user_id = ? AND {seen}", [self.uid, *more]
        for column, value in equal.items():
            if value is not None:
                where += f" AND {column} = ?"
                args.append(value)
        return self.db.query(
            f"SELECT {columns} FROM {table} WHERE {where} ORDER BY created_at DESC, id DESC"
            " LIMIT ?",
            (*args, limit),
        )


ANYWHERE = "*"  # a project filter that lets every project's rows through (never a key)


def in_project(column: str, project: str | None) -> tuple[str, tuple[object, ...]]:
    """The condition (and its parameter) on rows seen from ``project``: that project's own and
    those made in none (NULL). ``project`` None: only the latter; :data:`ANYWHERE`: all."""
    if project == ANYWHERE:
        return "1 = 1", ()
    if project is None:
        return f"{column} IS NULL", ()
    return f"({column} IS NULL OR {column} = ?)", (project,)


def marks(values: Sized) -> str:
    """``?, ?, ?`` for a list of parameters."""
    return ",".join("?" * len(values))


def like_literal(text: str) -> str:
    """``text`` in a LIKE pattern with ``ESCAPE '\\'``: its ``%``, ``_`` and ``\\`` match
    themselves."""
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def substring(text: str) -> tuple[str, str]:
    """The two LIKE patterns :func:`containing` takes per column for ``text`` anywhere: lower
    case (matched against ``lower(column)``) and as given; ``%``, ``_`` and ``\\`` are literal."""
    body = like_literal(text)
    return f"%{body.lower()}%", f"%{body}%"


def containing(columns: Sequence[str]) -> str:
    """SQL that is true when any of ``columns`` contains a text, case-insensitively (a plain
    substring, not words): two parameters per column, :func:`substring`'s patterns. SQLite
    folds ASCII letters only; the pattern as given also matches the text's own case."""
    one = "lower(coalesce({c}, '')) LIKE ? ESCAPE '\\' OR coalesce({c}, '') LIKE ? ESCAPE '\\'"
    return "(" + " OR ".join(one.format(c=c) for c in columns) + ")"


def containing_params(text: str, columns: Sequence[str]) -> list[str]:
    """The parameters of :func:`containing` for ``text`` over ``columns``."""
    return list(substring(text)) * len(columns)
