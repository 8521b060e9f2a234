"""The composition root's state: settings, and a store opened on first use.

Opening lazily keeps ``initialize`` and ``tools/list`` independent of the
database, so the server answers at once and a bad path becomes a clear tool
error instead of a client that never connects.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from bigmind.config import Settings
from bigmind.db import open_database
from bigmind.store import Store

if TYPE_CHECKING:
    from bigmind.recall import Recall
    from bigmind.semantic import Semantic
    from bigmind.webserver import ProfileServer

log = logging.getLogger(__name__)
RESTART_DELAY_S = 0.5  # long enough for the reply to reach the client


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
    ) -> None:
        self.settings = settings
        self.background = background
        self._store: Store | None = None
        self._semantic: Semantic | None = None
        self._web: ProfileServer | None = None
        self._lock = threading.Lock()
        self._exit = exit_process

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
        if self._store is None:
            with self._lock:
                if self._store is None:
                    self._store = self._open()
        return self._store

    def _open(self) -> Store:
        s = self.settings
        backend = open_database(s)
        store = Store(backend, s.user, mode=s.mode)
        if self.background:
            from bigmind.semantic import Semantic

            self._semantic = Semantic(backend, s)
            self._semantic.start()
        return store

    @property
    def semantic(self) -> Semantic | None:
        """The semantic index, once the store is open (None in CLI runs)."""
        _ = self.store
        return self._semantic

    def recall(self) -> Recall:
        from bigmind.recall import Recall

        return Recall(self.store, self.semantic)

    @property
    def web(self) -> ProfileServer:
        """The profile page (started on first use of its URL)."""
        if self._web is None:
            from bigmind.webserver import ProfileServer

            with self._lock:  # `serve`'s start-up thread and a first tool call may race here
                if self._web is None:
                    self._web = ProfileServer(self)
        return self._web

    def wrote(self) -> None:
        """A tool stored something: let the background embedder pick it up."""
        if self._semantic is not None:
            self._semantic.notify()

    def close(self) -> None:
        if self._web is not None:
            self._web.stop()
        with self._lock:
            if self._semantic is not None:
                self._semantic.close()
                self._semantic = None
            if self._store is not None:
                self._store.db.close()
                self._store = None
