"""One runtime serves many users: the store is the one of the user the call acts for."""

from __future__ import annotations

from bigmind import caller
from bigmind.runtime import Runtime


def test_each_caller_gets_their_own_store_over_one_database(runtime: Runtime) -> None:
    home = runtime.store
    with caller.acting_as("bob"):
        bob = runtime.store
        bob.store_fact("decision", "Bob's broker is RabbitMQ")
        assert runtime.store is bob  # kept, not made per call
    before = home.db.statements  # one database: bob's store counts on alice's connection(s)
    bob.facts.count("active")  # (on PostgreSQL a view of the one pool acting for bob)
    assert home.db.statements == before + 1
    assert bob.user.username == "bob" and home.user.username == "alice"
    assert home.facts.count("active") == 0  # alice sees none of bob's facts
    with caller.acting_as("alice"):
        assert runtime.store is home
    with caller.acting_as(None):
        assert runtime.store is home


def test_a_background_notice_is_told_to_its_user_only(runtime: Runtime) -> None:
    home = runtime.store
    with caller.acting_as("bob"):
        bob = runtime.store
    runtime.notice("Merged fact #7 into #3 (bob's)", uid=bob.uid)
    runtime.notice("Linked #9 and #4 (alice's)", uid=home.uid)
    assert runtime.notices() == ["Linked #9 and #4 (alice's)"]
    assert runtime.notices() == []  # told once
    with caller.acting_as("carol"):
        assert runtime.notices() == []
    with caller.acting_as("bob"):
        assert runtime.notices() == ["Merged fact #7 into #3 (bob's)"]
