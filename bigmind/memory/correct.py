"""Correcting a fact in place, with its earlier versions kept and restorable.

A correction rewrites the fact (text, category, confidence, importance) under the same id, so
everything pointing at it still does, and files the version it replaces in ``fact_history``
with the reason. The content hash and the full-text entry follow the new text; its vector is
deleted in the same transaction (re-made at once when the model is ready, else by the
background embedder), so search never matches the old words. A correction that would make the
fact say what another active fact already says is refused: that one is the fact to keep.
Restoring version N is a correction too: the current text is filed and N's copied back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bigmind import limits
from bigmind.errors import InvalidInput, NotFound
from bigmind.limits import (
    check_category,
    check_importance,
    check_unit,
    optional_stored,
    stored_text,
)
from bigmind.memory.claims import DUPLICATE, judge
from bigmind.memory.dedup import candidates, keep_vector
from bigmind.models import Fact, content_hash, now_ts
from bigmind.search.semantic import Semantic
from bigmind.search.vectors import VectorStore, fact_embedding_text
from bigmind.storage.fact_history_table import FactHistory, Version
from bigmind.storage.store import Store


@dataclass(frozen=True, slots=True)
class Corrected:
    """A fact after :func:`update_fact`: what changed, and the version number it replaced."""

    fact: Fact
    changed: list[str]  # the fields that changed; [] when the values were already those
    replaced: int  # the version filed in the history (0 when nothing changed)
    restored: int | None = None  # the version copied back, for a restore


def history(store: Store, fact_id: int) -> tuple[Fact, list[Version]]:
    """A fact (any status) with its earlier versions, oldest first."""
    fact = store.get_fact(fact_id)
    return fact, FactHistory(store.db, store.uid).of_fact(fact.id)


def update_fact(
    store: Store,
    semantic: Semantic | None,
    fact_id: int,
    *,
    fact: str | None = None,
    category: str | None = None,
    confidence: float | None = None,
    importance: int | None = None,
    reason: str | None = None,
    restore_version: int | None = None,
) -> Corrected:
    """Correct fact ``fact_id`` (the fields given), or put its version ``restore_version``
    back; the version replaced is kept in its history with ``reason``."""
    current = store.get_fact(fact_id)
    why = optional_stored("reason", reason, limits.SHORT)
    if restore_version is not None:
        if any(v is not None for v in (fact, category, confidence, importance)):
            raise InvalidInput("Give restore_version alone, or new values: not both.")
        old = FactHistory(store.db, store.uid).get(current.id, restore_version)
        if old is None:
            raise NotFound(
                f"Fact #{current.id} has no version {restore_version}.",
                tool=f"Call memory_update_fact({current.id}) to list its versions.",
                web="Its card on the Facts page lists its versions.",
            )
        fact, category = old.fact, old.category
        confidence = current.confidence if old.confidence is None else old.confidence
        importance = current.importance if old.importance is None else old.importance
        why = why or f"restored version {restore_version}"
    text = current.fact if fact is None else stored_text("fact", fact, limits.FACT)
    cat = current.category if category is None else check_category(category)
    conf = current.confidence if confidence is None else check_unit("confidence", confidence)
    imp = current.importance if importance is None else check_importance(importance)
    new = {"fact": text, "category": cat, "confidence": conf, "importance": imp}
    changed = [k for k, v in new.items() if v != getattr(current, k)]
    if not changed:
        return Corrected(current, [], 0, None)
    digest = content_hash(text)
    reworded = "fact" in changed or "category" in changed
    vec = _check_paraphrase(store, semantic, current, cat, text) if reworded else None
    ts = now_ts()
    with store.db.transaction() as tx:
        now = store.facts.get(current.id, tx)
        if now is None:  # forgotten meanwhile
            raise NotFound(f"No fact #{current.id} in your memory.")
        twin = store.facts.other_with_hash(tx, digest, now.id) if not now.deprecated else None
        if twin is not None:
            raise InvalidInput(
                f"Fact #{twin} already says this. Keep that one: deprecate or forget"
                f" #{now.id} instead of making it a duplicate. Nothing changed."
            )
        version = FactHistory(store.db, store.uid).file(tx, now, why, ts)
        store.facts.update(
            tx,
            now.id,
            category=cat,
            fact=text,
            confidence=conf,
            importance=imp,
            digest=digest,
            ts=ts,
        )
        if reworded:  # the vector of the old words goes; re-made below or in the background
            VectorStore.forget(tx, "fact", [now.id])
    if vec is not None and semantic is not None:
        keep_vector(store, semantic, current.id, cat, text, vec)
    return Corrected(store.get_fact(current.id), changed, version, restore_version)


def _check_paraphrase(
    store: Store, semantic: Semantic | None, current: Fact, category: str, text: str
) -> Any | None:
    """With the model ready: refuse a correction that makes the fact another active fact in
    other words (the paraphrase check of memory_store_fact). Returns the new text's vector."""
    if semantic is None:
        return None
    vec = semantic.embed_query(fact_embedding_text(category, text))
    if vec is None or current.deprecated:
        return vec
    for other, sim in candidates(store, semantic, vec, exclude=current.id):
        if judge(other.fact, text, sim).kind == DUPLICATE:
            raise InvalidInput(
                f"Fact #{other.id} already says this in other words (similarity"
                f" {sim:.2f}): {other.fact!r}. Keep that one: deprecate or forget"
                f" #{current.id} instead of making it a duplicate. Nothing changed."
            )
    return vec
