"""Facts, chunks search and the identity profile."""

from __future__ import annotations

from typing import Annotated

from fastmcp import FastMCP
from fastmcp.tools import ToolResult
from pydantic import Field

from bigmind import render
from bigmind.runtime import Runtime
from bigmind.tools import READ_ONLY, WRITE, edge, result
from bigmind.tools.sessions import SessionId

Query = Annotated[
    str, Field(description="A question or keywords; natural language is fine.", max_length=2000)
]
Limit = Annotated[int, Field(ge=1, le=100, description="Maximum results.")]


def register(mcp: FastMCP, rt: Runtime) -> None:
    @mcp.tool(annotations=READ_ONLY, run_in_thread=False)
    @edge
    def memory_search_facts(
        query: Query, limit: Limit = 10, include_deprecated: bool = False
    ) -> ToolResult:
        """Search your stored facts BEFORE acting on a task ("search first, act second").

        Ask in plain words ("which test runner does the user prefer?") or keywords; results are
        BM25-ranked with date, category, confidence and why each matched. Deprecated facts are
        hidden unless include_deprecated=True.
        """
        hits = rt.store.search_facts(query, limit, include_deprecated)
        return result(render.hits(hits, query, "facts"), results=[h.as_dict() for h in hits])

    @mcp.tool(annotations=READ_ONLY, run_in_thread=False)
    @edge
    def memory_search_chunks(query: Query, limit: Limit = 10) -> ToolResult:
        """Search flagged past exchanges (decisions, code, diagnoses) for verbatim evidence.

        Use before answering "do you remember…" or redoing past work. Plain questions work.
        """
        hits = rt.store.search_chunks(query, limit)
        return result(render.hits(hits, query, "chunks"), results=[h.as_dict() for h in hits])

    @mcp.tool(annotations=WRITE, run_in_thread=False)
    @edge
    def memory_store_fact(
        category: Annotated[
            str,
            Field(
                description="preference, decision, codebase, constraint, bugfix, identity… "
                "(a short lowercase word)"
            ),
        ],
        fact: Annotated[str, Field(description="One atomic, self-contained truth.")],
        confidence: Annotated[
            float, Field(ge=0.0, le=1.0, description="1.0 = stated by the user; lower if inferred.")
        ] = 1.0,
        session_id: SessionId = None,
        importance: Annotated[int, Field(ge=1, le=10, description="1 low … 10 critical.")] = 5,
    ) -> ToolResult:
        """Store one atomic fact worth remembering across conversations. Don't wait to be asked.

        Triggers: a user preference or constraint, an architectural decision, a bug's root cause
        and fix, what a module does. One truth per call; never secrets. Storing a fact that is
        already stored returns the existing id instead of a duplicate.
        """
        f, created, _ref = rt.store.store_fact(category, fact, confidence, session_id, importance)
        text = (
            f"Stored fact #{f.id} [{f.category}]."
            if created
            else f"Already known as fact #{f.id} [{f.category}]; nothing added."
        )
        return result(text, fact_id=f.id, created=created, category=f.category)

    @mcp.tool(annotations=WRITE, run_in_thread=False)
    @edge
    def memory_update_profile(
        role: Annotated[str | None, Field(description="The user's role or job title.")] = None,
        preferences: Annotated[
            str | None, Field(description="How the user likes to work (markdown).")
        ] = None,
        pinned_facts: Annotated[
            list[str] | str | None,
            Field(description="Facts always shown at session start; replaces the current list."),
        ] = None,
    ) -> ToolResult:
        """Update the user's identity profile (Tier 0), shown at the top of every session.

        Give only the fields that change; "" clears a field. Use it as soon as you learn a
        lasting preference.
        """
        p = rt.store.update_profile(role, preferences, pinned_facts)
        return result("Profile updated.", profile=p.as_dict())

    @mcp.tool(annotations=WRITE, run_in_thread=False)
    @edge
    def memory_deprecate_fact(
        fact_id: Annotated[int, Field(ge=1, description="The fact's id (#N in results).")],
        reason: Annotated[str, Field(description="Why it is no longer true.")],
    ) -> ToolResult:
        """Retire a fact that is no longer true. It stays in the database but leaves context and
        search (memory_search_facts(include_deprecated=True) still finds it).
        """
        f = rt.store.deprecate_fact(fact_id, reason)
        return result(
            f"Deprecated fact #{f.id}: {f.deprecation_reason}", fact_id=f.id, deprecated=True
        )
