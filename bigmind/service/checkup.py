"""The install checked, one verdict a check: the Python, the database driver, the settings, the
database and the embedding model (``bigmind doctor``; the surfaces add their own checks).

Every check says ``ok``, ``warn`` (BigMind works, with less: no sqlite-vec or pgvector, no
embedding model) or ``fail`` (the server cannot do its job as configured). A checkup only
reads: a database that does not exist yet is not created, one that does is not migrated.
With ``BIGMIND_DB_URL`` set the driver checks are PostgreSQL's (the server and pgvector)
instead of SQLite's (apsw, FTS5, sqlite-vec); opening the PostgreSQL backend may
``CREATE EXTENSION vector`` (idempotent, as the server does at start), never a table. The
lower modules are imported inside the checks that need them: ``--quick`` never loads the
model's runtime.
"""

from __future__ import annotations

import logging
import os
import platform
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from bigmind.errors import BigMindError

if TYPE_CHECKING:
    from bigmind.config import Settings
    from bigmind.storage.db import SQLiteBackend
    from bigmind.storage.pg import PostgresBackend

    AnyBackend = SQLiteBackend | PostgresBackend

Status = Literal["ok", "warn", "fail"]
MIN_PYTHON = (3, 11)
PG_CONNECT_TIMEOUT_S = 3  # libpq's floor is 2 s; doctor --quick is a container healthcheck
SKIPPED = "skipped until the settings are valid"


@dataclass(frozen=True, slots=True)
class Check:
    """The verdict of one check and the one line that explains it."""

    name: str
    status: Status
    detail: str


@dataclass(frozen=True, slots=True)
class Checkup:
    """The checks of :func:`run`, in the order a fix would go, and the settings they read
    (None: invalid, named by the settings check)."""

    settings: Settings | None
    checks: list[Check]


def run(*, quick: bool = False) -> Checkup:
    """Every check of this module: runtime, driver, settings, database, embedder (``quick``:
    the model found, not loaded)."""
    settings, settings_check = read_settings()
    if settings is None:
        if os.environ.get("BIGMIND_DB_URL", "").strip():
            drivers = [Check("postgresql", "warn", SKIPPED), Check("pgvector", "warn", SKIPPED)]
        else:
            drivers = [check_sqlite(), check_sqlite_vec()]
        return Checkup(
            None,
            [
                check_python(),
                *drivers,
                settings_check,
                Check("database", "warn", SKIPPED),
                Check("embedder", "warn", SKIPPED),
            ],
        )
    backend: AnyBackend | None
    if settings.db_url:
        server = check_postgresql(settings.db_url, allow=settings.allow_unsafe_db_role)
        if server.status == "fail":
            skipped = "skipped until PostgreSQL is reachable"
            drivers = [server, Check("pgvector", "warn", skipped)]
            db_check, backend = Check("database", "warn", skipped), None
        else:
            vec_check, db_check, backend = open_postgres(settings)
            drivers = [server, vec_check]
    else:
        drivers = [check_sqlite(), check_sqlite_vec()]
        db_check, backend = open_sqlite(settings)
    try:
        embedder = check_embedder(settings, backend, quick=quick)
    finally:
        if backend is not None:
            backend.close()
    return Checkup(settings, [check_python(), *drivers, settings_check, db_check, embedder])


# -- runtime and driver ---------------------------------------------------------------------
def check_python() -> Check:
    where = f"{platform.python_version()} ({platform.python_implementation()}, {sys.executable})"
    if sys.version_info < MIN_PYTHON:
        return Check("python", "fail", f"{where}: BigMind needs Python 3.11 or newer")
    return Check("python", "ok", where)


def check_sqlite() -> Check:
    """apsw, the SQLite it bundles, and FTS5 (every search needs it)."""
    try:
        import apsw
    except ImportError:
        return Check("sqlite", "fail", "the SQLite driver apsw is not installed: pip install apsw")
    versions = f"apsw {apsw.apsw_version()}, SQLite {apsw.sqlite_lib_version()}"
    conn = apsw.Connection(":memory:")
    try:
        conn.execute("CREATE VIRTUAL TABLE doctor_fts USING fts5(x)")
    except apsw.Error as exc:
        return Check("sqlite", "fail", f"{versions}, no FTS5 ({exc}): pip install --upgrade apsw")
    finally:
        conn.close()
    return Check("sqlite", "ok", f"{versions}, FTS5 available")


def check_sqlite_vec() -> Check:
    """sqlite-vec, loaded the way the server loads it; without it search is keyword-only."""
    from bigmind.storage.db import SQLiteBackend

    try:
        with _warnings_of("bigmind.storage.db") as notes:
            backend = SQLiteBackend(":memory:")
    except BigMindError as exc:
        return Check("sqlite-vec", "fail", str(exc))
    version = backend.vec_version
    backend.close()
    if version is None:
        why = notes[0] if notes else "it did not load"
        return Check("sqlite-vec", "warn", f"{why}: keyword search only")
    return Check("sqlite-vec", "ok", f"loaded {version}")


class _Notes(logging.Handler):
    """Keeps the messages of the records it is handed."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.notes: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.notes.append(record.getMessage())


@contextmanager
def _warnings_of(logger: str) -> Iterator[list[str]]:
    """Collect what ``logger`` warns about (the backend logs why sqlite-vec did not load)."""
    handler = _Notes()
    log = logging.getLogger(logger)
    log.addHandler(handler)
    propagate, log.propagate = log.propagate, False
    try:
        yield handler.notes
    finally:
        log.removeHandler(handler)
        log.propagate = propagate


# -- settings -------------------------------------------------------------------------------
def read_settings() -> tuple[Settings | None, Check]:
    """Read the BIGMIND_* settings; name every invalid one."""
    from pydantic import ValidationError

    from bigmind.config import Settings

    try:
        settings = Settings()
    except ValidationError as exc:
        bad = "; ".join(
            f"{_env_name(str(e['loc'][0]) if e['loc'] else '*')}: {e['msg']}" for e in exc.errors()
        )
        return None, Check("settings", "fail", f"invalid {bad}")
    return settings, _judge_settings(settings)


def _env_name(field: str) -> str:
    return "BIGMIND_" + field.upper()


def _judge_settings(settings: Settings) -> Check:
    values = []
    for field in type(settings).model_fields:
        value = getattr(settings, field)
        if field in ("db_url", "db_owner_url") and value:
            from bigmind.storage.pg import redact

            value = redact(value)  # a DSN may carry a password
        values.append(f"{_env_name(field)}={'-' if value is None else value}")
    shown = ", ".join(values)
    problems = []
    known = {_env_name(f) for f in type(settings).model_fields}
    unknown = sorted(
        k for k in os.environ if k.upper().startswith("BIGMIND_") and k.upper() not in known
    )
    if unknown:
        problems.append(f"unknown {', '.join(unknown)} ignored (a typo?)")
    if settings.log_level.upper() not in logging.getLevelNamesMapping():
        problems.append(f"BIGMIND_LOG_LEVEL={settings.log_level} is not a level; WARNING is used")
    if problems:
        return Check("settings", "warn", "; ".join(problems) + f". {shown}")
    return Check("settings", "ok", shown)


# -- PostgreSQL -----------------------------------------------------------------------------
def check_postgresql(url: str, *, allow: bool = False) -> Check:
    """One direct connection with a short timeout: reachable, which server, which database;
    a role that bypasses row-level security is warned of (``allow``: served anyway)."""
    from bigmind.storage.pg import _psycopg, redact

    where = redact(url)
    try:
        psycopg = _psycopg()
    except BigMindError as exc:
        return Check("postgresql", "fail", str(exc))
    try:
        with psycopg.connect(url, autocommit=True, connect_timeout=PG_CONNECT_TIMEOUT_S) as conn:
            row = conn.execute(
                "SELECT version() AS v, current_user AS u, rolsuper OR rolbypassrls AS free"
                " FROM pg_roles WHERE rolname = current_user"
            ).fetchone()
    except psycopg.Error as exc:
        detail = _scrub(_one_line(exc), url)
        return Check(
            "postgresql",
            "fail",
            f"cannot connect to {where}: {detail}; check BIGMIND_DB_URL "
            "(postgresql://user:password@host:port/database)",
        )
    server = str(row[0]).split(",")[0]  # "PostgreSQL 16.4 on x86_64-pc-linux-gnu, compiled by…"
    if row[2]:
        return Check(
            "postgresql",
            "warn",
            f"{server} at {where} (as {row[1]}): row-level security is NOT enforced — "
            f"{row[1]} is a superuser or has BYPASSRLS, so every user's memory is open to it; "
            + (
                "BIGMIND_ALLOW_UNSAFE_DB_ROLE=1: the gateway serves anyway; "
                if allow
                else "the gateway and team or enterprise servers refuse to start; "
            )
            + "connect BigMind as a plain role (docs/privacy-postgres.md)",
        )
    return Check("postgresql", "ok", f"{server} at {where} (as {row[1]})")


def _one_line(exc: Exception) -> str:
    """A driver message (libpq's span lines: "… failed: Connection refused\n\tIs the …")."""
    return "; ".join(line.strip() for line in str(exc).splitlines() if line.strip())


def _scrub(text: str, url: str) -> str:
    """``text`` without the DSN's password, should a driver message ever quote it."""
    from urllib.parse import unquote, urlsplit

    try:
        password = urlsplit(url).password
    except ValueError:
        return text
    for secret in {password, unquote(password)} if password else ():
        text = text.replace(secret, "***")
    return text


def open_postgres(settings: Settings) -> tuple[Check, Check, PostgresBackend | None]:
    """The pgvector and database checks; the open backend for the embedder check.

    :class:`PostgresBackend`, not ``connect_pg``: it connects and enables pgvector if it can,
    and migrates nothing.
    """
    from bigmind.storage.pg import PostgresBackend

    assert settings.db_url is not None
    try:
        with _warnings_of("bigmind.storage.pg") as notes:
            backend = PostgresBackend(
                settings.db_url, busy_timeout_ms=settings.busy_timeout_ms, pool_size=1
            )
    except BigMindError as exc:
        failed = Check("database", "fail", _scrub(str(exc), settings.db_url))
        return Check("pgvector", "warn", "skipped: the database did not open"), failed, None
    if backend.vec_version:
        vec_check = Check("pgvector", "ok", f"vector {backend.vec_version}")
    else:
        why = _scrub(" ".join(notes[0].split()), settings.db_url) if notes else "not installed"
        vec_check = Check("pgvector", "warn", f"{why}: vectors off, keyword search only")
    try:
        return vec_check, _judge_database(backend, settings), backend
    except (BigMindError, backend.Error) as exc:
        backend.close()
        detail = _scrub(_one_line(exc), settings.db_url)
        return vec_check, Check("database", "fail", f"{backend.location}: {detail}"), None


# -- database -------------------------------------------------------------------------------
def open_sqlite(settings: Settings) -> tuple[Check, SQLiteBackend | None]:
    """Integrity, schema version and the user's counts; the open backend for later checks.

    A missing file stays missing: the server creates it on first use.
    """
    from bigmind.storage.db import SQLiteBackend

    path = settings.db_path
    if not path.exists():
        parent = next(p for p in path.parents if p.exists())
        if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
            return Check(
                "database",
                "fail",
                f"{path} cannot be created: {parent} is not a writable folder; set BIGMIND_DB_PATH",
            ), None
        return Check("database", "ok", f"{path} will be created on first use"), None
    try:
        backend = SQLiteBackend(path, busy_timeout_ms=settings.busy_timeout_ms)
    except BigMindError as exc:
        return Check("database", "fail", exc.message_for("cli")), None
    try:
        return _judge_database(backend, settings), backend
    except BigMindError as exc:
        backend.close()
        return Check("database", "fail", exc.message_for("cli")), None
    except backend.Error as exc:
        backend.close()
        return Check("database", "fail", f"{path}: {exc}"), None


# BigMind's own tables: a database holding one of them without bigmind_migrations is not ours.
_OURS = ("users", "facts", "sessions")


def _judge_database(backend: AnyBackend, settings: Settings) -> Check:
    from bigmind.storage.migrations import MIGRATIONS, SCHEMA_VERSION, applied

    where = f"{backend.location} ({backend.file_size() / 1e6:.1f} MB)"
    checked = ""
    if backend.dialect == "sqlite":
        verdict = "; ".join(
            str(next(iter(r.values()))) for r in backend.query("PRAGMA quick_check")
        )
        if verdict != "ok":
            return Check("database", "fail", _damaged(where, verdict))
        checked = "quick_check ok, "
    if not backend.table_exists("bigmind_migrations"):
        return _without_schema(backend, where)
    have = applied(backend)
    known = [m.name for m in MIGRATIONS]
    newer = sorted(set(have) - set(known))
    if newer:
        return Check(
            "database",
            "fail",
            f"{where} was written by a newer BigMind (migrations {', '.join(newer)}): "
            "upgrade bigmind",
        )
    pending = [n for n in known if n not in have]
    if pending:
        return Check(
            "database",
            "warn",
            f"{where}: schema {len(have)} of {SCHEMA_VERSION}, "
            f"{len(pending)} migration(s) applied at the next start",
        )
    return Check(
        "database",
        "ok",
        f"{where}: {checked}schema {SCHEMA_VERSION} ({known[-1]}), "
        + _user_counts(backend, settings.user),
    )


def _damaged(where: str, verdict: str) -> str:
    from bigmind.storage.sqlitefile import RECOVER

    said = verdict if len(verdict) <= 160 else verdict[:159] + "…"
    return f"{where} is damaged (quick_check: {said}); {RECOVER}"


def _without_schema(backend: AnyBackend, where: str) -> Check:
    """A database without ``bigmind_migrations``: empty (fine), or someone else's."""
    if backend.dialect == "sqlite":
        if backend.query("SELECT name FROM sqlite_master LIMIT 1"):
            return Check("database", "fail", f"{where} is not a BigMind database")
        return Check("database", "ok", f"{where} is empty; set up on first use")
    tables = [
        r["name"]
        for r in backend.query(
            "SELECT table_name AS name FROM information_schema.tables"
            " WHERE table_schema = current_schema() ORDER BY table_name"
        )
    ]
    if not tables:
        return Check(
            "database", "ok", f"{where}: empty database; BigMind creates the schema on first use"
        )
    clash = [t for t in tables if t in _OURS]
    if clash:
        return Check(
            "database",
            "fail",
            f"{where} is not a BigMind database: it has {', '.join(clash)} but no "
            "bigmind_migrations; point BIGMIND_DB_URL at another database",
        )
    return Check(
        "database",
        "warn",
        f"{where}: no BigMind schema yet, beside {len(tables)} other table(s) "
        f"({', '.join(tables[:3])}{', …' if len(tables) > 3 else ''}); "
        "BigMind creates its tables on first use",
    )


def _user_counts(backend: AnyBackend, username: str) -> str:
    from bigmind.storage.facts_table import Facts
    from bigmind.storage.sessions_table import Sessions
    from bigmind.storage.users_table import Users

    user = Users(backend, "").by_name(username)
    if user is None:
        return f"user {username} not registered yet"
    mine = backend.for_user(user.id)  # PostgreSQL shows a user's rows to that user only
    facts = Facts(mine, user.id).count("active")
    sessions = Sessions(mine, user.id).counts()
    return (
        f"user {username}: facts {facts}, sessions {sessions['sessions']}"
        f" ({sessions['open_sessions']} open)"
    )


# -- embedder -------------------------------------------------------------------------------
def check_embedder(settings: Settings, backend: AnyBackend | None, *, quick: bool) -> Check:
    """The configured model: found, and (unless ``quick``) loaded and embedding one text."""
    from bigmind.search.embedder import (
        ONNX_FILE,
        TOKENIZER_FILE,
        ModelMetadata,
        model_id_of,
        precision_of,
        resolve_model_dir,
    )

    model_dir = resolve_model_dir(settings)
    if model_dir is None:
        return Check(
            "embedder",
            "warn",
            f"off (BIGMIND_EMBED_MODEL={settings.embed_model!r}): keyword search only",
        )
    if not model_dir.is_dir():
        return Check("embedder", "warn", _no_model(settings, model_dir))
    try:
        if quick:
            meta = ModelMetadata.read(model_dir)
            missing = [f for f in (ONNX_FILE, TOKENIZER_FILE) if not (model_dir / f).is_file()]
            if missing:
                raise BigMindError(
                    f"{model_dir} has no {', '.join(missing)}; "
                    "re-create it with `bigmind model export`"
                )
            model_id, dim = model_id_of(meta, precision_of(settings, model_dir)), meta.dim
            detail = f"{model_id} ({dim} d) found at {model_dir}, not loaded (--quick)"
        else:
            model_id, dim, ms = _embed_one(settings)
            detail = f"{model_id} loaded from {model_dir}: {dim} d, one text embedded in {ms} ms"
    except BigMindError as exc:
        return Check("embedder", "fail", str(exc))
    held = _held_model(backend)
    if held is not None and held != (model_id, dim):
        return Check(
            "embedder",
            "warn",
            f"{detail}; but the stored vectors are from {held[0]} ({held[1]} d): "
            "run `bigmind reindex` (keyword search until then)",
        )
    return Check("embedder", "ok", detail)


def _no_model(settings: Settings, model_dir: Path) -> str:
    """Where the model should be, and how it gets there."""
    from bigmind.config import DEFAULT_EMBED_MODEL
    from bigmind.search.embedder import missing_model

    if settings.embed_model.strip() != DEFAULT_EMBED_MODEL:
        return f"{missing_model(settings, model_dir)} Keyword search until then."
    when = (
        "BIGMIND_OFFLINE is set: the server will not download it"
        if settings.offline
        else "or the server downloads it at its next start"
    )
    return f"no model at {model_dir}: run `bigmind model fetch` ({when}; keyword search until then)"


def _embed_one(settings: Settings) -> tuple[str, int, int]:
    """Load the model and embed one text; (model id, dimension, milliseconds)."""
    import numpy as np
    from onnxruntime.capi import onnxruntime_pybind11_state as ort_state

    from bigmind.search.embedder import load_embedder

    started = time.perf_counter()
    emb = load_embedder(settings)
    assert emb is not None  # resolve_model_dir said it is on
    try:
        vec = emb.embed(["BigMind doctor checks the embedding model."])
    except (ort_state.Fail, ort_state.InvalidArgument, ort_state.RuntimeException) as exc:
        raise BigMindError(f"{emb.model_id} loads but cannot embed ({exc})") from exc
    ms = round((time.perf_counter() - started) * 1000)
    norm = float(np.linalg.norm(vec[0])) if vec.shape == (1, emb.dim) else 0.0
    if abs(norm - 1.0) > 1e-3:
        raise BigMindError(
            f"{emb.model_id} returned a {vec.shape} vector of norm {norm:.3f}, expected "
            f"(1, {emb.dim}) of norm 1; re-create it with `bigmind model export`"
        )
    return emb.model_id, emb.dim, ms


def _held_model(backend: AnyBackend | None) -> tuple[str, int] | None:
    """The model the stored vectors were made with (None: no database or no vectors yet)."""
    from bigmind.search.vectors import VectorStore

    if backend is None:
        return None
    try:
        if not backend.table_exists("embedding_state"):
            return None
        return VectorStore(backend).model()
    except (BigMindError, backend.Error):
        return None  # the database check already says what is wrong
