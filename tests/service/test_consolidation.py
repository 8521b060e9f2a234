"""bigmind/service/consolidation.py: without a model the duplicate check is skipped, and the
caller is told why; the stale facts still retire (both backends)."""

from __future__ import annotations

from bigmind.config import Settings
from bigmind.errors import BigMindError
from bigmind.runtime import Runtime
from bigmind.service import consolidation


def test_without_a_model_only_the_stale_facts_are_looked_at(settings: Settings) -> None:
    rt = Runtime(settings.model_copy(update={"embed_model": "off"}))
    told: list[BigMindError] = []
    try:
        rt.store.store_fact("codebase", "The payments service uses Kafka", importance=1)
        done = consolidation.consolidate(rt, without_model=told.append)
    finally:
        rt.close()
    assert [str(e) for e in told] == ["No embedding model is configured (BIGMIND_EMBED_MODEL=off)."]
    assert (done.semantic, done.checked, done.retired) == (False, 0, [])
