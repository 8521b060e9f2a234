"""The service floor of upkeep, the journal and the gateway's tokens
(bigmind/service/housekeeping.py, journaling.py, accounts.py), in process, on both
backends: the semantic index in stats and health, an export imported by another user, the
states health checks read, reminders, and a token's holder."""

from __future__ import annotations

import pytest

from bigmind.errors import InvalidInput, NotFound
from bigmind.memory import api_tokens
from bigmind.runtime import Runtime
from bigmind.service import accounts, housekeeping, journaling
from bigmind.storage.db import Backend


def test_stats_and_health_report_the_semantic_index_off_as_fine(runtime: Runtime) -> None:
    data = housekeeping.stats(runtime)
    assert data["semantic"] == {"state": "off", "detail": "not started", "vectors": 0, "waiting": 0}
    checks = housekeeping.health(runtime)
    last = checks[-1]
    assert (last.name, last.ok, last.detail) == (
        "semantic index",
        True,
        "off: not started; 0 vectors, 0 waiting",
    )
    with pytest.raises(InvalidInput):
        housekeeping.health(runtime, stale_days=0)


def test_the_states_health_checks_read_never_start_the_index(runtime: Runtime) -> None:
    _ = runtime.store
    assert housekeeping.database_state(runtime) == "ok"
    assert housekeeping.semantic_state(runtime) == "not-started"


def test_a_reminder_is_set_then_done(runtime: Runtime) -> None:
    r, ref = journaling.remind(runtime, "Rotate the staging keys")
    assert ref.opened and r.due_at is None and r.done_at is None
    assert journaling.reminder_done(runtime, r.id).done_at is not None
    with pytest.raises(NotFound):
        journaling.reminder_done(runtime, r.id + 1)


def test_a_live_token_names_its_holder_until_it_is_revoked(
    runtime: Runtime, backend: Backend
) -> None:
    made = api_tokens.create(backend, "bob")
    holder = accounts.authenticate(runtime, made.secret)
    assert holder == accounts.Holder("bob", made.token.id)
    assert accounts.holds(runtime, made.token.id, "bob")
    assert not accounts.holds(runtime, made.token.id, "carol")
    assert accounts.authenticate(runtime, accounts.TOKEN_PREFIX + "unknown") is None
    api_tokens.revoke(backend, made.token.id)
    assert accounts.authenticate(runtime, made.secret) is None
    assert not accounts.holds(runtime, made.token.id, "bob")
