"""Reminders: a note an agent leaves for later, due in the next session or from a date.

A reminder is set in a session and belongs to that session's project (seen there and, when set
outside any project, everywhere), like a hypothesis. ``when="next_session"`` makes it due in
every session but the one that set it; a date or time makes it due from then (a past one at
once). Due reminders lead the packet (:mod:`bigmind.memory.context`) until marked done.
"""

from __future__ import annotations

from datetime import UTC, datetime

from bigmind import limits
from bigmind.errors import InvalidInput, NotFound
from bigmind.limits import stored_text
from bigmind.models import TS_FORMAT, now_ts
from bigmind.storage.reminders_table import Reminder as Reminder
from bigmind.storage.reminders_table import Reminders
from bigmind.storage.store import SessionRef, Store
from bigmind.storage.table import ANYWHERE

NEXT_SESSION = "next_session"
LISTED = 50  # pending reminders the mirror lists


def due_at(when: str | None) -> str | None:
    """The stored due time of ``when``: None for "next_session" (or nothing), else the UTC
    time of an ISO date (from 00:00 UTC that day) or date and time (any offset; none is UTC)."""
    text = (when or "").strip()
    if not text or text.lower() == NEXT_SESSION:
        return None
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        raise InvalidInput(
            f"'when' must be 'next_session', an ISO date (2025-07-01) or an ISO date and time "
            f"(2025-07-01T09:00+02:00); got {text[:40]!r}."
        ) from None
    if dt.tzinfo is not None:
        dt = dt.astimezone(UTC).replace(tzinfo=None)
    return dt.strftime(TS_FORMAT)


def get(store: Store, reminder_id: int) -> Reminder:
    found = Reminders(store.db, store.uid).get(reminder_id)
    if found is None:
        raise NotFound(
            f"No reminder #{reminder_id} in your memory.",
            tool="Due reminders lead the packet with their ids (memory_get_context).",
        )
    return found


def add(
    store: Store, text: str, when: str | None = NEXT_SESSION, session_id: str | None = None
) -> tuple[Reminder, SessionRef]:
    """Set a reminder in the session ``session_id`` (else the open one, else a new one).
    Returns it and the session it was set in."""
    body = stored_text("text", text, limits.REMINDER)
    due = due_at(when)
    with store.db.transaction() as tx:
        ref = store.resolve_session(session_id, tx)
        new = Reminders(store.db, store.uid).add(tx, ref.session.id, body, due, now_ts())
    return get(store, new), ref


def done(store: Store, reminder_id: int) -> Reminder:
    """Mark a reminder done (again: no change); it leaves the packet."""
    get(store, reminder_id)
    with store.db.transaction() as tx:
        Reminders(store.db, store.uid).mark_done(tx, reminder_id, now_ts())
    return get(store, reminder_id)


def due(store: Store, current_session: str | None, limit: int) -> list[Reminder]:
    """Reminders due now, seen from the store's project and from ``current_session``, the
    earliest due first."""
    return Reminders(store.db, store.uid).due(now_ts(), current_session, limit, store.project_key)


def pending(store: Store, limit: int = LISTED, project: str | None = ANYWHERE) -> list[Reminder]:
    """Reminders not done yet, due or not, seen from ``project``."""
    return Reminders(store.db, store.uid).pending(limit, project)


def when_text(r: Reminder) -> str:
    """When ``r`` is due, in words."""
    return f"from {r.due_at[:16]} UTC" if r.due_at else "next session"
