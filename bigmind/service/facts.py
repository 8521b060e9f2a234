"""Storing a fact, and saying which facts it replaces: one use case for every surface.

:func:`store_fact` stores the fact, retires the facts the caller says it replaces (in the
same transaction: :meth:`bigmind.storage.store.Store.store_fact`), and, when the embedding
model is ready, finds the active facts close to it in meaning so the agent can judge them
itself (replace, correct or keep both). The vector it computes for that stays in the semantic
index's query cache, where the background embedder and check (:mod:`bigmind.memory.dedup`)
find it: the fact is embedded once, and its vector written off the request.
:func:`replace` names more facts a stored fact replaces, or undoes every replacement;
:func:`change` corrects a fact (its history keeps the old text), moves it between the project
and global, or names what it replaces, as ``memory_update_fact`` and ``PATCH /facts/{id}`` do.
Each write wakes the background embedder.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from bigmind import limits
from bigmind.memory import correct as correcting
from bigmind.memory import dedup, gotchas
from bigmind.memory.correct import Corrected
from bigmind.memory.rivals import Rival
from bigmind.models import Fact, Profile, Record, day_of
from bigmind.runtime import Runtime
from bigmind.search.vectors import fact_embedding_text
from bigmind.storage.fact_history_table import Version
from bigmind.storage.store import SessionRef

__all__ = [
    "Changed",
    "Close",
    "Corrected",
    "Replaced",
    "Rival",
    "StoredFact",
    "Version",
    "change",
    "correct",
    "deprecate",
    "get",
    "history",
    "replace",
    "restore",
    "store_fact",
    "update_profile",
]

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


@dataclass(frozen=True, slots=True)
class Changed:
    """What :func:`change` did: ``fact`` as it is now; ``replaced``: the facts it names as
    replaced (when ``replaces`` was given); ``scoped``: its scope was set; ``corrected``: the
    correction of its text, category, numbers or version (None when none was asked)."""

    fact: Fact
    replaced: Replaced | None
    scoped: bool
    corrected: Corrected | None


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


def change(
    rt: Runtime,
    fact_id: int,
    *,
    fact: str | None = None,
    category: str | None = None,
    confidence: float | None = None,
    importance: int | None = None,
    reason: str | None = None,
    restore_version: int | None = None,
    scope: str | None = None,
    replaces: Ids = None,
) -> Changed:
    """Change fact ``fact_id``, in this order: the facts it ``replaces`` (None: not asked;
    ``[]``: restore them, as :func:`replace`), its ``scope``, then its text, category and
    numbers or an earlier version back (:func:`correct`). Each step commits on its own; a step
    that fails leaves the ones before it done.

    Raises:
        NotFound: no such fact (or version) of the user's.
        InvalidInput: a bad value, a version with new values, or a duplicate.
    """
    edited = any(v is not None for v in (fact, category, confidence, importance))
    done = None if replaces is None else replace(rt, fact_id, replaces)
    if done is not None and not edited and restore_version is None and scope is None:
        return Changed(rt.store.get_fact(fact_id), done, False, None)
    if scope is not None:
        moved = rt.store.set_fact_scope(fact_id, scope)
        if not edited and restore_version is None:
            return Changed(moved, done, True, None)
    r = correct(
        rt,
        fact_id,
        fact=fact,
        category=category,
        confidence=confidence,
        importance=importance,
        reason=reason,
        restore_version=restore_version,
    )
    return Changed(r.fact, done, scope is not None, r)


def correct(
    rt: Runtime,
    fact_id: int,
    *,
    fact: str | None = None,
    category: str | None = None,
    confidence: float | None = None,
    importance: int | None = None,
    reason: str | None = None,
    restore_version: int | None = None,
) -> Corrected:
    """Correct fact ``fact_id`` (the fields given) or put version ``restore_version`` back;
    the version replaced stays in its history with ``reason``
    (:func:`bigmind.memory.correct.update_fact`).

    Raises:
        NotFound: no such fact or version of the user's.
        InvalidInput: a bad value, a version with new values, or a duplicate.
    """
    r = correcting.update_fact(
        rt.store,
        rt.semantic,
        fact_id,
        fact=fact,
        category=category,
        confidence=confidence,
        importance=importance,
        reason=reason,
        restore_version=restore_version,
    )
    if r.changed:
        rt.wrote()
    return r


def get(rt: Runtime, fact_id: int) -> Fact:
    """One of the user's facts, any status.

    Raises:
        NotFound: no such fact of the user's.
    """
    return rt.store.get_fact(fact_id)


def history(rt: Runtime, fact_id: int) -> tuple[Fact, list[Version]]:
    """One of the user's facts (any status) with its earlier versions, oldest first.

    Raises:
        NotFound: no such fact of the user's.
    """
    return correcting.history(rt.store, fact_id)


def deprecate(rt: Runtime, fact_id: int, reason: str) -> Fact:
    """Retire a fact no longer true: kept, out of the packet and of search.

    Raises:
        NotFound: no such fact of the user's.
        InvalidInput: no reason, or the fact is deprecated already.
    """
    f = rt.store.deprecate_fact(fact_id, reason)
    rt.wrote()
    return f


def restore(rt: Runtime, fact_id: int) -> Fact:
    """Undo :func:`deprecate`, unless an identical fact is active again meanwhile.

    Raises:
        NotFound: no such fact of the user's.
        InvalidInput: the fact is active, or a twin of it is.
    """
    f = rt.store.restore_fact(fact_id)
    rt.wrote()
    return f


def update_profile(
    rt: Runtime,
    role: str | None = None,
    preferences: str | None = None,
    pinned_facts: str | Sequence[str] | None = None,
) -> Profile:
    """Update the user's profile (Tier 0, shown at every session start): only the fields
    given; "" clears one, a list of pinned facts replaces the list."""
    return rt.store.update_profile(role, preferences, pinned_facts)
