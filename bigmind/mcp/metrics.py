"""Tool calls counted and timed for Prometheus (:class:`bigmind.web.ops.Metrics`).

Outcomes: ``ok``; ``tool_error`` when the agent was told what to fix (a ``ToolError`` from
BigMind's error edge, bad arguments, an unknown tool); ``internal_error`` when a tool failed
unexpectedly and FastMCP masked the exception (a ``ToolError`` caused by something that is no
BigMind, FastMCP or validation error). A name no tool has is counted as ``unknown``, so a
client cannot grow the label set.
"""

from __future__ import annotations

import time
from typing import Any

from fastmcp.exceptions import FastMCPError, NotFoundError, ToolError
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from pydantic import ValidationError as PydanticValidationError

from bigmind.errors import BigMindError
from bigmind.web.ops import Metrics

UNKNOWN = "unknown"
_TOLD = (BigMindError, FastMCPError, PydanticValidationError)  # errors the agent is told


class ToolMetrics(Middleware):
    """Counts every tool call by tool and outcome, and times it. Add it first (outermost), so
    calls refused by the other middleware are counted too."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    async def on_call_tool(
        self, context: MiddlewareContext[Any], call_next: CallNext[Any, Any]
    ) -> Any:
        start = time.perf_counter()
        outcome = "internal_error"  # unless the call returns or fails in a way it was told
        try:
            result = await call_next(context)
            outcome = "tool_error" if getattr(result, "is_error", False) else "ok"
            return result
        except (FastMCPError, NotFoundError) as exc:  # NotFoundError: no such tool
            outcome = "internal_error" if _masked(exc) else "tool_error"
            raise
        finally:
            seconds = time.perf_counter() - start
            name = context.message.name
            if outcome != "ok":  # a call that failed may name no tool at all
                name = await _known(context, name)
            self.metrics.observe_tool(name, outcome, seconds)


def _masked(exc: Exception) -> bool:
    """A ToolError FastMCP made from an unexpected exception (its message is generic)."""
    cause = exc.__cause__
    return isinstance(exc, ToolError) and cause is not None and not isinstance(cause, _TOLD)


async def _known(context: MiddlewareContext[Any], name: str) -> str:
    server = context.fastmcp_context.fastmcp if context.fastmcp_context is not None else None
    if server is None:
        return UNKNOWN
    try:
        tool = await server.get_tool(name)
    except (FastMCPError, NotFoundError):
        return UNKNOWN
    return name if tool is not None else UNKNOWN
