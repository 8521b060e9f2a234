"""Approximate nearest-neighbour indexes of big vector partitions, persisted beside the database.

A partition (one kind of memory of one owner) with at least ``Settings.ann_min_vectors``
vectors gets an HNSW graph (`usearch <https://github.com/unum-cloud/usearch>`_, half-precision
scalars, cosine) saved in one file and opened by memory-mapping it (``Index.restore(path,
view=True)``): a million vectors are searchable a fraction of a second after start instead of
after a minute of reading them into memory, and a search visits ~1,000 of them instead of
scanning all (measured in bench/README.md, "Semantic search latency").

The files are derived data: the database stays the store of record, and deleting them is
harmless (they are rebuilt in the background). Where they live: beside a SQLite database in
``<db>.vec/``; for PostgreSQL under ``<home>/vec/<hash of the database's address>/``. Per
partition, ``<kind>-<owner hash>.json`` (the header: format, model, dimension, generation,
highest rowid covered, the identity of that row, the index file's name, size and checksum) and
the index file it names. A file is written under a temporary name and renamed; the header is
renamed last, so a reader sees either the old pair or the new one.

The graph's keys are the vectors' rowids (``embeddings.id``). What keeps answers right:

- a header whose format, kind, owner, model or dimension differs, whose index file's size or
  checksum differs, or whose anchor row (the highest rowid covered) no longer holds the same
  memory and content is not used (the caller rebuilds it);
- rows past the highest rowid covered are searched from a small in-memory delta;
- a vector deleted or replaced since the build still sits in the graph, so every rowid found
  is mapped to its memory through the ``embeddings`` table, where a deleted vector has no row:
  it is dropped there and never returned.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import threading
import time
import uuid
import zlib
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

FORMAT = 1
DTYPE = "f16"  # i8 lost 5-10 points of recall@10 on clustered vectors; f32 doubles the file
# Chosen on bench/semantic_latency.py's 10 k vectors with real questions as queries (their
# nearest vector is at cosine ~0.39, so the graph must be well connected): recall@10 against
# exact KNN 0.83 with connectivity 16 / expansion 64 / search 128, 0.86 at any search width,
# 0.96 with 32 / 128 / 512 (search ~1 ms); the build costs twice as long.
CONNECTIVITY = 32
EXPANSION_ADD = 128
EXPANSION_SEARCH = 512
BUILD_BLOCK = 2_000  # vectors added at a time (a closing process stops between blocks)
CHECK_BLOCK = 1 << 22  # bytes read at a time for the checksum


@dataclass(frozen=True, slots=True)
class Header:
    """What an index file covers and how to tell that it still fits the database."""

    format: int
    kind: str
    owner: str
    model: str
    dim: int
    generation: str  # the kind's generation at build time (informative: deletions are filtered)
    max_rowid: int  # every vector of the partition up to this rowid is in the graph
    count: int
    anchor: str  # item id and content hash of the row ``max_rowid``: the database's identity
    file: str
    size: int
    checksum: str
    built_at: float


class AnnIndex:
    """One memory-mapped index, searchable from any thread (searches take turns: usearch's
    search context is shared; one search costs ~1 ms)."""

    def __init__(self, header: Header, index: Any) -> None:
        self.header = header
        self._index = index
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return self.header.count

    def search(self, query: Any, k: int) -> tuple[list[int], list[float]]:
        """The ``k`` nearest (rowids, cosine similarities), best first."""
        import numpy as np

        q = np.asarray(query, dtype=np.float32)
        with self._lock:
            self._index.expansion_search = max(EXPANSION_SEARCH, 2 * k)
            found = self._index.search(q, k)
        keys = [int(x) for x in found.keys]
        sims = [1.0 - float(d) for d in found.distances]
        return keys, sims


class AnnFiles:
    """The index files of one database, in one folder."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _stem(self, kind: str, owner: str) -> str:
        return f"{kind}-{hashlib.sha256(owner.encode()).hexdigest()[:16]}"

    def header(self, kind: str, owner: str) -> Header | None:
        """The partition's header, or None (none written, or unreadable)."""
        path = self.root / f"{self._stem(kind, owner)}.json"
        try:
            raw = json.loads(path.read_text())
            head = Header(**raw)
        except FileNotFoundError:
            return None
        except (OSError, ValueError, TypeError) as exc:
            log.warning("ignoring the vector index header %s: %s", path, exc)
            return None
        if head.format != FORMAT or head.kind != kind or head.owner != owner:
            return None
        return head

    def open(self, head: Header) -> AnnIndex | None:
        """Map the index file a header names, after checking its size and checksum; None
        when it is missing or damaged."""
        Index = _usearch()

        path = self.root / head.file
        try:
            if path.stat().st_size != head.size or _checksum(path) != head.checksum:
                log.warning("the vector index %s is damaged; it will be rebuilt", path)
                return None
            index = Index.restore(str(path), view=True)
        except FileNotFoundError:
            return None
        except (OSError, RuntimeError, ValueError) as exc:
            log.warning("could not open the vector index %s (%s); it will be rebuilt", path, exc)
            return None
        if index is None or index.ndim != head.dim or len(index) != head.count:
            return None
        return AnnIndex(head, index)

    def build(
        self,
        kind: str,
        owner: str,
        model: tuple[str, int],
        generation: str,
        anchor: Callable[[int], str],
        blocks: Iterable[tuple[Any, Any]],
        *,
        stop: threading.Event,
        threads: int = 1,
    ) -> Header | None:
        """Build a partition's index from ``blocks`` of (rowids, float32 vectors), write it and
        its header atomically; None when ``stop`` was set meanwhile or there was nothing.
        ``anchor(rowid)`` names the memory and content of the highest rowid added."""
        import numpy as np

        Index = _usearch()

        index = Index(
            ndim=model[1],
            metric="cos",
            dtype=DTYPE,
            connectivity=CONNECTIVITY,
            expansion_add=EXPANSION_ADD,
            expansion_search=EXPANSION_SEARCH,
        )
        top = 0
        for rowids, vectors in blocks:
            for at in range(0, len(rowids), BUILD_BLOCK):
                if stop.is_set():
                    return None
                keys = np.asarray(rowids[at : at + BUILD_BLOCK], dtype=np.uint64)
                index.add(keys, vectors[at : at + BUILD_BLOCK], threads=threads)
            if len(rowids):
                top = max(top, int(np.max(rowids)))
        if len(index) == 0:
            return None
        # The vectors say what the memories say: owner-only, like the database file.
        self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
        stem = self._stem(kind, owner)
        name = f"{stem}-{uuid.uuid4().hex[:12]}.usearch"
        tmp = self.root / f".{name}.tmp"
        index.save(str(tmp))
        os.chmod(tmp, 0o600)
        _fsync(tmp)
        os.replace(tmp, self.root / name)
        head = Header(
            FORMAT,
            kind,
            owner,
            model[0],
            model[1],
            generation,
            top,
            len(index),
            anchor(top),
            name,
            (self.root / name).stat().st_size,
            _checksum(self.root / name),
            time.time(),
        )
        meta = self.root / f".{stem}-{uuid.uuid4().hex[:12]}.json.tmp"
        meta.write_text(json.dumps(asdict(head)))
        os.chmod(meta, 0o600)
        _fsync(meta)
        os.replace(meta, self.root / f"{stem}.json")
        self._sweep(stem, keep=name)
        return head

    def remove(self, kind: str, owner: str) -> None:
        """Forget a partition's index (its header first, so no reader picks the file up)."""
        stem = self._stem(kind, owner)
        (self.root / f"{stem}.json").unlink(missing_ok=True)
        self._sweep(stem, keep="")

    def remove_all(self) -> None:
        """Forget every index of the database (the vectors were dropped: a new model)."""
        if self.root.is_dir():
            for path in self.root.glob("*.json"):
                path.unlink(missing_ok=True)
            for path in self.root.glob("*.usearch"):
                path.unlink(missing_ok=True)

    def _sweep(self, stem: str, keep: str) -> None:
        """Delete the partition's older index files (a process still mapping one keeps its
        pages until it lets go)."""
        for path in self.root.glob(f"{stem}-*.usearch"):
            if path.name != keep:
                path.unlink(missing_ok=True)

    def nbytes(self) -> int:
        """The folder's size on disk."""
        if not self.root.is_dir():
            return 0
        return sum(p.stat().st_size for p in self.root.iterdir() if p.is_file())


def _usearch() -> Any:
    """usearch's ``Index``. ONNX Runtime is imported first where it is installed: importing it
    after usearch's extension crashes the interpreter (onnxruntime 1.32, usearch 2.26.6; the
    other order works), and the server loads the model after it may have opened an index."""
    import importlib.util

    if importlib.util.find_spec("onnxruntime") is not None:
        import onnxruntime  # noqa: F401

    from usearch.index import Index

    return Index


def _checksum(path: Path) -> str:
    """CRC-32 of the file (~1.7 GB/s here, against 0.3 for BLAKE2: it guards against damage,
    not tampering; reading it also brings the file into the page cache)."""
    crc = 0
    with path.open("rb") as fh:
        while block := fh.read(CHECK_BLOCK):
            crc = zlib.crc32(block, crc)
    return f"{crc:08x}"


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def index_dir(location: str, dialect: str, home: Path) -> Path | None:
    """Where a database's index files go: ``<db>.vec/`` beside a SQLite file, under
    ``<home>/vec/`` for PostgreSQL (keyed by the address without password); None for an
    in-memory database."""
    if dialect == "postgresql":
        return home / "vec" / hashlib.sha256(location.encode()).hexdigest()[:16]
    if location in ("", ":memory:"):
        return None
    return Path(location + ".vec")
