"""The measures of ``judgement.py``: hits mapped back to items, R@k and MRR, bootstrap intervals,
the abstain AUROC, paired differences, and the two floors (SQLite FTS5 BM25 and plain
all-MiniLM-L6-v2 cosine) over the same texts.

Definitions follow codemem-dev's README: R@k is 1 when any gold item is in the top k ("any"),
or the share of the gold items in the top k ("all": codemem type e, every LoCoMo question); MRR is
1 / the rank of the first gold item (0 if none in the top 10). Intervals: 2,000 bootstrap
resamples of the questions, seed 7, the 2.5th and 97.5th percentiles of the means.
"""

from __future__ import annotations

import math
import random
import re
import sqlite3
import statistics
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from embedding import Embedder

K = 10
METRICS = ("R@1", "R@5", "R@10", "MRR")
RESAMPLES = 2000
SEED = 7

# codemem-dev's floors.py: the question's terms minus these, OR-ed.
_STOP = """
a about above after again against all am an and any are aren't as at be because been before being below
between both but by can can't cannot could couldn't did didn't do does doesn't doing don't down during each
few for from further had hadn't has hasn't have haven't having he he'd he'll he's her here here's hers herself
him himself his how how's i i'd i'll i'm i've if in into is isn't it it's its itself let's me more most mustn't
my myself no nor not of off on once only or other ought our ours ourselves out over own same shan't she she'd
she'll she's should shouldn't so some such than that that's the their theirs them themselves then there
there's these they they'd they'll they're they've this those through to too under until up very was wasn't we
we'd we'll we're we've were weren't what what's when when's where where's which while who who's whom why why's
with won't would wouldn't you you'd you'll you're you've your yours yourself yourselves
also did does just like get got go going gone make made much many may might must shall will would s t d ll m re ve
kind sort type thing things one ones
"""
STOPWORDS = frozenset(_STOP.split())
_TOKEN = re.compile(r"[^\W_]+", re.UNICODE)
_NONWORD = re.compile(r"[\W_]+", re.UNICODE)
PREFIX = 60  # characters of an item's normalised text that name it


# -- hits back to items ---------------------------------------------------------------------
def normalise(text: str) -> str:
    return _NONWORD.sub(" ", text.lower()).strip()


class TextMap:
    """Which item a hit's text is: the item whose normalised text has a unique prefix of at
    least 60 characters occurring in the hit (the longest match wins where two overlap; ids in
    order of first position)."""

    def __init__(self, items: Mapping[str, str]) -> None:
        norm = {i: normalise(t) for i, t in items.items()}
        self.prefixes: dict[str, str] = {}
        texts = list(norm.values())
        for item, text in norm.items():
            n = min(PREFIX, len(text))
            while True:
                p = text[:n]
                if sum(1 for t in texts if t.startswith(p)) == 1 or n >= len(text):
                    break
                n += 10
            self.prefixes[item] = text[:n]
        for item, text in norm.items():  # every item's own text maps to itself
            found = self.find(text)
            if found[:1] != [item]:
                raise ValueError(f"item {item} does not map to itself: {found}")

    def find(self, hit_text: str) -> list[str]:
        h = normalise(hit_text)
        spans: list[tuple[int, int, str]] = []
        for item, p in self.prefixes.items():
            at = h.find(p)
            if at >= 0:
                spans.append((at, at + len(p), item))
        spans.sort(key=lambda s: (-(s[1] - s[0]), s[0]))
        kept: list[tuple[int, int, str]] = []
        for s in spans:
            if all(s[1] <= k[0] or s[0] >= k[1] for k in kept):
                kept.append(s)
        return [item for _, _, item in sorted(kept)]


# -- one question ------------------------------------------------------------------------------
def score(ranked: Sequence[str], gold: Sequence[str], mode: str) -> dict[str, float]:
    g = set(gold)
    out: dict[str, float] = {}
    for k in (1, 5, 10):
        top = set(ranked[:k])
        out[f"R@{k}"] = len(g & top) / len(g) if mode == "all" else float(bool(g & top))
    first = next((i for i, x in enumerate(ranked[:K], 1) if x in g), None)
    out["MRR"] = 1.0 / first if first else 0.0
    return out


def dedupe(ids: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(ids))


# -- groups of questions ---------------------------------------------------------------------
def boot_ci(vals: Sequence[float], n: int = RESAMPLES, seed: int = SEED) -> tuple[float, float]:
    rng = random.Random(seed)
    means = sorted(statistics.fmean(rng.choices(vals, k=len(vals))) for _ in range(n))
    return (means[int(0.025 * n)], means[int(0.975 * n) - 1])


def aggregate(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Mean and CI of every metric over ``rows`` (each with ``scores``)."""
    out: dict[str, Any] = {"n": len(rows)}
    for m in METRICS:
        vals = [float(r["scores"][m]) for r in rows]
        out[m] = statistics.fmean(vals) if vals else float("nan")
        out[m + "_ci"] = boot_ci(vals) if vals else (float("nan"), float("nan"))
    return out


def auroc(pos: Sequence[float], neg: Sequence[float]) -> float:
    """P(an answerable question's best score > an abstain question's); ties count 1/2."""
    if not pos or not neg:
        return float("nan")
    wins = sum((p > q) + 0.5 * (p == q) for p in pos for q in neg)
    return wins / (len(pos) * len(neg))


def abstain(
    answerable: Sequence[float | None], unanswerable: Sequence[float | None]
) -> dict[str, Any]:
    """Abstain scoring of a system that only ranks: AUROC of the best-hit score, and the share
    of abstain questions below the threshold that keeps 95 % of the answerable ones."""
    low = -math.inf
    pos = [low if s is None else s for s in answerable]
    neg = [low if s is None else s for s in unanswerable]
    if not pos or not neg:
        return {}
    thr = sorted(pos)[int(0.05 * len(pos))]
    return {
        "n": len(neg),
        "auroc": auroc(pos, neg),
        "threshold_keep95": thr,
        "abstain_rate_at_keep95": sum(s < thr for s in neg) / len(neg),
        "no_hit_rate": sum(s == low for s in neg) / len(neg),
    }


def paired(a: Sequence[float], b: Sequence[float]) -> dict[str, Any]:
    """Mean of b - a over paired questions and its bootstrap 95 % CI."""
    diffs = [y - x for x, y in zip(a, b, strict=True)]
    if not diffs:
        return {"n": 0}
    lo, hi = boot_ci(diffs)
    return {"n": len(diffs), "diff": statistics.fmean(diffs), "ci": (lo, hi)}


# -- the floors ------------------------------------------------------------------------------
Ranker = Callable[[str], list[tuple[str, float]]]  # question -> (item id, score), best first


def query_terms(question: str) -> list[str]:
    toks = [t.lower() for t in _TOKEN.findall(question)]
    out = [t for t in dict.fromkeys(toks) if t not in STOPWORDS]
    return out or list(dict.fromkeys(toks))


def fts5_floor(items: Sequence[tuple[str, str]]) -> Ranker:
    """SQLite FTS5 over the texts, porter + unicode61, the question's terms OR-ed, bm25()."""
    con = sqlite3.connect(":memory:")
    con.execute(
        "CREATE VIRTUAL TABLE t USING fts5(item_id UNINDEXED, body, tokenize='porter unicode61')"
    )
    con.executemany("INSERT INTO t VALUES (?, ?)", items)

    def search(question: str) -> list[tuple[str, float]]:
        match = " OR ".join('"{}"'.format(x.replace('"', '""')) for x in query_terms(question))
        if not match:
            return []
        rows = con.execute(
            "SELECT item_id, bm25(t) FROM t WHERE t MATCH ? ORDER BY bm25(t), rowid LIMIT ?",
            (match, K),
        ).fetchall()
        return [(str(r[0]), -float(r[1])) for r in rows]

    return search


class FloatMiniLM(Embedder):
    """bench/embedding.py's all-MiniLM-L6-v2 (the float model of a ``bigmind model export``
    folder: mean pooling, L2 norm, 256 tokens), with its disk cache, on a given folder."""

    def __init__(self, folder: Path) -> None:
        super().__init__("minilm")
        self.folder = folder

    def model(self) -> Any:
        if self._model is None:
            from bigmind.search.embedder import OnnxEmbedder

            self._model = OnnxEmbedder(self.folder, threads=1, batch_size=32, precision="float")
        return self._model


def minilm_floor(
    embedder: Embedder, items: Sequence[tuple[str, str]], questions: Sequence[str]
) -> Ranker:
    """Plain cosine between the question's and each text's vectors, no re-ranking. The
    questions are embedded together up front (cached on disk with the texts)."""
    ids = [i for i, _ in items]
    mat = embedder.encode([t for _, t in items])
    qvecs = embedder.encode(list(questions)) if questions else np.zeros((0, mat.shape[1]))
    qindex = {q: n for n, q in enumerate(questions)}

    def search(question: str) -> list[tuple[str, float]]:
        n = qindex.get(question)
        qv = qvecs[n] if n is not None else embedder.encode_live([question])[0]
        sims = mat @ qv
        order = np.argsort(-sims, kind="stable")[:K]
        return [(ids[j], float(sims[j])) for j in order]

    return search
