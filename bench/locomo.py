"""Retrieval-only LoCoMo benchmark (no LLM): do the evidence turns come back for each question?

Every turn of a conversation is stored as one chunk through the product's ``Store`` (one database
per conversation, one store session per LoCoMo session), then each question of categories 1-4 is
asked and the ranked turns are scored against the question's evidence ``dia_id``s.

    .venv/bin/python bench/locomo.py --method hybrid [--conversations 0,1] [--limit-questions N]
    .venv/bin/python bench/locomo.py --method fts,dense,hybrid,best --json /tmp/locomo.json
    .venv/bin/python bench/locomo.py --method best --set alpha=0.4 --set smooth=0.2

The data (CC BY-NC) is read from ``--data`` at run time and never copied into the repository.
Embeddings are cached under ``bench/.cache/`` (git-ignored) so reruns are fast.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import os
import platform
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from embedding import Embedder, embedder_for  # noqa: E402
from locomo_methods import (  # noqa: E402
    convex,
    cosine_top,
    expansion_terms,
    group_boost,
    max_normalise,
    minmax_normalise,
    mmr,
    neighbour_smooth,
    ranked,
    rocchio,
    rrf,
    zscore_normalise,
)

from bigmind.search import keyword  # noqa: E402
from bigmind.search.terms import stem_prefix, terms_of  # noqa: E402
from bigmind.storage.connect import connect  # noqa: E402
from bigmind.storage.store import Store  # noqa: E402

DEFAULT_DATA = ROOT.parent / "shared" / "bench-data" / "locomo" / "locomo-dev.json"
CACHE = HERE / ".cache"
KS = (1, 5, 10)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
DEPTH = 50  # ranked list length scored (MRR is MRR@50)
_EVIDENCE = re.compile(r"D:?(\d+):(\d+)")


# -- data ------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Turn:
    dia_id: str
    session: int
    position: int  # index within its session
    speaker: str
    text: str
    caption: str | None
    date: str


@dataclass(frozen=True, slots=True)
class Question:
    text: str
    answer: str
    evidence: tuple[str, ...]
    category: int


@dataclass(slots=True)
class Conversation:
    index: int
    sample_id: str
    turns: list[Turn]
    questions: list[Question]
    dropped_evidence: list[str] = field(default_factory=list)
    skipped_questions: int = 0


def normalise_evidence(raw: Iterable[str], known: set[str]) -> tuple[list[str], list[str]]:
    """Evidence ids as ``D<session>:<turn>`` (fixing 'D:11:26' and 'D8:6; D9:17'), unknown ones
    returned apart."""
    good: list[str] = []
    bad: list[str] = []
    for item in raw:
        found = [f"D{a}:{b}" for a, b in _EVIDENCE.findall(item)]
        if not found:
            bad.append(item)
        for ev in found:
            if ev in known and ev not in good:
                good.append(ev)
            elif ev not in known:
                bad.append(item if len(found) == 1 else ev)
    return good, bad


def load(path: Path, which: Sequence[int] | None) -> list[Conversation]:
    data = json.loads(path.read_text(encoding="utf-8"))
    out: list[Conversation] = []
    for ci, item in enumerate(data):
        if which is not None and ci not in which:
            continue
        conv = item["conversation"]
        numbers = sorted(
            int(k.split("_")[1]) for k in conv if re.fullmatch(r"session_\d+", k) and conv[k]
        )
        turns: list[Turn] = []
        for n in numbers:
            date = str(conv.get(f"session_{n}_date_time", ""))
            for pos, t in enumerate(conv[f"session_{n}"]):
                turns.append(
                    Turn(t["dia_id"], n, pos, t["speaker"], t["text"], t.get("blip_caption"), date)
                )
        known = {t.dia_id for t in turns}
        c = Conversation(ci, item.get("sample_id", str(ci)), turns, [])
        for q in item["qa"]:
            cat = int(q["category"])
            if cat not in CATEGORIES:
                continue
            good, bad = normalise_evidence(q.get("evidence", []), known)
            c.dropped_evidence.extend(bad)
            if not good:
                c.skipped_questions += 1
                continue
            c.questions.append(Question(q["question"], str(q.get("answer", "")), tuple(good), cat))
        out.append(c)
    return out


def session_of(dia_id: str) -> str:
    return dia_id.split(":")[0]


# -- chunk text ------------------------------------------------------------------------------
def turn_text(t: Turn, fmt: str) -> str:
    """A turn as stored text. fmt: 'dated' = '[date] speaker: text [image: caption]',
    'plain' = without the date, 'bare' = text only (+ caption)."""
    body = f"{t.speaker}: {t.text}" if fmt != "bare" else t.text
    if fmt == "dated":
        body = f"[{t.date}] {body}"
    if t.caption:
        body += f" [image: {t.caption}]"
    return body


def dense_text(turns: list[Turn], i: int, fmt: str, context: int) -> str:
    """Text embedded for turn i: the turn, preceded by up to ``context`` earlier turns of the
    same session (their speaker and text, no caption)."""
    t = turns[i]
    parts: list[str] = []
    for j in range(max(0, i - context), i):
        p = turns[j]
        if p.session == t.session:
            parts.append(f"{p.speaker}: {p.text}")
    parts.append(turn_text(t, fmt))
    return "\n".join(parts)


# -- per-conversation context ----------------------------------------------------------------
@dataclass(slots=True)
class Indexed:
    conv: Conversation
    store: Store
    backend: Any
    chunk_dia: dict[int, str]
    pos: dict[str, int]  # dia_id -> index in conv.turns
    index_seconds: float
    embedder: Embedder
    fmt: str
    _turn_vecs: dict[tuple[int, str, str], np.ndarray] = field(default_factory=dict)
    _query_vecs: dict[tuple[str, str], np.ndarray] = field(default_factory=dict)
    _qidx: dict[str, int] = field(default_factory=dict)

    def turn_vectors(self, context: int, fmt: str = "", model: str = "minilm") -> np.ndarray:
        key = (context, fmt or self.fmt, model)
        if key not in self._turn_vecs:
            texts = [dense_text(self.conv.turns, i, key[1], context) for i in range(len(self.pos))]
            self._turn_vecs[key] = embedder_for(model).encode(texts)
        return self._turn_vecs[key]

    def query_vector(self, question: str, prefix: str = "", model: str = "minilm") -> np.ndarray:
        key = (prefix, model)
        if key not in self._query_vecs:
            qs = [prefix + q.text for q in self.conv.questions]
            self._query_vecs[key] = embedder_for(model).encode(qs)
            self._qidx = {q.text: i for i, q in enumerate(self.conv.questions)}
        i = self._qidx.get(question)
        if i is None:
            return np.asarray(embedder_for(model).encode_live([prefix + question])[0])
        return np.asarray(self._query_vecs[key][i])

    def neighbours(self, dia_id: str) -> list[str]:
        i = self.pos[dia_id]
        turns = self.conv.turns
        out = []
        for j in (i - 1, i + 1):
            if 0 <= j < len(turns) and turns[j].session == turns[i].session:
                out.append(turns[j].dia_id)
        return out


def build_index(conv: Conversation, workdir: Path, fmt: str, embedder: Embedder) -> Indexed:
    t0 = time.perf_counter()
    backend = connect(workdir / f"memory-{conv.index}.db")
    store = Store(backend, "bench")
    chunk_dia: dict[int, str] = {}
    current: int | None = None
    sid = ""
    for t in conv.turns:
        if t.session != current:
            if current is not None:
                store.end_session(sid, f"LoCoMo session {current}", None, None, None)
            sid = store.start_session("locomo").session.id
            current = t.session
        chunk, _ = store.append_chunk(turn_text(t, fmt), session_id=sid, role="user")
        chunk_dia[chunk.id] = t.dia_id
    if current is not None:
        store.end_session(sid, f"LoCoMo session {current}", None, None, None)
    seconds = time.perf_counter() - t0
    pos = {t.dia_id: i for i, t in enumerate(conv.turns)}
    return Indexed(conv, store, backend, chunk_dia, pos, seconds, embedder, fmt)


# -- methods ---------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Spec:
    """A ranking method. ``fusion``: 'none' (lexical or dense alone), 'rrf' or 'convex'."""

    lexical: bool = True
    dense: bool = False
    fusion: str = "none"
    fetch: int = 50  # candidates taken from each retriever
    context: int = 0  # earlier turns of the same session embedded with a turn
    rrf_k: float = 60.0
    w_lex: float = 1.0
    w_dense: float = 1.0
    alpha: float = 0.5  # convex: weight of max-normalised BM25
    cos_floor: float = -1.0  # convex: cosine min-max'd by (c - floor) / (max - floor); -1 = raw
    smooth: float = 0.0  # neighbour share
    session: float = 0.0  # weight of the session's score (sum of its session_top best turns)
    session_top: int = 2
    query_prefix: str = ""
    dense_format: str = ""  # turn text format for embeddings ('' = the stored chunk format)
    also_context: int = -1  # >= 0: a 2nd vector per turn with this context; cosine = max of both
    model: str = "minilm"  # embedding model (MODELS): minilm, mpnet
    norm: str = "max"  # convex: 'max' = BM25/max + raw cosine; 'zscore' = both z-scored
    # pseudo-relevance feedback, a second pass after the full first ranking:
    prf_k: int = 0  # Rocchio: q' = q + prf_beta * mean of the top prf_k turns' vectors
    prf_beta: float = 0.0
    prf_context: int = 0  # which turn vectors feed the centroid (context 0 = turn alone)
    rm3_k: int = 0  # RM3: expand the BM25 query with rm3_terms terms of the top rm3_k turns
    rm3_terms: int = 0
    rm3_weight: float = 0.5  # lex = (1 - w) * BM25(original)/max + w * BM25(expanded)/max
    mmr: float = 0.0  # MMR penalty on the max cosine to turns already placed (0 = off)
    mmr_top: int = 20
    coord: float = 0.0  # BM25 x (share of the query's terms the chunk has) ** coord (0 = off)
    lex_context: int = 0  # > 0: a 2nd keyword index of each turn with this many earlier turns;
    # lexical = max of the two BM25/max (needs a 2nd FTS table in the product)


METHODS: dict[str, Spec] = {
    # baselines
    "fts": Spec(),
    "dense": Spec(lexical=False, dense=True),
    "dense_ctx2": Spec(lexical=False, dense=True, context=2),
    "hybrid": Spec(dense=True, fusion="rrf"),
    # the steps to "best", each adding one thing to the previous one
    "convex": Spec(dense=True, fusion="convex"),
    "convex_smooth": Spec(dense=True, fusion="convex", smooth=0.2),
    "convex_ctx2_smooth": Spec(dense=True, fusion="convex", smooth=0.2, context=2),
    "convex_ctx2_smooth_sess": Spec(
        dense=True, fusion="convex", smooth=0.2, context=2, session=0.2
    ),
    "best": Spec(dense=True, fusion="convex", smooth=0.2, context=2, also_context=0, session=0.2),
}
_BEST = METHODS["best"]
METHODS.update(
    {
        # tries after "best" (see bench/README.md, LoCoMo method log)
        "mpnet_dense": Spec(lexical=False, dense=True, model="mpnet"),
        "mpnet_best": dataclasses.replace(_BEST, model="mpnet"),
        "best_zscore": dataclasses.replace(_BEST, norm="zscore"),
        "best_rocchio": dataclasses.replace(_BEST, prf_k=3, prf_beta=0.5),
        "best_rm3": dataclasses.replace(_BEST, rm3_k=3, rm3_terms=10),
        "best_mmr": dataclasses.replace(_BEST, mmr=0.1),
        "best_coord": dataclasses.replace(_BEST, coord=1.0),
        "best_idfnorm": dataclasses.replace(_BEST, norm="idf"),
        "best_lexctx1": dataclasses.replace(_BEST, lex_context=1),
        "fts_coord": Spec(coord=1.0),
    }
)


def lexical_hits(ix: Indexed, question: str, limit: int) -> dict[str, float]:
    """BM25 scores (higher is better) of the product's keyword search, best first."""
    hits = keyword.hits(ix.store, "chunk", question, limit=limit)
    return {ix.chunk_dia[h.id]: h.score for h in hits if h.id in ix.chunk_dia}


def dense_hits(ix: Indexed, qv: np.ndarray, spec: Spec) -> dict[str, float]:
    mat = ix.turn_vectors(spec.context, spec.dense_format, spec.model)
    if spec.also_context >= 0:
        other = ix.turn_vectors(spec.also_context, spec.dense_format, spec.model)
        sims_all = np.maximum(mat @ qv, other @ qv)
        n = min(spec.fetch, len(sims_all))
        top = np.argpartition(-sims_all, n - 1)[:n]
        top = top[np.argsort(-sims_all[top])]
        return {ix.conv.turns[i].dia_id: float(sims_all[i]) for i in top}
    idx, sims = cosine_top(mat, qv, spec.fetch)
    return {ix.conv.turns[i].dia_id: s for i, s in zip(idx, sims, strict=True)}


def fuse(ix: Indexed, lex: dict[str, float], den: dict[str, float], spec: Spec) -> dict[str, float]:
    """Fusion, then neighbour smoothing, then the session boost."""
    if spec.fusion == "rrf":
        scores = rrf([list(lex), list(den)], [spec.w_lex, spec.w_dense], spec.rrf_k)
    elif spec.fusion == "convex":
        if spec.norm == "zscore":
            scores = convex(zscore_normalise(lex), zscore_normalise(den), spec.alpha)
        else:
            cos = den if spec.cos_floor <= -1 else minmax_normalise(den, spec.cos_floor)
            scores = convex(lex if spec.norm == "idf" else max_normalise(lex), cos, spec.alpha)
    else:
        scores = dict(lex) if spec.lexical else dict(den)
    if spec.smooth:
        scores = neighbour_smooth(scores, ix.neighbours, spec.smooth)
    if spec.session:
        scores = group_boost(scores, session_of, spec.session, spec.session_top)
    return scores


@functools.cache
def _vocab(ix_id: int, texts: tuple[str, ...]) -> tuple[list[list[str]], dict[str, int]]:
    docs = [terms_of(t) for t in texts]
    df: dict[str, int] = {}
    for d in docs:
        for t in set(d):
            df[t] = df.get(t, 0) + 1
    return docs, df


_CTX_STORES: dict[tuple[int, int], tuple[Store, dict[int, str]]] = {}


def context_lexical_hits(ix: Indexed, question: str, limit: int, context: int) -> dict[str, float]:
    """BM25 over a second store whose chunk for a turn is the turn preceded by ``context``
    earlier turns of its session (``dense_text``), built on first use beside the main one."""
    key = (id(ix), context)
    if key not in _CTX_STORES:
        backend = connect(Path(f"{ix.backend.location}.ctx{context}.db"))
        store = Store(backend, "bench")
        sid = store.start_session("locomo").session.id
        ids: dict[int, str] = {}
        for i, t in enumerate(ix.conv.turns):
            chunk, _ = store.append_chunk(
                dense_text(ix.conv.turns, i, ix.fmt, context), session_id=sid, role="user"
            )
            ids[chunk.id] = t.dia_id
        _CTX_STORES[key] = (store, ids)
    store, ids = _CTX_STORES[key]
    return {
        ids[h.id]: h.score
        for h in keyword.hits(store, "chunk", question, limit=limit)
        if h.id in ids
    }


def idf_normalise(ix: Indexed, question: str, lex: dict[str, float]) -> dict[str, float]:
    """BM25 divided by the query's own weight, the sum of its terms' idf (FTS5's formula, document
    frequencies from the store's FTS index): about 1 for a chunk with every term once, so the
    lexical score stays low when only a minority of the query matches (unlike BM25 / max)."""
    n = len(ix.conv.turns)
    total = 0.0
    for t in terms_of(question):
        df = keyword.text_search(ix.store.db)._doc_freq("conversation_chunks_fts", t)
        if df:
            total += max(1e-6, float(np.log((n - df + 0.5) / (df + 0.5))))
    if total <= 0:
        return lex
    return {d: v / total for d, v in lex.items()}


def coordinate(ix: Indexed, question: str, lex: dict[str, float], power: float) -> dict[str, float]:
    """Lucene-style coordination: a chunk's BM25 times the share of the query's terms it holds
    (a term counts when a chunk word starts with its crude stem), to the given power."""
    qterms = [stem_prefix(t) for t in terms_of(question)]
    if not qterms:
        return lex
    texts = tuple(turn_text(t, ix.fmt) for t in ix.conv.turns)
    docs, _ = _vocab(id(ix), texts)
    out = {}
    for d, v in lex.items():
        words = docs[ix.pos[d]]
        have = sum(1 for q in qterms if any(w.startswith(q) for w in words))
        out[d] = v * (have / len(qterms)) ** power
    return out


def rank(ix: Indexed, question: str, spec: Spec) -> list[str]:
    lex = lexical_hits(ix, question, spec.fetch) if spec.lexical else {}
    if spec.lex_context and lex:
        lex2 = context_lexical_hits(ix, question, spec.fetch, spec.lex_context)
        a, b = max_normalise(lex), max_normalise(lex2)
        lex = {d: max(a.get(d, 0.0), b.get(d, 0.0)) for d in dict.fromkeys([*a, *b])}
    if spec.coord and lex:
        lex = coordinate(ix, question, lex, spec.coord)
    if spec.norm == "idf" and lex:
        lex = idf_normalise(ix, question, lex)
    qv = ix.query_vector(question, spec.query_prefix, spec.model) if spec.dense else None
    den = dense_hits(ix, qv, spec) if qv is not None else {}
    scores = fuse(ix, lex, den, spec)
    if (spec.prf_k and spec.prf_beta and qv is not None) or (spec.rm3_k and spec.rm3_terms):
        top = ranked(scores)
        if spec.prf_k and spec.prf_beta and qv is not None:
            fb = ix.turn_vectors(spec.prf_context, spec.dense_format, spec.model)
            rows = [ix.pos[d] for d in top[: spec.prf_k]]
            den = dense_hits(ix, rocchio(qv, fb[rows], spec.prf_beta), spec)
        if spec.rm3_k and spec.rm3_terms and spec.lexical:
            texts = tuple(turn_text(t, ix.fmt) for t in ix.conv.turns)
            docs, df = _vocab(id(ix), texts)
            fb_docs = [(docs[ix.pos[d]], scores[d]) for d in top[: spec.rm3_k]]
            extra = expansion_terms(fb_docs, df, len(docs), set(terms_of(question)), spec.rm3_terms)
            if extra:
                lex2 = lexical_hits(ix, question + " " + " ".join(extra), spec.fetch)
                lex = convex(max_normalise(lex2), max_normalise(lex), spec.rm3_weight)
                lex = max_normalise(lex)
        scores = fuse(ix, lex, den, spec)
    if spec.mmr:
        vecs = ix.turn_vectors(0, spec.dense_format, spec.model)
        return mmr(scores, lambda d: vecs[ix.pos[d]], spec.mmr, spec.mmr_top)[:DEPTH]
    return ranked(scores)[:DEPTH]


def rank_for(spec: Spec, ix: Indexed, question: str) -> list[str]:
    return rank(ix, question, spec)


MODEL_DIR = ROOT / ".cache" / "bigmind-tests" / "minilm-onnx-0.1.0-v2"  # made by the tests


def product_semantic(ix: Indexed) -> Any:
    """The product's semantic index over the stored chunks: the ONNX model, sqlite-vec tables,
    every chunk embedded in the foreground (what the server's background thread does)."""
    from bigmind.config import Settings
    from bigmind.search.semantic import Semantic

    model = Path(os.environ.get("BIGMIND_BENCH_MODEL", MODEL_DIR))
    if not model.is_dir():
        raise SystemExit(f"no ONNX model at {model}: run the tests or `bigmind model export`")
    settings = Settings(db_path=Path(ix.backend.location), user="bench", embed_model=str(model))
    sem = Semantic(ix.backend, settings)
    sem.load_now()
    sem.embed_backlog()
    return sem


def product_ranker() -> Callable[[Indexed, str], list[str]] | None:
    from bigmind.search.ranking import Recall

    semantic_cache: dict[str, Any] = {}

    def run(ix: Indexed, question: str) -> list[str]:
        key = ix.backend.location  # not id(ix): ids are reused once a conversation is done
        if key not in semantic_cache:
            semantic_cache[key] = product_semantic(ix)
        found = Recall(ix.store, semantic_cache[key]).search(question, DEPTH, ["chunk"])
        return [ix.chunk_dia[int(h.id)] for h in found.hits if int(h.id) in ix.chunk_dia]

    return run


# -- metrics ---------------------------------------------------------------------------------
def dedupe(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(items))


def score_one(ranking: list[str], gold: Sequence[str]) -> dict[str, float]:
    out: dict[str, float] = {}
    gold_set = set(gold)
    for k in KS:
        top = set(ranking[:k])
        out[f"R@{k}"] = len(top & gold_set) / len(gold_set)
        out[f"hit@{k}"] = float(bool(top & gold_set))
    first = next((i for i, d in enumerate(ranking, 1) if d in gold_set), None)
    out["MRR"] = 1.0 / first if first else 0.0
    return out


def score_question(ranking: list[str], q: Question) -> dict[str, float]:
    turn = score_one(ranking, q.evidence)
    sess = score_one(dedupe(session_of(d) for d in ranking), dedupe(map(session_of, q.evidence)))
    out = dict(turn)
    out.update({f"S-{k}": v for k, v in sess.items()})
    return out


COLUMNS = ["R@1", "R@5", "R@10", "hit@5", "MRR", "S-R@1", "S-R@5", "S-R@10", "S-MRR"]


def aggregate(rows: list[tuple[int, dict[str, float]]]) -> dict[str, dict[str, float]]:
    groups: dict[str, list[dict[str, float]]] = {"overall": [r for _, r in rows]}
    for cat, name in CATEGORIES.items():
        groups[f"{cat} {name}"] = [r for c, r in rows if c == cat]
    out: dict[str, dict[str, float]] = {}
    for g, items in groups.items():
        if not items:
            continue
        out[g] = {key: statistics.fmean(r[key] for r in items) for key in items[0]}
        out[g]["n"] = len(items)
    return out


def table(name: str, agg: dict[str, dict[str, float]]) -> str:
    lines = [
        f"**{name}** (turn-level R@k / hit@5 / MRR, then session-level S-*)",
        "",
        "| group | n | " + " | ".join(COLUMNS) + " |",
        "|---|---:|" + "---:|" * len(COLUMNS),
    ]
    for g, m in agg.items():
        cells = " | ".join(f"{m[c]:.3f}" for c in COLUMNS)
        lines.append(f"| {g} | {int(m['n'])} | {cells} |")
    return "\n".join(lines)


def summary_line(name: str, agg: dict[str, dict[str, float]], p50: float) -> str:
    m = agg["overall"]
    return (
        f"| {name} | {m['R@1']:.3f} | {m['R@5']:.3f} | {m['R@10']:.3f} | {m['hit@5']:.3f}"
        f" | {m['MRR']:.3f} | {m['S-R@5']:.3f} | {m['S-MRR']:.3f} | {p50:.2f} |"
    )


# -- main ------------------------------------------------------------------------------------
def parse_set(items: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    types = {f.name: f.type for f in dataclasses.fields(Spec)}
    for item in items:
        key, _, value = item.partition("=")
        if key not in types:
            raise SystemExit(f"--set: unknown parameter {key!r}; known: {', '.join(types)}")
        kind = str(types[key])
        if "bool" in kind:
            out[key] = value.lower() in ("1", "true", "yes")
        elif "int" in kind:
            out[key] = int(value)
        elif "float" in kind:
            out[key] = float(value)
        else:
            out[key] = value
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--data", type=Path, default=DEFAULT_DATA)
    ap.add_argument(
        "--method",
        default="fts",
        help=f"comma list of: {', '.join(METHODS)}, product, all",
    )
    ap.add_argument("--conversations", default=None, help="e.g. 0,1 (default: all)")
    ap.add_argument("--limit-questions", type=int, default=None, help="per conversation")
    ap.add_argument("--chunk-format", default="dated", choices=["dated", "plain", "bare"])
    ap.add_argument("--set", action="append", default=[], help="override a Spec field: key=value")
    ap.add_argument("--per-category", action="store_true", help="print every method's table")
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument(
        "--no-context-vector",
        action="store_true",
        help="product: one vector per chunk (no chunk_context vector embedded or searched)",
    )
    args = ap.parse_args(argv)
    if args.no_context_vector:  # what the second vector buys (bench/README, "Embedding model")
        from bigmind.search import vectors

        del vectors.SOURCES["chunk_context"]
        del vectors.EXTRA_VECTORS["chunk"]

    names = list(METHODS) if args.method == "all" else args.method.split(",")
    overrides = parse_set(args.set)
    runners: dict[str, Callable[[Indexed, str], list[str]]] = {}
    specs: dict[str, Spec] = {}
    for name in names:
        if name == "product":
            prod = product_ranker()
            if prod is None:
                print("method 'product': bigmind.recall.recall is not available yet")
                return 2
            runners[name] = prod
            continue
        if name not in METHODS:
            print(f"unknown method {name!r}; known: {', '.join(METHODS)}, product, all")
            return 2
        spec = dataclasses.replace(METHODS[name], **overrides)
        specs[name] = spec
        runners[name] = functools.partial(rank_for, spec)

    which = [int(x) for x in args.conversations.split(",")] if args.conversations else None
    if not args.data.exists():
        print(f"no data at {args.data} (see --data)")
        return 2
    convs = load(args.data, which)
    if args.limit_questions:
        for c in convs:
            c.questions = c.questions[: args.limit_questions]

    embedder = embedder_for("minilm")
    rows: dict[str, list[tuple[int, dict[str, float]]]] = {n: [] for n in runners}
    times: dict[str, list[float]] = {n: [] for n in runners}
    index_seconds = 0.0
    embed_seconds = 0.0
    with tempfile.TemporaryDirectory(prefix="locomo-") as tmp:
        for conv in convs:
            ix = build_index(conv, Path(tmp), args.chunk_format, embedder)
            index_seconds += ix.index_seconds
            t0 = time.perf_counter()
            for spec in specs.values():  # embed (or load from cache) outside the timed queries
                if spec.dense:
                    ix.turn_vectors(spec.context, spec.dense_format, spec.model)
                    if spec.also_context >= 0:
                        ix.turn_vectors(spec.also_context, spec.dense_format, spec.model)
                    ix.query_vector(conv.questions[0].text, spec.query_prefix, spec.model)
            embed_seconds += time.perf_counter() - t0
            for name, run in runners.items():
                for q in conv.questions:
                    t1 = time.perf_counter()
                    ranking = run(ix, q.text)
                    times[name].append(time.perf_counter() - t1)
                    rows[name].append((q.category, score_question(ranking, q)))
            ix.backend.close()

    live_query_ms: float | None = None
    if any(s.dense for s in specs.values()):
        sample = [q.text for c in convs for q in c.questions][:40]
        embedder.encode_live(sample[:2])  # warm up
        lat = []
        for text in sample:
            t0 = time.perf_counter()
            embedder.encode_live([text])
            lat.append(time.perf_counter() - t0)
        live_query_ms = statistics.median(lat) * 1000

    n_turns = sum(len(c.turns) for c in convs)
    n_q = sum(len(c.questions) for c in convs)
    print(
        f"LoCoMo retrieval: {len(convs)} conversations, {n_turns} turns, {n_q} questions (cats 1-4),"
        f" chunk format '{args.chunk_format}'"
    )
    dropped = [(c.sample_id, e) for c in convs for e in c.dropped_evidence]
    skipped = sum(c.skipped_questions for c in convs)
    if dropped or skipped:
        print(
            f"evidence ids not in their conversation (dropped): {dropped}; questions without "
            f"usable evidence (skipped): {skipped}"
        )
    print(
        f"index (store.append_chunk): {index_seconds:.2f} s total, "
        f"{1000 * index_seconds / max(n_turns, 1):.2f} ms/turn; embeddings (cache or model): "
        f"{embed_seconds:.1f} s"
        + (f"; one query embedding p50 {live_query_ms:.1f} ms" if live_query_ms else "")
    )
    print()
    print("| method | R@1 | R@5 | R@10 | hit@5 | MRR | S-R@5 | S-MRR | query p50 ms |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    results: dict[str, Any] = {}
    aggs = {}
    for name in runners:
        agg = aggregate(rows[name])
        aggs[name] = agg
        p50 = statistics.median(times[name]) * 1000 if times[name] else 0.0
        print(summary_line(name, agg, p50))
        results[name] = {
            "spec": dataclasses.asdict(specs[name]) if name in specs else None,
            "metrics": agg,
            "query_p50_ms": p50,
            "query_p95_ms": float(np.percentile(times[name], 95) * 1000) if times[name] else 0,
        }
    if args.per_category or len(runners) == 1:
        for name, agg in aggs.items():
            print()
            print(table(name, agg))
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "date": time.strftime("%Y-%m-%d"),
                    "machine": f"{platform.machine()} {os.cpu_count()} cpu, {platform.python_version()}",
                    "conversations": [c.sample_id for c in convs],
                    "turns": n_turns,
                    "questions": n_q,
                    "chunk_format": args.chunk_format,
                    "index_seconds": index_seconds,
                    "embed_seconds": embed_seconds,
                    "query_embedding_p50_ms": live_query_ms,
                    "dropped_evidence": dropped,
                    "skipped_questions": skipped,
                    "methods": results,
                },
                indent=2,
            )
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
