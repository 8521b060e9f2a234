"""docker-compose.yml, without Docker: its structure is checked, its settings are read by
BigMind's own Settings, and the gateway's health check command runs against a real
/healthz served on 127.0.0.1 (with the port swapped for a free one)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import uvicorn
import yaml
from conftest import free_port
from starlette.applications import Starlette
from test_docker import exec_form, parse

from bigmind.config import Settings
from bigmind.runtime import Runtime
from bigmind.web import ops

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "docker-compose.yml"
PORT = 8700
_VAR = re.compile(r"\$\{(\w+)(?::([?-])([^}]*))?\}")


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    return doc


def interpolate(text: str, env: dict[str, str]) -> str:
    """Compose's ``${VAR}``, ``${VAR:-default}`` and ``${VAR:?error}``."""

    def one(m: re.Match[str]) -> str:
        name, op, arg = m.group(1), m.group(2), m.group(3)
        value = env.get(name, "")
        if value:
            return value
        if op == "?":
            raise LookupError(f"{name}: {arg}")
        return arg if op == "-" else ""

    return _VAR.sub(one, text)


def test_postgres_is_pgvector_16_on_a_named_volume_with_a_readiness_check(
    compose: dict[str, Any],
) -> None:
    pg = compose["services"]["postgres"]
    assert pg["image"] == "pgvector/pgvector:pg16"
    volume, _, target = pg["volumes"][0].partition(":")
    assert target == "/var/lib/postgresql/data" and volume in compose["volumes"]
    assert "pg_isready" in pg["healthcheck"]["test"]


def test_no_password_is_written_in_the_file(compose: dict[str, Any]) -> None:
    """Every password comes from POSTGRES_PASSWORD, which has no default: compose refuses
    to start without it."""
    pg_env = compose["services"]["postgres"]["environment"]
    assert pg_env["POSTGRES_PASSWORD"].startswith("${POSTGRES_PASSWORD:?")
    url = compose["services"]["bigmind"]["environment"]["BIGMIND_DB_URL"]
    assert url.startswith("postgresql://bigmind:${POSTGRES_PASSWORD:?")
    with pytest.raises(LookupError, match="POSTGRES_PASSWORD"):
        interpolate(url, {})
    example = (ROOT / ".env.example").read_text(encoding="utf-8")
    assert "EXAMPLE ONLY" in example
    assert ".env" in (ROOT / ".gitignore").read_text(encoding="utf-8").split()


def test_the_gateway_runs_the_image_with_the_http_command_after_postgres_is_healthy(
    compose: dict[str, Any],
) -> None:
    gw = compose["services"]["bigmind"]
    assert gw["build"] == "."
    final = parse((ROOT / "Dockerfile").read_text(encoding="utf-8"))[-1]
    argv = exec_form(final.one("ENTRYPOINT")) + gw["command"]
    assert argv == ["bigmind", "serve", "--http", "--host", "0.0.0.0", "--port", str(PORT)]
    assert final.one("EXPOSE") == str(PORT)
    assert exec_form(final.one("CMD")) == ["serve"]  # the image alone still serves stdio
    assert gw["depends_on"]["postgres"]["condition"] == "service_healthy"
    assert any(str(p).endswith(f":{PORT}:{PORT}") for p in gw["ports"])


def test_the_gateways_settings_are_valid_enterprise_settings(
    compose: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {"POSTGRES_PASSWORD": "s3cret-example"}
    for key, value in compose["services"]["bigmind"]["environment"].items():
        monkeypatch.setenv(key, interpolate(str(value), env))
    monkeypatch.delenv("BIGMIND_DB_PATH")
    s = Settings()
    assert s.mode == "enterprise" and s.log_format == "json"
    assert s.connections_per_address == 0  # all clients share the proxy's address
    assert s.db_url == "postgresql://bigmind:s3cret-example@postgres:5432/bigmind"
    assert "s3cret" not in s.database  # what messages show


# -- the health check, run ---------------------------------------------------------------------
def healthcheck(compose: dict[str, Any], port: int) -> list[str]:
    test = compose["services"]["bigmind"]["healthcheck"]["test"]
    assert test[0] == "CMD" and test[1] == "python"  # exec form; the slim image has no curl
    code = test[3]
    assert f":{PORT}/healthz" in code
    return [sys.executable, test[2], code.replace(f":{PORT}/", f":{port}/")]


@contextmanager
def serving(rt: Runtime) -> Iterator[int]:
    """The gateway's /healthz on 127.0.0.1, by uvicorn in a thread."""
    port = free_port()
    app = Starlette(routes=ops.routes(rt, ops.Metrics(rt)))
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="off")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        for _ in range(600):
            if server.started:
                break
            threading.Event().wait(0.05)
        assert server.started, "uvicorn did not start"
        yield port
    finally:
        server.should_exit = True
        thread.join(30)


def run(command: list[str]) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("http_proxy", "HTTP_PROXY"))}
    return subprocess.run(command, capture_output=True, text=True, timeout=60, env=env)


@pytest.mark.slow
def test_the_health_check_passes_while_the_database_answers(
    compose: dict[str, Any], runtime: Runtime
) -> None:
    runtime.store.store_fact("project", "up")
    with serving(runtime) as port:
        r = run(healthcheck(compose, port))
    assert r.returncode == 0, r.stderr


@pytest.mark.slow
def test_the_health_check_fails_when_the_database_does_not(
    compose: dict[str, Any], tmp_path: Path
) -> None:
    url = f"postgresql://bigmind:x@127.0.0.1:{free_port()}/bigmind"
    rt = Runtime(Settings(db_path=tmp_path / "unused.db", db_url=url, user="alice"))
    with serving(rt) as port:
        r = run(healthcheck(compose, port))
    assert r.returncode != 0 and "503" in r.stderr
    r = run(healthcheck(compose, free_port()))  # nothing listening
    assert r.returncode != 0
