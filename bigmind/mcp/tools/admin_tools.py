"""Maintenance tools: stats, instructions, health, vacuum, export."""

from __future__ import annotations

import json
from typing import Annotated

from fastmcp import FastMCP
from fastmcp.dependencies import CurrentFastMCP
from fastmcp.tools import ToolResult
from pydantic import Field

from bigmind import limits
from bigmind.errors import Forbidden
from bigmind.mcp import render
from bigmind.mcp.instructions import rules
from bigmind.mcp.tools.base import DESTRUCTIVE, READ_ONLY, RUNTIME, WRITE, Catalog, result
from bigmind.runtime import Runtime
from bigmind.service import housekeeping, portability

catalog = Catalog()
SERVER: FastMCP = CurrentFastMCP()  # the server serving the call (injected)


@catalog.tool(annotations=READ_ONLY, run_in_thread=False)
def memory_get_stats(rt: Runtime = RUNTIME) -> ToolResult:
    """Counts per tier and fact category, database size, versions."""
    data = housekeeping.stats(rt)
    return result(json.dumps(data, indent=1, ensure_ascii=False), **data)


@catalog.tool(annotations=READ_ONLY)
async def memory_get_instructions(server: FastMCP = SERVER) -> str:
    """The full guide to using BigMind. Call it when unsure what to do."""
    # The ritual names only the tools this server serves (a smaller profile serves fewer).
    served = {t.name for t in await server.list_tools(run_middleware=False)}
    return rules(served)


@catalog.tool(annotations=READ_ONLY, run_in_thread=False)
def memory_health_check(
    stale_days: Annotated[
        int,
        Field(ge=1, le=limits.STALE_DAYS, description="Facts untouched this long count as stale."),
    ] = 30,
    rt: Runtime = RUNTIME,
) -> ToolResult:
    """Diagnose the memory: index integrity, schema, open sessions, stale facts."""
    checks = housekeeping.health(rt, stale_days)
    return result(
        render.checks(checks),
        ok=all(c.ok for c in checks),
        checks=[{"name": c.name, "ok": c.ok, "detail": c.detail} for c in checks],
    )


@catalog.tool(annotations=DESTRUCTIVE, run_in_thread=False)
def memory_vacuum(
    older_than_days: Annotated[
        int,
        Field(ge=1, le=limits.RETENTION_DAYS),
    ],
    rt: Runtime = RUNTIME,
) -> ToolResult:
    """Delete saved exchanges older than N days (facts and summaries stay). Only on
    the user's request."""
    n = housekeeping.vacuum(rt, older_than_days)
    return result(
        f"Deleted {n} chunk(s) older than {older_than_days} days; summaries and facts kept.",
        deleted_chunks=n,
    )


@catalog.tool(annotations=WRITE, run_in_thread=False)
def memory_export(
    output_path: Annotated[
        str | None,
        Field(description="A file in the data folder's exports/."),
    ] = None,
    overwrite: Annotated[bool, Field(description="Replace an existing file.")] = False,
    rt: Runtime = RUNTIME,
) -> ToolResult:
    """Back up all of the user's memory to one JSON file."""
    done = portability.export_json(rt, output_path, overwrite=overwrite)
    target, counts = done.path, done.rows
    summary = ", ".join(f"{n} {k}" for k, n in counts.items() if n)
    return result(f"Exported to {target} ({summary}).", path=str(target), counts=counts)


@catalog.tool(annotations=WRITE, run_in_thread=False)
def memory_import(
    input_path: Annotated[str, Field(description="A file memory_export wrote.")],
    mode: str = "merge",  # the only mode: add what is missing
    rt: Runtime = RUNTIME,
) -> ToolResult:
    """Merge a memory_export file into this memory. Idempotent; a bad row refuses the file."""
    done = portability.import_json(rt, input_path, mode)
    path, report = done.path, done.report
    added = ", ".join(f"{n} {k}" for k, n in report.added.items() if n) or "nothing new"
    return result(
        f"Imported from {path} (exported by {report.source_user}): {added}.",
        added=report.added,
        skipped=report.skipped,
    )


@catalog.tool(annotations=DESTRUCTIVE, run_in_thread=False)
def memory_restart_server(rt: Runtime = RUNTIME) -> str:
    """Restart BigMind to load new code; the client starts it again."""
    if rt.serves_many:
        raise Forbidden("This BigMind is a shared HTTP gateway: only its operator restarts it.")
    rt.restart_soon()
    return (
        "BigMind will exit in a moment. If your client does not restart it automatically, "
        "reconnect the 'bigmind' server in its MCP settings."
    )
