"""Pure, parameterised ranking pieces for the LoCoMo retrieval benchmark.

Nothing here knows about LoCoMo, the store or the embedding model: every function takes plain
rankings or score maps keyed by any hashable id and returns new ones, so the winner can be ported
as is into the product's ranking code (``bigmind/recall.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TypeVar

import numpy as np

K = TypeVar("K", bound=Hashable)

RRF_K = 60.0


def rrf(
    rankings: Sequence[Sequence[K]],
    weights: Sequence[float] | None = None,
    k: float = RRF_K,
) -> dict[K, float]:
    """Weighted reciprocal-rank fusion: ``score(d) = sum_i w_i / (k + rank_i(d))``, rank from 1."""
    w = list(weights) if weights is not None else [1.0] * len(rankings)
    out: dict[K, float] = {}
    for wi, ranking in zip(w, rankings, strict=True):
        for rank, key in enumerate(ranking, start=1):
            out[key] = out.get(key, 0.0) + wi / (k + rank)
    return out


def ranked(scores: Mapping[K, float]) -> list[K]:
    """Keys best first (ties keep insertion order)."""
    return sorted(scores, key=lambda key: -scores[key])


def max_normalise(scores: Mapping[K, float]) -> dict[K, float]:
    """Scores divided by the best one (BM25 of the best hit becomes 1, the scale disappears)."""
    if not scores:
        return {}
    top = max(scores.values())
    if top <= 0:
        return dict.fromkeys(scores, 0.0)
    return {key: v / top for key, v in scores.items()}


def minmax_normalise(scores: Mapping[K, float], floor: float | None = None) -> dict[K, float]:
    """Scores mapped to [0, 1] by (s - lo) / (hi - lo); ``floor`` overrides ``lo``."""
    if not scores:
        return {}
    hi = max(scores.values())
    lo = min(scores.values()) if floor is None else floor
    if hi - lo <= 1e-12:
        return dict.fromkeys(scores, 1.0)
    return {key: max(0.0, (v - lo) / (hi - lo)) for key, v in scores.items()}


def convex(lexical: Mapping[K, float], semantic: Mapping[K, float], alpha: float) -> dict[K, float]:
    """``alpha * lexical + (1 - alpha) * semantic`` over the union (missing counts as 0)."""
    keys = list(dict.fromkeys([*semantic, *lexical]))
    return {
        key: alpha * lexical.get(key, 0.0) + (1.0 - alpha) * semantic.get(key, 0.0) for key in keys
    }


def neighbour_smooth(
    scores: Mapping[K, float],
    neighbours: Callable[[K], Sequence[K]],
    share: float,
) -> dict[K, float]:
    """Each item gains ``share`` x the best score among its neighbours (adjacent turns).

    Neighbours that are not candidates count as 0; candidates are not added. Uses the scores
    before smoothing, so the order of evaluation does not matter.
    """
    out: dict[K, float] = {}
    for key, v in scores.items():
        best = max((scores.get(n, 0.0) for n in neighbours(key)), default=0.0)
        out[key] = v + share * best
    return out


def group_boost(
    scores: Mapping[K, float],
    group: Callable[[K], Hashable],
    weight: float,
    top: int = 1,
) -> dict[K, float]:
    """Each item gains ``weight`` x its group's score, the sum of the group's ``top`` best item
    scores (a session that holds several good matches is the likely place of the answer)."""
    members: dict[Hashable, list[float]] = {}
    for key, v in scores.items():
        members.setdefault(group(key), []).append(v)
    gscore = {g: sum(sorted(vs, reverse=True)[:top]) for g, vs in members.items()}
    return {key: v + weight * gscore[group(key)] for key, v in scores.items()}


def cosine_top(matrix: np.ndarray, query: np.ndarray, limit: int) -> tuple[list[int], list[float]]:
    """Row indices of the ``limit`` rows of L2-normalised ``matrix`` closest to ``query``."""
    sims = matrix @ query
    n = min(limit, len(sims))
    idx = np.argpartition(-sims, n - 1)[:n]
    idx = idx[np.argsort(-sims[idx])]
    return [int(i) for i in idx], [float(sims[i]) for i in idx]


def zscore_normalise(scores: Mapping[K, float]) -> dict[K, float]:
    """(s - mean) / std over the candidates (std 0: every score becomes 0)."""
    if not scores:
        return {}
    vals = np.fromiter(scores.values(), dtype=np.float64)
    sd = float(vals.std())
    mu = float(vals.mean())
    if sd <= 1e-12:
        return dict.fromkeys(scores, 0.0)
    return {key: (v - mu) / sd for key, v in scores.items()}


def rocchio(query: np.ndarray, feedback: np.ndarray, beta: float) -> np.ndarray:
    """Pseudo-relevance feedback on a unit query vector: ``q + beta * mean(feedback rows)``,
    re-normalised to unit length."""
    if len(feedback) == 0 or beta == 0:
        return query
    q = query + beta * feedback.mean(axis=0)
    n = float(np.linalg.norm(q))
    return (q / n).astype(np.float32) if n > 0 else query


def expansion_terms(
    docs: Sequence[tuple[Sequence[str], float]],
    doc_freq: Mapping[str, int],
    n_docs: int,
    exclude: set[str],
    n: int,
) -> list[str]:
    """RM3-style expansion terms from feedback documents.

    ``docs`` are (terms of a feedback document, its weight, e.g. its fused score). A term's
    weight is ``sum_d weight(d) * tf(t, d) / |d|`` (relevance model 1) times its idf
    ``log(n_docs / df)``, so words every turn shares (speaker names, dates) sink. Terms in
    ``exclude`` (the query's own) are skipped; the ``n`` best are returned, best first.
    """
    acc: dict[str, float] = {}
    for terms, w in docs:
        if not terms:
            continue
        inv = 1.0 / len(terms)
        for t in terms:
            if t in exclude:
                continue
            acc[t] = acc.get(t, 0.0) + w * inv
    for t in acc:
        acc[t] *= float(np.log(max(n_docs, 1) / max(doc_freq.get(t, 1), 1)))
    return [t for t in sorted(acc, key=lambda t: -acc[t]) if acc[t] > 0][:n]


def mmr(
    scores: Mapping[K, float],
    vector: Callable[[K], np.ndarray],
    lam: float,
    top: int,
) -> list[K]:
    """Maximal-marginal-relevance order of the ``top`` best keys: each next pick maximises
    ``score - lam * max cosine to the picks so far``; the rest follow by score."""
    order = ranked(scores)
    head, tail = order[:top], order[top:]
    if lam <= 0 or len(head) < 2:
        return order
    vecs = np.stack([vector(k) for k in head])
    sims = vecs @ vecs.T
    base = np.array([scores[k] for k in head])
    picked: list[int] = []
    left = list(range(len(head)))
    while left:
        if picked:
            pen = sims[np.ix_(left, picked)].max(axis=1)
            vals = base[left] - lam * pen
        else:
            vals = base[left]
        i = left[int(np.argmax(vals))]
        picked.append(i)
        left.remove(i)
    return [head[i] for i in picked] + tail
