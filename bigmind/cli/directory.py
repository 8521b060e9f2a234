"""``bigmind directory``: the MegaMind directory from the terminal — the cards you may see,
"who worked on X?", and hiding or showing your own card."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from bigmind.cli.commands import emit
from bigmind.cli.main import runtime
from bigmind.models import day_of
from bigmind.service.display import quoted

if TYPE_CHECKING:
    from bigmind.service.colleagues import Card, Expert


def directory_arguments(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("topic", nargs="*", help="who worked on this topic (default: list the cards)")
    shown = sp.add_mutually_exclusive_group()
    shown.add_argument("--hide", action="store_true", help="hide your card from everyone else")
    shown.add_argument("--show", action="store_true", help="show your card again")


def cmd_directory(args: argparse.Namespace) -> int:
    """List the directory's cards, answer who worked on a topic, or hide or show your card."""
    from bigmind.service import colleagues

    change = args.hide or args.show
    rt = runtime(create=change)
    try:
        if change:
            card = colleagues.hide_card(rt, args.hide)
            state = "hidden: only you see it" if card.hidden else "shown to everyone"
            emit(args, {"card": card.as_dict()}, f"Your card is {state}.")
        elif args.topic:
            topic = " ".join(args.topic)
            found = colleagues.who_knows(rt, topic)
            text = "\n".join(map(_expert, found)) or f"Nobody in the directory worked on {topic!r}."
            emit(args, {"topic": topic, "people": [e.as_dict() for e in found]}, text)
        else:
            cards = colleagues.cards(rt)
            emit(args, {"cards": [c.as_dict() for c in cards]}, "\n".join(map(_card, cards)))
    finally:
        rt.close()
    return 0


def _who(name: str | None, username: str, role: str | None, team: str | None) -> str:
    bits = [quoted(x) for x in (role, team and f"team {team}") if x]
    return f"{quoted(name or username)} @{quoted(username)}" + (
        f" ({', '.join(bits)})" if bits else ""
    )


def _card(c: Card) -> str:
    head = _who(c.display_name, c.username, c.role, c.team) + (" [hidden]" if c.hidden else "")
    seen = f"{day_of(c.first_seen) or '—'} → {day_of(c.last_seen) or '—'}"
    topics = ", ".join(f"{quoted(t.topic)} ×{t.sessions}" for t in c.topics)
    return f"{head}\n  {c.access}; {c.sessions} sessions, {c.facts} facts; {seen}" + (
        f"\n  topics: {topics}" if topics else ""
    )


def _expert(e: Expert) -> str:
    bits = [f"{quoted(t.topic)} ×{t.sessions}" for t in e.topics[:5]]
    bits += [f"promoted #{x.id} {quoted(x.title)}" for x in e.entries[:3]]
    last = f"; last {day_of(e.last_at)}" if e.last_at else ""
    return f"{_who(e.display_name, e.username, e.role, e.team)}: {'; '.join(bits)}{last}"
