"""What every tool module shares: the annotations, the error edge, the result shape."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Annotated, Any, ParamSpec, TypeVar, cast

from fastmcp import FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.tools import FunctionTool, ToolResult
from mcp.types import TextContent
from mcp.types import Tool as MCPTool
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


class LeanTool(FunctionTool):
    """A tool listed lean, since every byte of tools/list is paid in each turn's context:
    without FastMCP's derived ``title`` ("Memory Recall"; clients fall back to the name) and
    ``_meta`` tags (read by no client), its description on one line, and an optional argument
    shown as its type alone (left out means null; null is still accepted). Without
    ``additionalProperties: false`` (29 characters a tool): an unknown argument is still refused,
    in one line naming the ones the tool takes (:mod:`bigmind.mcp.arguments`)."""

    def to_mcp_tool(self, **overrides: Any) -> MCPTool:
        tool = super().to_mcp_tool(**overrides)
        schema = dict(tool.input_schema)
        props = schema.get("properties", {})
        schema["properties"] = {name: _optional(p) for name, p in props.items()}
        schema.pop("additionalProperties", None)
        return tool.model_copy(
            update={
                "title": None,
                "meta": None,
                "description": " ".join((tool.description or "").split()) or None,
                "input_schema": schema,
            }
        )


def _optional(prop: dict[str, Any]) -> dict[str, Any]:
    """``{"anyOf": [X, null], "default": null}`` as ``X`` (what leaving it out means)."""
    alts = [a for a in prop.get("anyOf", []) if a != {"type": "null"}]
    if (
        "default" not in prop
        or prop["default"] is not None
        or len(alts) == len(prop.get("anyOf", []))
    ):
        return prop
    rest = {k: v for k, v in prop.items() if k not in ("anyOf", "default")}
    return {**alts[0], **rest} if len(alts) == 1 else {"anyOf": alts, **rest}


class Catalog:
    """The tool functions the modules define, by name, before any is served: a profile serves
    some of them (:meth:`serve`), and the compact profile's tools call them directly."""

    def __init__(self) -> None:
        self.fns: dict[str, Callable[..., Any]] = {}
        self._options: dict[str, dict[str, Any]] = {}
        self.served: set[str] = set()  # the names served so far
        # Every tool in a worker thread (the HTTP gateway: many callers, database round trips
        # that should not hold the event loop); else each tool's own choice.
        self.threads = False

    def tool(self, **options: Any) -> Callable[[Callable[P, R]], Callable[P, R]]:
        def add(fn: Callable[P, R]) -> Callable[P, R]:
            self.fns[fn.__name__] = fn
            self._options[fn.__name__] = options
            return fn

        return add

    def __getitem__(self, name: str) -> Callable[..., ToolResult]:
        return self.fns[name]

    def serve(self, mcp: FastMCP, names: Iterable[str] | None = None) -> None:
        """Serve these tools (default all) on ``mcp``, in definition order."""
        for name in self.fns if names is None else names:
            options = self._options[name]
            if self.threads:
                options = {**options, "run_in_thread": True}
            mcp.add_tool(LeanTool.from_function(self.fns[name], **options))
            self.served.add(name)


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
