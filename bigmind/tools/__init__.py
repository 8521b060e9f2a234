"""MCP tools: typed arguments, a docstring the agent reads, one call into the store."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

from fastmcp import FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.tools import ToolResult

from bigmind.errors import BigMindError
from bigmind.runtime import Runtime

log = logging.getLogger("bigmind.tools")
P = ParamSpec("P")
R = TypeVar("R")

# Hints only where they tell a client something: every byte here is paid in each agent's context.
READ_ONLY = {"readOnlyHint": True}
WRITE = {"destructiveHint": False}
DESTRUCTIVE = {"destructiveHint": True}


def edge(fn: Callable[P, R]) -> Callable[P, R]:
    """Translate BigMind errors into ToolErrors whose message tells the agent what to do next."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except BigMindError as exc:
            log.info("%s refused: %s", fn.__name__, exc)
            raise ToolError(str(exc)) from exc

    return wrapper


def result(text: str, **data: Any) -> ToolResult:
    """Markdown for the model, the same facts as structured content for programs."""
    return ToolResult(content=text, structured_content=data or None)


def register_all(mcp: FastMCP, rt: Runtime) -> None:
    from bigmind.tools import activity, admin, journal, knowledge, people, sessions

    for module in (sessions, knowledge, journal, activity, people, admin):
        module.register(mcp, rt)
