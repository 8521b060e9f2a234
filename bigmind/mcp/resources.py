"""MCP resources, for clients that read them: the bootstrap packet, a session, a fact.

``bigmind://context`` is the packet memory_get_context returns; ``bigmind://sessions/{id}``
and ``bigmind://facts/{id}`` (resource templates) are what memory_get_session_detail and
memory_update_fact(fact_id) show. They call the same features as those tools, so they are
scoped the same way (the configured user; the client's project through the roots middleware),
and like them they write nothing: no use is counted, no session opened.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import ParamSpec, TypeVar

from fastmcp import FastMCP
from fastmcp.exceptions import ResourceError

from bigmind import limits
from bigmind.errors import BigMindError, NotFound
from bigmind.mcp import render
from bigmind.runtime import Runtime
from bigmind.service import facts, sessionlife

log = logging.getLogger("bigmind.mcp.resources")
P = ParamSpec("P")
R = TypeVar("R")
MARKDOWN = "text/markdown"


def edge(fn: Callable[P, R]) -> Callable[P, R]:
    """BigMind errors as ResourceErrors whose message says what to do (the tools' wording)."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except BigMindError as exc:
            log.info("%s refused: %s", fn.__name__, exc)
            # DEBUG: fastmcp logs a refused read with its traceback at this level, not ERROR.
            raise ResourceError(exc.message_for("tool"), log_level=logging.DEBUG) from exc

    return wrapper


def fact_number(fact_id: str) -> int:
    """A fact id from a URI: digits within 64 bits, else no such fact."""
    n = limits.parse_id(fact_id) if not fact_id.startswith("#") else None
    if n is None:
        raise NotFound(
            f"No fact #{fact_id[:40]} in your memory: fact ids are numbers.",
            tool="Use memory_search_facts to find fact ids.",
        )
    return n


def register(mcp: FastMCP, rt: Runtime) -> None:
    @mcp.resource("bigmind://context", name="context", mime_type=MARKDOWN)
    @edge
    def context() -> str:
        """Your BigMind context packet: company knowledge, profile, key facts, recent sessions."""
        return sessionlife.context(rt).packet.text

    @mcp.resource("bigmind://sessions/{session_id}", name="session", mime_type=MARKDOWN)
    @edge
    def session(session_id: str) -> str:
        """One session: summary, key facts, code references, flagged exchanges."""
        s, summary, chunks = sessionlife.session_detail(rt, session_id)
        return render.session_detail(s, summary, chunks, limits.DETAIL_TOKENS_DEFAULT)

    @mcp.resource("bigmind://facts/{fact_id}", name="fact", mime_type=MARKDOWN)
    @edge
    def fact(fact_id: str) -> str:
        """One fact with its provenance and earlier versions."""
        f, versions = facts.history(rt, fact_number(fact_id))
        where = render.fact_place(f)
        return (
            render.fact_versions(f, versions)
            + f"\nConfidence {f.confidence:.2f}, importance {f.importance}, {where}; "
            f"created {(f.created_at or '?')[:16]}."
        )
