"""People: upsert with merged notes and expertise, natural-language recall, recency order."""

from __future__ import annotations

import pytest

from bigmind import limits
from bigmind.errors import InvalidInput
from bigmind.memory import people
from bigmind.storage.db import SQLiteBackend
from bigmind.storage.store import Store


def test_remember_then_update_merges_notes_and_expertise(store: Store) -> None:
    r = people.remember(
        store, "jdoe", "Jane Doe", "SRE", "platform", ["kafka", "k8s"], "Owns the pager rota"
    )
    assert r.created and r.person.expertise == "kafka, k8s" and r.trimmed == []
    r2 = people.remember(
        store, "jdoe", role="Staff SRE", expertise="K8s, terraform", notes="Prefers Slack"
    )
    p2 = r2.person
    assert not r2.created and p2.role == "Staff SRE" and p2.display_name == "Jane Doe"
    assert p2.expertise == "kafka, k8s, terraform"
    assert "Owns the pager rota" in (p2.notes or "") and "Prefers Slack" in (p2.notes or "")
    p3 = people.remember(store, "jdoe", notes="prefers slack").person
    assert p3.notes == p2.notes  # the same note is not appended twice


def test_notes_and_expertise_stay_within_their_caps_and_say_what_went(store: Store) -> None:
    """1,500 remember calls once grew one person's notes to 6 M characters."""
    said: list[str] = []
    for i in range(300):
        r = people.remember(
            store, "ops", expertise=[f"system-{i}-{'x' * 20}"], notes=f"Note {i}: " + "n" * 200
        )
        said += r.trimmed
    p = r.person
    notes = p.notes or ""
    assert len(notes) <= limits.NOTES_KEPT and len(p.expertise or "") <= limits.EXPERTISE_KEPT
    lines = notes.splitlines()
    assert lines[-1].endswith("Note 299: " + "n" * 200)  # the newest stay, whole
    kept = len(lines) - 1
    assert lines[0] == f"[{300 - kept:,} older note lines trimmed]"  # counted across calls
    assert "Note 0:" not in notes and (p.expertise or "").endswith(f"system-299-{'x' * 20}")
    assert "1 oldest note line" in said and "1 oldest expertise item" in said


def test_username_validation(store: Store) -> None:
    with pytest.raises(InvalidInput, match="username"):
        people.remember(store, "jane doe")
    with pytest.raises(InvalidInput, match="empty"):
        people.remember(store, " ")


def test_recall_by_expertise_role_team_or_name(store: Store) -> None:
    people.remember(store, "jdoe", "Jane Doe", "SRE", "platform", "kafka, kubernetes")
    people.remember(store, "bsmith", "Bob Smith", "Frontend engineer", "web", "react")
    assert people.recall(store, "who knows Kafka?")[0][0].username == "jdoe"
    assert people.recall(store, "frontend engineers")[0][0].username == "bsmith"
    assert people.recall(store, "someone on the web team")[0][0].username == "bsmith"
    found = people.recall(store, "Bob")
    assert found[0][0].username == "bsmith" and "display_name" in found[0][2]
    assert people.recall(store, "cobol") == []


def test_list_most_recently_seen_first(store: Store) -> None:
    people.remember(store, "a")
    people.remember(store, "b")
    people.remember(store, "a", notes="seen again")
    assert [p.username for p in people.list_(store)] == ["a", "b"]


def test_people_are_shared_between_users(backend: SQLiteBackend) -> None:
    people.remember(Store(backend, "alice"), "jdoe", role="SRE")
    assert people.recall(Store(backend, "bob"), "sre")[0][0].username == "jdoe"
