"""Tier G: company knowledge shared by every user of the database."""

from __future__ import annotations

from typing import Annotated

from fastmcp.tools import ToolResult
from pydantic import Field

from bigmind import limits
from bigmind.mcp import render
from bigmind.mcp.tools.base import READ_ONLY, RUNTIME, WRITE, Catalog, Importance, result
from bigmind.models import day_of
from bigmind.runtime import Runtime
from bigmind.service import companykb
from bigmind.service.companykb import GlobalEntry
from bigmind.service.display import quoted

LIST_EXCERPT = 300  # characters of an entry's content shown by memory_list_global


def _line(e: GlobalEntry) -> str:
    body = quoted(e.content)
    if len(body) > LIST_EXCERPT:
        body = body[:LIST_EXCERPT].rsplit(" ", 1)[0] + "…"
    head = f"- **#{e.id} [{quoted(e.category)}] {quoted(e.title)}** (importance {e.importance}"
    if e.status != "approved":
        head += f", {e.status}, by {quoted(e.promoter) or '?'} {day_of(e.updated_at)}"
    if e.review_notes:
        head += f", review: {quoted(e.review_notes)}"
    return f"{head}): {body}"


catalog = Catalog()


@catalog.tool(annotations=WRITE, run_in_thread=False)
def memory_promote_to_global(
    category: Annotated[
        str, Field(description="architecture, standard, decision, pattern or glossary.")
    ],
    title: Annotated[str, Field(description=f"Short title, ≤ {limits.TITLE} characters.")],
    content: Annotated[str, Field(description="Markdown, ideally ≤ 500 tokens.")],
    importance: Importance = 5,
    source_session: str | None = None,
    rt: Runtime = RUNTIME,
) -> ToolResult:
    """Share a standard, decision or pattern with every user, once a curator approves it
    (at once in personal mode)."""
    r = companykb.promote(rt, category, title, content, importance, source_session)
    e = r.entry
    if not r.created:
        text = f"Already proposed as entry #{e.id} ({e.status}); nothing added."
    elif e.status == "approved":
        text = f"Added company knowledge #{e.id} [{e.category}]; every user now sees it."
    else:
        text = (
            f"Proposed company knowledge #{e.id} [{e.category}]: pending until a curator "
            f"approves it (memory_approve_global)."
        )
    return result(text, entry_id=e.id, status=e.status, created=r.created)


@catalog.tool(annotations=READ_ONLY, run_in_thread=False)
def memory_search_global(
    query: Annotated[str, Field(max_length=limits.QUERY)],
    limit: Annotated[int, Field(ge=1, le=limits.RESULTS)] = 5,
    rt: Runtime = RUNTIME,
) -> ToolResult:
    """Search approved company knowledge by keywords and meaning."""
    found = companykb.search(rt, query, limit)
    if found.hits:
        text = render.hits(found.hits, query, "company knowledge entries")
    else:
        text = f"No approved company knowledge matches {query!r}; memory_list_global browses it."
    if found.note:
        text += "\n" + found.note
    return result(text, results=[h.as_dict() for h in found.hits], note=found.note or None)


@catalog.tool(annotations=READ_ONLY, run_in_thread=False)
def memory_list_global(
    category: str | None = None,
    limit: Annotated[int, Field(ge=1, le=limits.RESULTS)] = 20,
    status: Annotated[str, Field(description="approved, pending or deprecated.")] = "approved",
    rt: Runtime = RUNTIME,
) -> ToolResult:
    """Browse company knowledge, most important first. Members see only their own
    pending or deprecated entries."""
    entries, own_only = companykb.entries(rt, category, limit, status)
    what = f"{status.strip().lower()} company knowledge entries"
    if own_only:
        what += " you promoted (curators and admins see everyone's)"
    if entries:
        text = "\n".join([f"{len(entries)} {what} (recalled data):", *(_line(e) for e in entries)])
    else:
        text = f"No {what}."
    shown = [companykb.visible(rt, e) for e in entries]
    return result(text, entries=shown, own_only=own_only)


@catalog.tool(annotations=WRITE, run_in_thread=False)
def memory_approve_global(
    entry_id: Annotated[int, Field(ge=1, description="The entry's id (#N).")],
    action: Annotated[str, Field(description="'approve' or 'deprecate'.")],
    notes: str | None = None,
    rt: Runtime = RUNTIME,
) -> ToolResult:
    """Curators and admins: approve or deprecate a company knowledge entry."""
    e = companykb.review(rt, entry_id, action, notes)
    verb = "Approved" if e.status == "approved" else "Deprecated"
    shown = "every user now sees it" if e.status == "approved" else "no longer shown"
    return result(
        f"{verb} company knowledge #{e.id} [{quoted(e.category)}] {quoted(e.title)}: {shown}.",
        entry_id=e.id,
        status=e.status,
    )
