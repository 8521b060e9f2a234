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
    activity,
    admin,
    compact,
    company,
    journal,
    knowledge,
    people,
    profile,
    sessions,
)
from bigmind.mcp.tools.base import Catalog
from bigmind.runtime import Runtime
from bigmind.service import sessionlife


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

    catalog = Catalog()
    catalog.threads = threads
    for module in (sessions, knowledge, company, journal, activity, people, admin, profile):
        module.register(catalog, rt)
    if settings.tools == "compact":
        compact.register(mcp, catalog, rt)
    else:
        catalog.serve(mcp)
    resources.register(mcp, rt)
    return mcp
