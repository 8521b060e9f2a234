"""One ``bigmind serve`` over stdio on a memory of its own, for benchmarks that load data through
BigMind's MCP tools and ask it questions (``judgement.py``).

A memory lives in one folder::

    DIR/project/    an empty git repository whose ``origin`` is the project's URL (project scope)
    DIR/memory.db   BIGMIND_DB_PATH
    DIR/home/       a throw-away HOME (and BIGMIND_HOME: nothing is fetched, the model is a folder)

:func:`MemServer.fresh` makes the folder and starts the server in it; :func:`MemServer.reopen`
starts a new server on a folder made before (the same memory, the code of this checkout: ask
again after a ranking change without loading again). :meth:`MemServer.settle` waits until the
background embedder and the background fact check have caught up with every write.
"""

from __future__ import annotations

import os
import platform
import shutil
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from mcpwire import McpError, StdioServer

ROOT = Path(__file__).resolve().parent.parent

BIGMIND = Path(sys.executable).parent / "bigmind"
USER = "bench"


class MemServer:
    """A started, initialised ``bigmind serve`` on ``folder``'s memory."""

    def __init__(
        self, folder: Path, model: Path | None, env: Mapping[str, str] | None = None
    ) -> None:
        self.folder = folder
        self.db = folder / "memory.db"
        home = folder / "home"
        home.mkdir(parents=True, exist_ok=True)
        base = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith("BIGMIND_") and k not in ("HOME", "PWD")
        }
        base |= {
            "HOME": str(home),
            "BIGMIND_HOME": str(home / "bigmind"),
            "BIGMIND_DB_PATH": str(self.db),
            "BIGMIND_USER": USER,
            "BIGMIND_EMBED_MODEL": str(model) if model else "off",
            "BIGMIND_WEB": "0",
            "BIGMIND_OFFLINE": "1",
            "HF_HUB_OFFLINE": "1",
        }
        base |= dict(env or {})
        self.env = base
        self.server = _start([str(BIGMIND), "serve"], base, folder / "project")
        self.server.initialize()
        self.tools = {t["name"]: t for t in self.server.list_tools()}

    # -- making and reopening ------------------------------------------------------------
    @classmethod
    def fresh(
        cls,
        folder: Path,
        repo_url: str | None,
        model: Path | None,
        env: Mapping[str, str] | None = None,
    ) -> MemServer:
        """An empty memory in ``folder`` (emptied first), its project ``repo_url``."""
        if folder.exists():
            shutil.rmtree(folder)
        project = folder / "project"
        project.mkdir(parents=True)
        subprocess.run(["git", "init", "-q", str(project)], check=True)
        if repo_url:
            subprocess.run(
                ["git", "-C", str(project), "remote", "add", "origin", repo_url], check=True
            )
        return cls(folder, model, env)

    @classmethod
    def reopen(
        cls, folder: Path, model: Path | None, env: Mapping[str, str] | None = None
    ) -> MemServer:
        if not (folder / "memory.db").is_file() or not (folder / "project").is_dir():
            raise SystemExit(f"{folder} holds no memory made by MemServer.fresh")
        return cls(folder, model, env)

    # -- calls ---------------------------------------------------------------------------
    def call(self, tool: str, **arguments: Any) -> dict[str, Any]:
        """A tool's structured result (an error raises ``McpError``)."""
        res = self.server.call_tool(tool, arguments)
        data = res.get("structuredContent")
        if data is None:  # a tool with no structured content: its text
            text = " ".join(c.get("text", "") for c in res.get("content", []))
            return {"text": text}
        out: dict[str, Any] = data
        return out

    def has_argument(self, tool: str, name: str) -> bool:
        schema = self.tools.get(tool, {}).get("inputSchema", {})
        return name in schema.get("properties", {})

    def settle(self, timeout: float = 1800.0, poll: float = 0.5) -> dict[str, Any]:
        """Wait until every memory is embedded (``memory_get_stats``: semantic ``ready`` with
        nothing waiting) and every fact has been through the background check (none with
        ``checked_at`` NULL), twice in a row; returns the last stats. A semantic index that is
        off, unavailable or in error is not waited for (nor the check, which needs it)."""
        deadline = time.monotonic() + timeout
        calm = 0
        while True:
            stats = self.call("memory_get_stats")
            sem = stats.get("semantic", {})
            state = sem.get("state")
            if state in ("off", "unavailable", "error", "stale-model"):
                return stats
            done = state == "ready" and sem.get("waiting", 1) == 0 and self.unchecked() == 0
            calm = calm + 1 if done else 0
            if calm >= 2:
                return stats
            if time.monotonic() > deadline:
                raise McpError(f"not settled after {timeout:.0f} s: {sem}, {self.unchecked()}")
            time.sleep(poll)

    # -- the database file (read only) ----------------------------------------------------
    def _query(self, sql: str) -> list[tuple[Any, ...]]:
        if not self.db.is_file():
            return []
        con = sqlite3.connect(f"file:{self.db}?mode=ro", uri=True, timeout=30)
        try:
            return con.execute(sql).fetchall()
        finally:
            con.close()

    def unchecked(self) -> int:
        """Facts the background check has not seen yet."""
        rows = self._query("SELECT count(*) FROM facts WHERE checked_at IS NULL")
        return int(rows[0][0]) if rows else 0

    def deprecated(self) -> dict[str, Any]:
        """How many facts are deprecated, by the first words of their reason, with examples."""
        rows = self._query(
            "SELECT id, deprecation_reason, fact FROM facts WHERE deprecated = 1 ORDER BY id"
        )
        total = self._query("SELECT count(*) FROM facts")
        kinds: Counter[str] = Counter()
        for _id, reason, _text in rows:
            kinds[" ".join(str(reason or "none").split()[:2]).rstrip("#").strip()] += 1
        return {
            "facts": int(total[0][0]) if total else 0,
            "deprecated": len(rows),
            "by_reason": dict(kinds.most_common()),
            "rows": [{"id": i, "reason": r, "fact": t} for i, r, t in rows],
        }

    def close(self) -> None:
        self.server.close(timeout=30.0)

    def __enter__(self) -> MemServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _start(argv: list[str], env: Mapping[str, str], cwd: Path) -> StdioServer:
    """``StdioServer`` started in ``cwd`` (the project folder: no MCP roots, so the server's
    working directory names the project)."""
    here = Path.cwd()
    os.chdir(cwd)
    try:
        return StdioServer(argv, env)
    finally:
        os.chdir(here)


def environment() -> dict[str, Any]:
    """Where and when a run ran: time, commit (and whether bigmind/ or bench/ had changes),
    machine, load."""

    def git(*a: str) -> str:
        r = subprocess.run(["git", "-C", str(ROOT), *a], capture_output=True, text=True)
        return r.stdout.strip()

    return {
        "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "commit": git("rev-parse", "HEAD"),
        "dirty": bool(git("status", "--porcelain", "--", "bigmind", "bench")),
        "machine": f"{platform.machine()}, {os.cpu_count()} cpu, Python {platform.python_version()}",
        "load_average": os.getloadavg(),
    }
