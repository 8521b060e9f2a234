"""Latency of hybrid (keyword + vector) chunk recall at 10k, 100k and 1M stored chunks.

    python bench/semantic_latency.py                                  # 10k, 100k, 1M (≈ 30 min, 2 cores)
    python bench/semantic_latency.py --sizes 10000 --json /tmp/s.json # one size

For each size N a database is seeded with ``seed.py`` (N chunks, 1,000 facts, N/100
sessions), then every chunk gets its two vectors — kind ``chunk`` (the text) and kind
``chunk_context`` (the chunk after the two previous chunks of its session) — written
through ``VectorStore.write``: the same ``embeddings`` rows and sqlite-vec tables the
product builds, and recall searches both for kind ``chunk``.

Embedding 2 × a million texts on this machine would take days, so only a real sample
(``--sample`` chunks per size, both texts) is embedded with the ONNX model; every other
vector is *synthetic*: a ``chunk`` vector is one real vector (from the sample or from the
throughput run's texts) plus up to two others at weights 0–0.5 plus Gaussian noise,
normalised; its ``chunk_context`` vector is that vector plus a weight ``w`` of another such
mix, normalised, with ``w`` chosen so that the mean cosine between a chunk's two vectors
matches the real sample's. Latency does not depend on the values; the agreement of the
in-memory KNN with exact KNN does a little (see the report's notes).

Per size, in the order the server does things: ``Semantic.load_now()``; one *cold*
``VectorStore.knn`` and one cold hybrid search before any partition is loaded (a fresh
``VectorStore``: partitions up to 50k vectors load on demand, bigger ones are searched by
exact sqlite-vec KNN until warmed up); ``warm([user, ""])`` timed, with the in-memory size
(rows × 444 bytes) and the process RSS growth; then, on ``--queries`` natural-language
questions from ``textgen.py``: the query embedding alone (ONNX, 1 thread, as the server runs
it), ``VectorStore.knn`` alone (k = 50, what recall fetches) and its parts,
``Recall.search(q, 10, ["chunk"], mode="hybrid")`` end-to-end with the query
vector already cached, and its parts (keyword list, KNN for chunk + chunk_context, loading
rows, the rest = fusion, conversation context, scoring and excerpts). Recall@10 of ``knn``
against exact float KNN in sqlite-vec is measured on ``--recall-queries`` queries.
Bulk-import throughput (texts/s) is measured once with 1 and 2 ONNX threads.
"""

from __future__ import annotations

import argparse
import functools
import gc
import json
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from annbench import start_once
from run import CpuMeter, environment, summary_ms
from seed import seed
from smoke import progress
from textgen import TextGen

from bigmind.config import Settings
from bigmind.search.embedder import FORMAT_VERSION, OnnxEmbedder
from bigmind.search.ranking import Recall
from bigmind.search.semantic import Semantic
from bigmind.search.terms import terms_of
from bigmind.search.vecindex import CANDIDATES, FULL_SCAN_MAX
from bigmind.search.vectors import (
    EXTRA_VECTORS,
    LOAD_ON_DEMAND_MAX,
    SOURCES,
    Pending,
    VectorStore,
)
from bigmind.storage.connect import connect
from bigmind.storage.store import Store

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_MODEL = ROOT / ".cache" / "bigmind-tests" / f"minilm-onnx-0.1.0-v{FORMAT_VERSION}"
USER = "bench"
GOALS = {100_000: 20.0, 1_000_000: 100.0}  # hybrid search p95, ms
FETCH = 50  # what Recall asks each list for (RankParams.fetch)
WRITE_BATCH = 2_000
BYTES_PER_VECTOR = 444  # in memory: int8 codes 384 + scale 4 + sign bits 48 + rowid 8
KNN_KINDS = ("chunk", *EXTRA_VECTORS["chunk"])


# -- vectors -----------------------------------------------------------------------------------
def normalise(v: np.ndarray) -> np.ndarray:
    out: np.ndarray = (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)
    return out


def synthetic(real: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
    """``n`` vectors that look like real embeddings: a sampled real vector, up to two
    others mixed in at weights 0–0.5, Gaussian noise (σ = 0.02 per dimension), normalised."""
    m, dim = real.shape
    idx = rng.integers(0, m, size=(n, 3))
    w = np.column_stack(
        [np.ones(n), rng.uniform(0, 0.5, n), rng.uniform(0, 0.5, n) * (rng.random(n) < 0.5)]
    ).astype(np.float32)
    v = (real[idx] * w[:, :, None]).sum(axis=1)
    v += rng.normal(0, 0.02, size=(n, dim)).astype(np.float32)
    return normalise(v)


def context_of(
    base: np.ndarray, real: np.ndarray, w: float, rng: np.random.Generator
) -> np.ndarray:
    """Synthetic context vectors: each base vector plus ``w`` × another synthetic mix."""
    return normalise(base + w * synthetic(real, len(base), rng))


def fit_context_weight(real: np.ndarray, target: float, rng: np.random.Generator) -> float:
    """The ``w`` whose synthetic chunk↔context cosine is closest to the real sample's."""
    base = synthetic(real, 1000, rng)
    best, best_err = 0.0, 9.0
    for w in np.linspace(0.0, 6.0, 121):
        cos = float(np.mean(np.sum(base * context_of(base, real, float(w), rng), axis=1)))
        if abs(cos - target) < best_err:
            best, best_err = float(w), abs(cos - target)
    return best


def sample_texts(db: Any, kind: str, ids: Sequence[int]) -> list[Pending]:
    out: list[Pending] = []
    for i in range(0, len(ids), 500):
        part = [int(x) for x in ids[i : i + 500]]
        rows = db.query(
            f"{SOURCES[kind].select} WHERE b.id IN ({','.join('?' * len(part))}) ORDER BY b.id",
            part,
        )
        out += [VectorStore._pending(kind, r) for r in rows]
    return out


def fill_vectors(
    db: Any,
    vs: VectorStore,
    emb: OnnxEmbedder,
    sample: int,
    basis: np.ndarray | None,
    rng: np.random.Generator,
) -> dict[str, Any]:
    """Embed a real sample (both texts), write real + synthetic vectors of both kinds for
    every chunk; return timings.

    Synthetic vectors are mixes of the sample's real chunk vectors and ``basis`` (real
    embeddings of other generated chunk texts, from the throughput run)."""
    row = db.query("SELECT min(id) AS a, max(id) AS b FROM conversation_chunks")[0]
    lo, hi = int(row["a"]), int(row["b"])
    ids = sorted(
        int(x)
        for x in rng.choice(np.arange(lo, hi + 1), size=min(sample, hi - lo + 1), replace=False)
    )
    real_chunk = sample_texts(db, "chunk", ids)
    real_ctx = sample_texts(db, "chunk_context", ids)
    t = time.perf_counter()
    chunk_vecs = emb.embed([p.text for p in real_chunk])
    ctx_vecs = emb.embed([p.text for p in real_ctx])
    embed_s = time.perf_counter() - t
    real_by_id: dict[str, dict[str, np.ndarray]] = {}
    for kind, items, vecs in (
        ("chunk", real_chunk, chunk_vecs),
        ("chunk_context", real_ctx, ctx_vecs),
    ):
        real_by_id[kind] = {p.item_id: vecs[i] for i, p in enumerate(items)}
    pair_cos = [
        float(real_by_id["chunk"][k] @ v)
        for k, v in real_by_id["chunk_context"].items()
        if k in real_by_id["chunk"]
    ]
    real_pair_cos = float(np.mean(pair_cos))
    real = chunk_vecs if basis is None else np.vstack([chunk_vecs, basis])
    w = fit_context_weight(real, real_pair_cos, rng)
    texts = len(real_chunk) + len(real_ctx)
    progress(
        f"embedded {texts:,} real texts in {embed_s:.1f} s ({texts / embed_s:.0f}/s);"
        f" real chunk↔context cos {real_pair_cos:.3f}, context weight {w:.2f}"
    )
    written = 0
    write_s = 0.0
    synth_cos: list[float] = []
    synth_pair: list[float] = []
    while True:
        todo = vs.pending("chunk", WRITE_BATCH)
        if not todo:
            break
        vecs = synthetic(real, len(todo), rng)
        for i, p in enumerate(todo):
            if p.item_id in real_by_id["chunk"]:
                vecs[i] = real_by_id["chunk"][p.item_id]
        if len(synth_cos) < 2000:  # how close synthetic vectors sit to their nearest real one
            sims = vecs[:50] @ real.T
            synth_cos += [float(np.sort(r)[-2] if r.max() > 0.9999 else r.max()) for r in sims]
        t = time.perf_counter()
        written += vs.write(todo, vecs, emb.model_id)
        write_s += time.perf_counter() - t
        # The same chunks' context vectors (both backlogs run in id order).
        base = {p.item_id: vecs[i] for i, p in enumerate(todo)}
        ctx = vs.pending("chunk_context", WRITE_BATCH)
        known = np.array(
            [base[p.item_id] if p.item_id in base else synthetic(real, 1, rng)[0] for p in ctx]
        )
        cvecs = context_of(known, real, w, rng)
        for i, p in enumerate(ctx):
            if p.item_id in real_by_id["chunk_context"]:
                cvecs[i] = real_by_id["chunk_context"][p.item_id]
        if len(synth_pair) < 2000:
            synth_pair += [float(x) for x in np.sum(known[:100] * cvecs[:100], axis=1)]
        t = time.perf_counter()
        written += vs.write(ctx, cvecs, emb.model_id)
        write_s += time.perf_counter() - t
        if written % 200_000 < 2 * WRITE_BATCH:
            progress(f"vectors written: {written:,} ({written / write_s:,.0f}/s)")
    return {
        "real_sample_chunks": len(real_chunk),
        "real_texts_embedded": texts,
        "real_embed_s": round(embed_s, 1),
        "real_embed_per_s": round(texts / embed_s, 1),
        "synthetic_basis": len(real),
        "vectors": written,
        "write_s": round(write_s, 1),
        "write_per_s": round(written / write_s) if write_s else None,
        "synthetic_nearest_real_cos_mean": round(float(np.mean(synth_cos)), 3),
        "real_chunk_context_cos_mean": round(real_pair_cos, 3),
        "synthetic_chunk_context_cos_mean": round(float(np.mean(synth_pair)), 3),
        "context_weight": round(w, 3),
    }


# -- database and process size -----------------------------------------------------------------
def sizes_mb(db: Any) -> dict[str, float]:
    db.query("PRAGMA wal_checkpoint(TRUNCATE)")
    rows = db.query("SELECT name, sum(pgsize) AS b FROM dbstat GROUP BY name")
    total = sum(int(r["b"]) for r in rows)
    vec = sum(
        int(r["b"])
        for r in rows
        if str(r["name"]).startswith("vec_") or str(r["name"]).startswith("embeddings")
        or str(r["name"]).startswith("sqlite_autoindex_embeddings")
    )  # fmt: skip
    return {
        "file_mb": round(db.file_size() / 1e6, 1),
        "pages_mb": round(total / 1e6, 1),
        "vectors_mb": round(vec / 1e6, 1),
        "vectors_share": round(vec / total, 3) if total else 0.0,
    }


def rss_mb() -> dict[str, float]:
    """The process's resident set now and its peak (VmHWM), in MB."""
    out = {}
    with open("/proc/self/status") as fh:
        for ln in fh:
            if ln.startswith(("VmRSS:", "VmHWM:")):
                out[ln.split(":")[0]] = int(ln.split()[1]) / 1024
    return {"rss_mb": round(out.get("VmRSS", 0.0), 1), "peak_mb": round(out.get("VmHWM", 0.0), 1)}


def reset_peak_rss() -> None:
    try:
        with open("/proc/self/clear_refs", "w") as fh:
            fh.write("5")
    except OSError:
        pass


# -- timing ------------------------------------------------------------------------------------
def time_each(fn: Callable[[Any], Any], args: Sequence[Any]) -> list[float]:
    out = []
    gc.collect()
    gc.disable()
    try:
        for a in args:
            t = time.perf_counter()
            fn(a)
            out.append(time.perf_counter() - t)
    finally:
        gc.enable()
    return out


def breakdown(recall: Recall, sem: Semantic, queries: Sequence[str]) -> dict[str, Any]:
    """Time the steps of one hybrid chunk search as ``Recall.search`` runs them, each step being
    the product's own method (the two ``knn`` rows are timed once more on their own)."""
    parts: dict[str, list[float]] = {
        "keyword": [],
        "knn": [],
        "knn_chunk": [],
        "knn_chunk_context": [],
        "rank": [],
        "hits": [],
    }
    uid = recall.store.uid
    fetch = max(recall.params.fetch, 10)
    gc.collect()
    gc.disable()
    try:
        for q in queries:
            qvec = sem.embed_query(q)
            cands: dict[tuple[str, str], Any] = {}
            t0 = time.perf_counter()
            recall._keyword_candidates(["chunk"], q, fetch, cands)
            t1 = time.perf_counter()
            sem.vectors.knn("chunk", uid, qvec, fetch)
            ta = time.perf_counter()
            sem.vectors.knn("chunk_context", uid, qvec, fetch)
            tb = time.perf_counter()
            recall._vector_candidates(["chunk"], qvec, fetch, cands)
            t2 = time.perf_counter()
            top = recall._rank(list(cands.values()), q, 10, False)
            t3 = time.perf_counter()
            terms = terms_of(q)
            [recall._hit(c, terms) for c in top]
            t4 = time.perf_counter()
            for k, v in (
                ("keyword", t1 - t0),
                ("knn", t2 - tb),
                ("knn_chunk", ta - t1),
                ("knn_chunk_context", tb - ta),
                ("rank", t3 - t2),
                ("hits", t4 - t3),
            ):
                parts[k].append(v)
    finally:
        gc.enable()
    return {k: summary_ms(v) for k, v in parts.items()}


def knn_parts(vs: VectorStore, owner: str, qvecs: Sequence[np.ndarray]) -> dict[str, Any]:
    """``VectorStore.knn("chunk", k=50)`` taken apart: the in-memory ``Partition.search`` and
    the rowid → item id mapping query (reads the loaded partition directly: profiling only)."""
    part = vs._parts.get(("chunk", owner))
    if part is None:
        return {}
    n = len(part)
    search_s, mapping_s = [], []
    gc.collect()
    gc.disable()
    try:
        for q in qvecs:
            t = time.perf_counter()
            found = part.search(q, FETCH)
            t5 = time.perf_counter()
            marks = ",".join("?" * len(found))
            vs.db.query(
                f"SELECT id, item_id FROM embeddings WHERE id IN ({marks})", [r for r, _ in found]
            )
            t6 = time.perf_counter()
            search_s.append(t5 - t)
            mapping_s.append(t6 - t5)
    finally:
        gc.enable()
    return {
        "rows": n,
        "candidates": min(n, max(CANDIDATES, n // 100, 50 * FETCH)) if n > FULL_SCAN_MAX else n,
        "partition_mb": round(part.nbytes / 1e6, 1),
        "partition_search": summary_ms(search_s),
        "map_to_items": summary_ms(mapping_s),
    }


def exact_ids(db: Any, owner: str, v: np.ndarray, k: int) -> list[str]:
    """Exact float KNN in sqlite-vec (``vec_chunk``), as item ids, best first."""
    rows = db.query(
        "SELECT rowid, distance FROM vec_chunk WHERE embedding MATCH ? AND k = ? AND user_id = ?",
        (v.astype("float32").tobytes(), k, owner),
    )
    rids = [int(r["rowid"]) for r in rows]
    mapped = db.query(
        f"SELECT id, item_id FROM embeddings WHERE id IN ({','.join('?' * len(rids))})", rids
    )
    by = {int(m["id"]): str(m["item_id"]) for m in mapped}
    return [by[r] for r in rids]


def agreement(
    db: Any,
    vs: VectorStore,
    owner: str,
    qvecs: Sequence[np.ndarray],
    truths: list[list[str]],
) -> dict[str, Any]:
    """Recall@10 of ``VectorStore.knn("chunk")`` against exact float KNN in sqlite-vec (the
    exact answers are kept in ``truths`` for the next call)."""
    r10, r10_in50, top1, exact_s = [], [], [], []
    for i, v in enumerate(qvecs):
        t = time.perf_counter()
        if i == len(truths):
            truths.append(exact_ids(db, owner, v, 10))
        truth = truths[i]
        exact_s.append(time.perf_counter() - t)
        got10 = [n.item_id for n in vs.knn("chunk", owner, v, 10)]
        got50 = {n.item_id for n in vs.knn("chunk", owner, v, FETCH)}
        r10.append(len(set(truth) & set(got10)) / len(truth))
        r10_in50.append(len(set(truth) & got50) / len(truth))
        top1.append(float(bool(got10) and got10[0] == truth[0]))
    return {
        "queries": len(qvecs),
        "recall_at_10_k10": round(float(np.mean(r10)), 3),
        "recall_at_10_k10_min": round(float(np.min(r10)), 2),
        "recall_at_10_k50": round(float(np.mean(r10_in50)), 3),
        "top1_same": round(float(np.mean(top1)), 3),
        "exact_knn_k10": summary_ms(exact_s),
    }


def cold(
    sem: Semantic, recall: Recall, owner: str, query: str, qvec: np.ndarray, n: int
) -> dict[str, Any]:
    """What a search costs before ``warm()``: a fresh VectorStore swapped in for the calls."""
    main_vs = sem.vectors
    sem.vectors = VectorStore(main_vs.db)
    try:
        t = time.perf_counter()
        sem.vectors.knn("chunk", owner, qvec, FETCH)
        first = time.perf_counter() - t
        t = time.perf_counter()
        sem.vectors.knn("chunk", owner, qvec, FETCH)
        second = time.perf_counter() - t
        t = time.perf_counter()
        recall.search(query, 10, ["chunk"], mode="hybrid")
        hybrid = time.perf_counter() - t
    finally:
        sem.vectors = main_vs
    return {
        "path": "loaded on demand" if n <= LOAD_ON_DEMAND_MAX else "exact sqlite-vec KNN",
        "knn_first_ms": round(first * 1000, 1),
        "knn_second_ms": round(second * 1000, 1),
        "hybrid_ms": round(hybrid * 1000, 1),
    }


def one_size(
    n: int,
    args: argparse.Namespace,
    queries: list[str],
    basis: np.ndarray | None,
    rng: np.random.Generator,
) -> dict[str, Any]:
    cached = args.cache / f"semlat-{n}.json" if args.cache else None
    path = (args.cache or args.workdir) / f"semlat-{n}.db"
    out: dict[str, Any] = {"n": n, "queries": len(queries)}
    if cached is not None and cached.exists() and path.exists():
        out.update(json.loads(cached.read_text()))  # seeded and filled by an earlier run
        progress(f"reusing {path}")
    elif args.seeded and Path(args.seeded.format(n=n)).exists():
        for suffix in ("-wal", "-shm"):  # of an unfinished earlier copy
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        shutil.copyfile(args.seeded.format(n=n), path)  # seeded by another bench (same seed)
        out.update({"seed_s": None, "seed_chunks_per_s": None, "seed_file_mb": None})
    else:
        progress(f"seeding {n:,} chunks")
        st = seed(path, facts=1000, chunks=n, sessions=max(10, n // 100), user=USER, overwrite=True)
        out["seed_s"], out["seed_chunks_per_s"] = st.seconds, round(n / st.seconds)
        out["seed_file_mb"] = st.file_mb
        progress(f"seeded in {st.seconds:.1f} s ({st.file_mb} MB)")
    db = connect(path)
    try:
        store = Store(db, USER)
        # ann_min_vectors=0: today's path (in-memory mirror, sqlite-vec) for the "before" rows
        settings = Settings(db_path=path, user=USER, embed_model=str(args.model), ann_min_vectors=0)
        sem = Semantic(db, settings)
        t = time.perf_counter()
        qemb = sem.load_now(adopt="vectors" not in out)  # adopts the tables on a new database
        out["model_load_s"] = round(time.perf_counter() - t, 2)
        if "vectors" not in out:
            bulk = OnnxEmbedder(args.model, threads=2, batch_size=32)
            out["vectors"] = fill_vectors(db, sem.vectors, bulk, args.sample, basis, rng)
            del bulk
            out["size"] = sizes_mb(db)
            if cached is not None:
                keep = ("seed_s", "seed_chunks_per_s", "seed_file_mb", "vectors", "size")
                cached.write_text(json.dumps({k: out[k] for k in keep}))
        recall = Recall(store, sem)
        qvecs: list[np.ndarray] = []
        for q in queries:  # fills the query cache
            qvec = sem.embed_query(q)
            assert qvec is not None, "the model is loaded: every query gets a vector"
            qvecs.append(qvec)
        out["cold"] = cold(sem, recall, store.uid, queries[-1], qvecs[-1], n)
        progress(f"cold: {out['cold']}")
        gc.collect()
        reset_peak_rss()
        before = rss_mb()
        t = time.perf_counter()
        loaded = sem.vectors.warm([store.uid, ""])  # what the server does after loading
        warm_s = time.perf_counter() - t
        after = rss_mb()
        out["warm"] = {
            "s": round(warm_s, 2),
            "vectors": loaded,
            "array_mb": round(loaded * BYTES_PER_VECTOR / 1e6, 1),
            "rss_growth_mb": round(after["rss_mb"] - before["rss_mb"], 1),
            "peak_growth_mb": round(after["peak_mb"] - before["rss_mb"], 1),
            "rss_after_mb": after["rss_mb"],
        }
        progress(f"warm: {out['warm']}")
        for q in queries[:10]:  # warm-up: page cache, statement cache
            recall.search(q, 10, ["chunk"], mode="hybrid")
        qemb.embed(queries[:5])  # the server's embedder (embed_threads = 1)
        out["query_embed"] = summary_ms(time_each(lambda q: qemb.embed([q]), queries))
        vs, uid = sem.vectors, store.uid
        out["knn_k50"] = summary_ms(time_each(lambda v: vs.knn("chunk", uid, v, FETCH), qvecs))
        out["knn_parts"] = knn_parts(vs, uid, qvecs)
        out["hybrid"] = summary_ms(
            time_each(lambda q: recall.search(q, 10, ["chunk"], mode="hybrid"), queries)
        )
        progress(f"hybrid p50/p95: {out['hybrid']['p50_ms']} / {out['hybrid']['p95_ms']} ms")
        out["keyword_only"] = summary_ms(
            time_each(lambda q: recall.search(q, 10, ["chunk"], mode="keyword"), queries)
        )
        out["parts"] = breakdown(recall, sem, queries)
        progress("agreement with exact KNN")
        truths: list[list[str]] = []
        out["agreement"] = agreement(db, vs, uid, qvecs[: args.recall_queries], truths)
        goal = GOALS.get(n)
        out["goal_p95_ms"] = goal
        out["pass"] = None if goal is None else out["hybrid"]["p95_ms"] <= goal
        if args.ann_min:
            sem.vectors.discard(KNN_KINDS)  # the "before" arrays go (RSS)
            gc.collect()
            out["ann"] = ann_figures(args, path, db, sem, recall, queries, qvecs, truths)
    finally:
        db.close()
        if not args.keep and not args.cache:
            for suffix in ("", "-wal", "-shm"):
                Path(str(path) + suffix).unlink(missing_ok=True)
    return out


def ann_figures(
    args: argparse.Namespace,
    path: Path,
    db: Any,
    sem: Semantic,
    recall: Recall,
    queries: list[str],
    qvecs: list[np.ndarray],
    truths: list[list[str]],
) -> dict[str, Any]:
    """The persisted approximate index (search/ann.py): built if missing, then a fresh
    process's start to its first answer, latency in this process, agreement, sizes."""
    folder = Path(str(path) + ".vec")
    uid = recall.store.uid
    vs = VectorStore(db, folder, args.ann_min)
    out: dict[str, Any] = {"ann_min": args.ann_min, "build_s": {}}
    for kind in KNN_KINDS:
        if vs._ann_index(kind, uid, vs.freshness()) is None:
            progress(f"building the {kind} index ({args.build_threads} threads)")
            t = time.perf_counter()
            vs.build_index(kind, uid, threads=args.build_threads)
            out["build_s"][kind] = round(time.perf_counter() - t, 1)
            progress(f"built in {out['build_s'][kind]} s")
    out["files_mb"] = round(vs.ann.nbytes() / 1e6, 1) if vs.ann else 0.0
    if not folder.is_dir():  # every partition is smaller than --ann-min: nothing to time
        out["skipped"] = f"no partition reaches --ann-min {args.ann_min}"
        return out
    qfile = folder / "bench-queries.npy"
    np.save(qfile, np.stack(qvecs[:51]))
    starts = [start_once(path, folder, uid, qfile, args.ann_min) for _ in range(args.starts)]
    qfile.unlink()
    out["starts"] = starts
    out["searchable_s"] = sorted(x["searchable_s"] for x in starts)[len(starts) // 2]
    progress(f"searchable after start: {[x['searchable_s'] for x in starts]} s")
    main_vs, sem.vectors = sem.vectors, vs
    try:
        for q in queries[:10]:
            recall.search(q, 10, ["chunk"], mode="hybrid")
        out["knn_k50"] = summary_ms(time_each(lambda v: vs.knn("chunk", uid, v, FETCH), qvecs))
        out["hybrid"] = summary_ms(
            time_each(lambda q: recall.search(q, 10, ["chunk"], mode="hybrid"), queries)
        )
        out["parts"] = breakdown(recall, sem, queries)
        out["agreement"] = agreement(db, vs, uid, qvecs[: args.recall_queries], truths)
    finally:
        sem.vectors = main_vs
    progress(f"ann hybrid p50/p95: {out['hybrid']['p50_ms']} / {out['hybrid']['p95_ms']} ms")
    return out


def throughput(model: Path, texts: list[str]) -> tuple[dict[str, Any], np.ndarray]:
    out: dict[str, Any] = {}
    vecs = np.zeros((0, 384), dtype=np.float32)
    for threads in (1, 2):
        emb = OnnxEmbedder(model, threads=threads, batch_size=32)
        emb.embed(texts[:64])  # warm-up
        t = time.perf_counter()
        vecs = emb.embed(texts)
        s = time.perf_counter() - t
        out[f"threads_{threads}"] = {
            "texts": len(texts),
            "s": round(s, 2),
            "per_s": round(len(texts) / s, 1),
        }
        progress(f"embedding throughput, {threads} thread(s): {len(texts) / s:.0f} texts/s")
    return out, vecs


# -- report ------------------------------------------------------------------------------------
def render(r: dict[str, Any]) -> str:
    def pp(d: dict[str, Any], p99: bool = True) -> str:
        s = f"{d['p50_ms']:.1f} / {d['p95_ms']:.1f}"
        return s + (f" / {d['p99_ms']:.1f}" if p99 else "")

    def kp(key: str) -> Callable[[dict[str, Any]], str]:
        return lambda x: pp(x["knn_parts"][key], False) if key in x["knn_parts"] else "—"

    def goal(x: dict[str, Any]) -> str:
        if x["goal_p95_ms"] is None:
            return "—"
        return f"≤ {x['goal_p95_ms']:.0f} ms **{'PASS' if x['pass'] else 'MISS'}**"

    runs = r["sizes"]
    head = "| | " + " | ".join(f"{x['n']:,} chunks" for x in runs) + " |"
    rule = "|---|" + "---:|" * len(runs)
    rows: list[tuple[str, Callable[[dict[str, Any]], str]]] = [
        ("**hybrid search, vector cached** p50 / p95 / p99 ms", lambda x: pp(x["hybrid"])),
        ("goal (p95)", goal),
        ("· keyword list (FTS, 50)", lambda x: pp(x["parts"]["keyword"], False)),
        (
            "· KNN chunk + chunk_context (k = 50 each)",
            lambda x: pp(x["parts"]["knn"], False),
        ),
        ("  · of which `chunk`", lambda x: pp(x["parts"]["knn_chunk"], False)),
        ("  · of which `chunk_context`", lambda x: pp(x["parts"]["knn_chunk_context"], False)),
        (
            "· rank: load rows, coordination, fusion, context, signals",
            lambda x: pp(x["parts"]["rank"], False),
        ),
        ("· hits: why and excerpts of the 10 shown", lambda x: pp(x["parts"]["hits"], False)),
        ("`VectorStore.knn` alone (chunk, k = 50)", lambda x: pp(x["knn_k50"])),
        ("  · in-memory `Partition.search`", kp("partition_search")),
        ("  · rowid → item id (SQL)", kp("map_to_items")),
        ("keyword-only search (mode=keyword)", lambda x: pp(x["keyword_only"])),
        ("query embedding (ONNX, 1 thread)", lambda x: pp(x["query_embed"])),
        (
            "before warm-up: first `knn` / hybrid search, ms",
            lambda x: (
                f"{x['cold']['knn_first_ms']:,.0f} / {x['cold']['hybrid_ms']:,.0f}"
                f" ({x['cold']['path']})"
            ),
        ),
        (
            "`warm([user, ''])`: time, vectors",
            lambda x: f"{x['warm']['s']:.2f} s, {x['warm']['vectors']:,}",
        ),
        (
            "in memory: arrays / RSS growth (peak)",
            lambda x: (
                f"{x['warm']['array_mb']:,.1f} MB / {x['warm']['rss_growth_mb']:,.0f} MB"
                f" ({x['warm']['peak_growth_mb']:,.0f} MB)"
            ),
        ),
        (
            "recall@10 vs exact KNN (k = 10 / within k = 50)",
            lambda x: (
                f"{x['agreement']['recall_at_10_k10']:.3f} /"
                f" {x['agreement']['recall_at_10_k50']:.3f}"
            ),
        ),
        (
            "exact sqlite-vec KNN k = 10 p50 / p95",
            lambda x: pp(x["agreement"]["exact_knn_k10"], False),
        ),
        (
            "seeding (seed.py)",
            lambda x: (
                f"{x['seed_s']:.0f} s ({x['seed_chunks_per_s']:,} chunks/s)"
                if x.get("seed_s")
                else "copied"
            ),
        ),
        (
            "vector inserts (`VectorStore.write`, 2 per chunk)",
            lambda x: f"{x['vectors']['write_per_s']:,}/s ({x['vectors']['write_s']:.0f} s)",
        ),
        (
            "DB size (vectors' share)",
            lambda x: f"{x['size']['file_mb']:,.0f} MB ({x['size']['vectors_share']:.0%})",
        ),
    ]
    rows += ann_rows(pp)
    lines = [head, rule]
    for label, fn in rows:
        lines.append(f"| {label} | " + " | ".join(fn(x) for x in runs) + " |")
    tp = r.get("throughput")
    if tp:
        lines.append("")
        lines.append(
            "Bulk-import embedding throughput (ONNX MiniLM, batch 32, "
            f"{tp['threads_1']['texts']:,} chunk texts): "
            f"{tp['threads_1']['per_s']:.0f} texts/s with 1 thread, "
            f"{tp['threads_2']['per_s']:.0f} texts/s with 2 threads."
        )
    lines.append("")
    lines.append(
        "Machine CPU busy (all cores) / steal per size: "
        + ", ".join(
            f"{x['n']:,}: {x['cpu']['busy_pct']:.0f}% / {x['cpu']['steal_pct']:.0f}%" for x in runs
        )
        + (
            f"; throughput run: {r['cpu']['throughput']['busy_pct']:.0f}% / "
            f"{r['cpu']['throughput']['steal_pct']:.0f}%"
            if "throughput" in r.get("cpu", {})
            else ""
        )
        + "."
    )
    return "\n".join(lines)


def ann_rows(
    pp: Callable[..., str],
) -> list[tuple[str, Callable[[dict[str, Any]], str]]]:
    """The persisted index's rows (— where it was not measured)."""

    def a(fn: Callable[[dict[str, Any]], str]) -> Callable[[dict[str, Any]], str]:
        return lambda x: fn(x["ann"]) if "hybrid" in x.get("ann", {}) else "—"

    def start(x: dict[str, Any]) -> str:
        each = ", ".join(f"{s['searchable_s']:.2f}" for s in x["starts"])
        return f"{x['searchable_s']:.2f} s ({each})"

    return [
        ("**with the persisted index** (search/ann.py): hybrid p50 / p95 / p99 ms", a(lambda x: pp(x["hybrid"]))),
        ("· keyword list (FTS, 50)", a(lambda x: pp(x["parts"]["keyword"], False))),
        ("· KNN chunk + chunk_context (k = 50 each)", a(lambda x: pp(x["parts"]["knn"], False))),
        ("· rank + hits", a(lambda x: f"{x['parts']['rank']['p50_ms'] + x['parts']['hits']['p50_ms']:.1f} (p50)")),
        ("`VectorStore.knn` alone (chunk, k = 50)", a(lambda x: pp(x["knn_k50"]))),
        ("searchable after start: new process → first answer (median; each)", a(start)),
        ("· new process: both kinds, 50 queries p50 / p95 ms", a(lambda x: f"{x['starts'][0]['knn_both_kinds_p50_ms']:.1f} / {x['starts'][0]['knn_both_kinds_p95_ms']:.1f}")),
        ("· new process RSS: start / first answer / 50 queries, MB", a(lambda x: f"{x['starts'][0]['rss_start_mb']:.0f} / {x['starts'][0]['rss_after_first_mb']:.0f} / {x['starts'][0]['rss_after_queries_mb']:.0f}")),
        ("recall@10 vs exact KNN with the index (k = 10 / within k = 50)", a(lambda x: f"{x['agreement']['recall_at_10_k10']:.3f} / {x['agreement']['recall_at_10_k50']:.3f}")),
        ("index build (chunk, chunk_context), s", a(lambda x: ", ".join(f"{v:.0f}" for v in x["build_s"].values()) or "reused")),
        ("index files on disk", a(lambda x: f"{x['files_mb']:,.0f} MB")),
    ]  # fmt: skip


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="Hybrid recall latency at large sizes.")
    p.add_argument("--sizes", default="10000,100000,1000000", help="comma-separated chunk counts")
    p.add_argument("--model", type=Path, default=DEFAULT_MODEL, help="exported ONNX model dir")
    p.add_argument("--workdir", type=Path, default=Path("/tmp"), help="where databases go")
    p.add_argument("--keep", action="store_true", help="keep the seeded databases")
    p.add_argument("--sample", type=int, default=300, help="chunks embedded for real, per size")
    p.add_argument("--queries", type=int, default=200)
    p.add_argument("--recall-queries", type=int, default=50)
    p.add_argument("--throughput-texts", type=int, default=500, help="0 skips it")
    p.add_argument("--json", type=Path, help="write all figures here")
    p.add_argument("--cache", type=Path, help="keep seeded databases here and reuse them")
    p.add_argument("--seeded", help="copy seeded databases from here, e.g. /x/kw-{n}.db")
    p.add_argument("--ann-min", type=int, default=FULL_SCAN_MAX, help="0: no persisted index")
    p.add_argument("--build-threads", type=int, default=2)
    p.add_argument("--starts", type=int, default=3, help="fresh processes timed to first answer")
    a = p.parse_args(argv)
    sizes = [int(x) for x in a.sizes.split(",") if x.strip()]
    gen = TextGen(seed=7)
    queries = [gen.question() for _ in range(a.queries)]
    rng = np.random.default_rng(1234)
    result: dict[str, Any] = {"env": environment(), "sizes": []}
    cpu = CpuMeter()
    basis = None
    if a.throughput_texts:
        tg = TextGen(seed=99)
        texts = []
        for _ in range(a.throughput_texts):
            tg.topic = tg.new_topic() if tg.rng.random() < 0.05 or tg.topic is None else tg.topic
            texts.append(tg.chunk()[1])
        cpu.measure(
            "throughput", lambda: result.__setitem__("throughput", throughput(a.model, texts))
        )
        result["throughput"], basis = result["throughput"]
    for n in sizes:
        r = cpu.measure(str(n), functools.partial(one_size, n, a, queries, basis, rng))
        r["cpu"] = cpu.sections[str(n)]
        result["sizes"].append(r)
        if a.json:
            a.json.write_text(json.dumps(result, indent=2))
    result["cpu"] = cpu.sections
    env = result["env"]
    print(
        f"\nHybrid chunk search — {env['when']}, commit {env['git_commit']}, "
        f"{env['cpus']} CPUs ({env['cpu']}), SQLite {env['sqlite']}\n"
    )
    print(render(result))
    if a.json:
        a.json.write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
