"""The composition root's state: settings, and a store opened on first use.

Opening lazily keeps ``initialize`` and ``tools/list`` independent of the
database, so the server answers at once and a bad path becomes a clear tool
error instead of a client that never connects.
"""

from __future__ import annotations

import threading

from bigmind.config import Settings
from bigmind.db import SQLiteBackend, connect
from bigmind.errors import BackendUnavailable
from bigmind.store import Store


class Runtime:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._store: Store | None = None
        self._lock = threading.Lock()

    @property
    def store(self) -> Store:
        if self._store is None:
            with self._lock:
                if self._store is None:
                    self._store = self._open()
        return self._store

    def _open(self) -> Store:
        s = self.settings
        if s.db_url:
            raise BackendUnavailable(
                "BIGMIND_DB_URL (PostgreSQL) is not supported by this version; "
                "unset it to use the SQLite file at BIGMIND_DB_PATH."
            )
        backend: SQLiteBackend = connect(s.db_path, busy_timeout_ms=s.busy_timeout_ms)
        return Store(backend, s.user, mode=s.mode)

    def close(self) -> None:
        with self._lock:
            if self._store is not None:
                self._store.db.close()
                self._store = None
