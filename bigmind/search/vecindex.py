"""In-memory search over one partition of vectors (one kind of memory of one owner).

sqlite-vec keeps the vectors on disk; searching them there costs ~150 ms at 100 k
vectors and over a second at 1 M (each KNN re-reads every vector, and reading
candidates back by rowid costs ~0.25 ms each). So each partition is mirrored in
memory in compact form — 444 bytes per 384-d vector:

- ``bits``: the sign of every dimension, packed into 64-bit words stored word by
  word (column-major), so the Hamming distance to a query is six vectorised
  XOR + popcount passes: ~13 ms per million vectors;
- ``codes`` + ``scales``: each vector quantised to int8 with its own scale
  (384 bytes): the candidates' cosine is computed from them to within ~0.01.

Partitions up to :data:`FULL_SCAN_MAX` vectors also keep float32 rows and are
scored whole and exactly; larger ones take the :data:`CANDIDATES` nearest by
Hamming distance first (at least 1 % of the partition). Arrays grow by half when
full, so appending a batch is cheap. Each vector keeps the id of the memory it encodes,
so a search names memories without asking the database.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import numpy.typing as npt

FULL_SCAN_MAX = 20_000
CANDIDATES = 5_000  # Hamming-nearest rows rescored per query (or 1 % of n, or 50 per result)


def quantise(vectors: npt.NDArray[np.float32]) -> tuple[Any, Any, Any]:
    """(int8 codes, float32 scales, sign bits as uint64 words: words × n) of unit vectors."""
    v = np.asarray(vectors, dtype=np.float32)
    peak = np.maximum(np.abs(v).max(axis=1), 1e-12)
    codes = np.clip(np.rint(v * (127.0 / peak)[:, None]), -127, 127).astype(np.int8)
    scales = (peak / 127.0).astype(np.float32)
    return codes, scales, _sign_words(v)


def _sign_words(v: npt.NDArray[np.float32]) -> Any:
    rows = v.reshape(-1, v.shape[-1])
    pad = (-rows.shape[1]) % 64
    bits = np.packbits(np.pad(rows > 0, ((0, 0), (0, pad))), axis=1)
    return np.ascontiguousarray(bits.view(np.uint64).T)


class Partition:
    """The vectors of one (kind, owner), appendable, searchable from any thread."""

    def __init__(self, dim: int, generation: str, *, int_items: bool = True) -> None:
        self.dim = dim
        self.generation = generation
        self.base = 0  # rows up to this rowid are in a persisted index (search/ann.py)
        self.max_rowid = 0
        self.seen_top = 0  # the table-wide max rowid when this partition was last caught up
        self._n = 0
        self._rowids = np.zeros(0, dtype=np.int64)
        self._items: Any = np.zeros(0, dtype=np.int64 if int_items else object)
        self._codes = np.zeros((0, dim), dtype=np.int8)
        self._scales = np.zeros(0, dtype=np.float32)
        self._words = np.zeros(((dim + 63) // 64, 0), dtype=np.uint64)
        self._exact: Any = np.zeros((0, dim), dtype=np.float32)  # None past FULL_SCAN_MAX
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return self._n

    @property
    def nbytes(self) -> int:
        arrays: list[Any] = [self._rowids, self._items, self._codes, self._scales, self._words]
        extra = 0 if self._exact is None else int(self._exact.nbytes)
        return sum(int(a.nbytes) for a in arrays) + extra

    def add(
        self,
        rowids: npt.NDArray[np.int64],
        vectors: npt.NDArray[np.float32],
        items: Any = None,
    ) -> None:
        """Append vectors with their (new) rowids and the ids of their memories (default:
        the rowids)."""
        if len(rowids) == 0:
            return
        items = rowids if items is None else np.asarray(items, dtype=self._items.dtype)
        vectors = np.asarray(vectors, dtype=np.float32)
        codes, scales, words = quantise(vectors)
        with self._lock:
            start, end = self._n, self._n + len(rowids)
            if end > len(self._rowids):
                cap = max(end, int(len(self._rowids) * 1.5) + 1024)
                self._rowids = _grow(self._rowids, cap)
                self._items = _grow(self._items, cap)
                self._codes = _grow(self._codes, cap)
                self._scales = _grow(self._scales, cap)
                grown = np.zeros((self._words.shape[0], cap), dtype=np.uint64)
                grown[:, :start] = self._words[:, :start]
                self._words = grown
                if self._exact is not None:
                    self._exact = _grow(self._exact, cap) if end <= FULL_SCAN_MAX else None
            self._rowids[start:end] = rowids
            self._items[start:end] = items
            self._codes[start:end] = codes
            self._scales[start:end] = scales
            self._words[:, start:end] = words
            if self._exact is not None:
                self._exact[start:end] = vectors
            self._n = end
            self.max_rowid = max(self.max_rowid, int(rowids.max()))

    def search(self, query: npt.NDArray[np.float32], k: int) -> list[tuple[int, float]]:
        """The ``k`` most similar (rowid, cosine similarity), best first."""
        rows, sims = self._nearest(query, k)
        return [(int(self._rowids[r]), s) for r, s in zip(rows, sims, strict=True)]

    def nearest(self, query: npt.NDArray[np.float32], k: int) -> list[tuple[str, float]]:
        """The ``k`` most similar (memory id, cosine similarity), best first."""
        rows, sims = self._nearest(query, k)
        return [(str(self._items[r]), s) for r, s in zip(rows, sims, strict=True)]

    def _nearest(self, query: npt.NDArray[np.float32], k: int) -> tuple[list[int], list[float]]:
        n = self._n  # a concurrent append only adds rows past n
        if n == 0:
            return [], []
        q = np.asarray(query, dtype=np.float32)
        exact = self._exact
        rows: Any
        if exact is not None and n <= len(exact):
            rows = np.arange(n)
            sims = exact[:n] @ q
        else:
            want = min(n, max(CANDIDATES, n // 100, 50 * k))
            qwords = _sign_words(q)[:, 0]
            words = self._words
            dist = np.zeros(n, dtype=np.uint32)
            for w in range(words.shape[0]):
                dist += np.bitwise_count(np.bitwise_xor(words[w, :n], qwords[w]))
            rows = np.argpartition(dist, want - 1)[:want] if want < n else np.arange(n)
            sims = (self._codes[rows].astype(np.float32) @ q) * self._scales[rows]
        top = min(k, len(rows))
        best = np.argpartition(-sims, top - 1)[:top]
        best = best[np.argsort(-sims[best])]
        return [int(rows[i]) for i in best], [float(sims[i]) for i in best]


def _grow(a: Any, cap: int) -> Any:
    out = np.zeros((cap, *a.shape[1:]), dtype=a.dtype)
    out[: len(a)] = a[:cap]
    return out
