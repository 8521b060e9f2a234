"""Persisted approximate indexes of big vector partitions (search/ann.py): reopened by
memory-mapping, in step with the database, never answering with a deleted vector, rebuilt
when damaged or belonging to other vectors. Small data and a tiny threshold."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from bigmind.search.ann import index_dir
from bigmind.search.vectors import Pending, VectorStore
from bigmind.storage.db import Backend

DIM = 32
MIN = 50  # ann_min_vectors: partitions of 50 vectors and more get an index
Opener = Callable[..., VectorStore]
OWNER = "u1"


def unit(n: int, seed: int) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=(n, DIM)).astype(np.float32)
    out: np.ndarray = v / np.linalg.norm(v, axis=1, keepdims=True)
    return out


def write(vs: VectorStore, first: int, vecs: np.ndarray, kind: str = "chunk") -> None:
    items = [
        Pending(kind, str(first + i), OWNER, f"t{first + i}", f"h{first + i}-{vecs[i, 0]:.6f}")
        for i in range(len(vecs))
    ]
    vs.write(items, vecs, "test-model")


def exact(ids: list[str], vecs: np.ndarray, q: np.ndarray, k: int) -> list[str]:
    return [ids[i] for i in np.argsort(-(vecs @ q))[:k]]


def wait_builds(vs: VectorStore) -> None:
    for t in list(vs._loaders):
        t.join(60)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    return tmp_path / "memory.db.vec"


@pytest.fixture
def opened(backend: Backend) -> Iterator[Callable[..., VectorStore]]:
    """VectorStores on the test's database; their background builds end before it closes."""
    made: list[VectorStore] = []

    def make(folder: Path | None = None, db: Backend = backend) -> VectorStore:
        made.append(VectorStore(db, folder, MIN))
        return made[-1]

    yield make
    for vs in made:
        assert vs.close(60)


@pytest.fixture
def built(opened: Callable[..., VectorStore], folder: Path) -> tuple[VectorStore, np.ndarray]:
    """300 chunk vectors of one owner, their index built and saved."""
    vs = opened(folder)
    vs.adopt("test-model", DIM)
    vecs = unit(300, 1)
    write(vs, 1, vecs)
    assert vs.build_index("chunk", OWNER) is not None
    return vs, vecs


def test_a_reopened_index_answers_like_exact_knn_with_rows_written_since(
    built: tuple[VectorStore, np.ndarray], folder: Path, opened: Opener
) -> None:
    vs, vecs = built
    assert sorted(p.suffix for p in folder.iterdir()) == [".json", ".usearch"]
    assert {oct(p.stat().st_mode & 0o777) for p in folder.iterdir()} == {"0o600"}  # private
    ids = [str(i + 1) for i in range(len(vecs))]
    other = opened(folder)  # the next start
    for seed in range(10):
        q = unit(1, 100 + seed)[0]
        got = other.knn("chunk", OWNER, q, 5)
        assert [n.item_id for n in got] == exact(ids, vecs, q, 5)
        assert abs(got[0].similarity - float(vecs[int(got[0].item_id) - 1] @ q)) < 0.01
    assert ("chunk", OWNER) in other._anns  # answered by the index, not a full load
    assert other._parts[("chunk", OWNER)].base > 0  # beside it, only the rows written since
    queries = unit(8, 3)  # searches from several threads (the HTTP gateway's) agree
    want = [[n.item_id for n in other.knn("chunk", OWNER, q, 5)] for q in queries]
    got: list[list[list[str]]] = []

    def run() -> None:
        got.append([[n.item_id for n in other.knn("chunk", OWNER, q, 5)] for q in queries])

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert got == [want] * 4
    q = unit(1, 7)[0]
    write(vs, 1000, q[None, :])  # another process writes a vector equal to the query
    assert other.knn("chunk", OWNER, q, 3)[0].item_id == "1000"
    write(other, 1001, -q[None, :])  # and this one (appended to its delta directly)
    assert other.knn("chunk", OWNER, -q, 1)[0].item_id == "1001"


def test_a_deleted_memory_is_never_returned(
    built: tuple[VectorStore, np.ndarray], backend: Backend, folder: Path, opened: Opener
) -> None:
    _, vecs = built
    other = opened(folder)
    q = vecs[41]  # item "42"
    assert other.knn("chunk", OWNER, q, 5)[0].item_id == "42"
    with backend.transaction() as tx:
        VectorStore.forget(tx, "chunk", ["42"])
    other.discard(["chunk"])  # what Runtime.forgot does
    for vs in (other, opened(folder)):  # this process, and a new one
        got = [n.item_id for n in vs.knn("chunk", OWNER, q, 5)]
        assert "42" not in got and len(got) == 5
        assert ("chunk", OWNER) in vs._anns


def test_a_forget_rebuilds_the_index_without_the_deleted_vector(
    built: tuple[VectorStore, np.ndarray], backend: Backend, folder: Path
) -> None:
    """The index file is a copy of the vectors: a forget makes a new one without them."""
    vs, _ = built
    before = {p.name for p in folder.glob("*.usearch")}
    old = vs._anns[("chunk", OWNER)]
    rows = backend.query("SELECT id FROM embeddings WHERE kind = 'chunk' AND item_id = '42'")
    rowid = int(rows[0]["id"])
    assert rowid in old._index  # the graph's keys are the vectors' rowids
    with backend.transaction() as tx:
        VectorStore.forget(tx, "chunk", ["42"])
    vs.discard(["chunk"], [OWNER, "someone-else"])  # what Runtime.forgot does
    wait_builds(vs)
    after = {p.name for p in folder.glob("*.usearch")}
    assert len(after) == 1 and after.isdisjoint(before)  # the old file is gone
    new = vs._anns[("chunk", OWNER)]
    assert len(new) == len(old) - 1 and rowid not in new._index


def test_a_forget_during_a_build_makes_it_build_once_more(
    built: tuple[VectorStore, np.ndarray],
    backend: Backend,
    folder: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A build in flight may have read a vector a forget deleted since: asked again while it
    runs, it runs once more when it ends (and no ask is lost between its end and the next)."""
    vs, _ = built
    caplog.set_level(logging.INFO, logger="bigmind.search.vectors")
    with vs._build_lock:  # the build started by the first forget waits here
        with backend.transaction() as tx:
            VectorStore.forget(tx, "chunk", ["7"])
        vs.discard(["chunk"], [OWNER])
        for _ in range(3000):  # until the builder has taken the ask (and waits for the lock)
            if ("chunk", OWNER) not in vs._stale:
                break
            time.sleep(0.01)
        with backend.transaction() as tx:
            VectorStore.forget(tx, "chunk", ["8"])
        vs.discard(["chunk"], [OWNER])  # while the first is in flight
    wait_builds(vs)
    builds = [r for r in caplog.records if r.getMessage().startswith("vector index of chunk")]
    assert len(builds) == 2
    assert len(vs._anns[("chunk", OWNER)]) == 298
    assert len(list(folder.glob("*.usearch"))) == 1


def test_an_index_of_another_database_is_not_used_and_is_rebuilt(
    built: tuple[VectorStore, np.ndarray], tmp_path: Path, folder: Path, opened: Opener
) -> None:
    """The index folder beside another database (a different file restored at the same path):
    the same rowids name other memories there, so the index is not used, and is rebuilt."""
    import shutil

    from bigmind.storage.connect import connect

    moved = tmp_path / "other.db.vec"
    shutil.copytree(folder, moved)
    db = connect(tmp_path / "other.db")
    try:
        plain = opened(None, db)
        plain.adopt("test-model", DIM)
        new = unit(120, 2)
        write(plain, 5000, new)  # rowids 1..120, inside the copied index's range
        other = opened(moved, db)
        ids = [str(5000 + i) for i in range(len(new))]
        for seed in range(5):
            q = unit(1, 200 + seed)[0]
            assert [n.item_id for n in other.knn("chunk", OWNER, q, 5)] == exact(ids, new, q, 5)
        # the copied index is never loaded; its own may already be built (it is rebuilt in the
        # background from the first search, and holds this database's 120 vectors only)
        held = other._anns.get(("chunk", OWNER))
        assert held is None or len(held) == len(new)
        wait_builds(other)  # the partition is big enough: its own index was built
        again = opened(moved, db)
        assert again.knn("chunk", OWNER, new[3], 1)[0].item_id == "5003"
        assert ("chunk", OWNER) in again._anns
    finally:
        db.close()


def test_a_damaged_index_is_not_used_and_is_rebuilt(
    built: tuple[VectorStore, np.ndarray], backend: Backend, folder: Path, opened: Opener
) -> None:
    import shutil

    _, vecs = built
    (index,) = folder.glob("*.usearch")
    data = bytearray(index.read_bytes())
    for at in range(len(data) // 2, len(data) // 2 + 64):
        data[at] ^= 0xFF
    index.write_bytes(bytes(data))
    other = opened(folder)
    assert other.knn("chunk", OWNER, vecs[9], 1)[0].item_id == "10"  # from the tables
    wait_builds(other)  # a new index was built, in a file of its own
    assert [p.name for p in folder.glob("*.usearch")] != [index.name]
    assert other._anns[("chunk", OWNER)].header.file != index.name
    assert opened(folder).knn("chunk", OWNER, vecs[9], 1)[0].item_id == "10"
    shutil.rmtree(folder)  # deleting the folder is harmless
    assert opened(folder).knn("chunk", OWNER, vecs[0], 1)[0].item_id == "1"


def test_where_index_files_live(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    assert index_dir(str(db), "sqlite", tmp_path / "home") == tmp_path / "memory.db.vec"
    assert index_dir(":memory:", "sqlite", tmp_path / "home") is None
    pg = index_dir("postgresql://u@h/db", "postgresql", tmp_path / "home")
    assert pg is not None and pg.parent == tmp_path / "home" / "vec"
