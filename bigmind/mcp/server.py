"""Build the FastMCP server: instructions (layer 1), the init prompt (layer 2), the tools."""

from __future__ import annotations

from collections.abc import Sequence

from fastmcp import FastMCP
from fastmcp.server.middleware import Middleware

from bigmind import __version__
from bigmind.config import Settings
from bigmind.mcp import resources
from bigmind.mcp.arguments import ReadableArguments
from bigmind.mcp.instructions import server_instructions
from bigmind.mcp.roots import ProjectFromRoots
from bigmind.mcp.tools import (
    activity_tools,
    admin_tools,
    compact_tools,
    company_tools,
    journal_tools,
    knowledge_tools,
    people_tools,
    profile_tools,
    sessions_tools,
)
from bigmind.mcp.tools.base import attach
from bigmind.runtime import Runtime
from bigmind.service import sessionlife

# The full profile's tools, in the order tools/list shows them.
FULL = (
    sessions_tools,
    knowledge_tools,
    company_tools,
    journal_tools,
    activity_tools,
    people_tools,
    admin_tools,
    profile_tools,
)


def build_server(
    settings: Settings,
    runtime: Runtime | None = None,
    *,
    threads: bool = False,
    middleware: Sequence[Middleware] = (),
) -> FastMCP:
    """The server; ``threads``: every tool runs in a worker thread (the HTTP gateway);
    ``middleware`` goes outermost (the gateway's tool metrics see every call)."""
    rt = runtime or Runtime(settings, background=True)
    mcp = FastMCP(
        "BigMind Memory",
        instructions=server_instructions(settings.tools),
        version=__version__,
        mask_error_details=True,  # unexpected errors reach the agent as a generic message
    )
    for outer in middleware:
        mcp.add_middleware(outer)
    mcp.add_middleware(ProjectFromRoots())
    mcp.add_middleware(ReadableArguments())  # bad arguments: one line, not pydantic's dump

    @mcp.prompt()
    def bigmind_init() -> str:
        """Bootstrap BigMind memory for this conversation (the live context packet)."""
        packet = sessionlife.bootstrap(rt)
        return (
            "You have a persistent memory, BigMind. Call memory_start_session() now to open a "
            "session and announce its id; this is your current context:\n\n"
            f"{packet.text}\nAlways call memory_end_session() before this conversation ends."
        )

    attach(mcp, rt)  # the runtime the tools are given (their parameter ``rt``)
    if settings.tools == "compact":
        compact_tools.catalog.serve(mcp, threads=threads)
    else:
        for module in FULL:
            module.catalog.serve(mcp, threads=threads)
    resources.register(mcp, rt)
    return mcp
