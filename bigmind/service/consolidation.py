"""A full consolidation pass for a one-shot command (``bigmind consolidate``): the embedding
model loaded in its thread and the backlog embedded, then every active fact checked again for
duplicates and contradictions (merged, linked) and stale low-importance facts retired from the
packet (:mod:`bigmind.memory.tidy`). Without the model only the retiring runs."""

from __future__ import annotations

from collections.abc import Callable

from bigmind.errors import BigMindError
from bigmind.memory.tidy import LOW_IMPORTANCE, STALE_DAYS, Consolidated
from bigmind.memory.tidy import consolidate as one_pass
from bigmind.runtime import Runtime
from bigmind.service import embedding

__all__ = ["LOW_IMPORTANCE", "STALE_DAYS", "Consolidated", "consolidate"]


def consolidate(
    rt: Runtime,
    *,
    stale_days: int = STALE_DAYS,
    max_importance: int = LOW_IMPORTANCE,
    progress: Callable[[int, int], None] | None = None,
    without_model: Callable[[BigMindError], None] | None = None,
) -> Consolidated:
    """One pass over the running call's user's facts. ``progress``: the backlog embedded so
    far; ``without_model``: told why the model did not load (the duplicate and conflict
    check is skipped then). Facts of importance ≤ ``max_importance`` unused and unchanged for
    ``stale_days`` days leave the packet.

    Raises:
        InvalidInput: ``stale_days`` or ``max_importance`` out of range.
    """
    loaded = embedding.load(rt, backlog=True, progress=progress)
    if loaded.error is not None and without_model is not None:
        without_model(loaded.error)
    done = one_pass(rt.store, loaded.semantic, stale_days=stale_days, max_importance=max_importance)
    rt.wrote()
    return done
