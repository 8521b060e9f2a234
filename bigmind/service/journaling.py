"""The thought journal, for every surface: hypotheses predicted then verified, approaches tried
(a failed one warns when a later focus or question comes close to it), and reminders that lead
the packet when due. Each write wakes the background embedder.
"""

from __future__ import annotations

from bigmind.memory import attempts, journal, reminders
from bigmind.memory.journal import Evidence, Hypothesis, Scan
from bigmind.runtime import Runtime
from bigmind.storage.attempts_table import Attempt
from bigmind.storage.reminders_table import Reminder
from bigmind.storage.store import SessionRef

__all__ = [
    "Attempt",
    "Evidence",
    "Hypothesis",
    "Reminder",
    "Scan",
    "add_hypothesis",
    "hypotheses",
    "record_attempt",
    "remind",
    "reminder_done",
    "resolve_hypothesis",
    "scan_hypotheses",
]


def add_hypothesis(
    rt: Runtime, hypothesis: str, confidence: float = 0.7, session_id: str | None = None
) -> tuple[Hypothesis, SessionRef]:
    """Record a prediction and its confidence in the session (opened if none is)."""
    h, ref = journal.add(rt.store, hypothesis, confidence, session_id)
    rt.wrote()
    return h, ref


def resolve_hypothesis(
    rt: Runtime, hypothesis_id: int, status: str, resolution: str | None
) -> Hypothesis:
    """Close a hypothesis as confirmed, refuted or abandoned, or reopen it ('open').

    Raises:
        NotFound: no such hypothesis of the user's.
        InvalidInput: an unknown status.
    """
    h = journal.resolve(rt.store, hypothesis_id, status, resolution)
    rt.wrote()
    return h


def hypotheses(rt: Runtime, status: str | None = "open", limit: int = 20) -> list[Hypothesis]:
    """The user's hypotheses with ``status`` ('all': every one) seen from the current
    project, newest first."""
    return journal.list_(rt.store, status, limit, rt.store.project_key)


def scan_hypotheses(rt: Runtime, stale_days: int = 7) -> list[Scan]:
    """Each open hypothesis with the facts and exchanges that may support or contradict it,
    and whether it has been open over ``stale_days`` days."""
    return journal.scan(rt.store, stale_days)


def record_attempt(
    rt: Runtime, approach: str, outcome: str, why: str | None, session_id: str | None = None
) -> tuple[Attempt, SessionRef]:
    """Keep an approach tried and how it went ('failed' needs its reason)."""
    a, ref = attempts.record(rt.store, approach, outcome, why, session_id)
    rt.wrote()
    return a, ref


def remind(
    rt: Runtime,
    text: str,
    when: str | None = reminders.NEXT_SESSION,
    session_id: str | None = None,
) -> tuple[Reminder, SessionRef]:
    """Set a reminder, due at the next session or at an ISO date/time."""
    r, ref = reminders.add(rt.store, text, when, session_id)
    rt.wrote()
    return r, ref


def reminder_done(rt: Runtime, reminder_id: int) -> Reminder:
    """Mark a reminder done (again: no change): it leaves the packet.

    Raises:
        NotFound: no such reminder of the user's.
    """
    r = reminders.done(rt.store, reminder_id)
    rt.wrote()
    return r
