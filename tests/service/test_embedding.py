"""bigmind/service/embedding.py: the model loaded in a command's thread (or why not), every
memory embedded again, and where fetch and export install the model."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bigmind.config import Settings
from bigmind.errors import BigMindError
from bigmind.runtime import Runtime
from bigmind.search.modelcache import DEFAULT_MODEL_ID
from bigmind.service import embedding


@pytest.fixture
def off(settings: Settings) -> Iterator[Runtime]:
    rt = Runtime(settings.model_copy(update={"embed_model": "off"}))
    yield rt
    rt.close()


def test_without_a_model_the_ranker_is_keyword_only_and_says_why(off: Runtime) -> None:
    loaded = embedding.load(off)
    assert loaded.semantic is None and loaded.ranker.semantic is None
    assert isinstance(loaded.error, BigMindError) and "BIGMIND_EMBED_MODEL=off" in str(loaded.error)
    assert loaded.waiting() == 0
    quiet = embedding.load(off, unless_off=True)  # off on purpose: nothing to say
    assert (quiet.semantic, quiet.error) == (None, None)
    with pytest.raises(BigMindError, match="Semantic search is off"):
        embedding.reindex(off)


def test_the_model_loads_here_and_embeds_the_backlog(sem_settings: Settings) -> None:
    rt = Runtime(sem_settings)
    try:
        rt.store.store_fact("codebase", "The payments service uses Kafka")
        waiting = embedding.load(rt)
        assert waiting.error is None and waiting.ranker.semantic is waiting.semantic
        assert waiting.waiting() == 1
        done = embedding.load(rt, backlog=True)
        assert done.waiting() == 0
        again = embedding.reindex(rt)
        assert again.embedded == 1 and again.model is not None
    finally:
        rt.close()


def test_where_fetch_and_export_install_the_model(settings: Settings, tmp_path: Path) -> None:
    named = settings.model_copy(update={"embed_model": "my-model"})
    assert embedding.export_target(named) == settings.models_dir / "my-model"
    # fetch downloads all-MiniLM-L6-v2, whatever the configured name: under its own name.
    assert embedding.fetch_target(named) == settings.models_dir / DEFAULT_MODEL_ID
    folder = settings.model_copy(update={"embed_model": str(tmp_path / "m")})
    assert embedding.fetch_target(folder) == embedding.export_target(folder) == tmp_path / "m"
    off = settings.model_copy(update={"embed_model": "off"})
    assert embedding.fetch_target(off) is None and embedding.export_target(off) is None
