"""Running clients nobody here wrote, from npm (`npx`), in tests: skipped, not failed, when
Node.js is missing or npm cannot fetch the package."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

# npm's cache as it was at import, before the conftest points HOME at a temporary folder:
# otherwise every test would download the package again.
NPM_CACHE = (
    {}
    if any(k.lower() == "npm_config_cache" for k in os.environ)
    else {"NPM_CONFIG_CACHE": str(Path.home() / ".npm")}
)
# npm's own failures (no network, registry down), as opposed to the program's verdicts.
FETCH_FAILED = re.compile(
    r"npm (?:ERR!|error) (?:code )?(?:E[A-Z0-9]+|network)|ENOTFOUND|EAI_AGAIN"
)


def npx_command(package: str) -> list[str]:
    npx = shutil.which("npx")
    if npx is None:
        pytest.skip(f"npx is not installed (Node.js is needed for {package})")
    return [npx, "--yes", package]


def npx_env(**extra: str) -> dict[str, str]:
    """The test's environment without BIGMIND_* settings, with npm's real cache."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BIGMIND_")}
    return env | NPM_CACHE | extra


def run_npx(
    package: str, *args: str, env: dict[str, str], cwd: Path, timeout: float = 240
) -> subprocess.CompletedProcess[str]:
    """Run ``npx package args…``; skip the test if npm cannot fetch the package."""
    try:
        r = subprocess.run(
            [*npx_command(package), *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=cwd,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        pytest.skip(f"npx {package} did not finish in {timeout:.0f} s (fetching it?)")
    fetch_failed = FETCH_FAILED.search(r.stderr)
    if r.returncode != 0 and fetch_failed:
        pytest.skip(f"cannot fetch {package}: {fetch_failed.group(0)}")
    return r
