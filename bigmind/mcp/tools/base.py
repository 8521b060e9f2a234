"""What every tool module shares: the annotations, the error edge, the result shape."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Mapping
from typing import Annotated, Any, ParamSpec, TypeVar, cast

from fastmcp.exceptions import ToolError
from fastmcp.tools import ToolResult
from mcp.types import TextContent
from pydantic import Field

from bigmind import limits, redact
from bigmind.errors import BigMindError

log = logging.getLogger("bigmind.mcp.tools")
P = ParamSpec("P")
R = TypeVar("R")

# Tools run on the event loop (run_in_thread=False): their SQLite work takes well under a
# millisecond, while FastMCP's hop to a worker thread costs ~0.7 ms per call. The price: while
# another process holds the write lock, this server answers nothing else until the lock is free
# or BIGMIND_BUSY_TIMEOUT_MS passes.
# Hints only where they tell a client something: every byte here is paid in each agent's context.
READ_ONLY = {"readOnlyHint": True}
WRITE = {"destructiveHint": False}
DESTRUCTIVE = {"destructiveHint": True}

Importance = Annotated[
    int,
    Field(ge=limits.IMPORTANCE[0], le=limits.IMPORTANCE[1], description="1 low … 10 critical."),
]


def edge(fn: Callable[P, R]) -> Callable[P, R]:
    """Translate BigMind errors into ToolErrors whose message tells the agent what to do next,
    and say what the call redacted before storing (the secrets themselves are never shown)."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            with redact.collecting() as found:
                out = fn(*args, **kwargs)
        except BigMindError as exc:
            log.info("%s refused: %s", fn.__name__, exc)
            raise ToolError(exc.message_for("tool")) from exc
        return cast(R, with_redactions(out, found)) if found else out

    return wrapper


def with_redactions(out: object, found: Mapping[str, int]) -> object:
    """A tool's answer with one line naming what was redacted, and ``redacted`` (kind → count)
    in its structured content."""
    line = redact.describe(found)
    if isinstance(out, str):
        return f"{out}\n{line}"
    if isinstance(out, ToolResult):
        texts = [b.text for b in out.content if isinstance(b, TextContent)]
        data = dict(out.structured_content or {})
        data["redacted"] = dict(found)
        return result("\n".join([*texts, line]), **data)
    return out


def result(text: str, **data: Any) -> ToolResult:
    """Markdown for the model, the same facts as structured content for programs."""
    return ToolResult(content=text, structured_content=data or None)
