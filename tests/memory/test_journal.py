"""The thought journal: add, resolve, list, scan, calibration."""

from __future__ import annotations

import pytest

from bigmind.errors import InvalidInput, NotFound
from bigmind.memory import journal
from bigmind.models import ts_ago
from bigmind.storage.db import SQLiteBackend
from bigmind.storage.store import Store


def test_add_attaches_to_open_session_and_defaults(store: Store) -> None:
    s = store.start_session().session
    h, ref = journal.add(store, "I predict the cache is cold because restarts flush it")
    assert h.session_id == s.id and not ref.opened
    assert h.status == "open" and h.confidence == 0.7


def test_resolve_and_reopen(store: Store) -> None:
    h, _ = journal.add(store, "X", 0.9)
    done = journal.resolve(store, h.id, "confirmed", "X was true")
    assert done.status == "confirmed" and done.resolved_at and done.resolution == "X was true"
    again = journal.resolve(store, h.id, "open", None)
    assert again.status == "open" and again.resolved_at is None


def test_resolve_validation(store: Store) -> None:
    h, _ = journal.add(store, "X")
    with pytest.raises(InvalidInput, match="status"):
        journal.resolve(store, h.id, "maybe", "x")
    with pytest.raises(InvalidInput, match="resolution"):
        journal.resolve(store, h.id, "refuted", "  ")
    with pytest.raises(NotFound, match="No hypothesis #999") as refused:
        journal.resolve(store, 999, "refuted", "x")
    assert "memory_list_hypotheses" in refused.value.message_for("tool")
    with pytest.raises(InvalidInput, match="confidence"):
        journal.add(store, "Y", 1.2)


def test_list_filters_by_status(store: Store) -> None:
    a, _ = journal.add(store, "A")
    b, _ = journal.add(store, "B")
    journal.resolve(store, a.id, "refuted", "no")
    assert [h.id for h in journal.list_(store, "open")] == [b.id]
    assert [h.id for h in journal.list_(store, "refuted")] == [a.id]
    assert {h.id for h in journal.list_(store, "all")} == {a.id, b.id}


def test_scan_finds_related_memory_and_stale_ones(store: Store, backend: SQLiteBackend) -> None:
    store.store_fact("codebase", "The payment service retries failed webhooks three times")
    store.store_fact("codebase", "The payment service does not retry webhooks anymore")
    h, _ = journal.add(store, "I predict the payment service retries webhooks")
    old, _ = journal.add(store, "Something unrelated about fonts")
    with backend.transaction() as tx:
        tx.execute("UPDATE hypotheses SET created_at = ? WHERE id = ?", (ts_ago(days=10), old.id))
    scans = {sc.hypothesis.id: sc for sc in journal.scan(store, stale_days=7)}
    assert scans[old.id].stale and not scans[h.id].stale
    stances = {e.hit.text: e.stance for e in scans[h.id].evidence}
    assert stances["The payment service retries failed webhooks three times"] == "supports?"
    assert stances["The payment service does not retry webhooks anymore"] == "contradicts?"


def test_calibration_by_band(store: Store) -> None:
    for conf, status in [
        (0.95, "confirmed"),
        (0.92, "refuted"),
        (0.6, "confirmed"),
        (0.3, "abandoned"),
    ]:
        h, _ = journal.add(store, f"h{conf}", conf)
        journal.resolve(store, h.id, status, "r")
    bands = {b["band"]: b for b in journal.calibration(store)}
    assert bands["0.9–1.0"]["resolved"] == 2 and bands["0.9–1.0"]["confirmed_rate"] == 0.5
    assert bands["0.5–0.7"]["confirmed_rate"] == 1.0
    assert bands["0.0–0.5"]["resolved"] == 0  # abandoned ones do not count


def test_other_users_hypotheses_are_invisible(backend: SQLiteBackend) -> None:
    alice, bob = Store(backend, "alice"), Store(backend, "bob")
    h, _ = journal.add(alice, "mine")
    assert journal.list_(bob, "all") == []
    with pytest.raises(NotFound):
        journal.resolve(bob, h.id, "refuted", "x")
