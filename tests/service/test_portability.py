"""bigmind/service/portability.py: the JSON export and import, Markdown memories imported, the
mirror written and pulled, each in the project named (both backends)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from bigmind.config import Settings
from bigmind.errors import BigMindError, ExportError, InvalidInput
from bigmind.runtime import Runtime
from bigmind.service import portability


@pytest.fixture
def rt(settings: Settings) -> Iterator[Runtime]:
    """The test's runtime without an embedding model (the paraphrase check is skipped)."""
    made = Runtime(settings.model_copy(update={"embed_model": "off"}))
    yield made
    made.close()


def test_an_export_merges_into_another_users_memory_once(
    rt: Runtime, settings_for: Callable[[str], Settings]
) -> None:
    rt.store.store_fact("codebase", "The payments service uses Kafka")
    done = portability.export_json(rt)
    assert done.path.parent == rt.settings.data_dir / "exports" and done.rows["facts"] == 1
    bob = Runtime(settings_for("bob"))
    try:
        first = portability.import_json(bob, str(done.path))
        again = portability.import_json(bob, done.path.name)  # a name in exports/ is enough
        assert (first.path, first.report.added["facts"]) == (done.path, 1)
        assert again.report.total_added == 0
        assert [f.fact for f in bob.store.top_facts(5)] == ["The payments service uses Kafka"]
    finally:
        bob.close()


def test_a_confined_export_stays_in_exports(rt: Runtime, tmp_path: Path) -> None:
    with pytest.raises(ExportError, match="outside"):
        portability.export_json(rt, str(tmp_path / "elsewhere.json"))
    free = portability.export_json(rt, str(tmp_path / "elsewhere.json"), confined=False)
    assert free.path == tmp_path / "elsewhere.json" and free.path.is_file()


def test_a_file_that_cannot_be_read_stops_the_import_before_the_database(
    settings: Settings, tmp_path: Path
) -> None:
    rt = Runtime(settings, create=True)
    try:
        with pytest.raises(InvalidInput, match="No file"):
            portability.import_markdown(rt, [tmp_path / "missing.md"])
    finally:
        rt.close()
    assert settings.db_url or not settings.db_path.exists()


def test_markdown_in_then_the_mirror_written_and_pulled(rt: Runtime, tmp_path: Path) -> None:
    told: list[BigMindError] = []
    source = tmp_path / "AGENTS.md"
    source.write_text("## Gotchas\n- The staging database resets every night\n", "utf-8")
    done = portability.import_markdown(rt, [source], without_model=told.append)
    assert len(done.report.added) == 1 and told == []  # a model turned off is no error
    assert done.project == (rt.store.project.key if rt.store.project else None)
    written = portability.write_mirror(rt)
    assert written.facts == 1 and written.path.parent == rt.settings.data_dir / "mirrors"
    text = written.path.read_text("utf-8")
    written.path.write_text(text.replace("### gotcha\n", "### gotcha\n- Deploys need the VPN\n"))
    pulled = portability.pull_mirror(rt)
    assert (pulled.path, len(pulled.pulled.added)) == (written.path, 1)
    assert sorted(f.fact for f in rt.store.top_facts(5)) == [
        "Deploys need the VPN",
        "The staging database resets every night",
    ]
