"""Settings: defaults, BIGMIND_* overrides, validation."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from bigmind.config import Settings


def test_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BIGMIND_DB_PATH")
    monkeypatch.delenv("BIGMIND_USER")
    monkeypatch.delenv("BIGMIND_PORT")
    s = Settings()
    assert s.db_path == Path("~/.mcp/bigmind/memory.db").expanduser()
    assert s.mode == "personal" and s.port == 7700 and s.autoopen is False
    assert s.user  # the OS login name
    assert s.context_budget == 1300
    assert s.web is True and s.web_host == "127.0.0.1"


def test_environment_overrides(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("BIGMIND_DB_PATH", "~/x/y.db")
    monkeypatch.setenv("BIGMIND_USER", "  bob ")
    monkeypatch.setenv("BIGMIND_MODE", "team")
    monkeypatch.setenv("BIGMIND_AUTOOPEN", "true")
    monkeypatch.setenv("BIGMIND_WEB", "0")
    s = Settings()
    assert s.db_path == Path.home() / "x" / "y.db"
    assert s.user == "bob" and s.mode == "team" and s.autoopen is True and s.web is False
    assert s.data_dir == Path.home() / "x"


@pytest.mark.parametrize(
    ("var", "value"),
    [("BIGMIND_MODE", "galactic"), ("BIGMIND_PORT", "99999"), ("BIGMIND_USER", "   ")],
)
def test_invalid_values_are_refused(monkeypatch: pytest.MonkeyPatch, var: str, value: str) -> None:
    monkeypatch.setenv(var, value)
    with pytest.raises(ValidationError):
        Settings()
