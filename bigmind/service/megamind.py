"""The MegaMind directory (docs/directory.md) for every surface: the cards the running call's
user may see, who worked on a topic, and their own card hidden or shown
(:mod:`bigmind.memory.directory`)."""

from __future__ import annotations

from bigmind.memory import directory
from bigmind.memory.directory import CARDS_MAX, Card, Expert
from bigmind.runtime import Runtime

__all__ = ["CARDS_MAX", "Card", "Expert", "cards", "show_card", "who_knows"]


def cards(rt: Runtime, limit: int = CARDS_MAX) -> list[Card]:
    """Every card the user may see (theirs always, marked if hidden), most recently seen
    first; in personal mode theirs alone."""
    return directory.cards(rt.store, limit)


def who_knows(rt: Runtime, topic: str, limit: int = 10) -> list[Expert]:
    """Who worked on ``topic``: people whose session topics match it, and the promoters of
    approved company knowledge about it, best first; hidden cards left out (the user's own
    is not, for them)."""
    return directory.who_knows(rt.store, topic, limit)


def show_card(rt: Runtime, shown: bool) -> Card:
    """Show the user's card to everyone (``shown``), or hide it from everyone else."""
    return directory.hide(rt.store, not shown)
