"""Write hygiene for facts: no duplicates, and a warning when a new fact may contradict one.

The normalised-text hash (in :meth:`Store.store_fact`) catches exact repeats. When the
model is ready, the new fact is also embedded at once (one short text, a few ms)
and compared with the user's active facts: at cosine similarity ≥
:data:`DUPLICATE_AT` it is the same fact in other words and the existing id is
returned; between :data:`CONFLICT_AT` and that, it is stored and the close facts
are named as possible conflicts, so the agent can deprecate the outdated one.
Without a model only the hash check runs (the result says so).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from bigmind import redact
from bigmind.models import Fact, content_hash
from bigmind.search.semantic import Semantic
from bigmind.search.vectors import Pending, fact_embedding_text
from bigmind.storage.store import Store

DUPLICATE_AT = 0.92
CONFLICT_AT = 0.75
NEIGHBOURS = 5


@dataclass(slots=True)
class StoredFact:
    fact: Fact
    created: bool
    similar_to: tuple[int, float] | None = None  # (fact id, similarity) of a paraphrase
    conflicts: list[tuple[Fact, float]] = field(default_factory=list)
    semantic_checked: bool = False


def store_fact(
    store: Store,
    semantic: Semantic | None,
    category: str,
    text: str,
    confidence: float = 1.0,
    session_id: str | None = None,
    importance: int = 5,
    scope: str | None = None,
) -> StoredFact:
    vec = None
    near: list[tuple[Fact, float]] = []
    clean = redact.redact(text.strip()).text  # what will be stored (the store reports it)
    if semantic is not None:
        vec = semantic.embed_query(fact_embedding_text(category.strip().lower(), clean))
    if vec is not None and semantic is not None:
        found = semantic.vectors.knn("fact", store.uid, vec, NEIGHBOURS)
        near = _active(store, {int(n.item_id): n.similarity for n in found})
        if near and near[0][1] >= DUPLICATE_AT and same_claims(near[0][0].fact, clean):
            best, sim = near[0]
            return StoredFact(best, False, (best.id, sim), [], True)
    fact, created, _ref = store.store_fact(
        category, text, confidence, session_id, importance, scope
    )
    if not created:
        return StoredFact(fact, False, None, [], vec is not None)
    if vec is not None and semantic is not None and semantic.ready:
        body = fact_embedding_text(fact.category, fact.fact)
        item = Pending("fact", str(fact.id), store.uid, body, content_hash(body))
        model = semantic.status().model or ""
        semantic.vectors.write([item], vec.reshape(1, -1), model)
    conflicts = [(f, s) for f, s in near if s >= CONFLICT_AT and f.id != fact.id]
    return StoredFact(fact, True, None, conflicts, vec is not None)


_NEGATIONS = frozenset(
    [
        "not",
        "no",
        "never",
        "none",
        "nothing",
        "nobody",
        "without",
        "cannot",
        "can't",
        "don't",
        "doesn't",
        "didn't",
        "isn't",
        "aren't",
        "wasn't",
        "weren't",
        "won't",
        "shouldn't",
        "mustn't",
        "avoid",
        "stop",
        "stopped",
    ]
)
_WORD = re.compile(r"[a-z0-9][a-z0-9.'’]*")


def same_claims(a: str, b: str) -> bool:
    """Whether two similar texts also agree on negation and on every number they state.

    Embeddings barely separate "we deploy on Fridays" from "we never deploy on Fridays"
    (cosine 0.91) or Python 3.11 from 3.12; such pairs are conflicts, not duplicates.
    """

    def cues(text: str) -> tuple[frozenset[str], frozenset[str]]:
        words = [w.rstrip(".").replace("’", "'") for w in _WORD.findall(text.lower())]
        nums = frozenset(w for w in words if any(ch.isdigit() for ch in w))
        return frozenset(w for w in words if w in _NEGATIONS or w.endswith("n't")), nums

    return cues(a) == cues(b)


def _active(store: Store, sims: dict[int, float]) -> list[tuple[Fact, float]]:
    """The user's active facts among these neighbours, most similar first."""
    ranked = sorted(sims, key=lambda i: -sims[i])
    return [(f, sims[f.id]) for f in store.facts_by_ids(ranked)]
