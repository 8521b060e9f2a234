"""The `bigmind` command and its Claude Code hooks run in this process: the exit code, stdout
and stderr a user (or the client) gets, without a process's start (~0.4 s of CPU each, ~2 s
for a server). Tests of what only a process shows (signals, a terminal, a pipe closed early,
the executable's own exit) run the real executable and are marked ``e2e``."""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import chdir, contextmanager, redirect_stderr, redirect_stdout
from pathlib import Path
from unittest.mock import patch

# A hook's watchdog in this process: above any test's timeout (pytest-timeout ends a hung test
# first, with its traceback, rather than the watchdog's os._exit ending the test run).
IN_PROCESS_HOOK_DEADLINE_S = 3600.0


@contextmanager
def _stderr_logging() -> Iterator[None]:
    """The root logger as a fresh process has it (no handler: ``setup_logging`` adds its own,
    on the redirected stderr), restored afterwards."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    root.handlers = []
    try:
        yield
    finally:
        for handler in root.handlers:
            handler.close()
        root.handlers, root.level = handlers, level


def run_cli(
    *args: str,
    env: dict[str, str] | None = None,
    stdin: str = "",
    cwd: Path | None = None,
    **more: str,
) -> subprocess.CompletedProcess[str]:
    """``bigmind <args>`` in this process. The environment is the test's with ``more`` set,
    or exactly ``env`` with ``more`` set; stdin reads ``stdin``; run in ``cwd`` if given."""
    from bigmind.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    environ = (dict(os.environ) if env is None else dict(env)) | more
    with (
        chdir(cwd or os.getcwd()),
        patch.dict(os.environ, environ, clear=True),
        patch.object(sys, "stdin", io.StringIO(stdin)),
        redirect_stdout(out),
        redirect_stderr(err),
        _stderr_logging(),
    ):
        try:
            code = main(list(args))
        except SystemExit as exc:  # argparse's usage errors, as the process would exit
            code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    return subprocess.CompletedProcess(["bigmind", *args], code, out.getvalue(), err.getvalue())


def run_hook(
    *args: str, event: dict[str, object] | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``bigmind <args> --hook`` as Claude Code runs it (the event on stdin; the exit code,
    stdout and stderr it reads), in this process. Its watchdog's deadline is lifted, so that a
    busy machine cannot fire it; tests/test_hooks.py runs the real executable to see it fire."""
    from bigmind.cli import hooks

    with patch.object(hooks, "HOOK_DEADLINE_S", IN_PROCESS_HOOK_DEADLINE_S):
        return run_cli(*args, "--hook", env=env, stdin=json.dumps(event or {}))
