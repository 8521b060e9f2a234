"""A minimal synchronous MCP client speaking raw JSON-RPC over a stdio pipe.

The benchmarks time requests with this instead of an SDK client so that the
figures are the server's cost plus one pipe round trip, with almost no client
overhead (one ``json.dumps``, one ``readline``, one ``json.loads``). It also knows
the server's pid, which the peak-RSS reading needs.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import tempfile
import time
from collections.abc import Mapping, Sequence
from typing import Any

PROTOCOL_VERSION = "2025-11-25"


class McpError(RuntimeError):
    """The server answered with a JSON-RPC error or a tool error."""


class StdioServer:
    """One MCP server subprocess. Use as a context manager, or call :meth:`close`."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str] | None = None) -> None:
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close()
        self.proc = subprocess.Popen(
            list(argv),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            env=dict(env) if env is not None else None,
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._in = self.proc.stdin
        self._out = self.proc.stdout
        self._next_id = 0

    @property
    def pid(self) -> int:
        return self.proc.pid

    def __enter__(self) -> StdioServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- JSON-RPC ----------------------------------------------------------------------------
    def _send(self, message: dict[str, Any]) -> None:
        self._in.write(json.dumps(message, separators=(",", ":")).encode() + b"\n")
        self._in.flush()

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        self._send({"jsonrpc": "2.0", "method": method, **({"params": params} if params else {})})

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send a request and return its ``result``; notifications in between are skipped."""
        self._next_id += 1
        rid = self._next_id
        self._send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params or {}})
        while True:
            line = self._out.readline()
            if not line:
                raise McpError(f"server closed its stdout during {method}: {self.stderr_tail()}")
            msg = json.loads(line)
            if msg.get("id") != rid or "method" in msg:
                continue  # a notification or a server-to-client request
            if "error" in msg:
                raise McpError(f"{method}: {msg['error']}")
            result: dict[str, Any] = msg["result"]
            return result

    # -- MCP ---------------------------------------------------------------------------------
    def initialize(self) -> dict[str, Any]:
        result = self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "bigmind-bench", "version": "0"},
            },
        )
        self.notify("notifications/initialized")
        return result

    def list_tools(self) -> list[dict[str, Any]]:
        tools: list[dict[str, Any]] = self.request("tools/list")["tools"]
        return tools

    def call_tool(
        self, name: str, arguments: dict[str, Any], *, check: bool = True
    ) -> dict[str, Any]:
        """Call a tool; a result with ``isError`` raises unless ``check`` is false."""
        result = self.request("tools/call", {"name": name, "arguments": arguments})
        if check and result.get("isError"):
            text = " ".join(c.get("text", "") for c in result.get("content", []))
            raise McpError(f"{name} failed: {text}")
        return result

    # -- process -----------------------------------------------------------------------------
    def memory_kb(self) -> dict[str, int]:
        """Memory of the server process in kB, from /proc/<pid>/status.

        VmHWM is the peak resident set; VmRSS the current one, which splits into
        RssAnon (private heap) and RssFile (mapped files: shared libraries, and the
        database pages SQLite reads through mmap, which are reclaimable page cache).
        """
        out: dict[str, int] = {}
        with open(f"/proc/{self.pid}/status") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
                    out[key] = int(value.split()[0])
        return out

    def cpu_seconds(self) -> float:
        """User + system CPU time the server process has used so far (10 ms resolution)."""
        with open(f"/proc/{self.pid}/stat") as fh:
            fields = fh.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def stderr_tail(self, n: int = 2000) -> str:
        self._stderr.seek(0, os.SEEK_END)
        size = self._stderr.tell()
        self._stderr.seek(max(0, size - n))
        return self._stderr.read().decode(errors="replace")

    def close(self, timeout: float = 5.0) -> None:
        """Close stdin (the MCP stdio shutdown signal), then wait, terminate, kill."""
        if self.proc.poll() is None:
            with contextlib.suppress(OSError):
                self._in.close()
            deadline = time.monotonic() + timeout
            while self.proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.01)
            if self.proc.poll() is None:
                self.proc.terminate()
                try:
                    self.proc.wait(timeout)
                except subprocess.TimeoutExpired:
                    self.proc.kill()
                    self.proc.wait()
        self._out.close()
        self._stderr.close()
