"""The sessions' service floor (bigmind/service/sessionlife.py), in process, on both backends:
what an agent's start hears that a REST start leaves, the session end's consolidation and
mirror, and a focus's conflicts, gotchas and warnings."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest

from bigmind.config import Settings
from bigmind.errors import Forbidden, NotFound
from bigmind.runtime import Runtime
from bigmind.service import facts, journaling, sessionlife

FAILED = "pin the redis client to version 4 for the cache layer"


@pytest.fixture
def bob(settings_for: Callable[[str], Settings]) -> Iterator[Runtime]:
    rt = Runtime(settings_for("bob"))
    yield rt
    rt.close()


def test_an_agents_start_hears_the_notices_once_and_a_rest_start_leaves_them(
    runtime: Runtime,
) -> None:
    runtime.notice("Merged duplicate fact #2 into #1.", uid=runtime.store.uid)
    quiet = sessionlife.start_session(runtime, "curl", agent=False)
    assert (quiet.resumed, quiet.notices, quiet.warnings) == (False, [], [])
    assert quiet.session.ide_hint == "curl" and quiet.session.is_open
    told = sessionlife.start_session(runtime, session_id=quiet.session.id)
    assert told.resumed and told.session.id == quiet.session.id
    assert told.notices == ["Merged duplicate fact #2 into #1."]
    assert sessionlife.context(runtime, notices=True).notices == []  # told once


def test_a_start_warns_of_a_failed_approach_close_to_its_focus_for_an_agent_only(
    runtime: Runtime,
) -> None:
    a, _ = journaling.record_attempt(runtime, FAILED, "failed", "it breaks the TLS handshake")
    started = sessionlife.start_session(runtime, focus=f"{FAILED} again")
    assert [e.attempt.id for e in started.warnings] == [a.id]
    rest = sessionlife.start_session(runtime, focus=f"{FAILED} again", agent=False)
    assert rest.warnings == []


def test_a_start_for_another_user_is_refused_and_opens_nothing(runtime: Runtime) -> None:
    with pytest.raises(Forbidden, match="acts as user 'alice'"):
        sessionlife.start_session(runtime, user_id="bob")
    assert sessionlife.list_sessions(runtime) == []
    started = sessionlife.start_session(runtime, user_id="alice")
    assert [s.id for s in sessionlife.list_sessions(runtime)] == [started.session.id]


def test_the_end_retires_stale_facts_and_names_a_mirror_it_could_not_write(
    runtime: Runtime,
) -> None:
    sid = sessionlife.start_session(runtime).session.id
    stored = facts.store_fact(runtime, "gotcha", "The old DNS flakes", importance=1)
    with runtime.store.db.transaction() as tx:  # as if written, and last used, long ago
        tx.execute(
            "UPDATE facts SET created_at = ?, updated_at = ?, last_accessed_at = NULL WHERE id = ?",
            ("2020-01-01T00:00:00Z", "2020-01-01T00:00:00Z", stored.fact.id),
        )
    folder = runtime.settings.data_dir / "mirrors"
    folder.parent.mkdir(parents=True, exist_ok=True)
    folder.write_text("a file where the mirrors' folder should be", encoding="utf-8")
    ended = sessionlife.end_session(runtime, sid, "DNS notes", mirror_too=True)
    assert ended.was_open and ended.session.ended_at
    assert ended.retired == [(stored.fact.id, "The old DNS flakes")]
    assert ended.mirrored is not None and ended.mirrored.error
    again = sessionlife.end_session(runtime, sid, "DNS notes, updated")
    assert (again.was_open, again.retired, again.mirrored) == (False, [], None)


def test_a_focus_names_the_files_other_sessions_touch_and_the_gotchas_bound_to_them(
    runtime: Runtime,
) -> None:
    first = sessionlife.start_session(runtime).session.id
    second = sessionlife.start_session(runtime).session.id
    bound = facts.store_fact(
        runtime, "gotcha", "billing.py rounds half up", files=["src/billing.py"]
    )
    sessionlife.announce_focus(runtime, "refunds", first, ["src/billing.py", "src/a.py"])
    mine = sessionlife.announce_focus(runtime, "invoices", second, "src/billing.py")
    assert [(c.path, sorted(c.session_ids)) for c in mine.conflicts] == [
        ("src/billing.py", sorted([first, second]))
    ]
    assert [b.fact.id for b in mine.gotchas] == [bound.fact.id]
    assert mine.session.session.id == second and not mine.session.opened
    items, conflicts = sessionlife.active_sessions(runtime)
    assert {a.session.id for a in items} == {first, second} and len(conflicts) == 1
    closed = sessionlife.close_stale(runtime, second, force=True)
    assert [s.id for s in closed] == [first]


def test_another_users_session_is_not_found(runtime: Runtime, bob: Runtime) -> None:
    sid = sessionlife.start_session(runtime).session.id
    with pytest.raises(NotFound):
        sessionlife.session_detail(bob, sid)
