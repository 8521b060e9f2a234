"""bigmind/service/megamind.py: the directory's cards and a card hidden or shown (both backends)."""

from __future__ import annotations

from bigmind.runtime import Runtime
from bigmind.service import megamind


def test_a_hidden_card_stays_listed_for_its_owner_and_shows_again(runtime: Runtime) -> None:
    assert megamind.show_card(runtime, False).hidden
    assert [(c.username, c.hidden) for c in megamind.cards(runtime)] == [("alice", True)]
    assert not megamind.show_card(runtime, True).hidden
    assert megamind.who_knows(runtime, "kafka") == []
