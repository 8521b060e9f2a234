"""Recall's judgement, on both backends: keyword evidence on one scale for every kind, what is
current first, and weak matches said to be weak (bench/README.md, "Judgement", measures the
same on real memories; these are the behaviours, on small memories written for the test).
"""

from __future__ import annotations

import pytest
from fastmcp import Client
from mcp_calls import call
from model_fixture import ready

from bigmind.mcp.server import build_server
from bigmind.runtime import Runtime
from bigmind.search.ranking import WEAK_BELOW

pytestmark = pytest.mark.anyio

FACTS = (
    ("codebase", "The billing service retries failed card charges with exponential backoff"),
    ("codebase", "The billing service writes invoices to the ledger every night"),
    ("decision", "Deployments go through the release train on Tuesdays"),
    ("codebase", "The search service caches results in Redis for five minutes"),
)


def test_the_fact_with_every_word_beats_one_sharing_a_common_word(runtime: Runtime) -> None:
    """Keywords only (no model): "billing" is in half the facts and still counts; the fact
    showing every word of the question comes first."""
    store = runtime.store
    ids = [store.store_fact(cat, text)[0].id for cat, text in FACTS]
    hits = runtime.recall().search("how does billing retry failed charges", 3).hits
    assert hits[0].id == ids[0]
    assert ids[1] in [h.id for h in hits]  # a word in half the rows still finds its rows
    assert not any(h.weak for h in hits)  # not calibrated without the model: never said weak


def test_a_derived_word_finds_its_base_without_the_model(runtime: Runtime) -> None:
    """The porter stemmer makes "deploy" of "deployment" but "deploi" of "deploy": the base is
    searched too, and shown as matched by its stem."""
    store = runtime.store
    fact = store.store_fact("decision", "We deploy on Fridays after the release train")[0]
    hits = runtime.recall().search("deployment schedule", 5).hits
    assert [h.id for h in hits] == [fact.id]
    assert "'deplo'" in hits[0].why


def test_a_chunk_does_not_outrank_the_fact_that_answers(runtime: Runtime) -> None:
    """A flagged exchange matching one word of the question, in a session full of matches,
    stays below the fact matching all of them (chunks were 46 % of first hits on real notes)."""
    store = runtime.store
    fact = store.store_fact("codebase", FACTS[0][1])[0].id
    s = store.start_session("test").session.id
    for text in (
        "support asked about the billing page",
        "support closed the billing ticket",
        "support wants a billing export",
    ):
        store.append_chunk(text, s, "user", "support thread")
    hits = runtime.recall().search("billing retries failed card charges backoff", 5).hits
    assert (hits[0].kind, hits[0].id) == ("fact", fact)


async def test_weak_matches_are_said_to_be_weak(sem_runtime: Runtime) -> None:
    rt = sem_runtime
    async with Client(build_server(rt.settings, rt)) as client:
        for cat, text in FACTS:
            await call(client, "memory_store_fact", category=cat, fact=text)
        ready(rt)
        text, data = await call(
            client, "memory_recall", query="which bread does the bakery bake at night"
        )
        assert data["nothing_relevant"] is True
        assert text.startswith("Nothing clearly relevant to")
        assert data["results"] and all(r["weak"] for r in data["results"])
        _, data = await call(client, "memory_recall", query="sourdough starter hydration")
        assert data["nothing_relevant"] is True and data["results"] == []
        text, data = await call(
            client, "memory_recall", query="how are failed card charges retried in billing"
        )
        assert data["nothing_relevant"] is False and not data["results"][0]["weak"]
        assert "exponential backoff" in data["results"][0]["text"]
        assert data["results"][0]["score"] >= WEAK_BELOW


def test_the_newer_of_two_facts_on_one_subject_comes_first(sem_runtime: Runtime) -> None:
    """Two notes about one thing, written at different times and as relevant as each other:
    the newer first (the older is not marked: nothing says it is stale)."""
    store = sem_runtime.store
    older = store.store_fact("codebase", "#101: The nightly build uploads coverage reports")
    newer = store.store_fact(
        "codebase", "#245: The nightly build uploads coverage reports for pull requests too"
    )
    ready(sem_runtime)
    hits = sem_runtime.recall().search("where do nightly coverage reports go", 2, ["fact"]).hits
    assert [h.id for h in hits] == [newer[0].id, older[0].id]
    assert not any("updated by" in h.why for h in hits)
    assert hits[1].marks == (f"↪️ newer on this subject: #{newer[0].id} ({hits[0].date})",)
