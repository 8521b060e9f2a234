"""Parallel sessions, the efficiency log and the diff between sessions."""

from __future__ import annotations

from typing import Annotated

from fastmcp.tools import ToolResult
from pydantic import Field

from bigmind.mcp.tools.base import READ_ONLY, RUNTIME, WRITE, Catalog, result
from bigmind.mcp.tools.sessions_tools import SessionId, session_note
from bigmind.runtime import Runtime
from bigmind.service import sessionlife
from bigmind.service.display import attempt_warnings, gotcha_lines, quoted

Files = Annotated[list[str] | str | None, Field(description="Paths you are editing.")]


catalog = Catalog()


@catalog.tool(annotations=WRITE, run_in_thread=False)
def memory_announce_focus(
    description: Annotated[str, Field(description="What you are working on now.")],
    session_id: SessionId = None,
    files: Files = None,
    ide_hint: str | None = None,
    rt: Runtime = RUNTIME,
) -> ToolResult:
    """After start and every ~5 exchanges: what this session works on and its files,
    so parallel sessions avoid them."""
    a = sessionlife.announce_focus(rt, description, session_id, files, ide_hint)
    f, mine, bound, tried = a.focus, a.conflicts, a.gotchas, a.warnings
    text = f"Focus recorded for session `{f.session_id}`." + session_note(a.session)
    for c in mine:
        others = ", ".join(f"`{s}`" for s in c.session_ids if s != f.session_id)
        text += f"\n⚠️ {quoted(c.path)} is also being worked on in session {others}."
    text += "".join("\n" + line for line in gotcha_lines(bound))  # facts bound to its files
    text += attempt_warnings(tried)
    return result(
        text,
        session_id=f.session_id,
        focus_id=f.id,
        conflicts=[c.path for c in mine],
        gotchas=[b.as_dict() for b in bound],
        failed_attempts=[e.as_dict() for e in tried],
    )


@catalog.tool(annotations=READ_ONLY, run_in_thread=False)
def memory_get_active_sessions(rt: Runtime = RUNTIME) -> ToolResult:
    """Your open sessions with their latest focus and files; warns when two touch one file."""
    items, conflicts = sessionlife.active_sessions(rt)
    lines = []
    for a in items:
        line = f"- `{quoted(a.session.id)}` since {a.session.started_at[:16]}"
        if a.session.ide_hint:
            line += f" [{quoted(a.session.ide_hint)}]"
        if a.focus:
            line += f": {quoted(a.focus.description)}"
            if a.focus.files:
                line += f" (files: {quoted(', '.join(a.focus.files))})"
        lines.append(line)
    for c in conflicts:
        touched = ", ".join(f"`{quoted(s)}`" for s in c.session_ids)
        lines.append(f"⚠️ {quoted(c.path)} is touched by {touched}")
    return result(
        "\n".join(lines) or "No open sessions.",
        sessions=[
            {
                "session_id": a.session.id,
                "focus": a.focus.description if a.focus else None,
                "focus_id": a.focus.id if a.focus else None,
                "files": a.focus.files if a.focus else [],
                "last_activity_at": a.session.last_activity_at,
            }
            for a in items
        ],
        conflicts=[{"path": c.path, "session_ids": c.session_ids} for c in conflicts],
    )


@catalog.tool(annotations=WRITE, run_in_thread=False)
def memory_close_stale_sessions(
    session_id: Annotated[str, Field(description="Your own session: never closed.")],
    idle_minutes: Annotated[int, Field(ge=1)] = 30,
    force: Annotated[bool, Field(description="Also close recently active ones.")] = False,
    rt: Runtime = RUNTIME,
) -> ToolResult:
    """Close your other sessions idle > idle_minutes. Never from a child task."""
    closed = sessionlife.close_stale(rt, session_id, idle_minutes, force)
    text = "Closed " + ", ".join(f"`{s.id}`" for s in closed) if closed else "Nothing to close."
    return result(text, closed=[s.id for s in closed])


@catalog.tool(annotations=WRITE, run_in_thread=False)
def memory_log_token_save(
    description: str,
    tokens_saved: Annotated[int, Field(ge=0)],
    method_used: Annotated[str, Field(description="e.g. memory, grep, cache")],
    session_id: SessionId = None,
    rt: Runtime = RUNTIME,
) -> ToolResult:
    """Log tokens saved by recalling memory (or grep) instead of re-reading files."""
    entry, ref = sessionlife.log_saving(rt, session_id, description, tokens_saved, method_used)
    return result(
        f"Logged {tokens_saved:,} tokens saved (#{entry})." + session_note(ref),
        entry_id=entry,
    )


@catalog.tool(annotations=READ_ONLY, run_in_thread=False)
def memory_diff_sessions(since_session_id: str, rt: Runtime = RUNTIME) -> ToolResult:
    """Everything that changed in memory since that session started."""
    d = sessionlife.diff_since(rt, since_session_id)
    return result(d.render(), since=d.since, counts=d.counts)
