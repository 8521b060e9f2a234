"""Vectors in sqlite-vec (or pgvector): one table per kind of memory, in the database.

Each table partitions by owner (``user_id``; '' for shared people and company
knowledge) and keeps the float vector and its 1-bit quantisation. The tables are
the store of record; searches run on an in-memory mirror of each partition
(:mod:`bigmind.search.vecindex`), loaded once and kept current by cheap checks: new rows
(by rowid high-water mark, this process's writes appended directly) and a
per-kind generation that changes whenever vectors are replaced or deleted.

The ``embeddings`` table maps a vector's rowid to the memory it encodes and
records the model, dimension and content hash it was made from; ``embedding_state``
records which model the vector tables belong to, so a model change is detected.

On PostgreSQL the tables are plain ``vec_<kind>(rowid, user_id, embedding vector(dim))``
with an HNSW index (cosine) and a ``user_id`` index; the same in-memory mirror answers
searches, and pgvector answers for a big partition not loaded yet.

Every statement is :mod:`bigmind.storage.vector_tables`'s; this module keeps the partitions,
the scan positions and the decisions.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bigmind.errors import BigMindError
from bigmind.models import content_hash
from bigmind.storage.db import Backend, Row, Tx
from bigmind.storage.vector_tables import SELECTS, SEP, VectorTables, Written

if TYPE_CHECKING:
    from bigmind.search.ann import AnnFiles, AnnIndex
    from bigmind.search.vecindex import Partition

log = logging.getLogger(__name__)

MAX_K = 4096  # sqlite-vec's KNN limit
LOAD_ON_DEMAND_MAX = 50_000  # bigger partitions are loaded by warm(); until then SQL KNN
CATCH_UP_MAX = 5_000  # more new rows than this from other processes: reload the partition
DELTA_MAX = 50_000  # rows past a persisted index searched from memory; more: rebuild it first
ANN_MIN = 20_000  # Settings.ann_min_vectors' default


def fact_embedding_text(category: str, fact: str) -> str:
    return f"{category}: {fact}"


def _fact_text(r: Row) -> str:
    return fact_embedding_text(str(r["category"]), str(r["fact"]))


def _chunk_text(r: Row) -> str:
    return str(r["content"]) + (f" ({r['flag_reason']})" if r.get("flag_reason") else "")


def _chunk_context_text(r: Row) -> str:
    before = [t for t in str(r.get("before") or "").split(SEP) if t]
    return "\n".join([*reversed(before), _chunk_text(r)])


def _summary_text(r: Row) -> str:
    parts = [r.get("one_liner"), r.get("topics"), r["summary"], r.get("key_facts")]
    return "\n".join(str(p) for p in parts if p)


def _hypothesis_text(r: Row) -> str:
    return str(r["hypothesis"]) + (
        f"\nResolution: {r['resolution']}" if r.get("resolution") else ""
    )


def _person_text(r: Row) -> str:
    head = r["display_name"] or r["username"]
    parts = [f"{head} (@{r['username']})", r.get("role"), r.get("team"), r.get("expertise")]
    parts.append(r.get("notes"))
    return "\n".join(str(p) for p in parts if p)


def _global_text(r: Row) -> str:
    return f"[{r['category']}] {r['title']}\n{r['content']}"


def _attempt_text(r: Row) -> str:
    return str(r["approach"])


@dataclass(frozen=True, slots=True)
class Source:
    """One kind of memory: how its text for embedding is made (its rows are
    :data:`bigmind.storage.vector_tables.SELECTS`')."""

    kind: str
    text: Callable[[Row], str]
    # Rows never change text in place (a corrected fact's vector is deleted, which changes the
    # kind's generation): scanning by id high-water mark suffices.
    append_only: bool

    @property
    def int_ids(self) -> bool:
        return SELECTS[self.kind].int_ids

    @property
    def select(self) -> str:
        """The statement reading this kind's rows (``item_id``, ``owner``, the text's columns)."""
        return SELECTS[self.kind].sql


SOURCES: dict[str, Source] = {
    s.kind: s
    for s in (
        Source("fact", _fact_text, True),
        Source("chunk", _chunk_text, True),
        # A second vector per chunk: the chunk read after the exchanges just before it.
        Source("chunk_context", _chunk_context_text, True),
        Source("summary", _summary_text, False),
        Source("hypothesis", _hypothesis_text, False),
        Source("person", _person_text, False),
        Source("global", _global_text, False),
        Source("attempt", _attempt_text, True),
    )
}
# What recall can be asked for (attempts are not ranked: they warn, memory/attempts.py).
KINDS = tuple(k for k in SOURCES if k not in ("chunk_context", "attempt"))
EXTRA_VECTORS = {"chunk": ("chunk_context",)}  # searched with a kind; the best similarity wins


@dataclass(frozen=True, slots=True)
class Pending:
    """A memory whose vector is missing or stale."""

    kind: str
    item_id: str
    owner: str
    text: str
    digest: str


@dataclass(frozen=True, slots=True)
class Neighbour:
    item_id: str
    similarity: float  # cosine similarity, 1 = same direction


@dataclass(frozen=True, slots=True)
class Freshness:
    """What decides whether in-memory partitions are current, read in one statement per search:
    the tables' model, each kind's generation, and the table-wide highest vector rowid."""

    model: tuple[str, int] | None
    generations: dict[str, str]
    top: int


class VectorStore:
    """Vector tables of one database: state, writes, backlog and nearest-neighbour search."""

    def __init__(self, db: Backend, ann_dir: Path | None = None, ann_min: int = ANN_MIN) -> None:
        self.db = db
        self.pg = db.dialect == "postgresql"
        self.tables = VectorTables(db)
        self._high_water: dict[str, int] = {}
        self._scanned: dict[str, str] = {}  # the generation an append-only kind's scan began at
        self._parts: dict[tuple[str, str], Partition] = {}
        self._loading: set[tuple[str, str]] = set()
        self._loaders: list[threading.Thread] = []
        self._closing = threading.Event()
        self._lock = threading.RLock()
        # Persisted approximate indexes of big partitions (search/ann.py), opened on demand.
        self.ann: AnnFiles | None = None
        self.ann_min = ann_min
        self._anns: dict[tuple[str, str], AnnIndex] = {}
        self._no_ann: set[tuple[str, str]] = set()  # looked for: none usable (until a build)
        self._building: set[tuple[str, str]] = set()
        self._stale: set[tuple[str, str]] = set()  # asked to (re)build: a builder looks here
        self._build_lock = threading.Lock()  # one build at a time
        if ann_dir is not None and ann_min > 0:
            from bigmind.search.ann import AnnFiles

            self.ann = AnnFiles(ann_dir)

    @property
    def available(self) -> bool:
        return bool(getattr(self.db, "vec_version", None))

    # -- model state ---------------------------------------------------------------------
    def freshness(self) -> Freshness:
        """The model, the generations and the highest rowid, in one statement."""
        state = self.tables.freshness()
        model = (state["model"], int(state["dim"])) if "model" in state else None
        gens = {k.split(":", 1)[1]: v for k, v in state.items() if k.startswith("generation:")}
        return Freshness(model, gens, int(state.get("top", 0)))

    def model(self) -> tuple[str, int] | None:
        """The (model id, dimension) the vector tables hold, or None before the first vector."""
        return self.tables.model()

    def adopt(self, model_id: str, dim: int) -> None:
        """Make the vector tables belong to this model (creating them; dropping any others)."""
        self.tables.adopt(model_id, dim)
        self._forget_partitions()

    def ensure(self, dim: int) -> None:
        """Vector tables for kinds added since the model was adopted (after an upgrade)."""
        if self.tables.ensure(dim):
            self._forget_partitions()

    def table_ddl(self, kind: str, dim: int) -> str:
        """The DDL of the vector table for ``kind`` (migrate-db rebuilds indexes with it)."""
        return self.tables.table_ddl(kind, dim)

    # -- backlog -------------------------------------------------------------------------
    def pending(self, kind: str, limit: int) -> list[Pending]:
        """Up to ``limit`` memories of ``kind`` without a current vector."""
        if SOURCES[kind].append_only:
            # Ids only grow and texts never change: resume after the last id handed out —
            # unless vectors of the kind were deleted since (a forgotten memory, a corrected
            # fact, a context that lost an exchange): then one may be missing below it.
            gen = self.tables.state().get(f"generation:{kind}", "")
            if self._scanned.get(kind) != gen:
                self._scanned[kind] = gen
                self._high_water.pop(kind, None)
            rows = self.tables.unembedded(kind, self._high_water.get(kind, 0), limit)
            if rows:
                self._high_water[kind] = int(rows[-1]["item_id"])
            return [self._pending(kind, r) for r in rows]
        out = []
        for r in self.tables.with_hashes(kind):
            p = self._pending(kind, r)
            if r["_h"] != p.digest:
                out.append(p)
                if len(out) >= limit:
                    break
        return out

    def rescan(self) -> None:
        """Forget the scan positions (after a failed batch, so nothing is skipped)."""
        self._high_water.clear()

    @staticmethod
    def _pending(kind: str, r: Row) -> Pending:
        text = SOURCES[kind].text(r)
        return Pending(kind, str(r["item_id"]), str(r["owner"] or ""), text, content_hash(text))

    def backlog(self) -> dict[str, int]:
        """How many memories of each kind have no vector (stale texts not counted)."""
        return self.tables.backlog()

    def count(self) -> dict[str, int]:
        return self.tables.count()

    # -- writes --------------------------------------------------------------------------
    def write(self, items: Sequence[Pending], vectors: Any, model_id: str) -> int:
        """Store vectors (rows of a float32 array) for ``items``; replaces older ones.

        Returns how many were written; items whose memory changed meanwhile still get
        the vector of the text they had (the next backlog scan refreshes them).
        """
        if not items:
            return 0
        written = self.tables.write(items, vectors, model_id)
        self._advance(written, vectors, [p.item_id for p in items])
        return len(items)

    def _advance(self, written: Written, vectors: Any, items: list[str]) -> None:
        """After this process wrote vectors (rowids past ``written.before``): partitions that
        were current then take their new rows directly and stay current, with no query. One
        that was behind already catches up from the table at its next search."""
        import numpy as np

        before, added = written.before, written.added
        after = max((rid for rows in added.values() for rid, _ in rows), default=before)
        with self._lock:
            for (kind, owner), part in self._parts.items():
                if part.seen_top != before or kind in written.replaced:
                    continue  # behind, or about to be reloaded (its generation changed)
                rows = added.get((kind, owner))
                if rows:
                    ids = np.array([r for r, _ in rows], dtype=np.int64)
                    chosen = [i for _, i in rows]
                    part.add(ids, vectors[chosen], _items(kind, [items[i] for i in chosen]))
                part.seen_top = after

    # -- search --------------------------------------------------------------------------
    def knn(
        self, kind: str, owner: str, query: Any, k: int, fresh: Freshness | None = None
    ) -> list[Neighbour]:
        """The ``k`` nearest memories of ``kind`` owned by ``owner``, most similar first.
        A search of several kinds reads :meth:`freshness` once and passes it to each."""
        k = max(1, min(k, MAX_K))
        fresh = fresh or self.freshness()
        if self.ann is not None and SOURCES[kind].int_ids:
            near = self._ann_knn(kind, owner, query, k, fresh)
            if near is not None:
                return near
        part = self._partition(kind, owner, load_big=False, fresh=fresh)
        if part is not None:
            return [Neighbour(item, sim) for item, sim in part.nearest(query, k)]
        # A big partition not loaded yet: ask the database (sqlite-vec: exact; pgvector: its
        # HNSW index, approximate: recall@10 0.72 at 200 k, 0.35 at 1 M; bench/README.md).
        found = self._sql_knn(kind, owner, query.astype("float32"), k)
        if not found:
            return []
        by_rid = self.tables.item_ids([r for r, _ in found])
        return [Neighbour(by_rid[rid], sim) for rid, sim in found if rid in by_rid]

    def _sql_knn(self, kind: str, owner: str, vector: Any, k: int) -> list[tuple[int, float]]:
        """(rowid, similarity) of the ``k`` nearest, from sqlite-vec or pgvector."""
        return self.tables.nearest(kind, owner, vector, k)

    def warm(self, owners: Iterable[str]) -> int:
        """Load every partition of these owners into memory (background start-up)."""
        loaded = 0
        for owner in owners:
            for kind in SOURCES:
                if self._closing.is_set():
                    return loaded
                index = self._ann_index(kind, owner, fresh := self.freshness())
                base = index.header.max_rowid if index is not None else 0
                part = self._partition(kind, owner, load_big=True, fresh=fresh, base=base)
                if part is None and base:  # too far behind its index: the whole partition
                    part = self._partition(kind, owner, load_big=True)
                loaded += len(part) if part is not None else 0
                loaded += len(index) if index is not None and part is not None and base else 0
        return loaded

    def _partition(
        self,
        kind: str,
        owner: str,
        *,
        load_big: bool,
        fresh: Freshness | None = None,
        base: int = 0,
    ) -> Partition | None:
        """The partition in memory, current; with ``base``, only its rows past that rowid (the
        delta searched beside a persisted index). None: not loaded yet (too big to load on a
        search; or a delta too big, whose index is then rebuilt)."""
        fresh = fresh or self.freshness()
        state = fresh.model
        if state is None:
            return None
        gen = fresh.generations.get(kind, "")
        key = (kind, owner)
        with self._lock:
            part = self._parts.get(key)
            if (
                part is not None
                and part.base == base
                and part.generation == gen
                and self._catch_up(part, kind, owner, fresh.top)
            ):
                return part
        if base:
            return self._delta(kind, owner, state[1], gen, base, fresh.top)
        if (
            not load_big
            and self.tables.partition_size(kind, owner, LOAD_ON_DEMAND_MAX + 1) > LOAD_ON_DEMAND_MAX
        ):
            self._load_later(kind, owner)  # meanwhile exact SQL KNN answers
            return None
        # Load without holding the lock: searches of other partitions go on meanwhile.
        part = self._load(kind, owner, state[1], gen)
        with self._lock:
            self._parts[key] = part
            self._catch_up(part, kind, owner, self.tables.top())  # rows written while it loaded
        if self.ann is not None and len(part) >= self.ann_min and SOURCES[kind].int_ids:
            self._schedule(kind, owner)  # big: persist an index, so the next start is quick
        return part

    def _load_later(self, kind: str, owner: str) -> None:
        """Load a big partition in a background thread (once at a time), e.g. after a vacuum
        changed it: searches use sqlite-vec until it is in memory again."""
        self._in_background(
            (kind, owner),
            self._loading,
            f"load {kind} vectors into memory",
            lambda: self._partition(kind, owner, load_big=True),
            (OSError, self.db.Error),
        )

    def _in_background(
        self,
        key: tuple[str, str],
        busy: set[tuple[str, str]],
        what: str,
        work: Callable[[], object],
        errors: tuple[type[Exception], ...],
    ) -> None:
        """Run ``work`` in a thread unless one is already at it for ``key`` (in ``busy``) or
        the store is closing; :meth:`close` waits for it."""
        with self._lock:
            if key in busy or self._closing.is_set():
                return
            busy.add(key)

        def run() -> None:
            try:
                work()
            except errors as exc:
                log.warning("could not %s: %s", what, exc)
            finally:
                with self._lock:
                    busy.discard(key)

        thread = threading.Thread(target=run, name=f"bigmind-{what.split()[0]}", daemon=True)
        with self._lock:
            self._loaders = [t for t in self._loaders if t.is_alive()] + [thread]
        thread.start()

    def close(self, timeout: float) -> bool:
        """Start no more background loads and wait for the running ones (within ``timeout``):
        True when none is left."""
        deadline = time.monotonic() + timeout
        self._closing.set()
        with self._lock:
            loaders = list(self._loaders)
        for loader in loaders:
            loader.join(max(0.0, deadline - time.monotonic()))
        return not any(t.is_alive() for t in loaders)

    def _load(self, kind: str, owner: str, dim: int, gen: str) -> Partition:
        """Read a partition from its vector table in blocks, on a connection of its own (a
        long read there never holds up this connection's searches and writes)."""
        import numpy as np

        from bigmind.search.vecindex import Partition

        part = Partition(dim, gen, int_items=SOURCES[kind].int_ids)
        part.seen_top = self.tables.top()
        with self.tables.reader() as reader:
            # Which memory each vector encodes (a vector without a row there is never found).
            map_ids: list[int] = []
            map_items: list[str] = []
            for block in reader.stream_items(kind, owner):
                map_ids += (int(r[0]) for r in block)
                map_items += (str(r[1]) for r in block)
            known = np.array(map_ids, dtype=np.int64)
            items = _items(kind, map_items)
            for block in reader.stream_vectors(kind, owner):
                ids = np.fromiter((r[0] for r in block), dtype=np.int64, count=len(block))
                vecs = np.frombuffer(b"".join(_blob(r[1]) for r in block), dtype=np.float32)
                at = np.minimum(np.searchsorted(known, ids), max(len(known) - 1, 0))
                ok = known[at] == ids if len(known) else np.zeros(len(ids), dtype=bool)
                part.add(ids[ok], vecs.reshape(len(block), dim)[ok], items[at[ok]])
        return part

    def _catch_up(
        self, part: Partition, kind: str, owner: str, top: int, limit: int = CATCH_UP_MAX
    ) -> bool:
        """Add rows other processes wrote (``top``: the table's highest rowid now); False if
        there are more than ``limit`` (reload instead)."""
        import numpy as np

        if top == part.seen_top:
            return True  # nothing was written anywhere since the last look
        new = self.tables.items_after(kind, owner, part.max_rowid, limit + 1)
        if len(new) > limit:
            return False
        item_of = {int(r["id"]): str(r["item_id"]) for r in new}
        for start in range(0, len(new), 500):
            rows = self.tables.vectors(kind, [int(r["id"]) for r in new[start : start + 500]])
            rows.sort(key=lambda r: r["rid"])
            if rows:
                vecs = np.frombuffer(b"".join(_blob(r["v"]) for r in rows), dtype=np.float32)
                part.add(
                    np.array([r["rid"] for r in rows], dtype=np.int64),
                    vecs.reshape(len(rows), part.dim),
                    _items(kind, [item_of[int(r["rid"])] for r in rows]),
                )
        part.seen_top = top
        return True

    # -- persisted approximate indexes (search/ann.py) ------------------------------------
    def _ann_knn(
        self, kind: str, owner: str, query: Any, k: int, fresh: Freshness
    ) -> list[Neighbour] | None:
        """The ``k`` nearest from the partition's persisted index and its delta; None when it
        has no usable index (the in-memory partition or SQL answers)."""
        index = self._ann_index(kind, owner, fresh)
        if index is None:
            return None
        delta = self._partition(
            kind, owner, load_big=False, fresh=fresh, base=index.header.max_rowid
        )
        if delta is None:
            return None
        sims: dict[str, float] = {}
        want = k + max(8, k // 2)  # room for vectors deleted since the build
        while True:
            rowids, found = index.search(query, want)
            # Only live vectors have an ``embeddings`` row: a deleted one is dropped here.
            live = self.tables.item_ids(rowids) if rowids else {}
            for rid, sim in zip(rowids, found, strict=True):
                item = live.get(rid)
                if item is not None and sim > sims.get(item, -2.0):
                    sims[item] = sim
            if len(live) >= k or len(rowids) < want or want >= MAX_K:
                break
            want = min(MAX_K, want * 4)
        if len(live) < 0.8 * len(rowids):
            self._schedule(kind, owner)  # a fifth of what it finds is deleted: rebuild
        for item, sim in delta.nearest(query, k):
            if sim > sims.get(item, -2.0):
                sims[item] = sim
        best = sorted(sims.items(), key=lambda kv: -kv[1])[:k]
        return [Neighbour(item, sim) for item, sim in best]

    def _ann_index(self, kind: str, owner: str, fresh: Freshness) -> AnnIndex | None:
        """The partition's persisted index if one fits the database (opened once)."""
        if self.ann is None or fresh.model is None or not SOURCES[kind].int_ids:
            return None
        key = (kind, owner)
        with self._lock:
            index = self._anns.get(key)
            if index is not None and (index.header.model, index.header.dim) == fresh.model:
                return index
            if index is None and key in self._no_ann:
                return None
        index = self._open_ann(kind, owner, fresh.model)
        with self._lock:
            if index is None:
                self._anns.pop(key, None)
                self._no_ann.add(key)
            else:
                self._anns[key] = index
        return index

    def _open_ann(self, kind: str, owner: str, model: tuple[str, int]) -> AnnIndex | None:
        assert self.ann is not None
        head = self.ann.header(kind, owner)
        if head is None:
            return None
        # Another model's, or another database's (or rows renumbered since): rebuild it.
        fits = (head.model, head.dim) == model
        anchor = self.tables.anchor(kind, owner, head.max_rowid) if fits else ""
        if not anchor or anchor != head.anchor:
            self._schedule(kind, owner)
            return None
        index = self.ann.open(head)
        if index is None:
            self._schedule(kind, owner)  # damaged
        return index

    def _delta(
        self, kind: str, owner: str, dim: int, gen: str, base: int, top: int
    ) -> Partition | None:
        """The partition's rows past ``base`` (its index's highest rowid), in memory."""
        from bigmind.search.vecindex import Partition

        part = Partition(dim, gen, int_items=SOURCES[kind].int_ids)
        part.base = part.max_rowid = base
        part.seen_top = -1
        if not self._catch_up(part, kind, owner, top, DELTA_MAX):
            self._schedule(kind, owner)
            return None
        with self._lock:
            self._parts[(kind, owner)] = part
        index = self._anns.get((kind, owner))
        if index is not None and len(part) >= min(
            DELTA_MAX // 2, max(self.ann_min, len(index) // 10)
        ):
            self._schedule(kind, owner)  # grown by a tenth since the build
        return part

    def _schedule(self, kind: str, owner: str) -> None:
        """(Re)build the partition's index in a background thread, one build at a time. Asked
        while a build of it runs (which may have read vectors a forget deleted since), that
        build runs once more when it ends: the ask and the end are decided under one lock."""
        if self.ann is None:
            return
        key = (kind, owner)
        with self._lock:
            self._stale.add(key)
            if key in self._building or self._closing.is_set():
                return
            self._building.add(key)
        errors = (BigMindError, OSError, RuntimeError, ValueError, self.db.Error)

        def run() -> None:
            done = False
            try:
                while True:
                    with self._lock:
                        if key not in self._stale or self._closing.is_set():
                            self._building.discard(key)
                            done = True
                            return
                        self._stale.discard(key)
                    try:
                        self.build_index(kind, owner)
                    except errors as exc:
                        log.warning("could not build the %s vector index: %s", kind, exc)
            finally:
                if not done:  # an unexpected error: let a later ask start a build again
                    with self._lock:
                        self._building.discard(key)

        thread = threading.Thread(target=run, name="bigmind-build", daemon=True)
        with self._lock:
            self._loaders = [t for t in self._loaders if t.is_alive()] + [thread]
        thread.start()

    def build_index(self, kind: str, owner: str, *, threads: int = 1) -> AnnIndex | None:
        """Build and persist the partition's index now, in this thread, and use it (None: the
        partition is smaller than ``ann_min``, or closing)."""
        with self._build_lock:
            return self._build(kind, owner, threads)

    def _build(self, kind: str, owner: str, threads: int = 1) -> AnnIndex | None:
        assert self.ann is not None
        fresh = self.freshness()
        if self._closing.is_set() or fresh.model is None:
            return None
        key = (kind, owner)
        with self.tables.reader() as reader:
            if reader.partition_size(kind, owner, self.ann_min) < self.ann_min:
                self.ann.remove(kind, owner)
                return None
            gen = fresh.generations.get(kind, "")
            head = self.ann.build(
                kind,
                owner,
                fresh.model,
                gen,
                lambda rowid: reader.anchor(kind, owner, rowid),
                _vector_blocks(reader, kind, owner, fresh.model[1]),
                stop=self._closing,
                threads=threads,
            )
        index = self.ann.open(head) if head is not None else None
        if index is not None:
            with self._lock:
                self._anns[key] = index
                self._no_ann.discard(key)
                self._parts.pop(key, None)  # the next search reads the (small) delta instead
            log.info("vector index of %s: %d vectors in %s", kind, len(index), self.ann.root)
        return index

    def similarity(self, kind: str, item_ids: Iterable[str], query: Any) -> dict[str, float]:
        """Exact cosine similarity of ``query`` to the stored vectors of these memories."""
        ids = list(item_ids)
        if not ids:
            return {}
        return self.tables.similarity(kind, ids, query.astype("float32"))

    def vectors_of(self, kind: str, item_ids: Iterable[str]) -> dict[str, Any]:
        """The stored vectors (float32) of these memories, by id; missing ones left out."""
        import numpy as np

        ids = list(item_ids)
        if not ids:
            return {}
        rows = self.tables.of_items(kind, ids)
        return {str(r["item_id"]): np.frombuffer(_blob(r["v"]), dtype=np.float32) for r in rows}

    @staticmethod
    def forget(tx: Tx, kind: str, item_ids: Sequence[object]) -> int:
        """Delete the vectors of memories that were deleted (inside the deleting transaction);
        how many there were."""
        return VectorTables.forget(tx, kind, item_ids)

    def discard(self, kinds: Iterable[str], owners: Iterable[str] = ()) -> None:
        """Drop the in-memory partitions of these kinds now (vectors of them were deleted):
        the next search reads them again from the tables. The persisted indexes of these
        kinds and ``owners`` still hold the deleted vectors: each is rebuilt now, in the
        background, and the new file replaces the old (searches meanwhile drop the deleted
        ones, as ever)."""
        drop = set(kinds)
        with self._lock:
            for key in [k for k in self._parts if k[0] in drop]:
                del self._parts[key]
        if self.ann is None:
            return
        for kind in drop:
            source = SOURCES.get(kind)
            for owner in set(owners):
                if source and source.int_ids and self.ann.header(kind, owner):
                    self._schedule(kind, owner)

    def drop_all(self) -> None:
        """Forget every vector and the model they belong to (before a reindex)."""
        self.tables.drop_all()
        self._forget_partitions()

    def _forget_partitions(self) -> None:
        """After a model change or a reindex: nothing in memory or on disk is current."""
        self._high_water.clear()
        with self._lock:
            self._parts.clear()
            self._anns.clear()
            self._no_ann.clear()
        if self.ann is not None:
            self.ann.remove_all()


def _blob(vector: Any) -> bytes:
    """A stored vector as float32 bytes (sqlite-vec returns bytes, pgvector a numpy array)."""
    if isinstance(vector, bytes):
        return vector
    import numpy as np

    if hasattr(vector, "to_numpy"):  # pgvector's Vector
        vector = vector.to_numpy()
    return np.asarray(vector, dtype=np.float32).tobytes()


def _vector_blocks(
    reader: VectorTables, kind: str, owner: str, dim: int
) -> Iterator[tuple[Any, Any]]:
    """(rowids, float32 vectors) of a partition, in blocks."""
    import numpy as np

    for block in reader.stream_vectors(kind, owner):
        ids = np.fromiter((r[0] for r in block), dtype=np.int64, count=len(block))
        vecs = np.frombuffer(b"".join(_blob(r[1]) for r in block), dtype=np.float32)
        yield ids, vecs.reshape(len(block), dim)


def _items(kind: str, items: Sequence[str]) -> Any:
    """Memory ids as the partition keeps them: integers where the kind's ids are."""
    import numpy as np

    if SOURCES[kind].int_ids:
        return np.array([int(i) for i in items], dtype=np.int64)
    return np.array(items, dtype=object)
