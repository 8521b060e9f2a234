"""Forgetting one memory for good, for every surface: ``memory_forget``, REST's
``DELETE /facts/{id}``, the profile page's forget form and ``bigmind forget``.

:func:`forget` resolves what a kind and an id name (the user's own only), deletes it with its
history in one transaction (:func:`bigmind.memory.erasure.forget`), drops its lines from the
user's Markdown mirrors, and clears what this process still holds of it: uses not written
yet and in-memory vectors (:meth:`bigmind.runtime.Runtime.forgot`).
"""

from __future__ import annotations

from bigmind.memory import erasure as forgetter
from bigmind.memory import purge as purging
from bigmind.memory.erasure import KINDS, Forgotten, Target
from bigmind.memory.purge import Found
from bigmind.runtime import Runtime

__all__ = ["KINDS", "Forgotten", "Found", "Target", "find", "forget", "preview", "purge", "resolve"]


def resolve(rt: Runtime, kind: str, item_id: int | str) -> Target:
    """The memory ``kind`` / ``item_id`` names, if it is the user's to forget.

    Raises:
        InvalidInput: not a kind of memory that can be forgotten, or a bad id.
        NotFound: no such memory of the user's (others' private ones alike).
        Forbidden: a person another user added (curators excepted).
    """
    return forgetter.resolve(rt.store, kind, item_id)


def preview(rt: Runtime, target: Target) -> list[str]:
    """What forgetting ``target`` deletes and what it keeps, line by line (a confirmation)."""
    return forgetter.preview(rt.store, target)


def forget(rt: Runtime, kind: str, item_id: int | str) -> tuple[Target, Forgotten]:
    """Delete the memory ``kind`` / ``item_id`` names for good (see the module docstring):
    what it was, and what went and what stayed.

    Raises:
        InvalidInput: not a kind of memory that can be forgotten, or a bad id.
        NotFound: no such memory of the user's.
        Forbidden: a person another user added (curators excepted).
    """
    target = forgetter.resolve(rt.store, kind, item_id)
    done = forgetter.forget(rt.store, [target], places=rt.places)
    rt.forgot(done)
    return target, done


def find(rt: Runtime, text: str) -> Found:
    """Everything of the user holding ``text`` (any case, a plain substring), the Markdown
    mirror lines and the copies no purge reaches included. Changes nothing."""
    return purging.find(rt.store, text, rt.places)


def purge(rt: Runtime, found: Found) -> Forgotten:
    """Forget what :func:`find` found, cut the text out of the rest, rewrite the mirrors."""
    done = purging.purge(rt.store, found, rt.places)
    rt.forgot(done)
    return done
