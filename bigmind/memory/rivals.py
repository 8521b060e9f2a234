"""A fact's rivals, shown wherever the fact is shown.

An active fact is shown with every active fact it conflicts with (``fact_links``, written by
:mod:`bigmind.memory.dedup`), marked ⚠️, newest first, with the calls that settle the
conflict; an active fact another active fact updates (a ``supersedes`` link: the background
check's guess, never acted on, or the agent's ``replaces``) is marked "↪️ updated by #N" and
shown after it, and the packet shows the update alone. A deprecated fact (``include_deprecated``, the profile page) is shown with the fact
that superseded it or that it was merged into; the profile page also shows an active fact's
history (what it superseded, what was merged into it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from bigmind.memory.quoting import quoted
from bigmind.models import Fact, Hit, Record, day_of
from bigmind.storage.links_table import Linked
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


def replace_call(fact_id: int, ids: Sequence[int]) -> str:
    """The call that makes fact ``fact_id`` replace ``ids`` (``[]``: restore every fact it
    replaced, merged or marked as updated)."""
    return f"memory_update_fact(fact_id={fact_id}, replaces=[{', '.join(map(str, ids))}])"


@dataclass(frozen=True, slots=True)
class Rival(Record):
    """A fact related to the one shown."""

    fact_id: int
    fact: str
    category: str
    date: str
    relation: str  # conflicts | superseded_by | supersedes | merged_into | merged_from
    newer: bool  # stored after the fact shown (a higher id)
    retired: bool  # deprecated
    why: str | None
    settle: str | None  # for a conflict: the calls that settle it

    @property
    def warning(self) -> bool:
        return self.relation == CONFLICTS

    def note(self) -> str:
        """One line saying what this fact is to the one shown."""
        text = quote(self.fact)
        if self.relation == CONFLICTS:
            age = "newer" if self.newer else "older"
            why = f"; {quoted(self.why)}" if self.why else ""
            return (
                f"⚠️ conflicts with #{self.fact_id} ({age}, {self.date}{why}): {text} — "
                f"settle: {self.settle}"
            )
        if self.relation == SUPERSEDED_BY:
            return f"↪️ updated by #{self.fact_id} ({self.date}): {text}"
        if self.relation == SUPERSEDES and not self.retired:
            return f"↪️ updates #{self.fact_id} ({self.date}; kept, marked)"
        if self.relation == SUPERSEDES:
            return f"↪️ replaces #{self.fact_id} ({self.date}, retired): {text}"
        if self.relation == MERGED_INTO:
            return f"🔀 merged into #{self.fact_id}: {text}"
        return f"🔀 merged from #{self.fact_id} (the same claim; kept as deprecated): {text}"


def _rival(shown: int, link: Linked) -> Rival:
    other = link.fact
    settle = None
    if link.kind == "conflict":
        settle = settle_call(min(shown, other.id), max(shown, other.id))
    return Rival(
        other.id,
        other.fact,
        other.category,
        day_of(other.created_at),
        _RELATION[(link.kind, link.outgoing)],
        other.id > shown,
        bool(other.deprecated),
        link.why,
        settle,
    )


def rivals_of(
    store: Store, facts: Mapping[int, bool], *, history: bool = False
) -> dict[int, list[Rival]]:
    """Each fact's rivals (``facts``: id → deprecated?), newest first: for an active fact the
    active facts it conflicts with; for a deprecated one what replaced it; with ``history``,
    every link."""
    out: dict[int, list[Rival]] = {}
    for link in store.links.of_facts(list(facts)):
        rival = _rival(link.shown, link)
        if rival.relation == CONFLICTS:
            wanted = not link.fact.deprecated and not facts[link.shown]
        elif rival.relation in (SUPERSEDED_BY, SUPERSEDES) and not facts[link.shown]:
            wanted = history or not link.fact.deprecated
        else:
            wanted = history or (facts[link.shown] and rival.relation in REPLACED)
        if wanted:
            out.setdefault(link.shown, []).append(rival)
    return out


def of_facts(facts: Sequence[Fact]) -> dict[int, bool]:
    """The ``facts`` argument of :func:`rivals_of` for these facts."""
    return {f.id: bool(f.deprecated) for f in facts}


@dataclass(frozen=True, slots=True)
class PacketFacts:
    """Facts as the packet shows them: those another active fact updates left out (their
    update is shown, saying so at the end of its line: ``tags``: one line for the pair), and
    the lines under each (``notes``: conflicts, what a deprecated fact became)."""

    facts: list[Fact]
    notes: dict[int, list[str]]
    tags: dict[int, str]


def for_packet(store: Store, facts: Sequence[Fact]) -> PacketFacts:
    """:class:`PacketFacts` of ``facts`` (one statement)."""
    found = rivals_of(store, of_facts(facts))
    stale = {
        i
        for i, rs in found.items()
        if any(r.relation == SUPERSEDED_BY and not r.retired for r in rs)
    }
    notes = {
        i: [r.note() for r in rs if r.relation != SUPERSEDES or r.retired]
        for i, rs in found.items()
        if i not in stale
    }
    tags = {i: _updates(rs) for i, rs in found.items() if i not in stale}
    return PacketFacts(
        [f for f in facts if f.id not in stale],
        {i: ns for i, ns in notes.items() if ns},
        {i: t for i, t in tags.items() if t},
    )


def _updates(rs: Sequence[Rival]) -> str:
    """One note for every active fact this one updates."""
    kept = [r for r in rs if r.relation == SUPERSEDES and not r.retired]
    if not kept:
        return ""
    return "↪️ updates " + ", ".join(f"#{r.fact_id} ({r.date})" for r in kept) + " (kept, marked)"


def with_rivals(store: Store, hits: Sequence[Hit]) -> list[Hit]:
    """Search hits with each fact's rivals (``Hit.rivals``: their fields and note)."""
    shown = {int(h.id): h.deprecated for h in hits if h.kind == "fact"}
    if not shown:
        return list(hits)
    found = rivals_of(store, shown)
    out = []
    for h in hits:
        rs = found.get(int(h.id), []) if h.kind == "fact" else []
        out.append(replace(h, rivals=tuple(_as_dict(r) for r in rs)) if rs else h)
    return out


def _as_dict(r: Rival) -> dict[str, Any]:
    return r.as_dict() | {"note": r.note()}


def quote(text: str) -> str:
    """A fact's text in quotes, as quoted data (:mod:`bigmind.memory.quoting`), cut to
    :data:`PREVIEW` characters."""
    text = quoted(text)
    return f"“{text if len(text) <= PREVIEW else text[: PREVIEW - 1] + '…'}”"
