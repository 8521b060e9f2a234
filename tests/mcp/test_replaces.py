"""The agent judges: memory_store_fact(..., replaces=[ids]) retires the facts it names in the
same transaction, one call undoes it, a bad id refuses the whole call, and the reply lists the
closest existing facts (bigmind/service/facts.py). Both backends; a real in-memory MCP client,
the REST API behind the gateway's stand-in, the real MiniLM for the close list."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest
from fastmcp import Client
from mcp_calls import Cli, call, refused
from model_fixture import ready
from rest_client import api_as

from bigmind.config import Settings
from bigmind.mcp.server import build_server
from bigmind.runtime import Runtime
from bigmind.search.embedder import Embedder, load_embedder
from bigmind.search.vectors import fact_embedding_text
from bigmind.storage.store import STATED

pytestmark = pytest.mark.anyio

PG14 = "The alpha database runs PostgreSQL 14"
PG15 = "The alpha database was moved to PostgreSQL 15 last week"
KAFKA = "The payments service uses Kafka"
PYTEST = "The user prefers pytest for all Python tests"


async def store(client: Cli, fact: str, **more: Any) -> tuple[str, dict[str, Any]]:
    return await call(client, "memory_store_fact", category="codebase", fact=fact, **more)


async def new(client: Cli, fact: str, **more: Any) -> int:
    return int((await store(client, fact, **more))[1]["fact_id"])


def active(rt: Runtime) -> set[int]:
    return {f.id for f in rt.store.top_facts(100)}


def supersedes(rt: Runtime, fact_id: int) -> list[tuple[int, str | None]]:
    """(other id, why) of every ``supersedes`` link from ``fact_id``."""
    return sorted(
        (x.fact.id, x.why)
        for x in rt.store.links.of_facts([fact_id])
        if x.outgoing and x.kind == "supersedes"
    )


@pytest.fixture
def other_user(settings_for: Callable[[str], Settings]) -> Iterator[Runtime]:
    rt = Runtime(settings_for("bob"))
    yield rt
    rt.close()


# -- replaces, and its undo --------------------------------------------------------------------
async def test_replaces_retires_and_links_the_named_facts_in_the_same_call(
    client: Cli, runtime: Runtime
) -> None:
    old, older = await new(client, PG14), await new(client, KAFKA)
    text, data = await store(client, PG15, replaces=[old, older])
    n = data["fact_id"]
    assert data["created"] is True and data["retired"] == [old, older]
    assert f"Replaced #{old}, #{older}" in text
    assert f"Undo: memory_update_fact(fact_id={n}, replaces=[])" in text
    assert active(runtime) == {n}
    for i in (old, older):
        assert runtime.store.get_fact(i).deprecation_reason == f"replaced by #{n}"
    assert supersedes(runtime, n) == [(old, STATED), (older, STATED)]


async def test_one_call_undoes_a_replacement_and_restores_every_retired_fact(
    client: Cli, runtime: Runtime
) -> None:
    old, older = await new(client, PG14), await new(client, KAFKA)
    n = await new(client, PG15, replaces=f"{old}, #{older}")  # comma-separated text
    text, data = await call(client, "memory_update_fact", fact_id=n, replaces=[])
    assert sorted(data["restored"]) == [old, older] and data["retired"] == []
    assert "Restored" in text and f"#{old}" in text
    assert active(runtime) == {old, older, n}
    assert supersedes(runtime, n) == []
    # …and the same call names more facts a stored one replaces (as the close list says).
    text, data = await call(client, "memory_update_fact", fact_id=n, replaces=f"[{old}]")
    assert data["retired"] == [old] and active(runtime) == {older, n}
    assert f"Undo: memory_update_fact(fact_id={n}, replaces=[])" in text


async def test_a_repeat_still_retires_what_it_names_unless_it_names_itself(
    client: Cli, runtime: Runtime
) -> None:
    known, old = await new(client, PG15), await new(client, PG14)
    _, data = await store(client, PG15, replaces=[old])
    assert data["created"] is False and data["fact_id"] == known and data["retired"] == [old]
    assert runtime.store.get_fact(old).deprecation_reason == f"replaced by #{known}"
    _, again = await store(client, PG15, replaces=[old])  # the same call twice: no error
    assert again["retired"] == [old]
    message = await refused(client, "memory_store_fact", category="codebase", fact=PG15,
                            replaces=[known])  # fmt: skip
    assert f"#{known}" in message and "cannot replace itself" in message


# -- refusals store nothing --------------------------------------------------------------------
async def test_an_id_that_is_not_an_active_fact_of_the_callers_refuses_the_whole_call(
    client: Cli, runtime: Runtime, other_user: Runtime
) -> None:
    mine, gone = await new(client, KAFKA), await new(client, PYTEST)
    await call(client, "memory_deprecate_fact", fact_id=gone, reason="wrong")
    bobs, _, _ = other_user.store.store_fact("codebase", "Bob's own service uses Redis")
    before = runtime.store.counts()
    for bad, said in (
        (987_654, "No fact #987654"),
        (bobs.id, f"No fact #{bobs.id}"),  # another user's: exactly like an unknown id
        (gone, f"Fact #{gone} is already deprecated"),
    ):
        message = await refused(
            client, "memory_store_fact", category="codebase", fact=PG15, replaces=[mine, bad]
        )
        assert said in message and "Nothing stored" in message and "\n" not in message
    assert "'replaces' takes fact ids" in await refused(
        client, "memory_store_fact", category="codebase", fact=PG15, replaces="twelve"
    )
    assert runtime.store.counts() == before
    assert active(runtime) == {mine}
    assert not other_user.store.get_fact(bobs.id).deprecated


# -- the compact profile and the REST API --------------------------------------------------------
async def test_the_compact_profile_replaces_and_undoes_with_its_own_calls(
    settings: Settings, runtime: Runtime
) -> None:
    compact = settings.model_copy(update={"tools": "compact"})
    async with Client(build_server(compact, runtime)) as c:
        old = await new(c, PG14)
        text, data = await store(c, PG15, replaces=[old])
        n = data["fact_id"]
        assert data["retired"] == [old] and runtime.store.get_fact(old).deprecated
        assert f'Undo: memory_fix_fact(action="update", fact_id={n}, reason="undo",' in text
        text, data = await call(
            c, "memory_fix_fact", action="update", fact_id=n, reason="undo", replaces=[]
        )
        assert data["restored"] == [old] and not runtime.store.get_fact(old).deprecated


def test_rest_stores_with_replaces_undoes_with_a_patch_and_refuses_in_one_line(
    runtime: Runtime,
) -> None:
    with api_as(runtime, "alice") as api:
        old = api.post("/facts", {"category": "codebase", "fact": PG14}).json()["fact"]["id"]
        before = runtime.store.counts()
        bad = api.post("/facts", {"category": "codebase", "fact": PG15, "replaces": [987_654]})
        assert bad.status_code == 422 and "No fact #987654" in bad.json()["error"]["message"]
        assert runtime.store.counts() == before
        r = api.post("/facts", {"category": "codebase", "fact": PG15, "replaces": [old]})
        body = r.json()
        assert r.status_code == 201 and body["retired"] == [old] and body["close"] == []
        n = body["fact"]["id"]
        assert api.get(f"/facts/{old}").json()["fact"]["deprecation_reason"] == (
            f"replaced by #{n}"
        )
        undo = api.patch(f"/facts/{n}", {"replaces": []}).json()
        assert undo["restored"] == [old] and undo["changed"] == ["replaces"]
        assert not api.get(f"/facts/{old}").json()["fact"]["deprecated"]


# -- the close list ----------------------------------------------------------------------------
async def test_the_reply_lists_the_close_facts_and_the_one_call_that_replaces_them(
    sem_runtime: Runtime,
) -> None:
    rt = sem_runtime
    async with Client(build_server(rt.settings, rt)) as client:
        await call(client, "memory_start_session")
        ready(rt)
        old = await new(client, PG14)
        await new(client, PYTEST)
        ready(rt)
        text, data = await store(client, PG15)
        n = data["fact_id"]
        assert [c["id"] for c in data["close"]] == [old]  # not the unrelated pytest fact
        close = data["close"][0]
        assert close["text"] == PG14 and close["date"] and 0.6 <= close["similarity"] <= 1
        assert f"- #{old} ({close['date']}) “{PG14}”" in text
        assert f"If #{n} replaces any: memory_update_fact(fact_id={n}, replaces=[{old}])" in text
        # The vector made for the list is written by the background embedder, from its cache.
        sem = ready(rt)
        vec = sem.embed_query(fact_embedding_text("codebase", PG15))
        assert n in [int(x.item_id) for x in sem.vectors.knn("fact", rt.store.uid, vec, 3)]
        text, data = await store(client, "Deploys go out every Tuesday afternoon")
        assert data["close"] == [] and "Close facts" not in text


async def test_without_a_ready_model_the_store_answers_without_a_close_list(
    client: Cli,
) -> None:
    await new(client, PG14)
    text, data = await store(client, PG15)
    assert data["close"] == [] and "Close facts" not in text


class Counting:
    """The real embedder, counting the texts it embeds."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.texts: list[str] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def embed(self, texts: Sequence[str]) -> Any:
        self.texts += list(texts)
        return self.inner.embed(texts)


async def test_the_stored_fact_is_embedded_once_for_its_close_list_and_its_vector(
    sem_settings: Settings,
) -> None:
    made: list[Counting] = []

    def loader(s: Settings) -> Embedder | None:
        inner = load_embedder(s)
        assert inner is not None
        made.append(Counting(inner))
        return made[-1]  # type: ignore[return-value]

    rt = Runtime(sem_settings, background=True, loader=loader)
    try:
        async with Client(build_server(rt.settings, rt)) as client:
            await new(client, PG14)
            ready(rt)
            _, data = await store(client, PG15)
            assert data["close"]  # embedded in the request…
            ready(rt)  # …and neither again by the background embedder nor by its check
        assert made[0].texts.count(fact_embedding_text("codebase", PG15)) == 1
    finally:
        rt.close()
