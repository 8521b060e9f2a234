"""``bigmind serve``: the MCP server on stdio, started and stopped cleanly.

Started: the database opens on the first tool call (PostgreSQL is checked at once), the
profile page in a thread beside the stdio loop. Stopped, when stdin ends: the requests read
before are answered first (:mod:`bigmind.mcp.stdio`), then every background thread is
stopped and joined, the model released and the database closed (:meth:`Runtime.close`)
before the interpreter exits.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import threading

from bigmind.cli.main import load_settings, setup_logging

log = logging.getLogger(__name__)


def serve_arguments(sp: argparse.ArgumentParser) -> None:
    sp.add_argument(
        "--http",
        action="store_true",
        help="serve many users over HTTP (MCP at /mcp, the REST API, the pages), with tokens",
    )
    sp.add_argument("--host", help="the gateway's address (BIGMIND_HTTP_HOST, default 127.0.0.1)")
    sp.add_argument("--port", type=int, help="the gateway's port (BIGMIND_HTTP_PORT, default 8700)")


def cmd_serve(args: argparse.Namespace) -> int:
    """Start the MCP server on stdio, or the HTTP gateway."""
    if getattr(args, "http", False):
        from bigmind.cli.gateway import serve_http

        return serve_http(args)
    from bigmind.mcp import stdio
    from bigmind.mcp.server import build_server
    from bigmind.runtime import Runtime

    settings = load_settings()
    setup_logging(settings.log_level)
    if settings.db_url:
        # A wrong or unreachable PostgreSQL fails here, before any client connects; the
        # SQLite file is still opened lazily (a bad path becomes a clear tool error).
        from bigmind.service import operations

        operations.check_database(settings)
    with stdio.answering(limit=settings.max_request_bytes) as ledger:

        def leave(code: int) -> None:
            """memory_restart_server: exit once the answers read so far are on stdout."""
            if ledger is not None:
                ledger.settle(stdio.DRAIN_S)
            _exit_now(code)

        rt = Runtime(settings, background=True, exit_process=leave)
        if settings.web:
            # The profile page starts beside the stdio loop and never delays or stops it.
            from bigmind.web.profile_server import start_in_background

            threading.Thread(target=start_in_background, args=(rt,), daemon=True).start()
        try:
            build_server(settings, rt).run(transport="stdio", show_banner=False)
        finally:
            stopped = rt.close()
    if not stopped:
        # A thread still inside native code (ONNX Runtime loading the model) would abort the
        # interpreter's finalisation ("terminate called without an active exception").
        log.warning("a background thread did not stop in time; exiting without it")
        _exit_now(0)
    return 0


def _exit_now(code: int) -> None:
    """End the process at once (no finalisation), what was printed flushed first."""
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
