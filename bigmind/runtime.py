"""The composition root's state: settings, and a store opened on first use.

Opening lazily keeps ``initialize`` and ``tools/list`` independent of the
database, so the server answers at once and a bad path becomes a clear tool
error instead of a client that never connects.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from bigmind import caller, project
from bigmind.config import Settings
from bigmind.errors import BackendUnavailable, BigMindError
from bigmind.memory.usage import FLUSH_AFTER_S, USE_TOP, UsageTally
from bigmind.storage.connect import open_database
from bigmind.storage.db import Backend
from bigmind.storage.store import Store

if TYPE_CHECKING:
    from bigmind.memory.erasure import Forgotten, Places
    from bigmind.models import Hit
    from bigmind.search.embedder import Embedder
    from bigmind.search.ranking import Recall
    from bigmind.search.semantic import Semantic

log = logging.getLogger(__name__)
T = TypeVar("T")
RESTART_DELAY_S = 0.5  # long enough for the reply to reach the client
NOTICES = 20  # reports kept for the next reply (older ones are in memory_diff_sessions)
STOP_WITHIN_S = 10.0  # close(): a model still loading finishes first (~1 s, more under load)


class Runtime:
    """Settings, the store, and the semantic index (started with the store when ``background``).

    The server runs with ``background=True``: the first tool call opens the database and
    starts loading the embedding model in a thread; the CLI leaves it off.
    """

    def __init__(
        self,
        settings: Settings,
        exit_process: Callable[[int], None] = os._exit,
        *,
        background: bool = False,
        loader: Callable[[Settings], Embedder | None] | None = None,
        create: bool = True,
        serves_many: bool = False,
    ) -> None:
        self.settings = settings
        # The HTTP gateway: many users, none of them the process's; no working-directory
        # project, per-user file folders, no restart by a tool.
        self.serves_many = serves_many
        self.public_url: str | None = None  # the gateway's address, for the profile tools
        self.background = background
        self.create = create  # False: a missing SQLite file raises NoMemoryYet, none is made
        self._loader = loader  # the embedding model's loader (default: the configured model)
        self._notices: dict[str, deque[str]] = {}  # per user id: told only to that user
        self._store: Store | None = None
        self._backend: Backend | None = None
        self._stores: dict[str, Store] = {}  # other users' (the HTTP gateway's callers)
        self._semantic: Semantic | None = None
        self._parts: dict[str, Any] = {}  # attached by the layers above (the profile page)
        self._lock = threading.Lock()
        self._exit = exit_process
        self.usage = UsageTally()
        self._flusher: threading.Thread | None = None
        self._closing = threading.Event()

    def restart_soon(self) -> None:
        """Close the database, then end the process after the current reply is sent."""

        def stop() -> None:
            log.warning("memory_restart_server: exiting so the client restarts BigMind")
            self.close()
            self._exit(0)

        timer = threading.Timer(RESTART_DELAY_S, stop)
        timer.daemon = True
        timer.start()

    @property
    def store(self) -> Store:
        """The store of the user the running call acts for: the one the HTTP gateway
        authenticated (:mod:`bigmind.caller`), else the configured user."""
        name = caller.current()
        return self._home() if name is None else self.store_of(name)

    def _home(self) -> Store:
        """The configured user's store, opened (with the database) on first use."""
        if self._store is None:
            with self._lock:
                if self._store is None:
                    self._store = self._open()
        return self._store

    def store_of(self, username: str) -> Store:
        """``username``'s store over the same database (made, and the user added, on first use)."""
        home = self._home()
        if username == home.user.username:
            return home
        found = self._stores.get(username)
        if found is None:
            made = Store(
                home.db,
                username,
                mode=home.mode,
                project=home.home_project,
                session_gap_minutes=home.session_gap_minutes,
            )
            with self._lock:
                found = self._stores.setdefault(username, made)
        return found

    def _open(self) -> Store:
        if self._closing.is_set():
            raise BackendUnavailable("BigMind is shutting down; start it again to continue.")
        s = self.settings
        # A server for several users refuses a role that bypasses row-level security.
        serving = self.serves_many or (self.background and s.mode != "personal")
        backend = open_database(s, create=self.create, serving=serving)
        self._backend = backend  # what close() closes (stores hold views of it)
        store = Store(
            backend,
            s.user,
            mode=s.mode,
            project=(
                project.from_setting(s.project)
                if self.serves_many
                else project.detect(os.getcwd(), s.project)
            ),
            session_gap_minutes=s.session_gap_minutes,
        )
        if self.background:
            from bigmind.memory import dedup
            from bigmind.search.embedder import load_embedder
            from bigmind.search.semantic import Semantic

            # The embedder writes every user's vectors: the maintenance scope (pgpolicies).
            sem = Semantic(backend, s, loader=self._loader or load_embedder)

            def check() -> bool:
                """Facts stored before the model was ready: checked now, outcomes reported to
                their user (every user this process serves: the gateway's callers too)."""
                more = False
                for each in [store, *list(self._stores.values())]:
                    done = dedup.check_pending(each, sem)
                    self.notice(*(o.describe() for o in done.outcomes), uid=each.uid)
                    more = more or done.more
                return more

            sem.after_embedding(check)
            self._semantic = sem
            sem.start()
        return store

    def opened(self) -> tuple[Store | None, Semantic | None]:
        """The configured user's store and the semantic index as they are now: None where not
        open yet. Never opens them (health checks and metrics make no database)."""
        return self._store, self._semantic

    @property
    def files_dir(self) -> Path:
        """Where the running call's user may have BigMind write and read files (exports):
        the data folder, or behind the gateway a folder of that user's own in it."""
        if not self.serves_many:
            return self.settings.data_dir
        return self.settings.data_dir / "users" / self.store.uid

    @property
    def places(self) -> Places:
        """The folders of the files BigMind writes for the running call's user: the Markdown
        mirrors (a forget rewrites them) and the exports (a forget names them, untouched)."""
        from bigmind.memory import exportpath, mirror
        from bigmind.memory.erasure import Places

        return Places(
            mirror.folder(self.settings.data_dir), exportpath.exports_folder(self.files_dir)
        )

    @property
    def semantic(self) -> Semantic | None:
        """The semantic index, once the store is open (None in CLI runs)."""
        _ = self.store
        return self._semantic

    def recall(self) -> Recall:
        from bigmind.search.ranking import Recall

        return Recall(self.store, self.semantic)

    def attached(self, key: str, make: Callable[[Runtime], T]) -> T:
        """The one ``key`` part of this runtime, made by ``make`` on first use (under the lock:
        `serve`'s start-up thread and a first tool call may race). A part with a ``stop()``
        is stopped by :meth:`close`. The layers above attach what this one cannot import."""
        with self._lock:
            if key not in self._parts:
                if self._closing.is_set():  # close() would not stop a part made after it
                    raise BackendUnavailable("BigMind is shutting down.")
                self._parts[key] = make(self)
            part: T = self._parts[key]
            return part

    def used(self, query: str, hits: Sequence[Hit]) -> None:
        """An agent's search returned ``hits``: count the first ones as used (in memory; the
        background flusher writes them, so the search itself writes nothing)."""
        self.usage.record(self.store.uid, query, [(h.kind, h.id) for h in hits[:USE_TOP]])
        if self.background and self._flusher is None:
            with self._lock:
                if self._flusher is None:
                    self._flusher = threading.Thread(
                        target=self._flush_loop, name="bigmind-usage", daemon=True
                    )
                    self._flusher.start()

    def _flush_loop(self) -> None:
        while not self._closing.is_set():
            self.usage.waiting.wait()
            if self._closing.wait(FLUSH_AFTER_S):
                return  # close() writes what is left
            self.flush_usage()

    def flush_usage(self) -> int:
        """Write the uses counted so far (one transaction); a failure is logged and retried
        on the next flush."""
        store = self._store
        if store is None or not len(self.usage):
            return 0
        try:
            return self.usage.flush(store.db.maintenance())  # every caller's uses
        except (BigMindError, store.db.Error) as exc:
            log.warning("usage counts not written yet: %s", exc)
            return 0

    def notice(self, *lines: str, uid: str) -> None:
        """Something happened in the background that user ``uid``'s agent should hear of (a
        merge, a conflict found): told in that user's next reply that shows notices."""
        if lines:
            with self._lock:
                self._notices.setdefault(uid, deque(maxlen=NOTICES)).extend(lines)

    def notices(self) -> list[str]:
        """The running call's user's notices not told yet (each is told once, to them only)."""
        uid = self.store.uid
        with self._lock:
            waiting = self._notices.pop(uid, None)
        return list(waiting or ())

    def wrote(self) -> None:
        """A tool stored something: let the background embedder pick it up."""
        if self._semantic is not None:
            self._semantic.notify()

    def forgot(self, done: Forgotten) -> None:
        """Memories were forgotten: drop their uses not written yet (a flush would bring their
        rows back) and the in-memory vector partitions of their kinds (re-read when next
        searched), so nothing of them stays in this process either; the persisted vector
        indexes of those kinds are rebuilt without them — or, in a process that does not
        search (the CLI), deleted, to be rebuilt by the next server that needs them."""
        self.usage.discard(done.uses)
        owners = (self.store.uid, "")  # the user's partitions, and shared ones (people)
        if self._semantic is not None:
            self._semantic.vectors.discard(done.vector_kinds, owners)
            self._semantic.notify()  # context vectors to re-make, if any
            return
        if not done.vector_kinds:
            return
        from bigmind.search.ann import AnnFiles, index_dir

        db = self.store.db
        root = index_dir(db.location, db.dialect, self.settings.home_dir)
        if root is not None and root.is_dir():
            files = AnnFiles(root)
            for kind in done.vector_kinds:
                for owner in owners:
                    files.remove(kind, owner)

    def close(self, timeout: float = STOP_WITHIN_S) -> bool:
        """Stop every background thread (usage flusher, profile page, embedder, vector
        loaders), release the model and close the database, within ``timeout`` in all.

        Returns True when every thread stopped in time. Otherwise the database is left open
        for the thread still using it (calling again finishes the job), and a process that
        ends now should skip the interpreter's finalisation (a thread inside ONNX Runtime
        would make it abort).
        """
        deadline = time.monotonic() + timeout

        def left() -> float:
            return max(0.0, deadline - time.monotonic())

        self._closing.set()
        self.usage.waiting.set()  # wake the flusher so it sees the close
        stopped = True
        if self._flusher is not None:
            self._flusher.join(left())
            stopped = not self._flusher.is_alive()
        for part in list(self._parts.values()):
            stop = getattr(part, "stop", None)
            if callable(stop):
                stop()
        self.flush_usage()
        with self._lock:
            if self._semantic is not None:
                if self._semantic.close(left()):
                    self._semantic = None
                else:
                    stopped = False
            # Never closed under a thread that may still use it (a later close() finishes).
            if self._store is not None and self._backend is not None and stopped:
                self._backend.close()
                self._store = None
                self._stores.clear()
        return stopped
