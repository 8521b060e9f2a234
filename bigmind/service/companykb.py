"""Company knowledge (Tier G), for every surface: standards, decisions and patterns every user
of the database shares, proposed by anyone and approved by a curator (at once in personal
mode).

An entry's source session is its promoter's private memory: :func:`shown` hides it from
everyone else. Each write wakes the background embedder; a search counts what it handed over
as used (:func:`bigmind.service.recall.recall`).
"""

from __future__ import annotations

from dataclasses import replace

from bigmind.errors import InvalidInput
from bigmind.memory import globalkb
from bigmind.memory.globalkb import GlobalEntry, Promoted
from bigmind.models import User
from bigmind.runtime import Runtime
from bigmind.service import recall as recalling

__all__ = [
    "GlobalEntry",
    "Promoted",
    "caller",
    "entries",
    "get",
    "may_curate",
    "promote",
    "reject",
    "review",
    "search",
    "shown",
    "visible",
]


def promote(
    rt: Runtime,
    category: str,
    title: str,
    content: str,
    importance: int = 5,
    source_session: str | None = None,
) -> Promoted:
    """Propose an entry (approved at once in personal mode); an identical one already
    approved or pending is returned instead (``created`` False)."""
    r = globalkb.promote(rt.store, category, title, content, importance, source_session)
    if r.created:
        rt.wrote()
    return r


def search(rt: Runtime, query: str, limit: int = 5) -> recalling.Recollection:
    """Approved entries for ``query`` by keywords and meaning, counted as used."""
    return recalling.recall(rt, query, limit, ["global"], extras=False)


def entries(
    rt: Runtime,
    category: str | None = None,
    limit: int = 20,
    status: str = "approved",
) -> tuple[list[GlobalEntry], bool]:
    """Entries with ``status``, most important first, and whether only the user's own are
    listed (a member asking for pending or deprecated ones)."""
    return globalkb.list_entries(rt.store, category, limit, status)


def get(rt: Runtime, entry_id: int) -> GlobalEntry:
    """One entry, as stored (see :func:`shown`).

    Raises:
        NotFound: no such entry (or a pending one of another user's, for a member).
    """
    return globalkb.get(rt.store, entry_id)


def review(rt: Runtime, entry_id: int, action: str, notes: str | None = None) -> GlobalEntry:
    """Approve or deprecate an entry (curators and admins; anyone in personal mode).

    Raises:
        Forbidden: the user may not curate.
        InvalidInput: an unknown action, or the entry has that status already.
        NotFound: no such entry.
    """
    e = globalkb.review(rt.store, entry_id, action, notes)
    rt.wrote()
    return e


def reject(rt: Runtime, entry_id: int, notes: str | None = None) -> GlobalEntry:
    """Turn a pending proposal down: deprecated, as :func:`review` does.

    Raises:
        InvalidInput: the entry is not pending (deprecate an approved one instead).
        Forbidden: the user may not curate.
        NotFound: no such entry.
    """
    if globalkb.get(rt.store, entry_id).status != "pending":
        raise InvalidInput(
            f"Entry #{entry_id} is not pending: only a proposal can be rejected "
            "(deprecate an approved entry)."
        )
    return review(rt, entry_id, "deprecate", notes)


def visible(rt: Runtime, e: GlobalEntry) -> dict[str, object]:
    """An entry's fields as the user may see them: the source session only for its promoter."""
    return globalkb.visible(rt.store, e)


def shown(rt: Runtime, e: GlobalEntry) -> GlobalEntry:
    """:func:`visible`, as an entry."""
    seen = globalkb.visible(rt.store, e)["source_session"]
    return replace(e, source_session=seen if isinstance(seen, str) else None)


def caller(rt: Runtime) -> User:
    """The user the call acts for, with the role the database holds now."""
    return globalkb.caller(rt.store)


def may_curate(rt: Runtime) -> bool:
    """Whether the user may approve and deprecate entries."""
    return globalkb.may_curate(rt.store)
