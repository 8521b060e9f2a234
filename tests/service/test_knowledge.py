"""The service floor of facts, company knowledge and forgetting (bigmind/service/facts.py,
companykb.py, forgetting.py), in process, on both backends: a change's steps and what each
reports, a rejected proposal, what another user sees of an entry, and the uses a search
counts and a forget drops."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from bigmind.config import Settings
from bigmind.errors import Forbidden, InvalidInput, NotFound
from bigmind.memory.users import add_user, set_role
from bigmind.runtime import Runtime
from bigmind.service import companykb, forgetting, sessionlife
from bigmind.service import facts as service
from bigmind.service import recall as recalling
from bigmind.storage.db import Backend

KAFKA = "The payments service uses Kafka"
RABBIT = "The payments service uses RabbitMQ"


@pytest.fixture
def team(
    settings_for: Callable[[str], Settings], backend: Backend
) -> Iterator[Callable[[str], Runtime]]:
    """Runtimes of several users of one database in team mode (an admin exists first, so
    each user opened is a member)."""
    add_user(backend, "root", "admin")
    opened: list[Runtime] = []

    def open_as(user: str) -> Runtime:
        rt = Runtime(settings_for(user).model_copy(update={"mode": "team"}))
        opened.append(rt)
        return rt

    yield open_as
    for rt in opened:
        rt.close()


# -- facts -----------------------------------------------------------------------------------
def test_a_change_of_replaces_alone_answers_the_fact_as_it_is(runtime: Runtime) -> None:
    old = service.store_fact(runtime, "codebase", KAFKA).fact
    new = service.store_fact(runtime, "codebase", RABBIT).fact
    c = service.change(runtime, new.id, replaces=[old.id])
    assert (c.fact.id, c.scoped, c.corrected) == (new.id, False, None)
    assert c.replaced is not None and c.replaced.retired == [old.id]
    undo = service.change(runtime, new.id, replaces=[])
    assert undo.replaced is not None and undo.replaced.restored == [old.id]
    assert not service.get(runtime, old.id).deprecated


def test_a_change_moves_then_corrects_and_says_which_it_did(runtime: Runtime) -> None:
    f = service.store_fact(runtime, "codebase", KAFKA).fact
    moved = service.change(runtime, f.id, scope="global")
    assert (moved.scoped, moved.corrected, moved.fact.scope) == (True, None, "global")
    both = service.change(runtime, f.id, fact=RABBIT, scope="global", reason="migrated")
    assert both.scoped and both.corrected is not None
    assert (both.corrected.changed, both.fact.fact) == (["fact"], RABBIT)
    current, versions = service.history(runtime, f.id)
    assert current.fact == RABBIT and [(v.fact, v.reason) for v in versions] == [
        (KAFKA, "migrated")
    ]
    same = service.change(runtime, f.id, fact=RABBIT)
    assert same.corrected is not None and same.corrected.changed == []


def test_a_correction_that_fails_leaves_the_replacement_made_before_it(runtime: Runtime) -> None:
    old = service.store_fact(runtime, "codebase", KAFKA).fact
    new = service.store_fact(runtime, "codebase", RABBIT).fact
    other = service.store_fact(runtime, "codebase", "Orders ship in 2 days").fact
    with pytest.raises(InvalidInput, match=f"Fact #{other.id} already says this"):
        service.change(runtime, new.id, fact="Orders ship in 2 days", replaces=[old.id])
    assert service.get(runtime, old.id).deprecated  # the first step committed on its own
    assert service.get(runtime, new.id).fact == RABBIT


def test_deprecate_and_restore_round_trip(runtime: Runtime) -> None:
    f = service.store_fact(runtime, "codebase", KAFKA).fact
    assert service.deprecate(runtime, f.id, "moved to RabbitMQ").deprecated
    with pytest.raises(InvalidInput):
        service.deprecate(runtime, f.id, "again")
    assert not service.restore(runtime, f.id).deprecated


# -- company knowledge -----------------------------------------------------------------------
def test_only_a_pending_proposal_is_rejected(
    team: Callable[[str], Runtime], backend: Backend
) -> None:
    bob, carol = team("bob"), team("carol")
    sid = sessionlife.start_session(bob, agent=False).session.id
    proposed = companykb.promote(bob, "standard", "Retries", "Payments never retry", 5, sid)
    assert proposed.created and proposed.entry.status == "pending"
    assert companykb.shown(bob, proposed.entry).source_session == sid  # the promoter's
    with pytest.raises(Forbidden):
        companykb.reject(bob, proposed.entry.id)
    assert carol.store.user.role == "member"  # her first call adds her
    set_role(backend, "carol", "curator")
    assert companykb.shown(carol, proposed.entry).source_session is None
    assert companykb.visible(carol, proposed.entry)["source_session"] is None
    rejected = companykb.reject(carol, proposed.entry.id, "too narrow")
    assert rejected.status == "deprecated"
    with pytest.raises(InvalidInput, match="is not pending"):
        companykb.reject(carol, proposed.entry.id)
    approved = companykb.review(carol, proposed.entry.id, "approve")
    assert approved.status == "approved"
    with pytest.raises(InvalidInput, match="is not pending"):
        companykb.reject(carol, approved.id)


def test_a_search_of_company_knowledge_counts_what_it_handed_over(runtime: Runtime) -> None:
    e = companykb.promote(runtime, "standard", "Retries", "Payments never retry a charge").entry
    found = companykb.search(runtime, "retry a charge")
    assert [h.id for h in found.hits] == [e.id] and len(runtime.usage) == 1
    assert companykb.search(runtime, "zeppelin").hits == []
    assert len(runtime.usage) == 1


# -- forgetting ------------------------------------------------------------------------------
def test_a_forget_drops_the_uses_not_written_yet(runtime: Runtime) -> None:
    f = service.store_fact(runtime, "codebase", KAFKA).fact
    found = recalling.recall(runtime, "payments Kafka", 5, ["fact"], mode="keyword")
    assert [h.id for h in found.hits] == [f.id] and len(runtime.usage) == 1
    target, done = forgetting.forget(runtime, "fact", f"#{f.id}")
    assert (target.kind, target.id, done.targets) == ("fact", str(f.id), [target])
    assert len(runtime.usage) == 0
    with pytest.raises(NotFound):
        service.get(runtime, f.id)


def test_another_users_fact_cannot_be_forgotten_or_previewed(
    runtime: Runtime, settings_for: Callable[[str], Settings]
) -> None:
    f = service.store_fact(runtime, "codebase", KAFKA).fact
    bob = Runtime(settings_for("bob"))
    try:
        with pytest.raises(NotFound):
            forgetting.forget(bob, "fact", f.id)
        with pytest.raises(NotFound):
            forgetting.resolve(bob, "fact", f.id)
    finally:
        bob.close()
    target = forgetting.resolve(runtime, "fact", f.id)
    assert forgetting.preview(runtime, target)[0].startswith("the fact")
    assert not service.get(runtime, f.id).deprecated
