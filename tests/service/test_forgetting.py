"""bigmind/service/forgetting.py: forget and purge for every surface, the runtime told (both backends)."""

from __future__ import annotations

import pytest

from bigmind.errors import NotFound
from bigmind.runtime import Runtime
from bigmind.service import forgetting


def test_forget_deletes_the_memory_and_drops_its_uses_not_written_yet(runtime: Runtime) -> None:
    f, _, _ = runtime.store.store_fact("codebase", "The payments service uses Kafka")
    runtime.usage.record(runtime.store.uid, "kafka", [("fact", f.id)])
    assert len(runtime.usage) == 1
    _, done = forgetting.forget(runtime, "fact", f.id)
    assert [(t.kind, t.id) for t in done.targets] == [("fact", str(f.id))]
    assert len(runtime.usage) == 0  # a flush would have brought the row back
    with pytest.raises(NotFound):
        forgetting.forget(runtime, "fact", f.id)


def test_purge_forgets_what_find_listed_and_nothing_else(runtime: Runtime) -> None:
    store = runtime.store
    a, _, _ = store.store_fact("codebase", "The staging box answers on port 8443")
    b, _, _ = store.store_fact("preference", "Deploys to STAGING need a second reviewer")
    kept, _, _ = store.store_fact("codebase", "The payments service uses Kafka")
    found = forgetting.find(runtime, "staging")
    assert sorted(int(t.id) for t in found.targets) == sorted([a.id, b.id])
    done = forgetting.purge(runtime, found)
    assert done.removed.get("facts", 0) >= 2
    assert {f.id for f in store.top_facts(10)} == {kept.id}
