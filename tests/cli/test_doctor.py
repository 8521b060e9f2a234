"""`bigmind doctor`: one verdict per check, read-only, exit 1 only when something failed."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_run import run_cli
from pg_fixture import with_database

from bigmind.cli.doctor import MARKS
from bigmind.cli.main import main
from bigmind.config import Settings
from bigmind.runtime import Runtime
from bigmind.storage.db import Backend
from bigmind.storage.migrations import SCHEMA_VERSION
from bigmind.storage.pg import redact
from bigmind.storage.store import Store
from bigmind.web.profile_server import profile_server

PG_CHECKS = [
    "python",
    "postgresql",
    "pgvector",
    "settings",
    "database",
    "embedder",
    "profile page",
    "clients",
]


def doctor(
    capsys: pytest.CaptureFixture[str], project: Path, *args: str
) -> tuple[int, dict[str, Any]]:
    """Run `bigmind doctor --json` in this process; (exit code, {check name: check})."""
    code = main(["doctor", "--json", "--project", str(project), *args])
    out = json.loads(capsys.readouterr().out)
    assert out["ok"] == (code == 0)
    return code, {c["name"]: c for c in out["checks"]}


def with_password(url: str) -> tuple[str, str]:
    """``url`` with a password, and the password: its own, or one the test server ignores
    (pgserver trusts local connections)."""
    from urllib.parse import urlsplit

    if urlsplit(url).password:
        return url, str(urlsplit(url).password)
    user, rest = url.removeprefix("postgresql://").split("@", 1)
    return f"postgresql://{user.split(':')[0]}:hunter2-secret@{rest}", "hunter2-secret"


@pytest.fixture
def empty_pg_url(pg_server_url: str) -> Iterator[str]:
    """A PostgreSQL database with no tables at all (not the migrated template)."""
    import psycopg

    name = f"bigmind_doctor_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(pg_server_url, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    yield with_database(pg_server_url, name)
    with psycopg.connect(pg_server_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def tables_of(url: str) -> list[str]:
    import psycopg

    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT table_name FROM information_schema.tables"
            " WHERE table_schema = current_schema() ORDER BY 1"
        ).fetchall()
    return [r[0] for r in rows]


@pytest.mark.sqlite_only
def test_a_fresh_install_is_ok_and_doctor_does_not_create_the_database(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, db_path: Path
) -> None:
    code, checks = doctor(capsys, tmp_path, "--quick")
    assert code == 0
    assert list(checks) == [
        "python",
        "sqlite",
        "sqlite-vec",
        "settings",
        "database",
        "embedder",
        "profile page",
        "clients",
    ]
    assert checks["sqlite"]["status"] == "ok" and "FTS5 available" in checks["sqlite"]["detail"]
    assert checks["profile page"]["status"] == "ok"
    assert checks["profile page"]["detail"].endswith(
        "is free; `bigmind serve` or `bigmind web` serves the page there"
    )
    assert checks["sqlite-vec"]["status"] == "ok"
    assert checks["database"] == {
        "name": "database",
        "status": "ok",
        "detail": f"{db_path} will be created on first use",
    }
    assert not db_path.exists() and not db_path.parent.exists()


def test_settings_line_shows_every_setting_and_the_db_path(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, db_path: Path
) -> None:
    _, checks = doctor(capsys, tmp_path, "--quick")
    detail = checks["settings"]["detail"]
    assert checks["settings"]["status"] == "ok"
    assert f"BIGMIND_DB_PATH={db_path}" in detail and "BIGMIND_USER=alice" in detail
    for name in ("MODE", "PORT", "LOG_LEVEL", "CONTEXT_BUDGET", "EMBED_MODEL", "EMBED_THREADS"):
        assert f"BIGMIND_{name}=" in detail


def test_an_invalid_setting_fails_and_is_named(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BIGMIND_PORT", "0")
    code, checks = doctor(capsys, tmp_path, "--quick")
    assert code == 1
    assert checks["settings"]["status"] == "fail"
    assert checks["settings"]["detail"].startswith("invalid BIGMIND_PORT: ")
    assert checks["database"]["status"] == "warn"  # skipped, not guessed
    assert "skipped" in checks["database"]["detail"]


def test_postgresql_checks_replace_the_sqlite_ones_and_hide_the_password(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    url, password = with_password(pg_url)
    monkeypatch.setenv("BIGMIND_DB_URL", url)
    code, checks = doctor(capsys, tmp_path, "--quick")
    assert code == 0, checks
    assert list(checks) == PG_CHECKS
    assert checks["postgresql"]["status"] == "ok"
    assert checks["postgresql"]["detail"].startswith("PostgreSQL 1")
    assert f" at {redact(url)} (as " in checks["postgresql"]["detail"]
    assert checks["pgvector"]["status"] == "ok"
    assert checks["pgvector"]["detail"].startswith("vector 0.")
    assert checks["settings"]["status"] == "ok"
    assert f"BIGMIND_DB_URL={redact(url)}" in checks["settings"]["detail"]
    assert checks["database"]["status"] == "ok"
    assert checks["database"]["detail"].startswith(redact(url))
    assert f"schema {SCHEMA_VERSION} (" in checks["database"]["detail"]
    assert password not in json.dumps(checks)
    assert main(["doctor", "--quick", "--project", str(tmp_path)]) == 0
    human = capsys.readouterr().out
    assert "✓ postgresql " in human and password not in human


def test_enterprise_mode_with_a_db_url_is_ok_and_without_one_fails(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BIGMIND_MODE", "enterprise")
    monkeypatch.setenv("BIGMIND_DB_URL", pg_url)
    code, checks = doctor(capsys, tmp_path, "--quick")
    assert code == 0, checks
    assert "BIGMIND_MODE=enterprise" in checks["settings"]["detail"]
    monkeypatch.delenv("BIGMIND_DB_URL")
    code, checks = doctor(capsys, tmp_path, "--quick")
    assert code == 1 and checks["settings"]["status"] == "fail"
    assert "needs BIGMIND_DB_URL" in checks["settings"]["detail"]


def test_an_unreachable_postgres_fails_naming_the_setting_not_the_password(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BIGMIND_DB_URL", "postgresql://nobody:s3cr3t-pw@127.0.0.1:1/x")
    code, checks = doctor(capsys, tmp_path, "--quick")  # no retrying: libpq's connect_timeout
    assert code == 1 and list(checks) == PG_CHECKS
    detail = checks["postgresql"]["detail"]
    assert checks["postgresql"]["status"] == "fail"
    assert "BIGMIND_DB_URL" in detail and "nobody:***@127.0.0.1:1/x" in detail
    assert checks["pgvector"]["status"] == checks["database"]["status"] == "warn"
    assert "skipped" in checks["database"]["detail"]
    assert "s3cr3t-pw" not in json.dumps(checks)
    assert main(["doctor", "--quick", "--project", str(tmp_path)]) == 1
    assert "s3cr3t-pw" not in capsys.readouterr().out


def test_a_postgres_database_that_does_not_exist_fails(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    pg_server_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("BIGMIND_DB_URL", with_database(pg_server_url, "no_such_bigmind_db"))
    code, checks = doctor(capsys, tmp_path, "--quick")
    assert code == 1 and checks["postgresql"]["status"] == "fail"
    assert "no_such_bigmind_db" in checks["postgresql"]["detail"]
    assert "BIGMIND_DB_URL" in checks["postgresql"]["detail"]


def test_an_empty_postgres_database_is_ok_and_doctor_creates_no_table(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    empty_pg_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("BIGMIND_DB_URL", empty_pg_url)
    code, checks = doctor(capsys, tmp_path, "--quick")
    assert code == 0, checks
    assert checks["database"]["status"] == "ok"
    assert "empty database; BigMind creates the schema on first use" in checks["database"]["detail"]
    assert tables_of(empty_pg_url) == []


def test_a_postgres_database_of_another_app_is_named(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    empty_pg_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import psycopg

    monkeypatch.setenv("BIGMIND_DB_URL", empty_pg_url)
    with psycopg.connect(empty_pg_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE invoices (id INTEGER)")
    code, checks = doctor(capsys, tmp_path, "--quick")
    assert code == 0 and checks["database"]["status"] == "warn"
    assert "1 other table(s) (invoices)" in checks["database"]["detail"]
    with psycopg.connect(empty_pg_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE users (id INTEGER)")
    code, checks = doctor(capsys, tmp_path, "--quick")
    assert code == 1 and checks["database"]["status"] == "fail"
    assert "is not a BigMind database: it has users" in checks["database"]["detail"]
    assert tables_of(empty_pg_url) == ["invoices", "users"]


def test_missing_pgvector_is_a_warning_that_vectors_are_off(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import logging

    from bigmind.storage.pg import PostgresBackend

    def without_vector(self: PostgresBackend) -> None:
        logging.getLogger("bigmind.storage.pg").warning(
            "pgvector is not available (%s); vectors disabled", 'extension "vector" is missing'
        )

    monkeypatch.setattr(PostgresBackend, "_prepare", without_vector)
    monkeypatch.setenv("BIGMIND_DB_URL", pg_url)
    code, checks = doctor(capsys, tmp_path, "--quick")
    assert code == 0 and checks["pgvector"]["status"] == "warn"
    assert 'extension "vector" is missing' in checks["pgvector"]["detail"]
    assert "vectors off" in checks["pgvector"]["detail"]


def test_invalid_settings_skip_the_postgres_checks(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BIGMIND_DB_URL", "postgresql://u:secret@127.0.0.1:1/bigmind")
    monkeypatch.setenv("BIGMIND_POOL_SIZE", "0")
    code, checks = doctor(capsys, tmp_path, "--quick")
    assert code == 1 and list(checks) == PG_CHECKS
    assert checks["settings"]["detail"].startswith("invalid BIGMIND_POOL_SIZE: ")
    assert checks["postgresql"] == {
        "name": "postgresql",
        "status": "warn",
        "detail": "skipped until the settings are valid",
    }
    assert "secret" not in json.dumps(checks)


def test_an_unknown_bigmind_variable_is_a_warning(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BIGMIND_EMBED_MODLE", "off")
    code, checks = doctor(capsys, tmp_path, "--quick")
    assert code == 0 and checks["settings"]["status"] == "warn"
    assert "unknown BIGMIND_EMBED_MODLE ignored" in checks["settings"]["detail"]


def test_profile_page_is_found_served_off_or_blocked(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    settings: Settings,
) -> None:
    rt = Runtime(settings)
    try:
        url = profile_server(rt).url()  # this memory's page, as a running `bigmind serve` has it
        code, checks = doctor(capsys, tmp_path, "--quick")
        assert checks["profile page"] == {
            "name": "profile page",
            "status": "ok",
            "detail": f"served at {url} (pid {os.getpid()})",
        }
        monkeypatch.setenv("BIGMIND_USER", "bob")  # bob's server would find alice's page there
        code, checks = doctor(capsys, tmp_path, "--quick")
        assert checks["profile page"]["status"] == "warn"
        assert "serves BigMind for alice" in checks["profile page"]["detail"]
    finally:
        rt.close()
    with socket.socket() as blocker:  # another program holds a port
        blocker.bind(("127.0.0.1", 0))
        monkeypatch.setenv("BIGMIND_PORT", str(blocker.getsockname()[1]))
        monkeypatch.setenv("BIGMIND_USER", "alice")
        code, checks = doctor(capsys, tmp_path, "--quick")
    assert checks["profile page"]["status"] == "warn" and code == 0
    assert "the page takes the next free port" in checks["profile page"]["detail"]
    monkeypatch.setenv("BIGMIND_WEB", "0")
    code, checks = doctor(capsys, tmp_path, "--quick")
    assert checks["profile page"]["detail"].startswith("off (BIGMIND_WEB=0)")


def test_database_counts_the_users_facts_and_sessions(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, store: Store, db_url: str | None
) -> None:
    store.start_session()
    store.store_fact("preference", "Prefers pytest")
    store.store_fact("preference", "Tabs, not spaces")
    code, checks = doctor(capsys, tmp_path, "--quick")
    assert code == 0, checks
    detail = checks["database"]["detail"]
    assert checks["database"]["status"] == "ok"
    if db_url is None:
        assert f"quick_check ok, schema {SCHEMA_VERSION} (" in detail
    else:
        assert list(checks) == PG_CHECKS
        assert detail.startswith(redact(db_url)) and f": schema {SCHEMA_VERSION} (" in detail
    assert "user alice: facts 2, sessions 1 (1 open)" in detail


def test_a_user_not_registered_yet_is_ok(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    store: Store,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("BIGMIND_USER", "bob")
    code, checks = doctor(capsys, tmp_path, "--quick")
    assert code == 0 and "user bob not registered yet" in checks["database"]["detail"]


@pytest.mark.sqlite_only
def test_a_file_that_is_not_sqlite_fails(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, db_path: Path
) -> None:
    db_path.parent.mkdir(parents=True)
    db_path.write_bytes(b"this is not a database, just text " * 200)
    code, checks = doctor(capsys, tmp_path, "--quick")
    assert code == 1 and checks["database"]["status"] == "fail"
    assert str(db_path) in checks["database"]["detail"]


def test_a_database_from_a_newer_bigmind_fails(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, backend: Backend
) -> None:
    with backend.transaction() as tx:
        tx.execute("INSERT INTO bigmind_migrations(name) VALUES ('9999_from_the_future')")
    code, checks = doctor(capsys, tmp_path, "--quick")
    assert code == 1 and checks["database"]["status"] == "fail"
    assert "9999_from_the_future" in checks["database"]["detail"]


def test_pending_migrations_are_a_warning_and_doctor_does_not_apply_them(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, backend: Backend
) -> None:
    with backend.transaction() as tx:
        tx.execute("DELETE FROM bigmind_migrations WHERE name = '0009_embeddings'")
    code, checks = doctor(capsys, tmp_path, "--quick")
    assert code == 0 and checks["database"]["status"] == "warn"
    assert f"schema {SCHEMA_VERSION - 1} of {SCHEMA_VERSION}" in checks["database"]["detail"]
    assert len(backend.query("SELECT name FROM bigmind_migrations")) == SCHEMA_VERSION - 1


@pytest.mark.sqlite_only
def test_a_database_that_cannot_be_created_fails(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a-file").write_text("not a folder")
    monkeypatch.setenv("BIGMIND_DB_PATH", str(tmp_path / "a-file" / "sub" / "memory.db"))
    code, checks = doctor(capsys, tmp_path, "--quick")
    assert code == 1 and checks["database"]["status"] == "fail"
    assert "is not a writable folder" in checks["database"]["detail"]


def test_embeddings_off_is_a_warning(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BIGMIND_EMBED_MODEL", "off")
    code, checks = doctor(capsys, tmp_path)
    assert code == 0
    assert checks["embedder"]["status"] == "warn"
    assert "keyword search only" in checks["embedder"]["detail"]


def test_a_missing_model_is_a_warning_that_says_where_and_how_to_fetch_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, checks = doctor(capsys, tmp_path)
    assert code == 0 and checks["embedder"]["status"] == "warn"
    where = tmp_path / "bigmind-home" / "models" / "all-MiniLM-L6-v2"  # BIGMIND_HOME (conftest)
    assert f"no model at {where}: run `bigmind model fetch`" in checks["embedder"]["detail"]
    assert "BIGMIND_OFFLINE is set" in checks["embedder"]["detail"]
    monkeypatch.setenv("BIGMIND_OFFLINE", "0")
    _code, checks = doctor(capsys, tmp_path)
    assert "the server downloads it at its next start" in checks["embedder"]["detail"]


def test_a_broken_model_folder_fails(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    broken = tmp_path / "model"
    broken.mkdir()
    (broken / "config.json").write_text("{}")
    monkeypatch.setenv("BIGMIND_EMBED_MODEL", str(broken))
    for quick in ([], ["--quick"]):
        code, checks = doctor(capsys, tmp_path, *quick)
        assert code == 1 and checks["embedder"]["status"] == "fail", quick


def test_the_real_model_loads_and_embeds(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    model_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("BIGMIND_EMBED_MODEL", str(model_dir))
    code, checks = doctor(capsys, tmp_path)
    assert code == 0 and checks["embedder"]["status"] == "ok", checks["embedder"]
    assert ": 384 d, one text embedded in " in checks["embedder"]["detail"]
    _, checks = doctor(capsys, tmp_path, "--quick")
    assert checks["embedder"]["status"] == "ok"
    assert "(384 d) found at" in checks["embedder"]["detail"]
    assert "not loaded (--quick)" in checks["embedder"]["detail"]


def test_vectors_of_another_model_are_a_warning_to_reindex(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    model_dir: Path,
    backend: Backend,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from bigmind.search.vectors import VectorStore

    VectorStore(backend).adopt("some-other-model", 8)
    monkeypatch.setenv("BIGMIND_EMBED_MODEL", str(model_dir))
    code, checks = doctor(capsys, tmp_path, "--quick")
    assert code == 0 and checks["embedder"]["status"] == "warn"
    assert "some-other-model" in checks["embedder"]["detail"]
    assert "bigmind reindex" in checks["embedder"]["detail"]


def test_client_files_absent_then_installed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    project = tmp_path / "app"
    project.mkdir()
    _, checks = doctor(capsys, project, "--quick")
    assert checks["clients"]["status"] == "warn"
    assert f"bigmind install --client NAME --project {project}" in checks["clients"]["detail"]
    assert main(["install", "--client", "claude-code", "--project", str(project)]) == 0
    capsys.readouterr()
    code, checks = doctor(capsys, project, "--quick")
    assert code == 0 and checks["clients"]["status"] == "ok", checks["clients"]
    assert "claude-code (.mcp.json)" in checks["clients"]["detail"]


def test_in_bigmind_s_own_clone_the_fix_names_no_project(
    capsys: pytest.CaptureFixture[str],
) -> None:
    clone = Path(__file__).resolve().parents[2]  # install refuses to wire this folder
    _, checks = doctor(capsys, clone, "--quick")
    assert "--project DIR" in checks["clients"]["detail"]
    assert f"--project {clone}`" not in checks["clients"]["detail"]


def test_an_outdated_client_file_is_a_warning(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    project = tmp_path / "app"
    project.mkdir()
    assert main(["install", "--client", "cursor", "--project", str(project)]) == 0
    capsys.readouterr()
    config = project / ".cursor" / "mcp.json"
    data = json.loads(config.read_text())
    data["mcpServers"]["bigmind"]["command"] = "/old/venv/bin/bigmind"
    config.write_text(json.dumps(data))
    _, checks = doctor(capsys, project, "--quick")
    assert checks["clients"]["status"] == "warn"
    assert "outdated: cursor (.cursor/mcp.json)" in checks["clients"]["detail"]


def test_human_output_has_one_marked_line_per_check(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BIGMIND_CONTEXT_BUDGET", "5")
    assert main(["doctor", "--quick", "--project", str(tmp_path)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 8
    assert {line[0] for line in lines} == set(MARKS.values())
    assert lines[0].startswith("✓ python ")
    assert next(x for x in lines if "settings" in x).startswith("✗ settings     invalid ")


def test_a_missing_project_folder_is_invalid_input(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["doctor", "--project", str(tmp_path / "nope")]) == 2
    assert "is not a directory" in capsys.readouterr().err


def test_quick_checks_never_load_the_model(
    tmp_path: Path, store: Store, model_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What keeps --quick (a container healthcheck) fast: the model is found, never loaded, so
    # not even the ONNX runtime is imported. Checked in a fresh interpreter.
    monkeypatch.setenv("BIGMIND_EMBED_MODEL", str(model_dir))
    script = (
        "import json, sys; from pathlib import Path; from bigmind.cli.doctor import run_checks; "
        f"checks = run_checks(Path({str(tmp_path)!r}), quick=True); "
        "print(json.dumps({'onnxruntime': 'onnxruntime' in sys.modules, "
        "'embedder': next(c.detail for c in checks if c.name == 'embedder')}))"
    )
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out["onnxruntime"] is False
    assert "not loaded (--quick)" in out["embedder"]


def test_the_command_keeps_stdout_for_json(tmp_path: Path, db_url: str | None) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BIGMIND_")}
    env |= {"BIGMIND_DB_PATH": str(tmp_path / "m.db"), "BIGMIND_EMBED_MODEL": "off"}
    if db_url is not None:
        env["BIGMIND_DB_URL"] = db_url
    r = run_cli("doctor", "--quick", "--json", "--project", str(tmp_path), env=env)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["ok"] is True
    assert not (tmp_path / "m.db").exists()


def test_a_role_that_ignores_row_level_security_is_a_warning(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    pg_url: str,
    pg_server_url: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from urllib.parse import urlsplit

    as_superuser = with_database(pg_server_url, urlsplit(pg_url).path.lstrip("/"))
    monkeypatch.setenv("BIGMIND_DB_URL", as_superuser)
    _code, checks = doctor(capsys, tmp_path, "--quick")
    assert checks["postgresql"]["status"] == "warn"
    assert "row-level security is NOT enforced" in checks["postgresql"]["detail"]
