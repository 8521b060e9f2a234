"""pgvector's HNSW at scale for ``pg_scale.py --vectors``: real-ish vectors, recall@10 against
exact KNN per ``hnsw.ef_search``, and ``VectorStore.knn`` with the partition not loaded / loaded.

See bench/README.md, "``pg_scale.py`` for issue 20".
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from load import progress, scalar
from run import summary_ms
from textgen import TextGen

from bigmind.storage.connect import connect_pg
from bigmind.storage.pg import HNSW_EF_SEARCH
from bigmind.storage.store import Store

EF_SEARCH = (40, 64, 100, 200, 400)  # hnsw.ef_search values whose recall is measured
RECALL_K = 10
FETCH_K = 50  # what Recall asks the vector list for (RankParams.fetch)


def real_ish(url: str, n: int, sample: int, n_queries: int, seed: int) -> dict[str, Any]:
    """``n`` vectors like real embeddings and ``n_queries`` real question embeddings.

    ``sample`` chunk texts of the database are embedded with the test model (ONNX); the
    others are mixes of those (bench/semantic_latency.py's ``synthetic``: a real vector, up to
    two others at weights 0–0.5, noise). Random unit vectors would make recall meaningless:
    in 384 dimensions they are all nearly orthogonal, with no neighbourhood to find."""
    import numpy as np
    import psycopg
    from semantic_latency import DEFAULT_MODEL, synthetic

    from bigmind.search.embedder import OnnxEmbedder

    rng = np.random.default_rng(seed)
    emb = OnnxEmbedder(DEFAULT_MODEL, threads=2)
    with psycopg.connect(url, autocommit=True) as conn:
        texts = [r[0] for r in conn.execute(
            "SELECT content FROM conversation_chunks WHERE id %% 97 = 0 ORDER BY id LIMIT %s",
            (sample,)).fetchall()]  # fmt: skip
    t = time.perf_counter()
    real = emb.embed(texts)
    gen = TextGen(seed=11)
    queries = emb.embed([gen.question() for _ in range(n_queries)])
    embed_s = time.perf_counter() - t
    vecs = np.empty((n, real.shape[1]), dtype=np.float32)
    for start in range(0, n, 50_000):
        stop = min(n, start + 50_000)
        vecs[start:stop] = synthetic(real, stop - start, rng)
    k = min(n, len(real))
    vecs[:k] = real[:k]  # the sample itself is stored too
    progress(f"vectors: {len(texts) + n_queries} real texts embedded in {embed_s:.1f} s")
    return {"vectors": vecs, "queries": queries, "model": emb.model_id,
            "real_sample": len(texts), "embed_s": round(embed_s, 1)}  # fmt: skip


def fill_vectors(url: str, uid: str, vecs: Any, model: str) -> dict[str, Any]:
    """COPY ``vecs`` into vec_chunk for the first chunks (their ``embeddings`` rows too), with
    the HNSW index dropped first and built again afterwards (its build timed)."""
    import psycopg
    from pgvector.psycopg import register_vector

    from bigmind.models import now_ts

    out: dict[str, Any] = {}
    dim = vecs.shape[1]
    t = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        register_vector(conn)
        conn.execute("SET maintenance_work_mem = '2GB'")
        hnsw = conn.execute(
            "SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'vec_chunk'"
            " AND indexdef LIKE '%hnsw%'"
        ).fetchall()
        for name, _ in hnsw:
            conn.execute(f'DROP INDEX "{name}"')
        ids = [r[0] for r in conn.execute(
            "SELECT id FROM conversation_chunks ORDER BY id LIMIT %s", (len(vecs),)).fetchall()]  # fmt: skip
        # More vectors than chunks (a million in one index): the rest name no chunk; recall
        # and latency are the index's, and a search's hits are read by id afterwards.
        top = max(ids, default=0)
        items = [str(i) for i in [*ids, *range(top + 1, top + 1 + len(vecs) - len(ids))]]
        ts = now_ts()
        with conn.cursor() as cur:
            with cur.copy("COPY embeddings (kind, item_id, user_id, model, dim, content_hash,"
                          " embedded_at) FROM STDIN") as cp:  # fmt: skip
                for item in items:
                    cp.write_row(("chunk", item, uid, model, dim, "x", ts))
        rids = [r[0] for r in conn.execute(
            "SELECT id FROM embeddings WHERE kind = 'chunk' ORDER BY id").fetchall()]  # fmt: skip
        with conn.cursor() as cur:
            with cur.copy(
                "COPY vec_chunk (rowid, user_id, embedding) FROM STDIN WITH (FORMAT BINARY)"
            ) as cp:
                cp.set_types(["int8", "text", "vector"])
                for rid, v in zip(rids, vecs, strict=True):
                    cp.write_row((rid, uid, v))
        out["copy_s"] = round(time.perf_counter() - t, 2)
        progress(f"vectors: {len(rids):,} copied in {out['copy_s']} s; building HNSW")
        t = time.perf_counter()
        for _name, ddl in hnsw:
            conn.execute(ddl)
        out["hnsw_build_s"] = round(time.perf_counter() - t, 2)
        out["hnsw_index"] = [ddl for _n, ddl in hnsw]
        conn.execute("VACUUM (ANALYZE) vec_chunk")
        conn.execute("VACUUM (ANALYZE) embeddings")
    progress(f"vectors: HNSW built in {out['hnsw_build_s']} s")
    return out


def stored_vectors(url: str) -> tuple[Any, Any]:
    """(rowids, vectors) of vec_chunk, as kept by an earlier run."""
    import numpy as np
    import psycopg
    from pgvector.psycopg import register_vector

    with psycopg.connect(url, autocommit=True) as conn:
        register_vector(conn)
        rows = conn.execute("SELECT rowid, embedding FROM vec_chunk ORDER BY rowid").fetchall()
    vecs = [r[1].to_numpy() if hasattr(r[1], "to_numpy") else r[1] for r in rows]
    return np.array([r[0] for r in rows]), np.vstack(vecs).astype(np.float32)


def hnsw_recall(url: str, uid: str, rowids: Any, vecs: Any, queries: Any) -> dict[str, Any]:
    """Recall@10 of pgvector's HNSW against exact KNN (numpy, cosine) and the statement's
    latency, at each ``hnsw.ef_search`` of :data:`EF_SEARCH`, the query as the product runs it
    (``VectorStore.nearest``: k = 50, the user's rows)."""
    import numpy as np
    import psycopg
    from pgvector.psycopg import register_vector

    sims = queries @ vecs.T  # cosine: every stored vector is normalised
    top = [np.argsort(-row)[:RECALL_K] for row in sims]
    exact = [set(rowids[t].tolist()) for t in top]
    best = [float(row[t].sum()) for row, t in zip(sims, top, strict=True)]
    sql = ("SELECT rowid FROM vec_chunk WHERE user_id = %s ORDER BY embedding <=> %s LIMIT %s")  # fmt: skip
    out: dict[str, Any] = {}
    with psycopg.connect(url, autocommit=True) as conn:
        register_vector(conn)
        for ef in EF_SEARCH:
            conn.execute(f"SET hnsw.ef_search = {ef}")
            for q in queries[:10]:  # warm-up
                conn.execute(sql, (uid, q, FETCH_K)).fetchall()
            times, recalls, found, ratio = [], [], [], []
            for i, (q, want) in enumerate(zip(queries, exact, strict=True)):
                t = time.perf_counter()
                got = [r[0] for r in conn.execute(sql, (uid, q, FETCH_K)).fetchall()]
                times.append(time.perf_counter() - t)
                recalls.append(len(want & set(got[:RECALL_K])) / RECALL_K)
                found.append(len(got))
                # How close the neighbours found are to the true ones (1.0: as similar).
                at = np.searchsorted(rowids, got[:RECALL_K])
                ratio.append(float(sims[i][at].sum()) / best[i])
            out[str(ef)] = summary_ms(times) | {
                "recall_at_10": round(float(np.mean(recalls)), 4),
                "recall_at_10_min": round(float(np.min(recalls)), 2),
                "mean_results": round(float(np.mean(found)), 1),
                "similarity_ratio": round(float(np.mean(ratio)), 4),
            }
            progress(f"ef_search {ef}: recall@10 {out[str(ef)]['recall_at_10']}, "
                     f"p50 {out[str(ef)]['p50_ms']} / p95 {out[str(ef)]['p95_ms']} ms")  # fmt: skip
        # Exact search in PostgreSQL (no index), a few queries: what HNSW saves.
        conn.execute("SET enable_indexscan = off")
        times, recalls = [], []
        for q, want in zip(queries[:5], exact, strict=False):
            t = time.perf_counter()
            got = [r[0] for r in conn.execute(sql, (uid, q, FETCH_K)).fetchall()]
            times.append(time.perf_counter() - t)
            recalls.append(len(want & set(got[:RECALL_K])) / RECALL_K)  # checks the numpy truth
        out["exact (no index)"] = summary_ms(times) | {
            "recall_at_10": round(float(np.mean(recalls)), 4),
            "recall_at_10_min": min(recalls),
        }
    return out


def rebuild_hnsw(url: str, options: str) -> dict[str, Any]:
    """Build vec_chunk's HNSW index again ``WITH (options)`` (e.g. ``m = 24, ef_construction =
    128``) to see what other build parameters buy; the product's are the migration's."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET maintenance_work_mem = '2GB'")
        conn.execute("DROP INDEX IF EXISTS vec_chunk_hnsw")
        t = time.perf_counter()
        conn.execute("CREATE INDEX vec_chunk_hnsw ON vec_chunk USING hnsw"
                     f" (embedding vector_cosine_ops) WITH ({options})")  # fmt: skip
        out = {"hnsw_with": options, "hnsw_build_s": round(time.perf_counter() - t, 2)}
    progress(f"vectors: HNSW WITH ({options}) built in {out['hnsw_build_s']} s")
    return out


def vectors(
    url: str,
    user: str,
    n: int,
    n_queries: int,
    sample: int,
    seed: int,
    fresh: bool = False,
    hnsw_with: str = "",
) -> dict[str, Any]:
    """Real-ish vectors for ``n`` chunks in vec_chunk (kept there between runs: a later run
    measures them again without the build), HNSW recall@10 against exact KNN per
    ``ef_search``, then ``VectorStore.knn`` with the partition not loaded (pgvector) and
    loaded (in memory)."""
    import psycopg

    from bigmind.search.vectors import VectorStore

    backend = connect_pg(url)
    try:
        uid = Store(backend, user).uid
        vs = VectorStore(backend)
        model = vs.model()
    finally:
        backend.close()
    made = real_ish(url, n, sample, n_queries, seed)
    out: dict[str, Any] = {k: v for k, v in made.items() if k not in ("vectors", "queries")}
    with psycopg.connect(url, autocommit=True) as conn:
        have = scalar(conn, "SELECT count(*) FROM vec_chunk") if model else 0
    if model and have and not fresh:
        progress(f"vectors: reusing the {have:,} kept in vec_chunk")
        rowids, vecs = stored_vectors(url)
        out["reused"] = True
        if hnsw_with:
            out |= rebuild_hnsw(url, hnsw_with)
    else:
        backend = connect_pg(url)
        try:
            VectorStore(backend).adopt(made["model"], made["vectors"].shape[1])
        finally:
            backend.close()
        out |= fill_vectors(url, uid, made["vectors"], made["model"])
        rowids, vecs = stored_vectors(url)
    with psycopg.connect(url, autocommit=True) as conn:
        out["rows"] = len(rowids)
        out["vec_chunk_mb"] = round(
            scalar(conn, "SELECT pg_total_relation_size('vec_chunk')") / 1e6, 1
        )
        out["hnsw_mb"] = round(scalar(conn, "SELECT pg_relation_size('vec_chunk_hnsw')") / 1e6, 1)
    out["recall"] = hnsw_recall(url, uid, rowids, vecs, made["queries"])
    out["ef_search"] = str(HNSW_EF_SEARCH)

    backend = connect_pg(url)
    try:
        vs = VectorStore(backend)
        qs = made["queries"]

        def run(name: str, fn: Callable[[Any], Any]) -> None:
            for q in qs[:10]:
                fn(q)
            times, found = [], []
            for q in qs:
                t = time.perf_counter()
                res = fn(q)
                times.append(time.perf_counter() - t)
                found.append(len(res))
            out[name] = summary_ms(times) | {"mean_results": round(sum(found) / len(found), 1)}
            progress(f"{name}: p50 {out[name]['p50_ms']} / p95 {out[name]['p95_ms']} ms")

        # Not loaded: a partition above LOAD_ON_DEMAND_MAX is answered by pgvector meanwhile.
        # Keep the background load from starting, so every call takes that path.
        vs._load_later = lambda kind, owner: None  # type: ignore[method-assign]
        run(f"knn not loaded (VectorStore.knn → pgvector HNSW), k={FETCH_K}",
            lambda q: vs.knn("chunk", uid, q, FETCH_K))  # fmt: skip
        t = time.perf_counter()
        out["warm_vectors"] = vs.warm([uid])
        out["warm_s"] = round(time.perf_counter() - t, 2)
        run(f"knn loaded (in-memory partition), k={FETCH_K}",
            lambda q: vs.knn("chunk", uid, q, FETCH_K))  # fmt: skip
    finally:
        backend.close()
    return out
