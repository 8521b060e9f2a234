"""Recalling memory for a question: one use case for every surface.

:func:`recall` ranks the user's memories (:class:`bigmind.search.ranking.Recall`: keyword and
meaning evidence fused, what is current first, weak matches marked), shows each fact with its
rivals and updates (:mod:`bigmind.memory.rivals`), adds the failed approaches the question
comes close to and the facts bound to the files it names, and counts what was handed over as
used (in memory; written off the read path). ``memory_recall`` and the other search tools,
``GET /api/v1/recall`` and ``/facts/search``, and ``bigmind recall`` / ``bigmind search`` all
call it, so the order, the markers and the weak-match label are the same everywhere.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from bigmind import limits
from bigmind.memory import attempts, gotchas, rivals
from bigmind.models import Hit
from bigmind.runtime import Runtime
from bigmind.search.ranking import Recall

Kinds = Sequence[str] | str | None


@dataclass(frozen=True, slots=True)
class Recollection:
    """What a recall found. ``nothing_relevant``: no hit, or even the best is weak (say so
    before listing the closest); ``note``: why meaning did not take part, or "";
    ``notices``: the user's background news, when asked for."""

    query: str
    hits: list[Hit]
    note: str
    nothing_relevant: bool
    failed_attempts: list[attempts.Echo] = field(default_factory=list)
    gotchas: list[gotchas.Bound] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)


def recall(
    rt: Runtime,
    query: str,
    limit: int = 10,
    kinds: Kinds = None,
    *,
    mode: str = "hybrid",
    include_deprecated: bool = False,
    scope: str = "all",
    ranker: Recall | None = None,
    extras: bool = True,
    files: bool = True,
    count_use: bool = True,
    notices: bool = False,
) -> Recollection:
    """The best ``limit`` memories for ``query`` (see the module docstring). ``ranker``: a
    :class:`Recall` of the caller's own (a one-shot command loads the model in its thread);
    ``extras``: also the failed approaches and (``files``) the facts bound to named files;
    ``count_use``: count the hits as handed to an agent (a person at the command line is
    not one); ``notices``: also collect the user's notices (told once, to an agent)."""
    found = (ranker or rt.recall()).search(
        query, limit, kinds, mode=mode, include_deprecated=include_deprecated, scope=scope
    )
    if count_use:
        rt.used(query, found.hits)
    hits = rivals.with_rivals(rt.store, found.hits)
    tried: list[attempts.Echo] = []
    bound: list[gotchas.Bound] = []
    if extras:
        tried = attempts.warnings(rt.store, query, rt.semantic)
        if files and _asks_facts(kinds):
            bound = gotchas.for_files(rt.store, gotchas.named_in(query))
    told = rt.notices() if notices else []
    return Recollection(query, hits, found.note, found.nothing_relevant, tried, bound, told)


def _asks_facts(kinds: Kinds) -> bool:
    return not kinds or "fact" in {k.strip() for k in limits.items(kinds)}
