"""The semantic index as a service: loads the model and embeds in the background.

Nothing here ever makes a tool wait for the model. :meth:`Semantic.start` spawns
one daemon thread that loads the embedder, adopts or checks the vector tables'
model, then embeds every memory without a vector in batches, and afterwards
sleeps until :meth:`Semantic.notify` (called after writes) or a periodic timer
wakes it. Until the model is ready, :meth:`Semantic.embed_query` returns None and
searches fall back to keywords, saying why (:meth:`Semantic.status`). When the default
model is not installed yet, that thread first downloads it (``search/modelfetch.py``), once
per start, unless BIGMIND_OFFLINE is set.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from bigmind.config import Settings
from bigmind.errors import BigMindError
from bigmind.search.ann import index_dir
from bigmind.search.embedder import Embedder, load_embedder
from bigmind.search.vectors import SOURCES, Pending, VectorStore
from bigmind.storage.db import Backend
from bigmind.storage.users_table import Users

log = logging.getLogger(__name__)

BATCH = 16  # small batches: the write lock and the CPU are free again soon
IDLE_RESCAN_S = 30.0
WRITE_SETTLE_S = 0.05  # after a write wakes the thread, before it starts
QUERY_CACHE = 256


@dataclass(frozen=True, slots=True)
class Status:
    state: str  # off | unavailable | downloading | loading | ready | stale-model | error
    detail: str
    model: str | None = None
    embedded: int = 0
    backlog: int = 0

    @property
    def ready(self) -> bool:
        return self.state == "ready"

    def note(self) -> str:
        """One line for search results when vectors could not (fully) take part."""
        if self.state == "ready":
            return ""
        if self.state == "downloading":
            return f"({self.detail} — keyword search until it is ready)"
        return f"(semantic search {self.state}: {self.detail} — keyword results only)"


class Semantic:
    """Embeds memories in the background and answers query embeddings once ready."""

    def __init__(
        self,
        db: Backend,
        settings: Settings,
        *,
        loader: Callable[[Settings], Embedder | None] = load_embedder,
    ) -> None:
        # Every user's memories are embedded: the vector tables are read and written across
        # users (the tables' owner role only, under PostgreSQL's row-level security).
        self.vectors = VectorStore(
            db.maintenance(),
            index_dir(db.location, db.dialect, settings.home_dir),
            settings.ann_min_vectors,
        )
        self.settings = settings
        self._loader = loader
        self._embedder: Embedder | None = None
        self._state = "loading"
        self._detail = "the embedding model is loading"
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._idle = threading.Event()
        self._asked = 0  # notify() calls so far: idle only once a pass has seen the last one
        self._asked_lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._cache: OrderedDict[str, Any] = OrderedDict()
        self._cache_lock = threading.Lock()
        self._hooks: list[Callable[[], bool]] = []
        if settings.embed_model.strip().lower() in ("", "off", "none"):
            self._set("off", "BIGMIND_EMBED_MODEL=off")
        elif not self.vectors.available:
            self._set("unavailable", "sqlite-vec could not be loaded (see `bigmind doctor`)")

    # -- lifecycle -----------------------------------------------------------------------
    def start(self) -> None:
        """Begin loading the model and embedding the backlog (once; returns at once)."""
        if self._thread is not None or self._state in ("off", "unavailable"):
            return
        self._thread = threading.Thread(target=self._run, name="bigmind-embedder", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> bool:
        """Stop the background thread and the vector loaders (within ``timeout``); the model
        stays loaded. True when they stopped (a model being loaded cannot be interrupted)."""
        deadline = time.monotonic() + timeout
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                return False
        return self.vectors.close(max(0.0, deadline - time.monotonic()))

    def close(self, timeout: float = 5.0) -> bool:
        """:meth:`stop`, then release the model: ONNX Runtime's session goes now, while the
        interpreter is whole. False (the model left to the thread still using it) when the
        threads did not stop in time."""
        if not self.stop(timeout):
            return False
        emb, self._embedder = self._embedder, None
        self._set("off", "closed")
        release = getattr(emb, "close", None)  # OnnxEmbedder has one; test embedders need not
        if callable(release):
            release()
        return True

    def after_embedding(self, hook: Callable[[], bool]) -> None:
        """Run ``hook`` in the background thread whenever the backlog has been embedded (the
        layers above check new memories against their neighbours there); it returns True when
        it has more to do, and is run again before the thread sleeps."""
        self._hooks.append(hook)

    def notify(self) -> None:
        """Something was written: embed it (and run the hooks) soon."""
        with self._asked_lock:
            self._asked += 1
            self._idle.clear()
            self._wake.set()

    def wait_idle(self, timeout: float = 60.0) -> bool:
        """Block until the backlog is empty (tests, CLI); False on timeout or if not running."""
        if self._thread is None:
            return False
        return self._idle.wait(timeout)

    def _set(self, state: str, detail: str) -> None:
        self._state, self._detail = state, detail

    def _run(self) -> None:
        if not self._fetch_missing_model():
            self._idle.set()
            return
        try:
            emb = self._loader(self.settings)
        except BigMindError as exc:
            self._set("error", str(exc))
            log.warning("semantic search disabled: %s", exc)
            self._idle.set()
            return
        if emb is None:
            self._set("off", "no embedding model configured")
        if emb is None or self._stop.is_set():  # or closed while the model loaded
            self._idle.set()
            return
        held = self.vectors.model()
        if held is None:
            self.vectors.adopt(emb.model_id, emb.dim)
        elif held == (emb.model_id, emb.dim):
            self.vectors.ensure(emb.dim)
        else:
            self._set(
                "stale-model",
                f"stored vectors are from {held[0]} ({held[1]} d) but the model is "
                f"{emb.model_id} ({emb.dim} d); run `bigmind reindex`",
            )
            self._idle.set()
            return
        self._embedder = emb
        self._set("ready", f"{emb.model_id} ({emb.dim} d)")
        try:
            self.vectors.warm([*self._owner_ids(), ""])
        except (BigMindError, OSError, self.vectors.db.Error) as exc:
            log.warning("could not preload vectors (searches load them on demand): %s", exc)
        while not self._stop.is_set():
            with self._asked_lock:
                self._wake.clear()
                asked = self._asked
            more = False
            try:
                # The hooks run after every batch: a new fact is checked within one batch,
                # even while a large import waits to be embedded.
                while not self._stop.is_set():
                    embedded = self.embed_batch()
                    more = self._run_hooks()
                    if not (embedded or more):
                        break
            except (BigMindError, OSError, self.vectors.db.Error) as exc:
                # A locked or busy database: nothing was lost, retry on the next wake.
                log.warning("background embedding paused: %s", exc)
                self.vectors.rescan()
                more = False
            with self._asked_lock:
                if self._asked == asked:  # no write came in during the pass
                    self._idle.set()
            if self._wake.wait(IDLE_RESCAN_S):
                # Woken by a write: let the request that wrote answer first (a pass started
                # at once took the GIL from its reply: +5 ms), and take a burst in one pass.
                self._stop.wait(WRITE_SETTLE_S)

    def _fetch_missing_model(self) -> bool:
        """Download the default model if it is missing (False: it could not be). A failure is
        reported in the status and not retried before the next start: no loop hammers a
        server that is down."""
        from bigmind.search.modelfetch import REMOTE_ONNX, auto_fetch_target, fetch_model

        target = auto_fetch_target(self.settings)
        if target is None:
            return True
        downloading = "the embedding model is downloading"
        self._set("downloading", downloading)
        log.info("downloading the embedding model from %s to %s", self.settings.model_url, target)

        def progress(name: str, done: int, total: int) -> None:
            if name == REMOTE_ONNX and total:
                share = f"{downloading} ({100 * done // total} %)"
                checked = "the embedding model was downloaded and is being checked"
                self._set("downloading", share if done < total else checked)

        def waiting() -> None:
            self._set("downloading", f"{downloading} (by another BigMind process)")

        try:
            fetch_model(
                self.settings.model_url, target, progress=progress, stop=self._stop, waiting=waiting
            )
        except BigMindError as exc:
            if self._stop.is_set():
                return False  # closing: the .part files stay, the next start resumes
            self._set(
                "error",
                f"the embedding model could not be downloaded: {exc} It is tried again at the "
                "next start; or run `bigmind model fetch`",
            )
            log.warning("semantic search disabled: %s", exc)
            return False
        self._set("loading", "the embedding model is loading")
        return True

    def _run_hooks(self) -> bool:
        """Run the hooks once each; True if any has more to do."""
        more = False
        for hook in self._hooks:
            more = hook() or more
        return more

    def _owner_ids(self) -> list[str]:
        user = Users(self.vectors.db, "").by_name(self.settings.user.strip())
        return [user.id] if user is not None else []

    def embed_batch(self, limit: int = BATCH, kinds: Iterable[str] = SOURCES) -> int:
        """Embed up to ``limit`` pending memories (of ``kinds``) now; how many were written."""
        emb = self._embedder
        if emb is None:
            return 0
        todo: list[Pending] = []
        for kind in kinds:
            todo += self.vectors.pending(kind, limit - len(todo))
            if len(todo) >= limit:
                break
        if not todo:
            return 0
        import numpy as np

        # A text embedded moments ago in a request (a stored fact's close list) is not
        # embedded again: its vector is in the query cache.
        with self._cache_lock:
            known = {i: self._cache.get(_cache_key(p.text)) for i, p in enumerate(todo)}
        missing = [i for i, v in known.items() if v is None]
        vecs = np.zeros((len(todo), emb.dim), dtype=np.float32)
        if missing:
            vecs[missing] = emb.embed([todo[i].text for i in missing])
        for i, v in known.items():
            if v is not None:
                vecs[i] = v
            elif todo[i].kind == "fact":  # the duplicate check asks for it next (embed_query)
                self._remember(todo[i].text, vecs[i])
        return self.vectors.write(todo, vecs, emb.model_id)

    # -- queries -------------------------------------------------------------------------
    @property
    def ready(self) -> bool:
        return self._state == "ready" and self._embedder is not None

    @property
    def catching_up(self) -> bool:
        """The background thread is embedding a backlog right now."""
        return self._thread is not None and self.ready and not self._idle.is_set()

    def embed_query(self, text: str) -> Any | None:
        """The query's vector, or None while the model is not ready."""
        emb = self._embedder
        if emb is None or self._state != "ready":
            return None
        key = _cache_key(text)
        with self._cache_lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        vec = emb.embed([text])[0]
        self._remember(text, vec)
        return vec

    def _remember(self, text: str, vec: Any) -> None:
        key = _cache_key(text)
        with self._cache_lock:
            self._cache[key] = vec
            self._cache.move_to_end(key)
            while len(self._cache) > QUERY_CACHE:
                self._cache.popitem(last=False)

    def status(self, *, counts: bool = False) -> Status:
        model = self._embedder.model_id if self._embedder else None
        if not counts or self._state in ("off", "unavailable"):
            return Status(self._state, self._detail, model)
        embedded = sum(self.vectors.count().values())
        backlog = sum(self.vectors.backlog().values())
        return Status(self._state, self._detail, model, embedded, backlog)

    # -- foreground use (CLI, benchmarks) ------------------------------------------------
    def load_now(self, *, adopt: bool = False) -> Embedder:
        """Load the model in the caller's thread; with ``adopt``, take over the vector tables
        even if they hold another model's vectors (dropping them)."""
        emb = self._loader(self.settings)
        if emb is None:
            raise BigMindError("No embedding model is configured (BIGMIND_EMBED_MODEL=off).")
        held = self.vectors.model()
        if adopt or held is None:
            self.vectors.adopt(emb.model_id, emb.dim)
        elif held == (emb.model_id, emb.dim):
            self.vectors.ensure(emb.dim)
        elif held != (emb.model_id, emb.dim):
            raise BigMindError(
                f"Stored vectors are from {held[0]}; run `bigmind reindex` to use {emb.model_id}."
            )
        self._embedder = emb
        self._set("ready", f"{emb.model_id} ({emb.dim} d)")
        return emb

    def embed_backlog(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Embed every memory without a current vector, now. Returns how many."""
        total = sum(self.vectors.backlog().values())
        done = 0
        while n := self.embed_batch(128):
            done += n
            if progress:
                progress(done, max(total, done))
        return done

    def reindex(self, progress: Callable[[int, int], None] | None = None) -> int:
        """Drop every vector and embed everything again with the configured model (foreground).

        Used by ``bigmind reindex`` after a model change. Returns the number embedded.
        """
        self.load_now(adopt=True)
        return self.embed_backlog(progress)


def _cache_key(text: str) -> str:
    return " ".join(text.split()).lower()
