"""Session lifecycle and recall tools."""

from __future__ import annotations

from typing import Annotated

from fastmcp.tools import ToolResult
from pydantic import Field

from bigmind import limits
from bigmind.mcp import render
from bigmind.mcp.tools.base import READ_ONLY, RUNTIME, WRITE, Catalog, Importance, result
from bigmind.runtime import Runtime
from bigmind.service import sessionlife
from bigmind.service.display import quoted
from bigmind.service.sessionlife import SessionRef

SessionId = Annotated[
    str | None,
    Field(description="Omit to use the open session."),
]
Topics = Annotated[
    list[str] | str | None, Field(description="Topic tags, as a list or comma-separated.")
]
Lines = Annotated[list[str] | str | None, Field(description="Bullets: a list or text.")]


def session_note(ref: SessionRef | None) -> str:
    if ref is None:
        return ""
    if ref.split is not None:
        return (
            f"\n(The open session `{ref.split.id}` had been silent for over the session gap,"
            f" so it was closed as {quoted(ref.split.one_liner)!r} and this write opened 🧠 BigMind"
            f" Session: `{ref.session.id}`. Call memory_start_session() when a new task starts.)"
        )
    if ref.opened:
        return (
            f"\n(No session was open, so one was opened: 🧠 BigMind Session: `{ref.session.id}`."
            " Call memory_start_session() at the start of conversations.)"
        )
    return ""


def _mirror_note(m: sessionlife.Mirrored) -> str:
    """BIGMIND_MIRROR=1: the project's Markdown mirror written again at a session's end."""
    if m.error is not None:
        return f"The Markdown mirror could not be written ({m.error})."
    if m.facts is None:
        return f"Mirror {m.path} not rewritten: it has edits; run `bigmind mirror --pull`."
    return f"Mirror written: {m.path} ({m.facts} facts)."


catalog = Catalog()


@catalog.tool(annotations=WRITE, run_in_thread=False)
def memory_start_session(
    user_id: Annotated[str | None, Field(description="Leave empty (the configured user).")] = None,
    ide_hint: Annotated[str | None, Field(description="Your client, e.g. 'cursor'.")] = None,
    session_id: Annotated[
        str | None,
        Field(description="Resume this session (child tasks)."),
    ] = None,
    focus: Annotated[
        str | None,
        Field(
            description="The user's request: relevant memory comes first.",
            max_length=limits.QUERY,
        ),
    ] = None,
    rt: Runtime = RUNTIME,
) -> ToolResult:
    """⚡ CALL THIS FIRST in every conversation: opens a session and returns your memory
    context (profile, facts, recent sessions). Say its first line, "🧠 BigMind Session:
    `<id>`", in the chat. Child tasks given a session id: do NOT call this."""
    started = sessionlife.start_session(rt, ide_hint, session_id, focus, user_id=user_id)
    sid = started.session.id
    packet = started.packet
    head = f"🧠 BigMind Session: `{sid}`"
    if started.resumed:
        head += " (resumed)"
    notes = []
    if started.auto_closed:
        notes.append(f"Auto-closed {len(started.auto_closed)} session(s) open for over 24 h.")
    notes += [e.line() for e in started.warnings]
    notes.append("Announce the session line above in the chat; end with memory_end_session.")
    text = f"{head}\n\n{packet.text}\n" + "\n".join(notes) + render.notices(started.notices)
    return result(
        text,
        session_id=sid,
        resumed=started.resumed,
        auto_closed=started.auto_closed,
        context_tokens=packet.tokens,
        shown=packet.shown,
        omitted=packet.omitted,
    )


@catalog.tool(annotations=WRITE, run_in_thread=False)
def memory_end_session(
    one_liner: Annotated[
        str, Field(description=f"Headline of what happened, ≤ {limits.ONE_LINER} characters.")
    ],
    session_id: SessionId = None,
    topics: Topics = None,
    outcome: Annotated[str | None, Field(description="What was decided or built.")] = None,
    summary: Annotated[
        str | None,
        Field(description="Narrative in markdown, ≤ ~2,000 tokens."),
    ] = None,
    key_facts: Lines = None,
    code_refs: Lines = None,
    importance: Importance = 5,
    rt: Runtime = RUNTIME,
) -> ToolResult:
    """⚡ CALL LAST (task done, user leaves): closes the session so the next conversation
    resumes from here; calling again updates it. Child tasks: do NOT call this."""
    ended = sessionlife.end_session(
        rt,
        session_id,
        one_liner,
        topics,
        outcome,
        summary,
        key_facts,
        code_refs,
        importance,
        mirror_too=rt.settings.mirror,
    )
    s, retired = ended.session, ended.retired
    verb = "Closed" if ended.was_open else "Updated the already closed"
    text = f"{verb} session `{s.id}`: {quoted(s.one_liner)} (topics: {quoted(s.topics) or '—'})."
    if ended.mirrored is not None:
        text += "\n" + _mirror_note(ended.mirrored)
    if retired:
        text += (
            f"\n{len(retired)} stale low-importance facts left the packet (still searchable;"
            " used again, they come back)."
        )
    return result(
        text,
        retired_facts=[i for i, _ in retired],
        session_id=s.id,
        ended_at=s.ended_at,
        has_summary=bool(s.has_tier2),
        was_open=ended.was_open,
    )


@catalog.tool(annotations=WRITE, run_in_thread=False)
def memory_flag_important(
    content: Annotated[str, Field(description="What was said and decided.")],
    flag_reason: Annotated[str, Field(description="Why it matters.")],
    session_id: SessionId = None,
    rt: Runtime = RUNTIME,
) -> ToolResult:
    """Save a decisive exchange unasked: a decision, non-trivial code, a diagnosed bug,
    a preference, or "remember this"."""
    chunk, ref = sessionlife.save_chunk(rt, content, session_id, "assistant", flag_reason)
    return result(
        f"Flagged as important: chunk #{chunk.id} in session `{ref.session.id}`."
        + session_note(ref),
        chunk_id=chunk.id,
        session_id=ref.session.id,
        opened_session=ref.opened,
    )


@catalog.tool(annotations=WRITE, run_in_thread=False)
def memory_append_chunk(
    content: Annotated[str, Field(description="The text to keep verbatim.")],
    session_id: SessionId = None,
    role: Annotated[str, Field(description="'user', 'assistant' or 'system'.")] = "assistant",
    flag_reason: Annotated[str | None, Field(description="Why it is worth keeping.")] = None,
    rt: Runtime = RUNTIME,
) -> ToolResult:
    """Save one message turn verbatim, selectively: a decision's rationale, code
    written, a diagnosis."""
    chunk, ref = sessionlife.save_chunk(rt, content, session_id, role, flag_reason)
    return result(
        f"Saved chunk #{chunk.id} (seq {chunk.seq}) in session `{ref.session.id}`."
        + session_note(ref),
        chunk_id=chunk.id,
        seq=chunk.seq,
        session_id=ref.session.id,
        opened_session=ref.opened,
    )


@catalog.tool(annotations=READ_ONLY, run_in_thread=False)
def memory_get_context(rt: Runtime = RUNTIME) -> ToolResult:
    """Reload your memory context without side effects (a child task's first call)."""
    now = sessionlife.context(rt, notices=True)
    packet = now.packet
    return result(
        packet.text + render.notices(now.notices),
        context_tokens=packet.tokens,
        shown=packet.shown,
        omitted=packet.omitted,
    )


@catalog.tool(annotations=READ_ONLY, run_in_thread=False)
def memory_get_session_detail(
    session_id: Annotated[str, Field(description="The session's id.")],
    max_tokens: Annotated[
        int,
        Field(
            ge=limits.DETAIL_TOKENS[0],
            le=limits.DETAIL_TOKENS[1],
            description="Size cap of the answer.",
        ),
    ] = limits.DETAIL_TOKENS_DEFAULT,
    rt: Runtime = RUNTIME,
) -> ToolResult:
    """One past session's summary, key facts, code references and flagged exchanges."""
    s, summary, chunks = sessionlife.session_detail(rt, session_id)
    return result(
        render.session_detail(s, summary, chunks, max_tokens),
        session=s.as_dict(),
        summary=summary.as_dict() if summary else None,
        chunk_ids=[c.id for c in chunks],
    )


@catalog.tool(annotations=READ_ONLY, run_in_thread=False)
def memory_list_sessions(
    limit: Annotated[int, Field(ge=1, le=limits.RESULTS)] = 10,
    topic: Annotated[str | None, Field(description="Only sessions tagged with this topic.")] = None,
    offset: Annotated[int, Field(ge=0, description="Skip this many (paging).")] = 0,
    rt: Runtime = RUNTIME,
) -> ToolResult:
    """Browse session history, newest first (🟡 = still open)."""
    rows = sessionlife.list_sessions(rt, limit, topic, offset)
    return result(render.session_table(rows), sessions=[s.as_dict() for s in rows])
