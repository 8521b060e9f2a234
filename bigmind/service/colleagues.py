"""People, for every surface: the colleagues the agent should know about (a table every user
shares), and the MegaMind directory — every user's card, and who worked on a topic, from
session topics and approved company knowledge (never content: docs/directory.md).
"""

from __future__ import annotations

from collections.abc import Sequence

from bigmind.memory import megamind, people
from bigmind.memory.megamind import CARDS_MAX, Card, Expert
from bigmind.memory.people import Person, Remembered
from bigmind.runtime import Runtime

__all__ = [
    "CARDS_MAX",
    "Card",
    "Expert",
    "Person",
    "Remembered",
    "cards",
    "hide_card",
    "list_people",
    "recall_person",
    "remember_person",
    "who_knows",
]


def remember_person(
    rt: Runtime,
    username: str,
    display_name: str | None = None,
    role: str | None = None,
    team: str | None = None,
    expertise: str | Sequence[str] | None = None,
    notes: str | None = None,
) -> Remembered:
    """Store or update a colleague; expertise and notes are merged, never overwritten (what
    outgrows its cap loses its oldest part, and the result says what went)."""
    r = people.remember(rt.store, username, display_name, role, team, expertise, notes)
    rt.wrote()
    return r


def recall_person(rt: Runtime, query: str) -> list[tuple[Person, float, str]]:
    """Colleagues matching ``query`` by name, role, team or expertise: (person, score, why)."""
    return people.recall(rt.store, query)


def list_people(rt: Runtime, limit: int = 20) -> list[Person]:
    """Every known colleague, most recently seen first."""
    return people.list_(rt.store, limit)


def who_knows(rt: Runtime, topic: str, limit: int = 10) -> list[Expert]:
    """Who worked on ``topic``, best first; hidden cards are left out (the caller's own is
    not, for them)."""
    return megamind.who_knows(rt.store, topic, limit)


def cards(rt: Runtime, limit: int = CARDS_MAX) -> list[Card]:
    """Every directory card the user may see, most recently seen first."""
    return megamind.cards(rt.store, limit)


def hide_card(rt: Runtime, hidden: bool) -> Card:
    """Hide the user's card from everyone else (``hidden``), or show it again."""
    return megamind.hide(rt.store, hidden)
