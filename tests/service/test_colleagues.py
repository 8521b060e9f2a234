"""bigmind/service/colleagues.py: the directory's cards and a card hidden or shown (both backends)."""

from __future__ import annotations

from bigmind.runtime import Runtime
from bigmind.service import colleagues


def test_a_hidden_card_stays_listed_for_its_owner_and_shows_again(runtime: Runtime) -> None:
    assert colleagues.hide_card(runtime, True).hidden
    assert [(c.username, c.hidden) for c in colleagues.cards(runtime)] == [("alice", True)]
    assert not colleagues.hide_card(runtime, False).hidden
    assert colleagues.who_knows(runtime, "kafka") == []
