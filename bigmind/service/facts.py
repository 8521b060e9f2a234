"""Storing a fact, and saying which facts it replaces: one use case for every surface.

:func:`store_fact` stores the fact, retires the facts the caller says it replaces (in the
same transaction: :meth:`bigmind.storage.store.Store.store_fact`), and, when the embedding
model is ready, finds the active facts close to it in meaning so the agent can judge them
itself (replace, correct or keep both). The vector it computes for that stays in the semantic
index's query cache, where the background embedder and check (:mod:`bigmind.memory.dedup`)
find it: the fact is embedded once, and its vector written off the request.
:func:`replace` names more facts a stored fact replaces, or undoes every replacement.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from bigmind import limits
from bigmind.memory import dedup, gotchas
from bigmind.models import Fact, Record, day_of
from bigmind.runtime import Runtime
from bigmind.search.vectors import fact_embedding_text
from bigmind.storage.store import SessionRef

Ids = str | Sequence[str | int] | None  # a list argument of fact ids (limits.fact_ids)


@dataclass(frozen=True, slots=True)
class Close(Record):
    """An active fact close in meaning to the one just stored."""

    id: int
    date: str
    text: str
    similarity: float


@dataclass(frozen=True, slots=True)
class StoredFact:
    """What storing a fact did. ``retired``: the facts it replaces (named by the caller);
    ``close``: active facts close to it (empty when it was already known, or the model is not
    ready: ``looked`` False); ``degraded``: the semantic index's state when the check by
    meaning cannot run (error, stale-model); ``notices``: background news for this user."""

    fact: Fact
    created: bool
    session: SessionRef | None
    files: list[str]
    retired: list[int]
    close: list[Close] = field(default_factory=list)
    looked: bool = False
    degraded: str | None = None
    notices: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Replaced:
    """What :func:`replace` did to the facts ``fact_id`` replaces."""

    fact_id: int
    named: list[int]  # the ids asked for (none: undo)
    retired: list[int]
    restored: list[int]


def store_fact(
    rt: Runtime,
    category: str,
    fact: str,
    confidence: float = 1.0,
    session_id: str | None = None,
    importance: int = 5,
    scope: str | None = None,
    *,
    files: str | Sequence[str] | None = None,
    replaces: Ids = None,
) -> StoredFact:
    """Store one fact for the running call's user (a word-for-word repeat returns the known
    one). ``replaces``: fact ids it replaces, each deprecated "replaced by #N" and linked, in
    the same transaction; an id that is not one of the user's active facts (or the known
    fact itself) refuses the whole call and nothing is stored.

    Raises:
        InvalidInput: a bad argument or a fact that cannot be replaced (nothing stored).
    """
    bound = gotchas.paths(files)
    ids = limits.fact_ids("replaces", replaces, limits.REPLACES)
    store = rt.store
    f, created, ref = store.store_fact(
        category, fact, confidence, session_id, importance, scope, files=bound, replaces=ids
    )
    sem = rt.semantic
    close: list[Close] = []
    looked = False
    if created and sem is not None and sem.ready:
        vec = sem.embed_query(fact_embedding_text(f.category, f.fact))
        if vec is not None:
            looked = True
            close = [
                Close(o.id, day_of(o.created_at), o.fact, round(sim, 3))
                for o, sim in dedup.close_to(store, sem, f, vec)
            ]
    rt.wrote()  # the background embedder checks it by meaning moments later
    st = sem.status() if created and sem is not None and not looked else None
    degraded = st.state if st is not None and st.state in ("error", "stale-model") else None
    return StoredFact(f, created, ref, bound, ids, close, looked, degraded, rt.notices())


def replace(rt: Runtime, fact_id: int, replaces: Ids) -> Replaced:
    """Fact ``fact_id`` replaces the facts ``replaces`` too (retired and linked, as when it
    was stored); an empty list restores every fact it replaced (undo). One transaction.

    Raises:
        NotFound: no such fact of the user's.
        InvalidInput: an id that cannot be replaced, or a restore that would duplicate an
            active fact (nothing changed).
    """
    ids = limits.fact_ids("replaces", replaces, limits.REPLACES)
    retired, restored = rt.store.replace(fact_id, ids)
    if retired or restored:
        rt.wrote()
    return Replaced(fact_id, ids, retired, restored)
