"""Real fixtures: a temporary SQLite store, isolated BigMind env, an in-memory MCP client."""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest
from fastmcp import Client
from starlette.testclient import TestClient
from web_world import WEB_BASE, WebWorld, seed_world

from bigmind.config import Settings
from bigmind.mcp.server import build_server
from bigmind.runtime import Runtime
from bigmind.storage.connect import open_database
from bigmind.storage.db import Backend
from bigmind.storage.store import Store
from bigmind.web.profile_app import create_app

# Session-scoped exported MiniLM (tests/model_fixture.py); PostgreSQL databases (pg_fixture.py).
pytest_plugins = ["model_fixture", "pg_fixture"]

BACKENDS = ("sqlite", "postgresql")
# Fixtures that start or need the PostgreSQL server (tests/pg_fixture.py).
PG_FIXTURES = {"pg_url", "pg_server_url", "pg_template"}


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--backend",
        choices=("both", *BACKENDS),
        default=os.environ.get("BIGMIND_TEST_BACKEND") or "both",
        help="run the database tests on this backend only (default: both, or "
        "$BIGMIND_TEST_BACKEND); with sqlite, tests that need PostgreSQL are deselected",
    )


def selected_backends(config: pytest.Config) -> tuple[str, ...]:
    chosen: str = config.getoption("--backend")
    return BACKENDS if chosen == "both" else (chosen,)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Every test that uses the database runs on SQLite and on PostgreSQL, except those
    marked ``sqlite_only`` (file locking, PRAGMAs, the plan's legacy SQLite files…), or
    on the one backend ``--backend`` names."""
    if "db_kind" in metafunc.fixturenames:
        only = metafunc.definition.get_closest_marker("sqlite_only")
        kinds = [k for k in selected_backends(metafunc.config) if not only or k == "sqlite"]
        metafunc.parametrize("db_kind", kinds)


def pytest_configure(config: pytest.Config) -> None:
    """Under pytest-xdist's ``load`` scheduling (``-n``), hand tests out one at a time in the
    order below rather than in chunks, so that the long ones start first on every worker and
    no worker is left running one at the end while the others wait (an explicit
    ``--maxschedchunk`` wins)."""
    if config.pluginmanager.hasplugin("xdist") and config.getoption("maxschedchunk") is None:
        config.option.maxschedchunk = 1


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``--backend sqlite``: deselect the tests that need a PostgreSQL server. Then the
    longest tests first (see :func:`start_order`)."""
    if "postgresql" not in selected_backends(config):
        keep, drop = [], []
        for item in items:
            needs_pg = PG_FIXTURES & set(getattr(item, "fixturenames", ()))
            (drop if needs_pg else keep).append(item)
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep
    default_timeout = float(config.getini("timeout") or 0)
    items.sort(key=lambda item: start_order(item, default_timeout))  # stable: files stay whole


# The lanes that start processes, real clients or a browser: seconds per test, not milliseconds.
LONG_LANES = ("e2e", "slow", "browser")


def start_order(item: pytest.Item, default_timeout: float) -> tuple[int, float]:
    """When a test should start: first those that declare a longer timeout than the default
    (the longest first: a venv and a pip install, the reliability soak, five server runs
    with the model…), then the other tests of the long lanes, then the fast ones. Parallel
    workers take tests in this order, so the run ends on short tests, whatever the machine."""
    marker = item.get_closest_marker("timeout")
    declared = float(marker.args[0]) if marker and marker.args else 0.0
    if declared > default_timeout:
        return (0, -declared)
    if any(item.get_closest_marker(lane) for lane in LONG_LANES):
        return (1, 0.0)
    return (2, 0.0)


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test ever touches ~/.mcp/bigmind or a client's user config, or inherits the
    developer's BIGMIND_* settings."""
    for key in list(os.environ):
        if key.startswith("BIGMIND_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    # Where clients keep their user-level config follows these too (bigmind install).
    for key in ("XDG_CONFIG_HOME", "APPDATA", "CLAUDE_CONFIG_DIR"):
        monkeypatch.delenv(key, raising=False)
    # The model cache too: BIGMIND_HOME here, and ~/.cache (in the per-test HOME) for the
    # subprocesses that drop BIGMIND_* settings.
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("BIGMIND_HOME", str(tmp_path / "bigmind-home"))
    # A server started without a model never downloads it from the hub: a test that wants the
    # download sets BIGMIND_OFFLINE=0 and BIGMIND_MODEL_URL (a server on 127.0.0.1). Subprocesses
    # that drop BIGMIND_* settings still inherit HF_HUB_OFFLINE, which BigMind honours too.
    monkeypatch.setenv("BIGMIND_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("BIGMIND_DB_PATH", str(tmp_path / "data" / "memory.db"))
    monkeypatch.setenv("BIGMIND_USER", "alice")
    monkeypatch.setenv("BIGMIND_PORT", str(free_port()))  # a profile page never meets another


def free_port() -> int:
    """A TCP port nothing listens on right now (the kernel's pick)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def file_bytes(settings: Settings) -> bytes:
    """The SQLite database file and its WAL, as the disk holds them."""
    out = b""
    for suffix in ("", "-wal"):
        path = Path(str(settings.db_path) + suffix)
        if path.exists():
            out += path.read_bytes()
    return out


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "data" / "memory.db"


@pytest.fixture
def db_url(
    db_kind: str, request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
) -> str | None:
    """The test's PostgreSQL database (fresh, migrated), or None on SQLite. Also in the
    environment, with enterprise mode, for the commands a test runs in a subprocess."""
    if db_kind != "postgresql":
        return None
    url: str = request.getfixturevalue("pg_url")
    monkeypatch.setenv("BIGMIND_DB_URL", url)
    return url


@pytest.fixture
def settings_for(db_path: Path, db_url: str | None) -> Callable[[str], Settings]:
    """Settings of the test's database for any user (several users share one database)."""

    def make(user: str) -> Settings:
        return Settings(db_path=db_path, db_url=db_url, user=user)

    return make


@pytest.fixture
def backend(settings: Settings) -> Iterator[Backend]:
    """The test's database in the maintenance scope: a test's own SQL reads and ages the rows
    of every user (PostgreSQL's row-level security would hide them from a plain session).
    A store made on it acts for its user; the code under test opens its own database."""
    b = open_database(settings)
    yield b.maintenance()
    b.close()


@pytest.fixture
def store(backend: Backend) -> Store:
    return Store(backend, "alice")


@pytest.fixture
def settings(settings_for: Callable[[str], Settings]) -> Settings:
    return settings_for("alice")


@pytest.fixture
def runtime(settings: Settings) -> Iterator[Runtime]:
    rt = Runtime(settings)
    yield rt
    rt.close()


@pytest.fixture
async def client(settings: Settings, runtime: Runtime) -> AsyncIterator[Client]:  # type: ignore[type-arg]
    async with Client(build_server(settings, runtime)) as c:
        yield c


@pytest.fixture
def sem_settings(settings: Settings, model_dir: Path) -> Settings:
    """The test's settings with the exported MiniLM as the embedding model."""
    return settings.model_copy(update={"embed_model": str(model_dir)})


@pytest.fixture
def sem_runtime(sem_settings: Settings) -> Iterator[Runtime]:
    """A runtime as the server has it: the model loads and embeds in the background."""
    rt = Runtime(sem_settings, background=True)
    yield rt
    rt.close()


@pytest.fixture
def copies_the_web_world() -> None:
    """Asks ``pg_url`` for a copy of ``pg_world`` rather than an empty database (a marker:
    other modules have fixtures named ``world`` of their own)."""


@pytest.fixture
def world(
    copies_the_web_world: None,
    runtime: Runtime,
    settings: Settings,
    db_kind: str,
    request: pytest.FixtureRequest,
) -> WebWorld:
    """A memory with something on every profile page. On PostgreSQL the test's database is
    already a copy of ``pg_world`` (see ``pg_url``), so only the ids are handed back; on
    SQLite the file is a copy of ``sqlite_world``'s, unless the test opened its database
    before (then the world is written into it)."""
    if db_kind == "postgresql":
        seeded: tuple[str, WebWorld] = request.getfixturevalue("pg_world")
        return seeded[1]
    if Path(settings.db_path).exists():
        return seed_world(runtime.store)
    source, ids = request.getfixturevalue("sqlite_world")
    settings.db_path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, settings.db_path)  # closed: no WAL beside it
    return ids


@pytest.fixture(scope="session")
def sqlite_world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, WebWorld]:
    """A SQLite file holding ``seed_world``'s memory, made once per worker (~500 writes) and
    copied by each test that asks for ``world``. Returns its path and the world's ids."""
    path = tmp_path_factory.mktemp("sqlite-world") / "memory.db"
    rt = Runtime(Settings(db_path=path, db_url=None, user="alice"))
    try:
        seeded = seed_world(rt.store)
    finally:
        rt.close()
    assert not Path(f"{path}-wal").exists()  # checkpointed on close: the file is whole
    return path, seeded


@pytest.fixture(scope="session")
def pg_world(
    pg_server_url: str, pg_template: str, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, WebWorld]:
    """A PostgreSQL database holding ``seed_world``'s memory, made once per worker: seeding
    is ~500 write transactions (~2.5 s), copying the database ~0.1 s. Returns its name and
    the world's ids, which every copy shares."""
    from pg_fixture import app_database, make_database  # a plugin: imported once pytest has it

    name = make_database(pg_server_url, pg_template)
    settings = Settings(
        db_path=tmp_path_factory.mktemp("pg-world") / "unused.db",
        db_url=app_database(pg_server_url, name),
        user="alice",
    )
    rt = Runtime(settings)
    try:
        seeded = seed_world(rt.store)
    finally:
        rt.close()
    return name, seeded


@pytest.fixture
def web(runtime: Runtime, world: WebWorld) -> Iterator[TestClient]:
    """The profile page of ``world``, through Starlette's test client."""
    with TestClient(create_app(runtime), base_url=WEB_BASE, follow_redirects=False) as c:
        yield c
