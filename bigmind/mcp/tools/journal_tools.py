"""The thought journal: predict, then verify."""

from __future__ import annotations

from typing import Annotated, Literal

from fastmcp.tools import ToolResult
from pydantic import Field

from bigmind import limits
from bigmind.errors import InvalidInput
from bigmind.mcp.tools.base import READ_ONLY, RUNTIME, WRITE, Catalog, result
from bigmind.mcp.tools.sessions_tools import SessionId, session_note
from bigmind.runtime import Runtime
from bigmind.service import journaling
from bigmind.service.display import NEXT_SESSION, quoted, when_text

Status = Literal["open", "confirmed", "refuted", "abandoned"]


def _line(h: journaling.Hypothesis) -> str:
    line = f"- #{h.id} [{h.status}] ({h.confidence:.2f}) {quoted(h.hypothesis)}"
    return line + (f" → {quoted(h.resolution)}" if h.resolution else "")


catalog = Catalog()


@catalog.tool(annotations=WRITE, run_in_thread=False)
def memory_add_hypothesis(
    hypothesis: Annotated[str, Field(description='"I predict X because Y".')],
    confidence: Annotated[float, Field(ge=0, le=1)] = 0.7,
    session_id: SessionId = None,
    rt: Runtime = RUNTIME,
) -> ToolResult:
    """Before a non-trivial task, record your prediction and confidence; resolve it after."""
    h, ref = journaling.add_hypothesis(rt, hypothesis, confidence, session_id)
    return result(
        f"Hypothesis #{h.id} recorded ({h.confidence:.2f})." + session_note(ref),
        hypothesis_id=h.id,
    )


@catalog.tool(annotations=WRITE, run_in_thread=False)
def memory_resolve_hypothesis(
    hypothesis_id: Annotated[int, Field(ge=1)],
    status: Status,
    resolution: Annotated[str | None, Field(description="What actually happened.")],
    rt: Runtime = RUNTIME,
) -> ToolResult:
    """Close a hypothesis as confirmed, refuted or abandoned (or reopen it with 'open')."""
    h = journaling.resolve_hypothesis(rt, hypothesis_id, status, resolution)
    return result(f"Hypothesis #{h.id} is {h.status}.", hypothesis=h.as_dict())


@catalog.tool(annotations=READ_ONLY, run_in_thread=False)
def memory_list_hypotheses(
    status: Annotated[Status | Literal["all"], Field(description="Or 'all'.")] = "open",
    limit: Annotated[int, Field(ge=1, le=limits.RESULTS)] = 20,
    rt: Runtime = RUNTIME,
) -> ToolResult:
    """List hypotheses, newest first. At session start, review the open ones."""
    rows = journaling.hypotheses(rt, status, limit)
    text = "\n".join(_line(h) for h in rows) or f"No {status} hypotheses."
    return result(text, hypotheses=[h.as_dict() for h in rows])


@catalog.tool(annotations=READ_ONLY, run_in_thread=False)
def memory_scan_hypotheses(
    stale_days: Annotated[
        int, Field(ge=1, le=limits.STALE_DAYS, description="Open longer = stale.")
    ] = 7,
    rt: Runtime = RUNTIME,
) -> ToolResult:
    """Check open hypotheses against facts and exchanges for support, contradiction or
    staleness."""
    scans = journaling.scan_hypotheses(rt, stale_days)
    if not scans:
        return result("No open hypotheses.", scans=[])
    lines = []
    for sc in scans:
        lines.append(_line(sc.hypothesis) + (" ⏳ stale" if sc.stale else ""))
        for ev in sc.evidence:
            lines.append(f"  - {ev.stance} {ev.hit.kind} #{ev.hit.id}: {quoted(ev.hit.text)[:160]}")
        if not sc.evidence:
            lines.append("  - no related facts or chunks")
    data = [
        {
            "hypothesis_id": sc.hypothesis.id,
            "stale": sc.stale,
            "evidence": [
                {"kind": e.hit.kind, "id": e.hit.id, "stance": e.stance} for e in sc.evidence
            ],
        }
        for sc in scans
    ]
    return result("\n".join(lines), scans=data)


@catalog.tool(annotations=WRITE, run_in_thread=False)
def memory_record_attempt(
    approach: Annotated[str, Field(description="What you tried.")],
    outcome: Literal["failed", "worked"],
    why: str,
    session_id: SessionId = None,
    rt: Runtime = RUNTIME,
) -> ToolResult:
    """Record an approach you tried and why it failed or worked: a later focus or recall
    close to a failed one warns."""
    a, ref = journaling.record_attempt(rt, approach, outcome, why, session_id)
    return result(f"Attempt #{a.id} recorded ({a.outcome})." + session_note(ref), attempt_id=a.id)


@catalog.tool(annotations=WRITE, run_in_thread=False)
def memory_remind(
    text: str | None = None,
    when: Annotated[str, Field(description="'next_session' or an ISO date/time.")] = (NEXT_SESSION),
    done: Annotated[int | None, Field(ge=1, description="A reminder's id: mark it done.")] = (None),
    session_id: SessionId = None,
    rt: Runtime = RUNTIME,
) -> ToolResult:
    """Leave a reminder for later, in this project: it leads the packet when due, until
    marked done."""
    if done is not None:
        r = journaling.reminder_done(rt, done)
        return result(f"Reminder #{r.id} is done.", reminder=r.as_dict())
    if text is None:
        raise InvalidInput("Pass text (and when) to set a reminder, or done=<id>.")
    r, ref = journaling.remind(rt, text, when, session_id)
    return result(
        f"Reminder #{r.id} set, due {when_text(r)}." + session_note(ref),
        reminder=r.as_dict(),
    )
