"""What every tool module shares: the annotations, the catalog, the injected runtime, the
error edge, the result shape."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Annotated, Any, ParamSpec, TypeVar
from weakref import WeakKeyDictionary

from fastmcp import FastMCP
from fastmcp.dependencies import Depends
from fastmcp.exceptions import ToolError
from fastmcp.server.dependencies import get_server
from fastmcp.tools import FunctionTool, ToolResult
from mcp.types import TextContent
from mcp.types import Tool as MCPTool
from pydantic import Field

from bigmind import limits, redact
from bigmind.errors import BigMindError
from bigmind.runtime import Runtime

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

    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        """The error edge, once for every tool: a BigMind error becomes a ToolError whose
        message tells the agent what to do next (here, inside FastMCP's call: a middleware
        would see it only once FastMCP has logged it as a crash, with its traceback, and masked
        it), and the answer says what the call redacted before storing (never the secrets)."""
        try:
            with redact.collecting() as found:  # a contextvar: worker threads report here too
                out = await super().run(arguments)
        except BigMindError as exc:
            log.info("%s refused: %s", self.name, exc)
            raise ToolError(exc.message_for("tool")) from exc
        return with_redactions(out, found) if found else out

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
    """One module's tool functions by name, in definition order, before any is served: a
    profile serves a catalog (:meth:`serve`), and the compact profile's tools call the
    functions directly, passing the runtime."""

    def __init__(self) -> None:
        self._tools: dict[str, tuple[Callable[..., Any], dict[str, Any]]] = {}

    def tool(self, **options: Any) -> Callable[[Callable[P, R]], Callable[P, R]]:
        """Add the function as a tool, with FastMCP's tool ``options``."""

        def add(fn: Callable[P, R]) -> Callable[P, R]:
            self._tools[fn.__name__] = (fn, options)
            return fn

        return add

    def include(self, other: Catalog, *names: str) -> None:
        """Serve these tools of ``other`` too, as they are."""
        for name in names:
            self._tools[name] = other._tools[name]

    def serve(self, mcp: FastMCP, *, threads: bool = False) -> None:
        """Serve these tools on ``mcp``, in definition order; ``threads``: every tool in a
        worker thread (the HTTP gateway: many callers, database round trips that should not
        hold the event loop), else each tool's own choice."""
        for fn, options in self._tools.values():
            if threads:
                options = {**options, "run_in_thread": True}
            mcp.add_tool(LeanTool.from_function(fn, **options))


_runtimes: WeakKeyDictionary[FastMCP, Runtime] = WeakKeyDictionary()


def attach(mcp: FastMCP, rt: Runtime) -> None:
    """``rt`` is the runtime of the tools ``mcp`` serves (:data:`RUNTIME`)."""
    _runtimes[mcp] = rt


def _served_runtime() -> Runtime:
    return _runtimes[get_server()]


# A tool's last parameter, ``rt: Runtime = RUNTIME``: FastMCP injects the runtime of the server
# serving the call (:func:`attach`), and leaves the parameter out of the tool's schema.
RUNTIME: Runtime = Depends(_served_runtime)


def with_redactions(out: ToolResult, found: Mapping[str, int]) -> ToolResult:
    """A tool's answer with one line naming what was redacted, and ``redacted`` (kind → count)
    in its structured content."""
    line = redact.describe(found)
    texts = [b.text for b in out.content if isinstance(b, TextContent)]
    data = dict(out.structured_content or {})
    data["redacted"] = dict(found)
    return result("\n".join([*texts, line]), **data)


def result(text: str, **data: Any) -> ToolResult:
    """Markdown for the model, the same facts as structured content for programs."""
    return ToolResult(content=text, structured_content=data or None)
