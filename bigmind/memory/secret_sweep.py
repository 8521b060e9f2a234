"""Secrets already stored: find them in every user's memory and redact them in place.

Text is redacted on its way in since ``0013_redact_stored_secrets``; that migration also
redacted what was stored before, once. ``bigmind scan-secrets`` runs the same sweep on demand
(after the detector learns a new format, or to check a database), table by table, a page of
rows per transaction, so a large memory is never locked for long. On SQLite the full-text
indexes are merged afterwards, so the old terms leave their data too (the bytes of freed pages
are SQLite's secure_delete's business).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from bigmind.storage import upkeep
from bigmind.storage.db import Backend
from bigmind.storage.redact_rows import Page, sweep_page
from bigmind.storage.schema import with_text

Progress = Callable[[int, int], None]


@dataclass(slots=True)
class ScanReport:
    """What a scan found per table: secrets per kind, and the rows holding them."""

    applied: bool  # False: a dry run, nothing was changed
    found: dict[str, Counter[str]] = field(default_factory=dict)
    rows: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(sum(c.values()) for c in self.found.values())

    def as_dict(self) -> dict[str, object]:
        return {
            "applied": self.applied,
            "secrets": self.total,
            "rows": sum(self.rows.values()),
            "tables": {
                t: {"rows": self.rows[t], "secrets": dict(self.found[t])} for t in self.found
            },
        }


def scan(db: Backend, *, apply: bool, progress: Progress | None = None) -> ScanReport:
    """Find the secrets stored in every memory table (all users, deprecated rows included);
    with ``apply``, rewrite them as ``[REDACTED:<kind>]`` (``progress``: tables done)."""
    report = ScanReport(applied=apply)
    tables = with_text()
    for i, table in enumerate(tables, 1):
        after: object | None = None
        while True:
            page = _page(db, table, after, apply)
            if page.rows:
                report.found.setdefault(table, Counter()).update(page.found)
                report.rows[table] = report.rows.get(table, 0) + len(page.rows)
            if page.last is None:
                break
            after = page.last
        if progress:
            progress(i, len(tables))
    if apply and report.total and db.dialect == "sqlite":
        with db.transaction() as tx:
            upkeep.optimize_fts(tx)  # merged segments: the old terms leave the index data
    return report


def _page(db: Backend, table: str, after: object | None, apply: bool) -> Page:
    if not apply:
        return sweep_page(db.query, None, table, after)
    with db.transaction() as tx:
        return sweep_page(tx.execute, tx, table, after)
