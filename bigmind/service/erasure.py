"""Forgetting memories for good: one memory a surface names, or everything holding a text.

:func:`forget` deletes one memory with its history, index entries, vectors and Markdown mirror
lines (:mod:`bigmind.memory.forget`); :func:`find` lists everything of the user holding a text
and :func:`purge` forgets what it found (:mod:`bigmind.memory.purge`). Both tell the runtime
(``rt.forgot``), so no use count, vector partition or index file of a forgotten memory
outlives it in the process.
"""

from __future__ import annotations

from bigmind.memory import forget as forgetting
from bigmind.memory import purge as purging
from bigmind.memory.forget import KINDS, Forgotten, Target
from bigmind.memory.purge import Found
from bigmind.runtime import Runtime

__all__ = ["KINDS", "Forgotten", "Found", "Target", "find", "forget", "purge"]


def forget(rt: Runtime, kind: str, item_id: int | str) -> Forgotten:
    """Delete the user's memory ``kind`` ``item_id`` (#N, a session id, a person's @username)
    for good.

    Raises:
        NotFound: no such memory of the user's.
        InvalidInput: an unknown kind or a malformed id.
    """
    store = rt.store
    target = forgetting.resolve(store, kind, item_id)
    done = forgetting.forget(store, [target], places=rt.places)
    rt.forgot(done)
    return done


def find(rt: Runtime, text: str) -> Found:
    """Everything of the user holding ``text`` (any case, a plain substring), the Markdown
    mirror lines and the copies no purge reaches included. Changes nothing."""
    return purging.find(rt.store, text, rt.places)


def purge(rt: Runtime, found: Found) -> Forgotten:
    """Forget what :func:`find` found, cut the text out of the rest, rewrite the mirrors."""
    done = purging.purge(rt.store, found, rt.places)
    rt.forgot(done)
    return done
