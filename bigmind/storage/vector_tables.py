"""Vector tables: ``vec_<kind>`` (sqlite-vec or pgvector), ``embeddings``, ``embedding_state``.

``embeddings`` maps a vector's rowid to the memory it encodes (kind, item id, owner) with the
model and content hash it was made from; ``embedding_state`` holds the model, its dimension
and each kind's generation (a new value whenever vectors are replaced or deleted). The
in-memory partitions and every decision about them are :mod:`bigmind.search.vectors`'.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from bigmind.models import now_ts
from bigmind.storage.db import Backend, Row, Tx
from bigmind.storage.pgpolicies import vector_policy_ddl
from bigmind.storage.table import marks

CONTEXT_TURNS = 2  # earlier exchanges of the session embedded with a chunk's context vector
SEP = "\x1e"  # between those exchanges in the ``before`` column
BLOCK = 10_000  # rows a partition is read in at a time


@dataclass(frozen=True, slots=True)
class Select:
    """The memories of one kind to embed: ``sql`` reads the base table ``b`` (and its joins)
    and yields ``item_id``, ``owner`` and the columns the text is made from."""

    sql: str
    int_ids: bool

    @property
    def key(self) -> str:
        """The SQL expression of a row's id as stored in ``embeddings.item_id``."""
        return "CAST(b.id AS TEXT)" if self.int_ids else "b.id"

    @property
    def base(self) -> str:
        """The FROM part of ``sql`` (the table ``b`` and its joins)."""
        return self.sql.rsplit(" FROM ", 1)[1]


SELECTS: dict[str, Select] = {
    "fact": Select(
        "SELECT b.id AS item_id, b.user_id AS owner, b.category, b.fact FROM facts b", True
    ),
    "chunk": Select(
        "SELECT b.id AS item_id, b.user_id AS owner, b.content, b.flag_reason"
        " FROM conversation_chunks b",
        True,
    ),
    # The chunk read after the exchanges just before it, for replies whose meaning lives in
    # the question they answer ("Yes, last Tuesday.").
    "chunk_context": Select(
        "SELECT b.id AS item_id, b.user_id AS owner, b.content, b.flag_reason,"
        f" (SELECT string_agg(p.content, '{SEP}' ORDER BY p.seq DESC) FROM (SELECT content, seq FROM"
        " conversation_chunks p WHERE p.session_id = b.session_id AND p.seq < b.seq"
        f" ORDER BY p.seq DESC LIMIT {CONTEXT_TURNS}) p) AS before"
        " FROM conversation_chunks b",
        True,
    ),
    "summary": Select(
        "SELECT b.id AS item_id, s.user_id AS owner, s.one_liner, s.topics, b.summary,"
        " b.key_facts FROM session_summaries b JOIN sessions s ON s.id = b.id",
        False,
    ),
    "hypothesis": Select(
        "SELECT b.id AS item_id, b.user_id AS owner, b.hypothesis, b.resolution FROM hypotheses b",
        True,
    ),
    "person": Select(
        "SELECT b.id AS item_id, '' AS owner, b.username, b.display_name, b.role, b.team,"
        " b.expertise, b.notes FROM people b",
        True,
    ),
    "global": Select(
        "SELECT b.id AS item_id, '' AS owner, b.category, b.title, b.content"
        " FROM global_knowledge b",
        True,
    ),
    # Failed approaches, embedded for the warning when a later focus or recall means the same.
    "attempt": Select(
        "SELECT b.id AS item_id, b.user_id AS owner, b.approach FROM attempts b", True
    ),
}


class Item(Protocol):
    """A memory a vector is written for."""

    @property
    def kind(self) -> str: ...
    @property
    def item_id(self) -> str: ...
    @property
    def owner(self) -> str: ...
    @property
    def digest(self) -> str: ...


@dataclass(frozen=True, slots=True)
class Written:
    """What a write changed: the highest rowid before it, the rowids added per (kind, owner)
    with the index of their item, and the kinds whose older vectors were replaced."""

    before: int
    added: dict[tuple[str, str], list[tuple[int, int]]]
    replaced: set[str]


def table(kind: str) -> str:
    if kind not in SELECTS:
        raise ValueError(f"unknown memory kind {kind!r}")
    return f"vec_{kind}"


class VectorTables:
    """The vector tables' statements on one backend (sqlite-vec or pgvector)."""

    def __init__(self, db: Backend) -> None:
        self.db = db
        self.pg = db.dialect == "postgresql"

    # -- state ---------------------------------------------------------------------------
    def freshness(self) -> dict[str, str]:
        """``embedding_state`` (model, dim, generation:<kind>) and ``top``, the highest vector
        rowid, in one statement."""
        rows = self.db.query(
            "SELECT key, value FROM embedding_state UNION ALL"
            " SELECT 'top', CAST(coalesce(max(id), 0) AS TEXT) FROM embeddings"
        )
        return {str(r["key"]): str(r["value"]) for r in rows}

    def state(self) -> dict[str, str]:
        """``embedding_state``: the model, its dimension, each kind's generation."""
        rows = self.db.query("SELECT key, value FROM embedding_state")
        return {str(r["key"]): str(r["value"]) for r in rows}

    def model(self) -> tuple[str, int] | None:
        """The (model id, dimension) the vector tables hold, or None before the first vector."""
        state = self.state()
        if "model" not in state:
            return None
        return state["model"], int(state["dim"])

    def top(self) -> int:
        """The highest vector rowid (0 before the first)."""
        return int(self.db.query("SELECT coalesce(max(id), 0) AS m FROM embeddings")[0]["m"])

    def adopt(self, model_id: str, dim: int) -> None:
        """Make the tables belong to this model: drop every vector, create the tables anew."""
        with self.db.transaction() as tx:
            self._drop(tx)
            for kind in SELECTS:
                tx.script(self.table_ddl(kind, dim))
            tx.execute(
                "INSERT INTO embedding_state(key, value) VALUES ('model', ?), ('dim', ?)",
                (model_id, str(dim)),
            )

    def ensure(self, dim: int) -> list[str]:
        """Create the vector tables of kinds added since the model was adopted (an upgrade
        brought a new kind of memory); the kinds created."""
        missing = [k for k in SELECTS if not self.db.table_exists(table(k))]
        if missing:
            with self.db.transaction() as tx:
                for kind in missing:
                    tx.script(self.table_ddl(kind, dim))
        return missing

    def table_ddl(self, kind: str, dim: int) -> str:
        """The DDL of the vector table for ``kind``."""
        t = table(kind)
        if self.pg:
            return (
                f"CREATE TABLE IF NOT EXISTS {t} (rowid BIGINT PRIMARY KEY,"
                f" user_id TEXT NOT NULL, embedding vector({dim}) NOT NULL);"
                f" CREATE INDEX IF NOT EXISTS {t}_user ON {t} (user_id, rowid);"
                f" CREATE INDEX IF NOT EXISTS {t}_hnsw ON {t} USING hnsw (embedding vector_cosine_ops);"
                f" {vector_policy_ddl(t)}"
            )
        return (
            f"CREATE VIRTUAL TABLE IF NOT EXISTS {t} USING vec0("
            f"user_id text partition key, embedding float[{dim}] distance_metric=cosine,"
            f" embedding_bin bit[{dim}])"
        )

    def drop_all(self) -> None:
        """Drop every vector table and forget every vector and the model."""
        with self.db.transaction() as tx:
            self._drop(tx)

    @staticmethod
    def _drop(tx: Tx) -> None:
        for kind in SELECTS:
            tx.script(f"DROP TABLE IF EXISTS {table(kind)}")
        tx.execute("DELETE FROM embeddings")
        tx.execute("DELETE FROM embedding_state")

    # -- backlog -------------------------------------------------------------------------
    def unembedded(self, kind: str, after: int, limit: int) -> list[Row]:
        """Up to ``limit`` memories of ``kind`` past id ``after`` with no vector, by id."""
        src = SELECTS[kind]
        return self.db.query(
            f"{src.sql} WHERE b.id > ? AND NOT EXISTS (SELECT 1 FROM embeddings e"
            f" WHERE e.kind = ? AND e.item_id = CAST(b.id AS TEXT)) ORDER BY b.id LIMIT ?",
            (after, kind, limit),
        )

    def with_hashes(self, kind: str) -> list[Row]:
        """Every memory of ``kind`` with ``_h``, its vector's content hash (None: no vector)."""
        src = SELECTS[kind]
        select = src.sql.replace("SELECT ", "SELECT e.content_hash AS _h, ", 1)
        return self.db.query(
            f"{select} LEFT JOIN embeddings e ON e.kind = ? AND e.item_id = {src.key}", (kind,)
        )

    def backlog(self) -> dict[str, int]:
        """How many memories of each kind have no vector, one statement per kind."""
        out = {}
        for kind, src in SELECTS.items():
            n = self.db.query(
                f"SELECT count(*) AS n FROM {src.base} WHERE NOT EXISTS (SELECT 1 FROM"
                f" embeddings e WHERE e.kind = ? AND e.item_id = {src.key})",
                (kind,),
            )[0]["n"]
            out[kind] = int(n)
        return out

    def count(self) -> dict[str, int]:
        """Vectors per kind."""
        rows = self.db.query("SELECT kind, count(*) AS n FROM embeddings GROUP BY kind")
        return {str(r["kind"]): int(r["n"]) for r in rows}

    # -- writes --------------------------------------------------------------------------
    def write(self, items: Sequence[Item], vectors: Any, model_id: str) -> Written:
        """Store vectors (rows of a float32 array) for ``items`` in one transaction, replacing
        older ones (their kinds get a new generation)."""
        dim = int(vectors.shape[1])
        ts = now_ts()
        added: dict[tuple[str, str], list[tuple[int, int]]] = {}
        replaced: set[str] = set()
        with self.db.transaction() as tx:
            before = int(tx.execute("SELECT coalesce(max(id), 0) AS m FROM embeddings")[0]["m"])
            for row, (p, vec) in enumerate(zip(items, vectors, strict=True)):
                blob = vec.astype("float32").tobytes()
                old = tx.execute(
                    "SELECT id FROM embeddings WHERE kind = ? AND item_id = ?", (p.kind, p.item_id)
                )
                if old:
                    tx.execute(f"DELETE FROM {table(p.kind)} WHERE rowid = ?", (old[0]["id"],))
                    tx.execute("DELETE FROM embeddings WHERE id = ?", (old[0]["id"],))
                    replaced.add(p.kind)
                rid = tx.execute(
                    "INSERT INTO embeddings(kind, item_id, user_id, model, dim, content_hash,"
                    " embedded_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
                    (p.kind, p.item_id, p.owner, model_id, dim, p.digest, ts),
                )[0]["id"]
                if self.pg:
                    tx.execute(
                        f"INSERT INTO {table(p.kind)}(rowid, user_id, embedding) VALUES (?, ?, ?)",
                        (rid, p.owner, vec.astype("float32")),
                    )
                else:
                    tx.execute(
                        f"INSERT INTO {table(p.kind)}(rowid, user_id, embedding, embedding_bin)"
                        " VALUES (?, ?, ?, vec_quantize_binary(?))",
                        (rid, p.owner, blob, blob),
                    )
                added.setdefault((p.kind, p.owner), []).append((int(rid), row))
            for kind in replaced:
                _bump_generation(tx, kind)
        return Written(before, added, replaced)

    @staticmethod
    def forget(tx: Tx, kind: str, item_ids: Sequence[object]) -> int:
        """Delete the vectors of these memories in ``tx`` (the transaction deleting them);
        how many there were."""
        count = 0
        if not item_ids:
            return count
        t = table(kind)
        for start in range(0, len(item_ids), 500):
            part = [str(i) for i in item_ids[start : start + 500]]
            gone = tx.execute(
                f"DELETE FROM embeddings WHERE kind = ? AND item_id IN ({marks(part)}) RETURNING id",
                (kind, *part),
            )
            count += len(gone)
            if gone and tx.table_exists(t):
                rids = [g["id"] for g in gone]
                tx.execute(f"DELETE FROM {t} WHERE rowid IN ({marks(rids)})", tuple(rids))
                _bump_generation(tx, kind)
        return count

    # -- partitions ----------------------------------------------------------------------
    @contextmanager
    def reader(self) -> Iterator[VectorTables]:
        """These statements on a connection of their own (a long read holds nothing up)."""
        db = self.db.reader()
        try:
            yield VectorTables(db)
        finally:
            db.close()

    def stream_items(self, kind: str, owner: str) -> Iterator[list[tuple[Any, ...]]]:
        """(rowid, item id) of a partition's vectors by rowid, in blocks."""
        return self.db.stream(
            "SELECT id, item_id FROM embeddings WHERE kind = ? AND user_id = ? ORDER BY id",
            (kind, owner),
            BLOCK,
        )

    def stream_vectors(self, kind: str, owner: str) -> Iterator[list[tuple[Any, ...]]]:
        """(rowid, vector) of a partition, in blocks, in no particular order."""
        return self.db.stream(
            f"SELECT rowid, embedding FROM {table(kind)} WHERE user_id = ?", (owner,), BLOCK
        )

    def items_after(self, kind: str, owner: str, rowid: int, limit: int) -> list[Row]:
        """``id`` and ``item_id`` of a partition's first ``limit`` vectors past ``rowid``."""
        return self.db.query(
            "SELECT id, item_id FROM embeddings WHERE kind = ? AND user_id = ? AND id > ?"
            f" ORDER BY id LIMIT {int(limit)}",
            (kind, owner, rowid),
        )

    def of_items(self, kind: str, item_ids: Sequence[str]) -> list[Row]:
        """``item_id`` and ``v`` (the vector) of these memories' vectors, in one statement."""
        return self.db.query(
            f"SELECT e.item_id, v.embedding AS v FROM embeddings e JOIN {table(kind)} v"
            f" ON v.rowid = e.id WHERE e.kind = ? AND e.item_id IN ({marks(item_ids)})",
            (kind, *item_ids),
        )

    def vectors(self, kind: str, rowids: Sequence[int]) -> list[Row]:
        """``rid`` and ``v`` (the vector) of these rowids."""
        return self.db.query(
            f"SELECT rowid AS rid, embedding AS v FROM {table(kind)}"
            f" WHERE rowid IN ({marks(rowids)})",
            rowids,
        )

    def anchor(self, kind: str, owner: str, rowid: int) -> str:
        """``item_id:content_hash`` of the partition's vector ``rowid`` ('' if there is none):
        what a persisted index checks to be sure it belongs to this database."""
        rows = self.db.query(
            "SELECT item_id, content_hash FROM embeddings WHERE id = ? AND kind = ? AND user_id = ?",
            (rowid, kind, owner),
        )
        return f"{rows[0]['item_id']}:{rows[0]['content_hash']}" if rows else ""

    def partition_size(self, kind: str, owner: str, cap: int) -> int:
        """Vectors in the partition, counted up to ``cap``."""
        return int(
            self.db.query(
                "SELECT count(*) AS n FROM (SELECT 1 FROM embeddings WHERE kind = ?"
                " AND user_id = ? LIMIT ?) AS e",
                (kind, owner, cap),
            )[0]["n"]
        )

    # -- search --------------------------------------------------------------------------
    def nearest(self, kind: str, owner: str, vector: Any, k: int) -> list[tuple[int, float]]:
        """(rowid, similarity) of the ``k`` nearest: exact in sqlite-vec; pgvector's HNSW
        index (ORDER BY the distance expression itself, so the index is used)."""
        if self.pg:
            rows = self.db.query(
                f"SELECT rowid AS rid, embedding <=> ? AS d FROM {table(kind)} WHERE user_id = ?"
                " ORDER BY embedding <=> ? LIMIT ?",
                (vector, owner, vector, k),
            )
        else:
            rows = self.db.query(
                f"SELECT rowid AS rid, distance AS d FROM {table(kind)} WHERE embedding MATCH ?"
                " AND k = ? AND user_id = ?",
                (vector.tobytes(), k, owner),
            )
        return [(int(r["rid"]), 1.0 - float(r["d"])) for r in rows]

    def item_ids(self, rowids: Sequence[int]) -> dict[int, str]:
        """The memory each of these vector rowids encodes."""
        rows = self.db.query(
            f"SELECT id, item_id FROM embeddings WHERE id IN ({marks(rowids)})", list(rowids)
        )
        return {int(r["id"]): str(r["item_id"]) for r in rows}

    def similarity(self, kind: str, item_ids: Iterable[str], vector: Any) -> dict[str, float]:
        """Exact cosine similarity of ``vector`` (float32) to these memories' vectors."""
        ids = list(item_ids)
        if not ids:
            return {}
        distance = "v.embedding <=> ?" if self.pg else "vec_distance_cosine(v.embedding, ?)"
        rows = self.db.query(
            f"SELECT e.item_id, {distance} AS d FROM embeddings e"
            f" JOIN {table(kind)} v ON v.rowid = e.id WHERE e.kind = ?"
            f" AND e.item_id IN ({marks(ids)})",
            (vector if self.pg else vector.tobytes(), kind, *ids),
        )
        return {str(r["item_id"]): 1.0 - float(r["d"]) for r in rows}


def _bump_generation(tx: Tx, kind: str) -> None:
    """Vectors of ``kind`` were replaced or deleted: in-memory copies must be reloaded."""
    tx.execute(
        "INSERT INTO embedding_state(key, value) VALUES (?, ?)"
        " ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (f"generation:{kind}", uuid.uuid4().hex),
    )
