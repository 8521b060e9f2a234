"""The compact profile (BIGMIND_TOOLS=compact): eight tools for the whole session loop.

Each is a thin adapter over the full tools' functions (the catalog): fewer arguments, several
actions behind one ``action``, the same behaviour and answers."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Literal

from fastmcp import FastMCP
from fastmcp.tools import ToolResult
from pydantic import Field

from bigmind import limits
from bigmind.errors import InvalidInput
from bigmind.mcp.tools.base import READ_ONLY, WRITE, Catalog, Importance, edge
from bigmind.mcp.tools.knowledge import Files, Replaces, stored_reply
from bigmind.mcp.tools.sessions import SessionId, Topics
from bigmind.runtime import Runtime
from bigmind.service import facts as service

# Served as they are: their arguments are already few.
AS_IS = ("memory_start_session", "memory_recall", "memory_flag_important")

Id = Annotated[int | None, Field(ge=1, description="resolve: the hypothesis; done: the reminder.")]


def needed(value: object, name: str, chosen: str) -> None:
    """``chosen`` (e.g. ``action='add'``) needs the argument ``name``."""
    if value is None:
        raise InvalidInput(f"{chosen} needs {name}: pass it and call again.")


def fix_call(fact_id: int, ids: Sequence[int]) -> str:
    """The compact profile's call that makes fact ``fact_id`` replace ``ids`` (``[]``:
    restore what it replaced)."""
    listed = ", ".join(map(str, ids))
    why = "replaces them" if ids else "undo"
    return (
        f'memory_fix_fact(action="update", fact_id={fact_id}, reason="{why}", replaces=[{listed}])'
    )


def register(mcp: FastMCP, full: Catalog, rt: Runtime) -> None:
    own = Catalog()
    own.threads = full.threads
    tool = own.tool

    @tool(annotations=WRITE, run_in_thread=False)
    @edge
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

    @tool(annotations=WRITE, run_in_thread=False)
    @edge
    def memory_end_session(
        one_liner: Annotated[str, Field(description=f"≤ {limits.ONE_LINER} characters.")],
        topics: Topics = None,
        outcome: Annotated[str | None, Field(description="What was decided or built.")] = None,
        summary: Annotated[str | None, Field(description="Narrative, markdown.")] = None,
        session_id: SessionId = None,
    ) -> ToolResult:
        """CALL LAST: close the session so the next conversation resumes from here."""
        return full["memory_end_session"](
            one_liner, session_id, topics=topics, outcome=outcome, summary=summary
        )

    @tool(annotations=WRITE, run_in_thread=False)
    @edge
    def memory_fix_fact(
        action: Literal["update", "deprecate", "forget"],
        fact_id: Annotated[int, Field(ge=1)],
        reason: str,
        fact: Annotated[str | None, Field(description="The new text (update).")] = None,
        replaces: Annotated[
            list[int] | str | None, Field(description="update: facts it replaces; [] restores.")
        ] = None,
    ) -> ToolResult:
        """A fact is wrong (update: corrected, history kept), outdated (deprecate) or must be
        erased for good (forget)."""
        if action == "update":
            if replaces is None:
                needed(fact, "fact", f"action={action!r}")
            return full["memory_update_fact"](
                fact_id, fact=fact, reason=reason if fact is not None else None, replaces=replaces
            )
        if action == "deprecate":
            return full["memory_deprecate_fact"](fact_id, reason)
        return full["memory_forget"]("fact", fact_id, reason)

    @tool(annotations=WRITE, run_in_thread=False)
    @edge
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
    ) -> ToolResult:
        """Hypotheses: add one before a non-trivial task, resolve it after, list the open.
        attempt: record an approach that failed or worked, and why. remind: a note that leads
        the packet when due, until done."""
        if action == "attempt":
            needed(text, "text", f"action={action!r}")
            return full["memory_record_attempt"](text, outcome, why)
        if action == "add":
            needed(text, "text", f"action={action!r}")
            return full["memory_add_hypothesis"](text)
        if action == "resolve":
            needed(id, "id", f"action={action!r}")
            return full["memory_resolve_hypothesis"](id, status, text)
        if action in ("remind", "done"):  # a reminder: set one, or mark one done
            remind = action == "remind"
            needed(text if remind else id, "text" if remind else "id", f"action={action!r}")
            return full["memory_remind"](text, when, None if remind else id)
        return full["memory_list_hypotheses"]()

    @tool(annotations=READ_ONLY, run_in_thread=False)
    @edge
    def memory_get(
        what: Literal["context", "session", "sessions"],
        session_id: Annotated[str | None, Field(description="For what='session'.")] = None,
    ) -> ToolResult:
        """Reload the context packet, one past session's detail, or the recent sessions."""
        if what == "context":
            return full["memory_get_context"]()
        if what == "session":
            needed(session_id, "session_id", f"what={what!r}")
            return full["memory_get_session_detail"](session_id)
        return full["memory_list_sessions"]()

    full.serve(mcp, AS_IS)
    own.serve(mcp)
