"""Real fixtures: a temporary SQLite store, isolated BigMind env, an in-memory MCP client."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from fastmcp import Client

from bigmind.app import build_server
from bigmind.config import Settings
from bigmind.db import SQLiteBackend, connect
from bigmind.runtime import Runtime
from bigmind.store import Store

pytest_plugins = ["model_fixture"]  # session-scoped exported MiniLM (tests/model_fixture.py)


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test ever touches ~/.mcp/bigmind or inherits the developer's BIGMIND_* settings."""
    import os

    for key in list(os.environ):
        if key.startswith("BIGMIND_"):
            monkeypatch.delenv(key)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("BIGMIND_DB_PATH", str(tmp_path / "data" / "memory.db"))
    monkeypatch.setenv("BIGMIND_USER", "alice")


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "data" / "memory.db"


@pytest.fixture
def backend(db_path: Path) -> Iterator[SQLiteBackend]:
    b = connect(db_path)
    yield b
    b.close()


@pytest.fixture
def store(backend: SQLiteBackend) -> Store:
    return Store(backend, "alice")


@pytest.fixture
def settings(db_path: Path) -> Settings:
    return Settings(db_path=db_path, user="alice")


@pytest.fixture
def runtime(settings: Settings) -> Iterator[Runtime]:
    rt = Runtime(settings)
    yield rt
    rt.close()


@pytest.fixture
async def client(settings: Settings, runtime: Runtime) -> AsyncIterator[Client]:  # type: ignore[type-arg]
    async with Client(build_server(settings, runtime)) as c:
        yield c
