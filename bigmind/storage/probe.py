"""Whether the configured database answers, asked without opening it as a store would.

A health check runs often and on a server that may not have opened its database yet: it
must make nothing (no SQLite file, no folder, no schema) and write nothing (no migration, no
WAL switch). So SQLite is opened read-only (immutable: not even a -shm file) and asked for
its schema's size; PostgreSQL gets one short direct connection and ``SELECT 1``. Each answer
is one word; what went wrong is logged (the DSN's password never is).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from bigmind.config import redact

if TYPE_CHECKING:
    from bigmind.config import Settings

log = logging.getLogger(__name__)
PROBE_TIMEOUT_S = 5  # a health check is answered within the orchestrator's timeout

Reach = Literal["ok", "absent", "unreachable"]


def reach(settings: Settings) -> Reach:
    """``ok`` when the configured database answers a read; ``absent`` when the SQLite file
    does not exist yet (the server makes it on its first call); ``unreachable`` otherwise."""
    if settings.db_url:
        return _reach_pg(settings.db_url)
    return _reach_sqlite(settings.db_path)


def _reach_sqlite(path: Path) -> Reach:
    import apsw

    if not path.exists():
        return "absent"
    # immutable: no -wal or -shm file is made beside it (a read-only connection to a WAL
    # database would make both); the schema page read here is the last checkpoint's.
    uri = path.absolute().as_uri() + "?mode=ro&immutable=1"
    try:
        conn = apsw.Connection(uri, flags=apsw.SQLITE_OPEN_READONLY | apsw.SQLITE_OPEN_URI)
    except apsw.Error as exc:
        log.warning("health: cannot open %s: %s", path, exc)
        return "unreachable"
    try:
        conn.set_busy_timeout(PROBE_TIMEOUT_S * 1000)
        conn.execute("SELECT count(*) FROM sqlite_master").fetchall()
    except apsw.Error as exc:
        log.warning("health: %s does not answer: %s", path, exc)
        return "unreachable"
    finally:
        conn.close()
    return "ok"


def _reach_pg(url: str) -> Reach:
    try:
        import psycopg
    except ImportError:
        log.warning("health: psycopg is not installed (pip install 'bigmind[postgres]')")
        return "unreachable"
    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=PROBE_TIMEOUT_S) as conn:
            conn.execute("SELECT 1").fetchone()
    except psycopg.Error as exc:
        detail = " ".join(str(exc).split())
        log.warning("health: PostgreSQL at %s does not answer: %s", redact(url), detail)
        return "unreachable"
    return "ok"
