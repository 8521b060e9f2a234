"""The in-memory vector partition: int8 scoring, Hamming pre-selection, appends."""

from __future__ import annotations

import numpy as np
import pytest

from bigmind.search import vecindex
from bigmind.search.vecindex import Partition, quantise


def clustered(n: int, dim: int = 384, seed: int = 0) -> np.ndarray:
    """Unit vectors around 50 topics, like sentence embeddings (not uniform noise)."""
    rng = np.random.default_rng(seed)
    centres = rng.standard_normal((50, dim)).astype(np.float32)
    v = centres[rng.integers(0, 50, n)] + 0.9 * rng.standard_normal((n, dim)).astype(np.float32)
    return v / np.linalg.norm(v, axis=1, keepdims=True)


def exact_top(x: np.ndarray, q: np.ndarray, k: int) -> list[int]:
    return [int(i) + 1 for i in np.argsort(-(x @ q))[:k]]


def test_quantised_cosines_are_within_a_hundredth() -> None:
    x = clustered(500)
    codes, scales, bits = quantise(x)
    approx = (codes.astype(np.float32) @ x[0]) * scales
    assert np.abs(approx - x @ x[0]).max() < 0.01
    assert bits.shape == (6, 500) and bits.dtype == np.uint64 and codes.dtype == np.int8


def test_small_partitions_are_scored_whole() -> None:
    x = clustered(3_000)
    part = Partition(384, "g")
    part.add(np.arange(1, 3_001, dtype=np.int64), x)
    for qi in (0, 7, 99):
        got = [r for r, _ in part.search(x[qi], 10)]
        assert len(set(got) & set(exact_top(x, x[qi], 10))) >= 9
        assert got[0] == qi + 1


def test_large_partitions_preselect_by_hamming_with_high_recall() -> None:
    n = vecindex.FULL_SCAN_MAX + 10_000
    x = clustered(n, seed=1)
    part = Partition(384, "g")
    for start in range(0, n, 7_000):  # appended in batches: arrays grow
        part.add(
            np.arange(start + 1, min(n, start + 7_000) + 1, dtype=np.int64),
            x[start : start + 7_000],
        )
    assert len(part) == n and part.max_rowid == n
    rng = np.random.default_rng(2)
    picks = x[rng.integers(0, n, 20)]  # queries near stored memories, as real questions are
    queries = picks + 0.5 * rng.standard_normal(picks.shape).astype(np.float32)
    queries /= np.linalg.norm(queries, axis=1, keepdims=True)
    found = 0
    for q in queries:
        got = [r for r, _ in part.search(q, 10)]
        found += len(set(got) & set(exact_top(x, q, 10)))
    assert found / (10 * len(queries)) >= 0.9


def test_empty_partition_and_k_larger_than_n() -> None:
    part = Partition(384, "g")
    assert part.search(clustered(1)[0], 5) == []
    x = clustered(3)
    part.add(np.array([5, 6, 9], dtype=np.int64), x)
    got = part.search(x[2], 10)
    assert got[0][0] == 9 and len(got) == 3
    assert got[0][1] == pytest.approx(1.0, abs=0.01)


def test_sign_words_give_the_true_hamming_distance() -> None:
    x = clustered(200, seed=4)
    _codes, _scales, words = quantise(x)
    signs = x > 0
    for i in (0, 5, 199):
        naive = (signs != signs[7]).sum(axis=1)
        fast = sum(np.bitwise_count(words[w] ^ words[w, 7]) for w in range(words.shape[0]))
        assert fast[i] == naive[i]
