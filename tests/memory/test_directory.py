"""The MegaMind directory: cards kept with each session, "who worked on X?" from topics and
approved company knowledge only, hiding, the tool, the command and the page."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterator

import pytest
from cli_run import run_cli
from fastmcp import Client
from mcp_calls import call, serve_env
from secret_corpus import Fakes
from starlette.testclient import TestClient
from web_world import WEB_BASE, csrf_of

from bigmind.config import Settings
from bigmind.mcp.server import build_server
from bigmind.memory import erasure, globalkb, megamind, transfer
from bigmind.memory.users import set_role
from bigmind.runtime import Runtime
from bigmind.storage import directory_table as cards_table
from bigmind.storage import schema
from bigmind.storage.db import Backend
from bigmind.storage.migrations import migrate
from bigmind.storage.store import Store
from bigmind.web.profile_app import create_app

SECRET = "zygomorphic"  # in alice's private memory only: never in an answer


def team(backend: Backend, name: str) -> Store:
    return Store(backend, name, mode="team")


def session(store: Store, topics: list[str], one_liner: str = "worked") -> str:
    sid = store.start_session().session.id
    store.end_session(sid, one_liner, topics, None, None)
    return sid


@pytest.fixture
def alice(backend: Backend) -> Store:
    return team(backend, "alice")


@pytest.fixture
def bob(backend: Backend) -> Store:
    return team(backend, "bob")


def test_a_card_counts_sessions_facts_and_topics(alice: Store) -> None:
    session(alice, ["kafka", "payments-api"])
    session(alice, ["Kafka", "consumer-lag"])
    alice.store_fact("decision", "Partitions by account id")
    alice.start_session()  # open: counted, no topics yet
    (card,) = megamind.cards(alice)
    assert (card.username, card.sessions, card.facts, card.me, card.hidden) == (
        "alice",
        3,
        1,
        True,
        False,
    )
    assert [(t.topic, t.sessions) for t in card.topics] == [
        ("kafka", 2),
        ("consumer-lag", 1),
        ("payments-api", 1),
    ]
    assert card.first_seen is not None and card.last_seen is not None
    assert card.first_seen <= card.last_seen
    assert json.loads(json.dumps(card.as_dict()))["topics"][0] == {
        "topic": "kafka",
        "sessions": 2,
        "last_at": card.topics[0].last_at,
    }


def test_ending_a_session_again_replaces_its_topics(alice: Store) -> None:
    sid = session(alice, ["kafka", "redis"])
    alice.end_session(sid, "again", ["kafka", "postgres"], None, None)
    (card,) = megamind.cards(alice)
    assert sorted((t.topic, t.sessions) for t in card.topics) == [("kafka", 1), ("postgres", 1)]


def test_forgetting_a_session_takes_its_topics_off_the_card(alice: Store) -> None:
    keep = session(alice, ["kafka"])
    gone = session(alice, ["blunder"])
    erasure.forget(alice, [erasure.resolve(alice, "session", gone)])
    (card,) = megamind.cards(alice)
    assert [t.topic for t in card.topics] == ["kafka"] and card.sessions == 1
    assert keep and megamind.who_knows(alice, "blunder") == []


def test_who_knows_ranks_exact_topics_first_then_sessions(
    alice: Store, bob: Store, backend: Backend
) -> None:
    carol = team(backend, "carol")
    for _ in range(3):
        session(alice, ["kafka-streams"])  # a word match, three times
    session(bob, ["Kafka"])  # the exact topic, once
    session(carol, ["kafka"])
    session(carol, ["kafka"])
    found = megamind.who_knows(bob, "kafka")
    assert [(e.username, e.match, e.sessions) for e in found] == [
        ("carol", "exact", 2),
        ("bob", "exact", 1),
        ("alice", "word", 3),
    ]
    assert found[1].me and not found[0].me
    assert [t.topic for t in found[2].topics] == ["kafka-streams"]
    assert megamind.who_knows(bob, "Kafka Streams")[0].username == "alice"  # words, any case
    assert megamind.who_knows(bob, "payments") == []


def test_nothing_private_is_ever_an_answer(alice: Store, bob: Store) -> None:
    sid = alice.start_session().session.id
    alice.store_fact("decision", f"The {SECRET} scheduler runs nightly", session_id=sid)
    alice.append_chunk(f"we talked about {SECRET} a lot", session_id=sid)
    alice.end_session(sid, f"{SECRET} one-liner", ["scheduling"], f"{SECRET} done", SECRET)
    alice.update_profile(role=f"{SECRET} expert")
    globalkb.promote(alice, "pattern", f"{SECRET} pattern", f"{SECRET} is pending")  # pending
    for who in (bob, alice):
        assert megamind.who_knows(who, SECRET) == []
        assert SECRET not in repr(megamind.cards(who))
    assert [e.username for e in megamind.who_knows(bob, "scheduling")] == ["alice"]
    assert SECRET not in repr(megamind.who_knows(bob, "scheduling"))


def test_a_secret_typed_as_a_topic_is_redacted_before_anyone_sees_it(
    alice: Store, bob: Store
) -> None:
    key = Fakes(31).make("aws-access-key")[0]
    sid = session(alice, ["deploy", key])
    stored = alice.get_session(sid).topics or ""
    shown = repr(megamind.cards(bob)) + repr(megamind.who_knows(bob, "deploy"))
    assert key.lower() not in stored.lower() and "[redacted:aws-access-key]" in stored
    assert key.lower() not in shown.lower() and "deploy" in shown


def test_approved_company_knowledge_names_its_promoter(
    alice: Store, bob: Store, backend: Backend
) -> None:
    set_role(backend, "bob", "curator")
    entry = globalkb.promote(alice, "standard", "Retry policy", "Retry HTTP calls thrice").entry
    assert entry.status == "pending"
    assert megamind.who_knows(bob, "retry policy") == []  # pending: not company knowledge
    globalkb.review(bob, entry.id, "approve", None)
    (e,) = megamind.who_knows(bob, "retry policy")
    assert (e.username, e.match, e.sessions) == ("alice", "exact", 0)
    assert [(x.id, x.title, x.category) for x in e.entries] == [
        (entry.id, "Retry policy", "standard")
    ]
    assert megamind.who_knows(bob, "http retries")[0].username == "alice"  # a word of it


def test_a_hidden_card_vanishes_for_others_but_not_for_its_owner(
    alice: Store, bob: Store, backend: Backend
) -> None:
    session(alice, ["kafka"])
    set_role(backend, "alice", "curator")
    globalkb.promote(alice, "decision", "Kafka for payments", "We chose Kafka")
    assert megamind.hide(alice, True).hidden
    assert [c.username for c in megamind.cards(bob)] == ["bob"]
    assert megamind.who_knows(bob, "kafka") == []
    mine = [c for c in megamind.cards(alice) if c.me]
    assert [(c.username, c.hidden) for c in mine] == [("alice", True)]
    assert [e.username for e in megamind.who_knows(alice, "kafka")] == ["alice"]
    assert not megamind.hide(alice, False).hidden
    assert [e.username for e in megamind.who_knows(bob, "kafka")] == ["alice"]
    assert not [c for c in megamind.cards(bob) if c.hidden]  # others never see the flag


def test_personal_mode_is_you_alone(backend: Backend) -> None:
    me = Store(backend, "alice")
    other = Store(backend, "bob")
    session(me, ["kafka"])
    session(other, ["kafka"])
    assert [c.username for c in megamind.cards(me)] == ["alice"]
    assert [e.username for e in megamind.who_knows(me, "kafka")] == ["alice"]


def test_the_migration_backfills_cards_from_existing_rows(backend: Backend) -> None:
    alice = team(backend, "alice")
    session(alice, ["kafka", "redis"])
    session(alice, ["kafka"])
    alice.store_fact("decision", "x")
    megamind.hide(alice, True)
    with backend.transaction() as tx:
        tx.execute("DELETE FROM directory_topics")
        tx.execute("UPDATE directory_cards SET sessions = 0, facts = 0")
        tx.execute("DELETE FROM bigmind_migrations WHERE name = '0023_directory'")
    assert migrate(backend) == ["0023_directory"]
    (card,) = megamind.cards(alice)
    assert (card.sessions, card.facts, card.hidden) == (2, 1, True)
    assert [(t.topic, t.sessions) for t in card.topics] == [("kafka", 2), ("redis", 1)]


def test_an_import_fills_the_importers_card(alice: Store, backend: Backend) -> None:
    session(alice, ["kafka"])
    alice.store_fact("decision", "Partitions by account id")
    carol = team(backend, "carol")
    transfer.import_data(carol, transfer.export_data(alice))
    (card,) = [c for c in megamind.cards(carol) if c.me]
    assert (card.sessions, card.facts, [t.topic for t in card.topics]) == (1, 1, ["kafka"])


def test_kept_cards_equal_cards_rebuilt_from_the_rows(alice: Store, bob: Store) -> None:
    """What each write keeps up to date is what a rebuild from the sessions and facts makes."""
    sid = session(alice, ["kafka", "redis"])
    alice.end_session(sid, "again", ["kafka"], None, None)
    fact, _, _ = alice.store_fact("decision", "one")
    alice.store_fact("decision", "two")
    alice.deprecate_fact(fact.id, "old")
    alice.restore_fact(fact.id)
    alice.deprecate_fact(fact.id, "old again")
    open_one = alice.start_session().session.id
    with alice.db.transaction() as tx:  # half a minute later: the write counts as activity
        tx.execute(
            "UPDATE sessions SET last_activity_at = '2020-01-01 00:00:00' WHERE id = ?",
            (open_one,),
        )
    alice.append_chunk("hello", session_id=open_one)
    session(bob, ["kafka"])
    kept = megamind.cards(alice)
    with alice.db.maintenance().transaction() as tx:  # every user's cards (pgpolicies)
        cards_table.rebuild(tx, "2000-01-01 00:00:00")
    assert megamind.cards(alice) == kept


def test_the_tables_are_named_for_the_row_level_security_policies() -> None:
    assert schema.names("directory") == ("directory_cards", "directory_topics")


# -- surfaces ------------------------------------------------------------------------------------
@pytest.fixture
def team_settings(settings_for: Callable[[str], Settings]) -> Callable[[str], Settings]:
    return lambda name: settings_for(name).model_copy(update={"mode": "team"})


@pytest.fixture
def team_rt(team_settings: Callable[[str], Settings]) -> Iterator[Runtime]:
    rt = Runtime(team_settings("alice"))
    yield rt
    rt.close()


@pytest.mark.anyio
async def test_the_tool_answers_who_worked_on_a_topic(
    team_settings: Callable[[str], Settings], team_rt: Runtime
) -> None:
    bob = team(team_rt.store.db, "bob")
    session(bob, ["billing", "kafka"])
    session(team_rt.store, ["frontend"])
    async with Client(build_server(team_settings("alice"), team_rt)) as client:
        tools = {t.name: t for t in await client.list_tools()}
        assert tools["memory_who_knows"].annotations.read_only_hint is True
        text, data = await call(client, "memory_who_knows", topic="billing")
        assert "`bob`" in text and "billing ×1" in text
        assert [p["username"] for p in data["people"]] == ["bob"]
        assert data["people"][0]["topics"][0]["topic"] == "billing"
        text, data = await call(client, "memory_who_knows", topic="quantum")
        assert data["people"] == [] and "Nobody" in text


def _cli(settings: Settings, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli("directory", *args, env=serve_env(settings, BIGMIND_MODE="team"))


def test_the_command_lists_answers_and_hides(
    team_settings: Callable[[str], Settings], team_rt: Runtime
) -> None:
    session(team_rt.store, ["kafka"])
    bob = team(team_rt.store.db, "bob")
    session(bob, ["kafka", "redis"])
    alice = team_settings("alice")
    listed = _cli(alice, "--json")
    assert listed.returncode == 0, listed.stderr
    cards = json.loads(listed.stdout)["cards"]
    assert {c["username"] for c in cards} == {"alice", "bob"}
    said = _cli(alice, "kafka")
    assert said.returncode == 0 and "@bob" in said.stdout and "@alice" in said.stdout
    hid = _cli(team_settings("bob"), "--hide")
    assert hid.returncode == 0 and "hidden" in hid.stdout, hid.stderr
    assert "@bob" not in _cli(alice, "kafka").stdout
    assert "@bob" not in _cli(alice).stdout
    assert "[hidden]" in _cli(team_settings("bob")).stdout
    assert _cli(team_settings("bob"), "--show").returncode == 0
    assert "@bob" in _cli(alice, "kafka").stdout
    assert _cli(alice, "--hide", "--show").returncode == 2


def test_the_page_shows_cards_answers_and_hides_with_the_csrf_token(team_rt: Runtime) -> None:
    session(team_rt.store, ["kafka"], one_liner=f"{SECRET} line")
    bob = team(team_rt.store.db, "bob")
    session(bob, ["kafka", "redis"])
    with TestClient(create_app(team_rt), base_url=WEB_BASE, follow_redirects=False) as web:
        html = web.get("/directory").text
        assert 'id="card-alice"' in html and 'id="card-bob"' in html and "redis ×1" in html
        assert SECRET not in html and 'href="/directory"' in html
        asked = web.get("/directory?topic=redis").text
        assert "@bob" in asked.split("Answers come from")[0]
        assert (
            web.post("/directory/hide", data={"hidden": "1", "csrf": "forged"}).status_code == 403
        )
        r = web.post("/directory/hide", data={"hidden": "1", "csrf": csrf_of(html)})
        assert r.status_code == 303 and r.headers["location"].startswith("/directory?")
        html = web.get("/directory").text
        assert "Show my card" in html and "hidden</span>" in html
    assert [c.username for c in megamind.cards(bob)] == ["bob"]
    assert [e.username for e in megamind.who_knows(bob, "kafka")] == ["bob"]


def test_the_page_in_personal_mode_is_your_card_without_a_hide_button(runtime: Runtime) -> None:
    session(runtime.store, ["kafka"])
    session(Store(runtime.store.db, "bob"), ["redis"])
    with TestClient(create_app(runtime), base_url=WEB_BASE) as web:
        html = web.get("/directory?topic=kafka").text
    assert 'id="card-alice"' in html and "card-bob" not in html and "redis" not in html
    assert "Hide my card" not in html and "kafka ×1" in html
