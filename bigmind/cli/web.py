"""``bigmind web``: the profile page in the foreground."""

from __future__ import annotations

import argparse
import sys

from bigmind.cli.main import load_settings, setup_logging
from bigmind.errors import InvalidInput


def web_arguments(sp: argparse.ArgumentParser) -> None:
    sp.add_argument("--port", type=int, help="port (default BIGMIND_PORT, 7700)")
    sp.add_argument("--open", action="store_true", help="open the page in the browser")


def cmd_web(args: argparse.Namespace) -> int:
    """``bigmind web``: serve the profile page in the foreground until Ctrl-C."""
    from bigmind.runtime import Runtime
    from bigmind.web.profile_server import HEADLESS, claim_port, open_browser, uvicorn_server

    settings = load_settings()
    if args.port is not None:
        if not 1 <= args.port <= 65535:
            raise InvalidInput(f"--port must be 1–65535; got {args.port}.")
        settings = settings.model_copy(update={"port": args.port})
    setup_logging(settings.log_level, settings.log_format)
    rt = Runtime(settings, background=True)  # hybrid search: the model loads in a thread
    try:
        _ = rt.store  # a bad database fails here, as one line, before a port is taken
        claim = claim_port(rt)
        show = args.open or settings.autoopen
        if claim.sock is None:
            print(f"BigMind profile page already served at {claim.url} (pid {claim.reused_pid})")
            if show and not open_browser(claim.url):
                print(HEADLESS.format(url=claim.url), file=sys.stderr)
            return 0
        if claim.note:
            print(f"bigmind: {claim.note}", file=sys.stderr)
        print(f"BigMind profile page for {settings.user}: {claim.url}  (Ctrl-C stops it)")
        sys.stdout.flush()
        if show and not open_browser(claim.url):
            print(HEADLESS.format(url=claim.url), file=sys.stderr)
        uvicorn_server(rt).run(sockets=[claim.sock])
    finally:
        rt.close()
    return 0
