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

Every statement is :mod:`bigmind.storage.vectors`'s; this module keeps the partitions,
the scan positions and the decisions.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from bigmind.models import content_hash
from bigmind.storage.db import Backend, Row, Tx
from bigmind.storage.vectors import SELECTS, SEP, VectorTables, Written

if TYPE_CHECKING:
    from bigmind.search.vecindex import Partition

log = logging.getLogger(__name__)

MAX_K = 4096  # sqlite-vec's KNN limit
LOAD_ON_DEMAND_MAX = 50_000  # bigger partitions are loaded by warm(); until then SQL KNN
CATCH_UP_MAX = 5_000  # more new rows than this from other processes: reload the partition


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
    :data:`bigmind.storage.vectors.SELECTS`')."""

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

    def __init__(self, db: Backend) -> None:
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
        part = self._partition(kind, owner, load_big=False, fresh=fresh)
        if part is not None:
            return [Neighbour(item, sim) for item, sim in part.nearest(query, k)]
        # A big partition not loaded yet: ask the database (slower, same answer).
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
                part = self._partition(kind, owner, load_big=True)
                loaded += len(part) if part is not None else 0
        return loaded

    def _partition(
        self, kind: str, owner: str, *, load_big: bool, fresh: Freshness | None = None
    ) -> Partition | None:
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
                and part.generation == gen
                and self._catch_up(part, kind, owner, fresh.top)
            ):
                return part
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
        return part

    def _load_later(self, kind: str, owner: str) -> None:
        """Load a big partition in a background thread (once at a time), e.g. after a vacuum
        changed it: searches use sqlite-vec until it is in memory again."""
        key = (kind, owner)
        with self._lock:
            if key in self._loading or self._closing.is_set():
                return
            self._loading.add(key)

        def run() -> None:
            try:
                self._partition(kind, owner, load_big=True)
            except (OSError, self.db.Error) as exc:
                log.warning("could not load %s vectors into memory: %s", kind, exc)
            finally:
                with self._lock:
                    self._loading.discard(key)

        loader = threading.Thread(target=run, name="bigmind-vector-load", daemon=True)
        with self._lock:
            self._loaders = [t for t in self._loaders if t.is_alive()] + [loader]
        loader.start()

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

    def _catch_up(self, part: Partition, kind: str, owner: str, top: int) -> bool:
        """Add rows other processes wrote (``top``: the table's highest rowid now); False if
        there are too many (reload instead)."""
        import numpy as np

        if top == part.seen_top:
            return True  # nothing was written anywhere since the last look
        new = self.tables.items_after(kind, owner, part.max_rowid, CATCH_UP_MAX + 1)
        if len(new) > CATCH_UP_MAX:
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

    def similarity(self, kind: str, item_ids: Iterable[str], query: Any) -> dict[str, float]:
        """Exact cosine similarity of ``query`` to the stored vectors of these memories."""
        ids = list(item_ids)
        if not ids:
            return {}
        return self.tables.similarity(kind, ids, query.astype("float32"))

    @staticmethod
    def forget(tx: Tx, kind: str, item_ids: Sequence[object]) -> int:
        """Delete the vectors of memories that were deleted (inside the deleting transaction);
        how many there were."""
        return VectorTables.forget(tx, kind, item_ids)

    def discard(self, kinds: Iterable[str]) -> None:
        """Drop the in-memory partitions of these kinds now (vectors of them were deleted):
        the next search reads them again from the tables."""
        drop = set(kinds)
        with self._lock:
            for key in [k for k in self._parts if k[0] in drop]:
                del self._parts[key]

    def drop_all(self) -> None:
        """Forget every vector and the model they belong to (before a reindex)."""
        self.tables.drop_all()
        self._forget_partitions()

    def _forget_partitions(self) -> None:
        self._high_water.clear()
        with self._lock:
            self._parts.clear()


def _blob(vector: Any) -> bytes:
    """A stored vector as float32 bytes (sqlite-vec returns bytes, pgvector a numpy array)."""
    if isinstance(vector, bytes):
        return vector
    import numpy as np

    if hasattr(vector, "to_numpy"):  # pgvector's Vector
        vector = vector.to_numpy()
    return np.asarray(vector, dtype=np.float32).tobytes()


def _items(kind: str, items: Sequence[str]) -> Any:
    """Memory ids as the partition keeps them: integers where the kind's ids are."""
    import numpy as np

    if SOURCES[kind].int_ids:
        return np.array([int(i) for i in items], dtype=np.int64)
    return np.array(items, dtype=object)
