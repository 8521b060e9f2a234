"""bigmind/service/checkup.py: the install's checks in the order a fix would go; invalid
settings skip what needs them, and a checkup makes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from bigmind.service import checkup


def test_invalid_settings_skip_the_database_and_the_model(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BIGMIND_CONTEXT_BUDGET", "lots")
    done = checkup.run(quick=True)
    assert done.settings is None
    assert [(c.name, c.status) for c in done.checks][3:] == [
        ("settings", "fail"),
        ("database", "warn"),
        ("embedder", "warn"),
    ]
    assert "BIGMIND_CONTEXT_BUDGET" in done.checks[3].detail
    assert {c.detail for c in done.checks[4:]} == {checkup.SKIPPED}


def test_a_memory_not_made_yet_is_fine_and_stays_unmade(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("BIGMIND_EMBED_MODEL", "off")
    done = checkup.run(quick=True)
    assert done.settings is not None
    by_name = {c.name: c for c in done.checks}
    assert [c.name for c in done.checks] == [
        "python",
        "sqlite",
        "sqlite-vec",
        "settings",
        "database",
        "embedder",
    ]
    assert by_name["database"].status == "ok" and "created on first use" in (
        by_name["database"].detail
    )
    assert by_name["embedder"].status == "warn" and "keyword search only" in (
        by_name["embedder"].detail
    )
    assert not done.settings.db_path.exists()
