"""Consolidation: duplicates merged, contradictions linked, superseded and stale facts out of
the packet; idempotent; nothing deleted (real MiniLM where meaning matters, both backends)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from mcp_calls import Cli, call, end

from bigmind.cli.main import main
from bigmind.config import Settings
from bigmind.memory import tidy
from bigmind.memory.context import build_context
from bigmind.models import now_ts
from bigmind.search.ranking import Recall
from bigmind.search.semantic import Semantic
from bigmind.storage.connect import open_database
from bigmind.storage.store import Store

pytestmark = pytest.mark.anyio
OLD = "2020-01-01 00:00:00"
FACTS = (
    ("preference", "The user prefers pytest for all Python tests"),
    ("codebase", "The payments service uses Kafka"),
    ("codebase", "The alpha database runs PostgreSQL 14"),
    ("preference", "For Python testing the user wants pytest"),
    ("codebase", "The payments service uses RabbitMQ, not Kafka"),
    ("codebase", "We upgraded the alpha database to PostgreSQL 16"),
)


def backdate(store: Store, *ids: int) -> None:
    """As if these facts were written, and last used, long ago."""
    marks = ",".join("?" * len(ids))
    with store.db.transaction() as tx:
        tx.execute(
            f"UPDATE facts SET created_at = ?, updated_at = ?, last_accessed_at = NULL"
            f" WHERE id IN ({marks})",
            (OLD, OLD, *ids),
        )


def test_a_full_pass_merges_links_and_retires_and_a_second_finds_nothing(
    settings: Settings, model_dir: Path
) -> None:
    sem_settings = settings.model_copy(update={"embed_model": str(model_dir)})
    backend = open_database(sem_settings)
    try:
        store = Store(backend, "alice")
        ids = [store.store_fact(cat, text)[0].id for cat, text in FACTS]
        # An old memory where duplicates slipped through: every fact counts as checked.
        with backend.transaction() as tx:
            tx.execute("UPDATE facts SET checked_at = ?", (now_ts(),))
        stale, _, _ = store.store_fact("gotcha", "The staging VPN drops idle SSH", importance=2)
        backdate(store, stale.id)
        sem = Semantic(backend, sem_settings)
        sem.load_now()
        sem.embed_backlog()
        assert tidy.consolidate(store, None).summary()["checked"] == 0  # no model: retire only

        done = tidy.consolidate(store, sem)
        assert done.semantic and done.checked >= 6
        assert done.summary() | {"checked": 0} == {
            "checked": 0,
            "merged": 1,
            "superseded": 1,
            "conflicts": 1,
            "retired": 0,  # the no-model pass above retired it already
        }
        kept = {f.id for f in store.top_facts(20)}
        # The merged-away fact is deprecated (the newer wording kept); a superseded one stays,
        # marked.
        assert kept == {ids[1], ids[2], ids[3], ids[4], ids[5]}
        assert store.get_fact(ids[0]).deprecation_reason == f"merged into #{ids[3]}"

        again = tidy.consolidate(store, sem)
        assert again.summary() | {"checked": 0} == dict.fromkeys(again.summary(), 0)
        assert again.checked == 6  # the five kept and the retired one: all active
    finally:
        backend.close()


def test_stale_low_importance_facts_leave_the_packet_but_stay_findable(store: Store) -> None:
    low_old, _, _ = store.store_fact("gotcha", "The staging VPN drops idle SSH", importance=2)
    store.store_fact("gotcha", "The dev VPN needs MFA", importance=2)
    key_old, _, _ = store.store_fact("decision", "Payments never retry refunds", importance=8)
    backdate(store, low_old.id, key_old.id)

    assert tidy.retire_stale(store) == [(low_old.id, low_old.fact)]
    assert tidy.retire_stale(store) == []  # idempotent
    packet = build_context(store).text
    assert "dev VPN" in packet and "Payments never retry" in packet
    assert "staging VPN" not in packet
    found = Recall(store, None).search("staging VPN", 5, ["fact"], mode="keyword").hits
    assert found[0].id == low_old.id  # still active, still searchable
    # Handed to an agent again: back in the packet.
    with store.db.transaction() as tx:
        store.facts.add_uses(tx, [low_old.id], 1, now_ts())
    assert "staging VPN" in build_context(store).text


def test_retiring_refuses_nonsense_bounds(store: Store) -> None:
    from bigmind.errors import InvalidInput

    with pytest.raises(InvalidInput, match="stale_days"):
        tidy.retire_stale(store, stale_days=0)
    with pytest.raises(InvalidInput, match="importance"):
        tidy.retire_stale(store, max_importance=11)


async def test_ending_a_session_is_the_light_pass(client: Cli, store: Store) -> None:
    _, data = await call(
        client, "memory_store_fact", category="gotcha", fact="Old flaky DNS note", importance=1
    )
    backdate(store, data["fact_id"])
    ended = await end(client, None, "Tidy up")
    assert ended["retired_facts"] == [data["fact_id"]]
    text, _ = await call(client, "memory_get_context")
    assert "flaky DNS" not in text


@pytest.mark.sqlite_only
def test_the_command_reports_what_it_did(
    store: Store,
    model_dir: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("BIGMIND_EMBED_MODEL", str(model_dir))
    for cat, text in FACTS[:2] + FACTS[3:5]:
        store.store_fact(cat, text)
    with store.db.transaction() as tx:
        tx.execute("UPDATE facts SET checked_at = ?", (now_ts(),))
    assert main(["consolidate", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["merged"], report["conflicts"], report["semantic"]) == (1, 1, True)
    assert any("Merged duplicate fact" in line for line in report["outcomes"])
    assert main(["consolidate"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Checked 3 facts: 0 duplicates merged, 0 superseded, 0 conflicts linked")
