"""``bigmind doctor``: one line per check of the install, the settings and the database.

Every check says ``ok``, ``warn`` (BigMind works, with less: no sqlite-vec, no embedding
model, no client files) or ``fail`` (the server cannot do its job as configured). Doctor
only reads: a database that does not exist yet is not created, one that does is not migrated.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import platform
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from bigmind.errors import BigMindError, InvalidInput

if TYPE_CHECKING:
    from bigmind.config import Settings
    from bigmind.db import SQLiteBackend

Status = Literal["ok", "warn", "fail"]
MARKS: dict[Status, str] = {"ok": "✓", "warn": "!", "fail": "✗"}
MIN_PYTHON = (3, 11)


@dataclass(frozen=True, slots=True)
class Check:
    """The verdict of one check and the one line that explains it."""

    name: str
    status: Status
    detail: str


def doctor_arguments(sp: argparse.ArgumentParser) -> None:
    sp.add_argument(
        "--project", default=".", help="the project whose client files to check (default: .)"
    )
    sp.add_argument("--quick", action="store_true", help="do not load the embedding model")


def cmd_doctor(args: argparse.Namespace) -> int:
    """Run every check; exit 0 when none failed, 1 otherwise."""
    project = Path(args.project).expanduser()
    if not project.is_dir():
        raise InvalidInput(f"--project {args.project} is not a directory.")
    checks = run_checks(project.resolve(), quick=args.quick)
    if args.json:
        print(json.dumps(report(checks), ensure_ascii=False))
    else:
        for c in checks:
            print(f"{MARKS[c.status]} {c.name:<10} {c.detail}")
    return 0 if all_ok(checks) else 1


def all_ok(checks: list[Check]) -> bool:
    """True when no check failed (warnings are fine)."""
    return all(c.status != "fail" for c in checks)


def report(checks: list[Check]) -> dict[str, object]:
    """The ``--json`` document."""
    return {"ok": all_ok(checks), "checks": [asdict(c) for c in checks]}


def run_checks(project: Path, *, quick: bool = False) -> list[Check]:
    """Every check, in the order a fix would go: runtime, driver, settings, data, clients."""
    checks = [check_python(), check_sqlite(), check_sqlite_vec()]
    settings, settings_check = load_settings()
    checks.append(settings_check)
    if settings is None:
        skipped = "skipped until the settings are valid"
        checks += [Check("database", "warn", skipped), Check("embedder", "warn", skipped)]
    else:
        db_check, backend = open_database(settings)
        try:
            checks += [db_check, check_embedder(settings, backend, quick=quick)]
        finally:
            if backend is not None:
                backend.close()
    checks.append(check_clients(project))
    return checks


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
    from bigmind.db import SQLiteBackend

    try:
        with _warnings_of("bigmind.db") as notes:
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
def load_settings() -> tuple[Settings | None, Check]:
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
        if field == "db_url" and value:
            value = "(set)"  # a DSN may carry a password
        values.append(f"{_env_name(field)}={'-' if value is None else value}")
    shown = ", ".join(values)
    if settings.db_url:
        return Check(
            "settings",
            "fail",
            "BIGMIND_DB_URL is set but PostgreSQL is not supported by this version; "
            f"unset it to use BIGMIND_DB_PATH. {shown}",
        )
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


# -- database -------------------------------------------------------------------------------
def open_database(settings: Settings) -> tuple[Check, SQLiteBackend | None]:
    """Integrity, schema version and the user's counts; the open backend for later checks.

    A missing file stays missing: the server creates it on first use.
    """
    from bigmind.db import SQLiteBackend

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
        return Check("database", "fail", str(exc)), None
    try:
        return _judge_database(backend, settings), backend
    except (BigMindError, backend.Error) as exc:
        backend.close()
        return Check("database", "fail", f"{path}: {exc}"), None


def _judge_database(backend: SQLiteBackend, settings: Settings) -> Check:
    from bigmind.migrations import MIGRATIONS, SCHEMA_VERSION, applied

    where = f"{backend.location} ({backend.file_size() / 1e6:.1f} MB)"
    verdict = "; ".join(str(next(iter(r.values()))) for r in backend.query("PRAGMA quick_check"))
    if verdict != "ok":
        return Check("database", "fail", f"{where}: quick_check says {verdict}")
    if not backend.table_exists("bigmind_migrations"):
        if backend.query("SELECT name FROM sqlite_master LIMIT 1"):
            return Check("database", "fail", f"{where} is not a BigMind database")
        return Check("database", "ok", f"{where} is empty; set up on first use")
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
        f"{where}: quick_check ok, schema {SCHEMA_VERSION} ({known[-1]}), "
        + _user_counts(backend, settings.user),
    )


def _user_counts(backend: SQLiteBackend, username: str) -> str:
    user = backend.query("SELECT id FROM users WHERE username = ?", (username,))
    if not user:
        return f"user {username} not registered yet"
    uid = (user[0]["id"],)
    facts = backend.query(
        "SELECT count(*) AS n FROM facts WHERE user_id = ? AND deprecated = 0", uid
    )[0]["n"]
    sessions = backend.query(
        "SELECT count(*) AS n, count(*) - count(ended_at) AS open FROM sessions WHERE user_id = ?",
        uid,
    )[0]
    return f"user {username}: facts {facts}, sessions {sessions['n']} ({sessions['open']} open)"


# -- embedder -------------------------------------------------------------------------------
def check_embedder(settings: Settings, backend: SQLiteBackend | None, *, quick: bool) -> Check:
    """The configured model: found, and (unless ``quick``) loaded and embedding one text."""
    from bigmind.embedder import ONNX_FILE, TOKENIZER_FILE, ModelMetadata, resolve_model_dir

    model_dir = resolve_model_dir(settings)
    if model_dir is None:
        return Check(
            "embedder",
            "warn",
            f"off (BIGMIND_EMBED_MODEL={settings.embed_model!r}): keyword search only",
        )
    if not model_dir.is_dir():
        return Check(
            "embedder",
            "warn",
            f"no model at {model_dir}: run `bigmind model export` (keyword search until then)",
        )
    try:
        if quick:
            meta = ModelMetadata.read(model_dir)
            missing = [f for f in (ONNX_FILE, TOKENIZER_FILE) if not (model_dir / f).is_file()]
            if missing:
                raise BigMindError(
                    f"{model_dir} has no {', '.join(missing)}; "
                    "re-create it with `bigmind model export`"
                )
            model_id, dim = meta.model_id, meta.dim
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


def _embed_one(settings: Settings) -> tuple[str, int, int]:
    """Load the model and embed one text; (model id, dimension, milliseconds)."""
    import numpy as np
    from onnxruntime.capi import onnxruntime_pybind11_state as ort_state

    from bigmind.embedder import load_embedder

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


def _held_model(backend: SQLiteBackend | None) -> tuple[str, int] | None:
    """The model the stored vectors were made with (None: no database or no vectors yet)."""
    from bigmind.vectors import VectorStore

    if backend is None or not backend.table_exists("embedding_state"):
        return None
    return VectorStore(backend).model()


# -- client files ---------------------------------------------------------------------------
def check_clients(project: Path) -> Check:
    """Which MCP client files in ``project`` carry BigMind. Never a failure: clients can be
    configured by hand or globally, and the server works without any of these files."""
    from bigmind.clients import installed_files

    fix = f"`bigmind install --client NAME --project {project}`"
    try:
        files = installed_files(project)
    except (BigMindError, OSError) as exc:
        return Check("clients", "warn", f"cannot read the client files in {project}: {exc}")
    outdated = [_named(f.client, f.path, project) for f in files if f.state == "outdated"]
    installed = [_named(f.client, f.path, project) for f in files if f.state == "installed"]
    broken = [
        f"{_named(f.client, f.path, project)} {f.state}"
        for f in files
        if f.state not in ("installed", "outdated", "absent")
    ]
    if broken:
        return Check("clients", "warn", "; ".join(broken))
    if outdated:
        return Check("clients", "warn", f"outdated: {', '.join(outdated)}; run {fix}")
    if installed:
        return Check("clients", "ok", f"installed: {', '.join(installed)}")
    return Check(
        "clients", "warn", f"no client files in {project}: run {fix}, or configure one by hand"
    )


def _named(client: str, path: Path, project: Path) -> str:
    return f"{client} ({path.relative_to(project) if path.is_relative_to(project) else path})"
