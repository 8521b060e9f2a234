"""A fact's rivals, shown wherever the fact is shown.

An active fact is shown with every active fact it conflicts with (``fact_links``, written by
:mod:`bigmind.memory.dedup`), marked ⚠️, newest first, with the calls that settle the
conflict. A deprecated fact (``include_deprecated``, the profile page) is shown with the fact
that superseded it or that it was merged into; the profile page also shows an active fact's
history (what it superseded, what was merged into it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from bigmind.models import Fact, Hit, Record, day_of
from bigmind.storage.links import Linked
from bigmind.storage.store import Store

PREVIEW = 160  # characters of a rival's text quoted beside a fact

CONFLICTS = "conflicts"
SUPERSEDED_BY = "superseded_by"
SUPERSEDES = "supersedes"
MERGED_INTO = "merged_into"
MERGED_FROM = "merged_from"
_RELATION = {
    ("conflict", True): CONFLICTS,
    ("conflict", False): CONFLICTS,
    ("supersedes", True): SUPERSEDES,
    ("supersedes", False): SUPERSEDED_BY,
    ("merged", True): MERGED_FROM,
    ("merged", False): MERGED_INTO,
}
REPLACED = (SUPERSEDED_BY, MERGED_INTO)  # what a deprecated fact is shown with


def settle_call(older: int, newer: int) -> str:
    """The calls that settle a conflict between two facts."""
    return (
        f'memory_deprecate_fact({older}, reason="superseded by #{newer}") if #{newer} is right,'
        " or memory_update_fact(…) to correct one"
    )


@dataclass(frozen=True, slots=True)
class Rival(Record):
    """A fact related to the one shown."""

    fact_id: int
    fact: str
    category: str
    date: str
    relation: str  # conflicts | superseded_by | supersedes | merged_into | merged_from
    newer: bool  # stored after the fact shown
    why: str | None
    settle: str | None  # for a conflict: the calls that settle it

    @property
    def warning(self) -> bool:
        return self.relation == CONFLICTS

    def note(self) -> str:
        """One line saying what this fact is to the one shown."""
        quoted = _quote(self.fact)
        if self.relation == CONFLICTS:
            age = "newer" if self.newer else "older"
            why = f"; {self.why}" if self.why else ""
            return (
                f"⚠️ conflicts with #{self.fact_id} ({age}, {self.date}{why}): {quoted} — "
                f"settle: {self.settle}"
            )
        if self.relation == SUPERSEDED_BY:
            return f"↪️ superseded by #{self.fact_id} ({self.date}): {quoted}"
        if self.relation == SUPERSEDES:
            return f"↪️ supersedes #{self.fact_id} ({self.date}, now hidden): {quoted}"
        if self.relation == MERGED_INTO:
            return f"🔀 merged into #{self.fact_id}: {quoted}"
        return f"🔀 merged from #{self.fact_id} (the same claim; kept as deprecated): {quoted}"


def _age(f: Fact) -> tuple[str, int]:
    return (f.created_at or "", f.id)


def _rival(shown: Fact, link: Linked) -> Rival:
    other = link.fact
    settle = None
    if link.kind == "conflict":
        older, newer = sorted((shown, other), key=_age)
        settle = settle_call(older.id, newer.id)
    return Rival(
        other.id,
        other.fact,
        other.category,
        day_of(other.created_at),
        _RELATION[(link.kind, link.outgoing)],
        _age(other) > _age(shown),
        link.why,
        settle,
    )


def rivals_of(
    store: Store, facts: Sequence[Fact], *, history: bool = False
) -> dict[int, list[Rival]]:
    """Each fact's rivals, newest first: for an active fact the active facts it conflicts
    with; for a deprecated one what replaced it; with ``history``, every link."""
    by_id = {f.id: f for f in facts}
    out: dict[int, list[Rival]] = {}
    for link in store.links.of_facts(list(by_id)):
        shown = by_id[link.shown]
        rival = _rival(shown, link)
        if _wanted(shown, link, rival, history):
            out.setdefault(shown.id, []).append(rival)
    return out


def _wanted(shown: Fact, link: Linked, rival: Rival, history: bool) -> bool:
    if rival.relation == CONFLICTS:
        return not link.fact.deprecated and not shown.deprecated
    return history or (bool(shown.deprecated) and rival.relation in REPLACED)


def notes_of(store: Store, facts: Sequence[Fact]) -> dict[int, list[str]]:
    """The lines shown under each fact (the packet): its rivals' notes."""
    return {i: [r.note() for r in rs] for i, rs in rivals_of(store, facts).items()}


def with_rivals(store: Store, hits: Sequence[Hit]) -> list[Hit]:
    """Search hits with each fact's rivals (``Hit.rivals``: their fields and note)."""
    ids = [int(h.id) for h in hits if h.kind == "fact"]
    if not ids:
        return list(hits)
    found = rivals_of(store, store.facts.by_ids(ids, status="all"))
    out = []
    for h in hits:
        rs = found.get(int(h.id), []) if h.kind == "fact" else []
        out.append(replace(h, rivals=tuple(_as_dict(r) for r in rs)) if rs else h)
    return out


def _as_dict(r: Rival) -> dict[str, Any]:
    return r.as_dict() | {"note": r.note()}


def _quote(text: str) -> str:
    text = " ".join(text.split())
    return f"“{text if len(text) <= PREVIEW else text[: PREVIEW - 1] + '…'}”"
