"""``bigmind serve --http``: the gateway for many users, run by uvicorn until a signal stops it.

PostgreSQL (or the SQLite file) is checked before the port opens, so a wrong
``BIGMIND_DB_URL`` fails at once with one line. Ctrl-C or SIGTERM stops accepting, lets the
requests in flight finish, then closes the runtime (:meth:`Runtime.close`).
"""

from __future__ import annotations

import argparse
import logging

from bigmind.cli.main import load_settings, setup_logging
from bigmind.errors import InvalidInput

log = logging.getLogger(__name__)


def serve_http(args: argparse.Namespace) -> int:
    import uvicorn

    from bigmind.gateway.app import build_gateway
    from bigmind.runtime import Runtime
    from bigmind.web.deadlines import uvicorn_options

    settings = load_settings()
    host = args.host or settings.http_host
    port = settings.http_port if args.port is None else args.port
    if not 1 <= port <= 65535:
        raise InvalidInput(f"--port must be 1 to 65535; got {port}.")
    setup_logging(settings.log_level, settings.log_format)
    rt = Runtime(settings, background=True, serves_many=True)
    _ = rt.store  # the database opens (and migrates) now: a bad URL fails before listening
    shown = f"[{host}]" if ":" in host else host
    rt.public_url = f"http://{shown}:{port}"
    app = build_gateway(settings, rt)
    log.warning("BigMind gateway for %s on %s/mcp", settings.database, rt.public_url)
    try:
        uvicorn.run(
            app,
            host=host,
            port=port,
            log_level=settings.log_level.lower(),
            access_log=False,  # the gateway's own access lines carry the user (web/ops.py)
            log_config=None,  # uvicorn's lines in BigMind's format (BIGMIND_LOG_FORMAT)
            timeout_graceful_shutdown=10,
            **uvicorn_options(settings),  # slow clients' deadlines (web/deadlines.py)
        )
    finally:
        rt.close()
    return 0
