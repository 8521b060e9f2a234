"""The per-user model cache: where a model directory is written, one writer at a time, whole.

``bigmind model export`` and ``bigmind model fetch`` (and the server's first start, which
fetches) install a model the same way: under a lock on the target, into a sibling directory
that is renamed into place only once the model was checked, so a reader never sees half a
model and two processes never write the same one. The lock is a ``filelock`` lock (``flock``
/ ``LockFileEx``): the system releases it when its process dies, so a killed download leaves
no stale lock behind, as an ``O_EXCL`` lock file would.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock, Timeout

from bigmind.config import DEFAULT_EMBED_MODEL
from bigmind.errors import BigMindError, DownloadError
from bigmind.search.embedder import METADATA_FILE

DEFAULT_MODEL_ID = DEFAULT_EMBED_MODEL
DEFAULT_HUB_NAME = "sentence-transformers/all-MiniLM-L6-v2"
LOCK_POLL_S = 0.5


def sha256(path: Path) -> str:
    """The file's SHA-256, hex."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def check_target(target: Path, error: type[BigMindError]) -> None:
    """Refuse to overwrite anything that is not an earlier BigMind model (or an empty folder)."""
    is_model = target.is_dir() and (target / METADATA_FILE).is_file()
    is_empty_dir = target.is_dir() and not any(target.iterdir())
    if target.exists() and not (is_model or is_empty_dir):
        raise error(
            f"{target} exists and is not a BigMind model directory; "
            "choose another target or remove it first."
        )


@contextmanager
def locked(
    target: Path,
    *,
    stop: threading.Event | None = None,
    waiting: Callable[[], None] | None = None,
) -> Iterator[None]:
    """Hold the lock of ``target`` (a hidden file beside it). ``waiting`` is called once if
    another process holds it; a set ``stop`` ends the wait with a DownloadError."""
    target.parent.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(target.with_name(f".{target.name}.lock")))
    told = False
    while True:
        try:
            lock.acquire(timeout=LOCK_POLL_S if told else 0)
            break
        except Timeout:
            if not told and waiting is not None:
                waiting()
            told = True
            if stop is not None and stop.is_set():
                raise DownloadError("Stopped while waiting for another download.") from None
    try:
        yield
    finally:
        lock.release()


@contextmanager
def staging(target: Path) -> Iterator[Path]:
    """A new empty sibling folder of ``target`` to build the model in; removed afterwards
    unless it was swapped into place."""
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    tmp.chmod(0o755)  # mkdtemp makes it 0700
    try:
        yield tmp
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def swap_into_place(tmp: Path, target: Path, error: type[BigMindError]) -> None:
    """Rename ``tmp`` to ``target``; an earlier model there is moved aside, then deleted."""
    old = None
    if target.exists():
        old = target.with_name(f".{target.name}.old-{os.getpid()}-{time.time_ns()}")
        target.rename(old)
    try:
        tmp.rename(target)
    except OSError as exc:
        if old is not None:
            old.rename(target)
        raise error(f"Cannot move the model into {target}: {exc}") from exc
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
