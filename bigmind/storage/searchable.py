"""The memories as search reads them: each kind's full-text target and candidate rows.

A read model over several tables (each still owned by its own module for writes): what the
keyword ranking (:mod:`bigmind.search.keyword`) searches per kind, and the rows recall loads for
its candidates, with their use counts joined in, in one statement per kind.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bigmind.storage.db import Row
from bigmind.storage.facts_table import active
from bigmind.storage.table import Table, marks


@dataclass(frozen=True, slots=True)
class FullText:
    """One kind's full-text index: its FTS table, the base table ``b`` behind it, the owner
    condition on ``b`` (with ``?`` for the user's id where rows are private), the condition
    of a live row (not deprecated), and the BM25 weights of its two indexed columns."""

    fts: str
    base: str
    owner: str
    weights: str
    live: str = ""

    @property
    def private(self) -> bool:
        return "?" in self.owner

    def condition(self, *, include_inactive: bool = False) -> str:
        if self.live and not include_inactive:
            return f"{self.owner} AND {self.live}"
        return self.owner


FULL_TEXT: dict[str, FullText] = {
    "fact": FullText("facts_fts", "facts", "b.user_id = ?", "4.0, 1.0", active("b")),
    "chunk": FullText(
        "conversation_chunks_fts", "conversation_chunks", "b.user_id = ?", "1.0, 0.5"
    ),
    "summary": FullText(
        "session_summaries_fts",
        "session_summaries",
        "b.id IN (SELECT id FROM sessions WHERE user_id = ?)",
        "2.0, 1.0",
    ),
    "global": FullText(
        "global_knowledge_fts", "global_knowledge", "b.status = 'approved'", "2.0, 1.0"
    ),
}

# What each kind shows in a hit (columns, FROM), whether rows are private to their owner, and
# a fixed condition. Private kinds carry the project they were made in (facts: and their scope). Usage is joined in: facts count it in a column, other kinds in memory_usage.
_LOAD: dict[str, tuple[str, str, bool, str]] = {
    "fact": (
        "b.id, b.fact AS text, b.updated_at AS ts, b.source_session AS session_id, b.category,"
        " coalesce(b.confidence, 1.0) AS confidence, b.deprecated, b.importance,"
        " b.access_count AS uses, b.project, b.scope, (SELECT max(l.fact_id) FROM fact_links l"
        " JOIN facts n ON n.id = l.fact_id WHERE l.other_id = b.id AND l.kind = 'supersedes'"
        " AND n.deprecated = 0) AS updated_by",
        "facts b",
        True,
        "",
    ),
    "chunk": (
        "b.id, b.content AS text, b.created_at AS ts, b.session_id, b.seq, b.flag_reason AS flag,"
        " b.project",
        "conversation_chunks b",
        True,
        "",
    ),
    "summary": (
        "b.id, coalesce(o.one_liner || ': ', '') || b.summary AS text, o.started_at AS ts,"
        " b.id AS session_id, o.importance, o.user_id, o.project",
        "session_summaries b JOIN sessions o ON o.id = b.id",
        True,
        "",
    ),
    "hypothesis": (
        "b.id, '[' || b.status || '] ' || b.hypothesis || coalesce(' — ' || b.resolution, '')"
        " AS text, coalesce(b.resolved_at, b.created_at) AS ts, b.session_id, b.confidence,"
        " b.project",
        "hypotheses b",
        True,
        "",
    ),
    "person": (
        "b.id, coalesce(b.display_name, b.username) || ' (@' || b.username || ')' ||"
        " coalesce(' — ' || b.role, '') || coalesce('; expertise: ' || b.expertise, '') ||"
        " coalesce('; ' || b.notes, '') AS text, coalesce(b.last_seen, b.updated_at) AS ts",
        "people b",
        False,
        "",
    ),
    "global": (
        "b.id, b.title || ': ' || b.content AS text, b.updated_at AS ts, b.category, b.importance",
        "global_knowledge b",
        False,
        "b.status = 'approved'",
    ),
}
_TEXT_IDS = {"summary"}  # ids stored as text; the others are integers


class Searchable(Table):
    """Candidate rows of one user's (and the shared) memories."""

    def rows(self, kind: str, ids: Sequence[str], include_deprecated: bool) -> list[Row]:
        """The candidates' rows with their use counts (``uses``), in one statement; rows that
        are not the user's (or shared) or are filtered out are simply missing."""
        columns, source, private, fixed = _LOAD[kind]
        args: list[object] = []
        if kind != "fact":
            key = "b.id" if kind in _TEXT_IDS else "CAST(b.id AS TEXT)"
            columns += ", u.access_count AS uses"
            source += (
                f" LEFT JOIN memory_usage u ON u.kind = '{kind}' AND u.item_id = {key}"
                " AND u.user_id = ?"
            )
            args.append(self.uid)
        where = [f"b.id IN ({marks(ids)})"]
        args += ids
        if private:
            where.append("o.user_id = ?" if kind == "summary" else "+b.user_id = ?")
            args.append(self.uid)
        if fixed:
            where.append(fixed)
        if kind == "fact" and not include_deprecated:
            where.append(str(FULL_TEXT["fact"].live))
        return self.db.query(f"SELECT {columns} FROM {source} WHERE {' AND '.join(where)}", args)

    def hypotheses_with(self, stems: Sequence[str], limit: int) -> list[Row]:
        """The user's most recent hypotheses (with resolutions) containing any of the stems."""
        if not stems:
            return []
        where = " OR ".join(
            "lower(hypothesis || ' ' || coalesce(resolution, '')) LIKE ?" for _ in stems
        )
        return self.db.query(
            f"SELECT id, hypothesis, resolution FROM hypotheses WHERE user_id = ? AND ({where})"
            " ORDER BY id DESC LIMIT ?",
            (self.uid, *(f"%{s}%" for s in stems), limit),
        )
