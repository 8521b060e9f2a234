"""Serve the profile page: in a background thread of ``bigmind serve``, or alone (``bigmind web``).

Port policy: BIGMIND_PORT first. If another BigMind process already serves the same user's
memory there (a second IDE window), its page is reused; if something else holds the port, the
next free one (up to 20 further) is taken and the log says which. Nothing here may disturb the
MCP server: failures are logged to stderr and reported by the profile tools, never raised into
the stdio loop.
"""

from __future__ import annotations

import errno
import json
import logging
import os
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeGuard

from bigmind.errors import BackendUnavailable

if TYPE_CHECKING:
    import uvicorn

    from bigmind.config import Settings
    from bigmind.runtime import Runtime

log = logging.getLogger(__name__)
IDENTITY_PATH = "/api/identity"
PORT_TRIES = 20
START_TIMEOUT_S = 10.0
PROBE_TIMEOUT_S = 1.5
OPENED_MARKER = ".profile-opened"


def url_for(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    if host in ("0.0.0.0", "::"):
        shown = "127.0.0.1"
    return f"http://{shown}:{port}/"


def probe(url: str) -> dict[str, Any] | None:
    """The identity of the BigMind page at ``url``, or None if nothing (or not BigMind) answers."""
    try:
        with urllib.request.urlopen(url.rstrip("/") + IDENTITY_PATH, timeout=PROBE_TIMEOUT_S) as r:
            data = json.loads(r.read(10_000))
    except (OSError, ValueError):  # refused, timed out, not HTTP, not JSON
        return None
    return data if isinstance(data, dict) and data.get("app") == "bigmind" else None


def serves_this_memory(
    other: dict[str, Any] | None, settings: Settings
) -> TypeGuard[dict[str, Any]]:
    """Is ``other`` (a probed identity) the page of this user's memory in this database?"""
    return (
        other is not None
        and other.get("user") == settings.user
        and other.get("database") == settings.database
    )


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        if sys.platform == "win32":  # never share a port with another listener
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_EXCLUSIVEADDRUSE, 1)
        elif sys.platform.startswith("linux"):
            # Linux still refuses a port another socket listens on; this only lets a restarted
            # page rebind over TIME_WAIT connections. (BSD and macOS would share the port.)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)  # a second window probing now waits for our answer, not a refusal
    except OSError:
        sock.close()
        raise
    return sock


@dataclass
class Claim:
    """The outcome of looking for a port: a bound socket of ours, or another process's page."""

    url: str
    sock: socket.socket | None = None
    reused_pid: int | None = None
    note: str = ""


def claim_port(rt: Runtime, port: int | None = None) -> Claim:
    """Bind BIGMIND_PORT (or ``port``), reuse this memory's page there, or take the next free."""
    host = rt.settings.web_host
    first = port or rt.settings.port
    taken: list[tuple[int, str]] = []  # (port, who holds it)
    for p in range(first, min(first + PORT_TRIES + 1, 65536)):
        try:
            sock = _bind(host, p)
        except OSError as exc:
            if exc.errno not in (errno.EADDRINUSE, errno.EACCES):
                raise BackendUnavailable(
                    f"Cannot serve the profile page on {host}:{p}: {exc.strerror}. "
                    "Check BIGMIND_WEB_HOST."
                ) from exc
        else:
            note = f"port {first} is taken by {taken[0][1]}; serving on {p}" if taken else ""
            return Claim(url_for(host, p), sock, note=note)
        other = probe(url_for(host, p))
        if serves_this_memory(other, rt.settings):
            return Claim(url_for(host, p), reused_pid=int(other.get("pid") or 0))
        taken.append((p, f"BigMind for {other.get('user')}" if other else "another program"))
    held = ", ".join(f"{p} ({who})" for p, who in taken[:3])
    raise BackendUnavailable(
        f"Ports {first}–{first + PORT_TRIES} are all taken ({held}…). "
        "Set BIGMIND_PORT to a free port."
    )


def port_status(settings: Settings) -> tuple[bool, str]:
    """For `bigmind doctor`: (fine, what a server starting now would find on BIGMIND_PORT)."""
    if not settings.web:
        return True, "off (BIGMIND_WEB=0); `bigmind web` serves it on demand"
    url = url_for(settings.web_host, settings.port)
    other = probe(url)
    if other is not None:
        if serves_this_memory(other, settings):
            return True, f"served at {url} (pid {other.get('pid')})"
        return False, (
            f"port {settings.port} serves BigMind for {other.get('user')} "
            f"({other.get('database')}): this memory's page takes the next free port"
        )
    try:
        _bind(settings.web_host, settings.port).close()
    except OSError as exc:
        return False, (
            f"{settings.web_host}:{settings.port} unavailable ({exc.strerror}): the page takes "
            "the next free port; set BIGMIND_PORT to choose one"
        )
    return True, f"{url} is free; `bigmind serve` or `bigmind web` serves the page there"


class ProfileServer:
    """The profile page of one Runtime: started at most once, reused while it answers."""

    def __init__(self, rt: Runtime) -> None:
        self.rt = rt
        self._lock = threading.Lock()
        self._url: str | None = None
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None
        self.reused_pid: int | None = None
        self.note = ""

    @property
    def running(self) -> bool:
        return self._server is not None and self._server.started

    def url(self) -> str:
        """The page's URL, starting it (or taking over from a closed window) when needed."""
        with self._lock:
            if self._url and (self._server is not None or probe(self._url)):
                return self._url
            self._start()
            assert self._url is not None
            return self._url

    def _start(self) -> None:
        claim = claim_port(self.rt)
        self._url, self.note = claim.url, claim.note
        if claim.sock is None:
            self.reused_pid = claim.reused_pid
            log.info("profile page: reusing %s (BigMind pid %s)", claim.url, claim.reused_pid)
            return
        self.reused_pid = None
        self._server = uvicorn_server(self.rt)
        self._thread = threading.Thread(
            target=self._server.run,
            kwargs={"sockets": [claim.sock]},
            daemon=True,
            name="bigmind-web",
        )
        self._thread.start()
        deadline = time.monotonic() + START_TIMEOUT_S
        while not self._server.started and self._thread.is_alive():
            if time.monotonic() > deadline:
                break
            time.sleep(0.01)
        if not self._server.started:
            self._server, self._url = None, None
            claim.sock.close()
            raise BackendUnavailable("The profile page did not start; see the log on stderr.")
        if self.note:
            log.warning("profile page: %s", self.note)
        log.info("profile page: %s", claim.url)

    def stop(self) -> None:
        with self._lock:
            if self._server is not None:
                self._server.should_exit = True
            if self._thread is not None:
                self._thread.join(timeout=5)
            self._server = self._thread = None
            self._url = None


def uvicorn_server(rt: Runtime) -> uvicorn.Server:
    import uvicorn

    from bigmind.web.deadlines import uvicorn_options
    from bigmind.web.profile_app import create_app

    config = uvicorn.Config(
        create_app(rt),
        log_config=None,  # never uvicorn's stdout handlers: stdout is the JSON-RPC channel
        access_log=False,
        lifespan="off",
        log_level="warning",
        timeout_graceful_shutdown=1,
        **uvicorn_options(rt.settings),  # slow clients' deadlines (web/deadlines.py)
    )
    return uvicorn.Server(config)


def profile_server(rt: Runtime) -> ProfileServer:
    """The runtime's profile page (one per runtime; started on first use of its URL)."""
    return rt.attached("profile-page", ProfileServer)


def start_in_background(rt: Runtime) -> None:
    """``bigmind serve``: start the page in a thread; any failure is only logged."""
    try:
        url = profile_server(rt).url()
    except BackendUnavailable as exc:
        log.warning("profile page not started: %s", exc)
        return
    if rt.settings.autoopen and profile_server(rt).reused_pid is None and _first_open(rt):
        open_browser(url)


def _first_open(rt: Runtime) -> bool:
    """BIGMIND_AUTOOPEN opens the page on the first start only, not with every IDE window."""
    marker = rt.settings.data_dir / OPENED_MARKER
    if marker.exists():
        return False
    try:
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.write_text(time.strftime("%Y-%m-%d %H:%M:%S\n"), encoding="utf-8")
    except OSError as exc:
        log.warning("profile page: cannot write %s: %s", marker, exc)
    return True


def browser_command() -> list[str] | None:
    """How to open a URL on this machine's desktop, or None when there is no desktop.

    Console browsers (lynx, w3m) are never used: in stdio mode they would write into the
    JSON-RPC stream. The launched program's output goes to /dev/null for the same reason.
    """
    if sys.platform == "darwin":
        return ["open"]
    if sys.platform == "win32":
        return ["cmd", "/c", "start", ""]
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        return None
    for name in ("xdg-open", "gio", "sensible-browser"):
        path = shutil.which(name)
        if path:
            return [path, "open"] if name == "gio" else [path]
    return None


def open_browser(url: str) -> bool:
    """Open ``url`` in the desktop's browser; False on a headless machine or when it fails."""
    cmd = browser_command()
    if cmd is None:
        return False
    try:
        proc = subprocess.Popen(
            [*cmd, url],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError as exc:
        log.warning("could not open a browser: %s", exc)
        return False
    # Reaped when it exits: no zombie, no "subprocess is still running" ResourceWarning.
    threading.Thread(target=proc.wait, name="bigmind-browser-reaper", daemon=True).start()
    return True


HEADLESS = (
    "No desktop browser here (no DISPLAY or WAYLAND_DISPLAY, or no xdg-open): open {url} "
    "yourself, or in your IDE's built-in browser."
)
