"""The compact profile (BIGMIND_TOOLS=compact): eight tools for the whole session loop.

Each is a thin adapter over the full tools' functions, called with this call's runtime: fewer
arguments, several actions behind one ``action``, the same behaviour and answers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Literal, TypeVar, cast

from fastmcp.tools import ToolResult
from pydantic import Field

from bigmind import limits
from bigmind.errors import InvalidInput
from bigmind.mcp.tools import journal_tools, knowledge_tools, sessions_tools
from bigmind.mcp.tools.base import READ_ONLY, RUNTIME, WRITE, Catalog, Importance
from bigmind.mcp.tools.knowledge_tools import Files, Replaces, stored_reply
from bigmind.mcp.tools.sessions_tools import SessionId, Topics
from bigmind.runtime import Runtime
from bigmind.service import facts as service

catalog = Catalog()
# Served as they are, first: their arguments are already few.
catalog.include(sessions_tools.catalog, "memory_start_session")
catalog.include(knowledge_tools.catalog, "memory_recall")
catalog.include(sessions_tools.catalog, "memory_flag_important")

T = TypeVar("T")
Id = Annotated[int | None, Field(ge=1, description="resolve: the hypothesis; done: the reminder.")]


def needed(value: T | None, name: str, chosen: str) -> T:
    """``chosen`` (e.g. ``action='add'``) needs the argument ``name``: its value."""
    if value is None:
        raise InvalidInput(f"{chosen} needs {name}: pass it and call again.")
    return value


def fix_call(fact_id: int, ids: Sequence[int]) -> str:
    """The compact profile's call that makes fact ``fact_id`` replace ``ids`` (``[]``:
    restore what it replaced)."""
    listed = ", ".join(map(str, ids))
    why = "replaces them" if ids else "undo"
    return (
        f'memory_fix_fact(action="update", fact_id={fact_id}, reason="{why}", replaces=[{listed}])'
    )


@catalog.tool(annotations=WRITE, run_in_thread=False)
def memory_store_fact(
    category: Annotated[
        str, Field(description="preference, decision, codebase, constraint, bugfix…")
    ],
    fact: Annotated[str, Field(description="One atomic, self-contained truth.")],
    importance: Importance = 5,
    scope: Literal["project", "global"] | None = None,
    session_id: SessionId = None,
    files: Files = None,
    replaces: Replaces = None,
    rt: Runtime = RUNTIME,
) -> ToolResult:
    """Store one durable fact (preference, decision, bug root cause…) unasked; never
    secrets. The reply lists close facts to judge."""
    s = service.store_fact(
        rt,
        category,
        fact,
        session_id=session_id,
        importance=importance,
        scope=scope,
        files=files,
        replaces=replaces,
    )
    return stored_reply(s, fix_call)


@catalog.tool(annotations=WRITE, run_in_thread=False)
def memory_end_session(
    one_liner: Annotated[str, Field(description=f"≤ {limits.ONE_LINER} characters.")],
    topics: Topics = None,
    outcome: Annotated[str | None, Field(description="What was decided or built.")] = None,
    summary: Annotated[str | None, Field(description="Narrative, markdown.")] = None,
    session_id: SessionId = None,
    rt: Runtime = RUNTIME,
) -> ToolResult:
    """CALL LAST: close the session so the next conversation resumes from here."""
    return sessions_tools.memory_end_session(
        one_liner, session_id, topics=topics, outcome=outcome, summary=summary, rt=rt
    )


@catalog.tool(annotations=WRITE, run_in_thread=False)
def memory_fix_fact(
    action: Literal["update", "deprecate", "forget"],
    fact_id: Annotated[int, Field(ge=1)],
    reason: str,
    fact: Annotated[str | None, Field(description="The new text (update).")] = None,
    replaces: Annotated[
        list[int] | str | None, Field(description="update: facts it replaces; [] restores.")
    ] = None,
    rt: Runtime = RUNTIME,
) -> ToolResult:
    """A fact is wrong (update: corrected, history kept), outdated (deprecate) or must be
    erased for good (forget)."""
    if action == "update":
        if replaces is None:
            needed(fact, "fact", f"action={action!r}")
        return knowledge_tools.memory_update_fact(
            fact_id,
            fact=fact,
            reason=reason if fact is not None else None,
            replaces=replaces,
            rt=rt,
        )
    if action == "deprecate":
        return knowledge_tools.memory_deprecate_fact(fact_id, reason, rt=rt)
    return knowledge_tools.memory_forget("fact", fact_id, reason, rt=rt)


@catalog.tool(annotations=WRITE, run_in_thread=False)
def memory_journal(
    action: Literal["add", "resolve", "list", "attempt", "remind", "done"],
    text: Annotated[
        str | None,
        Field(
            description="add: the prediction; resolve: what happened; attempt: approach;"
            " remind: the note."
        ),
    ] = None,
    id: Id = None,
    status: Literal["confirmed", "refuted", "abandoned"] = "confirmed",
    outcome: Literal["failed", "worked"] = "failed",
    why: str | None = None,
    when: Annotated[str, Field(description="remind: 'next_session' or an ISO date.")] = (
        "next_session"
    ),
    rt: Runtime = RUNTIME,
) -> ToolResult:
    """Hypotheses: add one before a non-trivial task, resolve it after, list the open.
    attempt: record an approach that failed or worked, and why. remind: a note that leads
    the packet when due, until done."""
    if action == "attempt":
        # why may be None here: the service says when an outcome needs its reason.
        approach = needed(text, "text", f"action={action!r}")
        return journal_tools.memory_record_attempt(approach, outcome, cast(str, why), rt=rt)
    if action == "add":
        return journal_tools.memory_add_hypothesis(
            needed(text, "text", f"action={action!r}"), rt=rt
        )
    if action == "resolve":
        return journal_tools.memory_resolve_hypothesis(
            needed(id, "id", f"action={action!r}"), status, text, rt=rt
        )
    if action in ("remind", "done"):  # a reminder: set one, or mark one done
        remind = action == "remind"
        needed(text if remind else id, "text" if remind else "id", f"action={action!r}")
        return journal_tools.memory_remind(text, when, None if remind else id, rt=rt)
    return journal_tools.memory_list_hypotheses(rt=rt)


@catalog.tool(annotations=READ_ONLY, run_in_thread=False)
def memory_get(
    what: Literal["context", "session", "sessions"],
    session_id: Annotated[str | None, Field(description="For what='session'.")] = None,
    rt: Runtime = RUNTIME,
) -> ToolResult:
    """Reload the context packet, one past session's detail, or the recent sessions."""
    if what == "context":
        return sessions_tools.memory_get_context(rt=rt)
    if what == "session":
        return sessions_tools.memory_get_session_detail(
            needed(session_id, "session_id", f"what={what!r}"), rt=rt
        )
    return sessions_tools.memory_list_sessions(rt=rt)
