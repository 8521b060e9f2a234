"""In-memory search over one partition of vectors (one kind of memory of one owner).

sqlite-vec keeps the vectors on disk; searching them there costs ~90 ms at 100 k
vectors and over a second at 1 M (each KNN re-reads every vector, and reading
candidates back by rowid costs ~0.25 ms each). So each partition is mirrored in
memory in compact form — 444 bytes per 384-d vector:

- ``bits``: the sign of every dimension, packed (48 bytes): Hamming distance
  picks candidates in ~7 ms per 100 k vectors;
- ``codes`` + ``scales``: each vector quantised to int8 with its own scale
  (384 bytes): the candidates' cosine is computed from them to within ~0.01.

Partitions up to :data:`FULL_SCAN_MAX` vectors are scored whole from the int8
codes; larger ones take the :data:`CANDIDATES` nearest by Hamming distance
first. Arrays grow by half when full, so appending a batch is cheap.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np
import numpy.typing as npt

FULL_SCAN_MAX = 20_000
CANDIDATES = 5_000  # Hamming-nearest rows rescored per query (or 50 per wanted result)


def quantise(vectors: npt.NDArray[np.float32]) -> tuple[Any, Any, Any]:
    """(int8 codes, float32 scales, packed sign bits) of unit vectors, one row each."""
    v = np.asarray(vectors, dtype=np.float32)
    peak = np.maximum(np.abs(v).max(axis=1), 1e-12)
    codes = np.clip(np.rint(v * (127.0 / peak)[:, None]), -127, 127).astype(np.int8)
    scales = (peak / 127.0).astype(np.float32)
    bits = np.packbits(v > 0, axis=1)
    return codes, scales, bits


class Partition:
    """The vectors of one (kind, owner), appendable, searchable from any thread."""

    def __init__(self, dim: int, generation: str) -> None:
        self.dim = dim
        self.generation = generation
        self.max_rowid = 0
        self._n = 0
        self._rowids = np.zeros(0, dtype=np.int64)
        self._codes = np.zeros((0, dim), dtype=np.int8)
        self._scales = np.zeros(0, dtype=np.float32)
        self._bits = np.zeros((0, (dim + 7) // 8), dtype=np.uint8)
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return self._n

    def add(self, rowids: npt.NDArray[np.int64], vectors: npt.NDArray[np.float32]) -> None:
        """Append vectors (rowids must be new and ascending beyond ``max_rowid``)."""
        if len(rowids) == 0:
            return
        codes, scales, bits = quantise(vectors)
        with self._lock:
            need = self._n + len(rowids)
            if need > len(self._rowids):
                cap = max(need, int(len(self._rowids) * 1.5) + 1024)
                self._rowids = _grow(self._rowids, cap)
                self._codes = _grow(self._codes, cap)
                self._scales = _grow(self._scales, cap)
                self._bits = _grow(self._bits, cap)
            end = self._n + len(rowids)
            self._rowids[self._n : end] = rowids
            self._codes[self._n : end] = codes
            self._scales[self._n : end] = scales
            self._bits[self._n : end] = bits
            self._n = end
            self.max_rowid = max(self.max_rowid, int(rowids.max()))

    def search(self, query: npt.NDArray[np.float32], k: int) -> list[tuple[int, float]]:
        """The ``k`` most similar (rowid, cosine similarity), best first."""
        n = self._n  # a concurrent append only adds rows past n
        if n == 0:
            return []
        q = np.asarray(query, dtype=np.float32)
        rows: Any
        if n <= FULL_SCAN_MAX:
            rows = np.arange(n)
        else:
            want = min(n, max(CANDIDATES, 50 * k))
            qbits = np.packbits(q > 0)
            dist = np.bitwise_count(np.bitwise_xor(self._bits[:n], qbits)).sum(
                axis=1, dtype=np.uint32
            )
            rows = np.argpartition(dist, want - 1)[:want]
        sims = (self._codes[rows].astype(np.float32) @ q) * self._scales[rows]
        top = min(k, len(rows))
        best = np.argpartition(-sims, top - 1)[:top]
        best = best[np.argsort(-sims[best])]
        return [(int(self._rowids[rows[i]]), float(sims[i])) for i in best]


def _grow(a: Any, cap: int) -> Any:
    out = np.zeros((cap, *a.shape[1:]), dtype=a.dtype)
    out[: len(a)] = a
    return out
