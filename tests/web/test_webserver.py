"""Serving the profile page: ports, reuse, `bigmind web`, `bigmind serve`'s thread, browsers."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from cli_run import run_cli
from conftest import free_port
from fastmcp import Client
from mcp_calls import BIGMIND, call, send, spawn_serve

from bigmind.config import Settings
from bigmind.runtime import Runtime
from bigmind.web.profile_server import probe, profile_server, start_in_background


def get(url: str) -> tuple[int, str]:
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.status, r.read().decode()


def port_of(url: str) -> int:
    return int(url.rstrip("/").rsplit(":", 1)[1])


@pytest.fixture
def rt_for(settings_for: Callable[[str], Settings]) -> Iterator[Callable[..., Runtime]]:
    made: list[Runtime] = []

    def make(user: str = "alice", **changes: Any) -> Runtime:
        rt = Runtime(settings_for(user).model_copy(update=changes))
        made.append(rt)
        return rt

    yield make
    for rt in made:
        rt.close()


def test_page_starts_answers_and_stops(rt_for: Callable[..., Runtime]) -> None:
    port = free_port()
    rt = rt_for(port=port)
    url = profile_server(rt).url()
    assert url == f"http://127.0.0.1:{port}/" and profile_server(rt).running
    status, html = get(url)
    assert status == 200 and "Memory by tier" in html
    who = probe(url)
    assert who is not None and who["user"] == "alice" and who["pid"] == os.getpid()
    rt.close()
    assert probe(url) is None


def test_a_second_window_reuses_the_page_and_takes_over_when_it_closes(
    rt_for: Callable[..., Runtime],
) -> None:
    port = free_port()
    first, second = rt_for(port=port), rt_for(port=port)
    url = profile_server(first).url()
    assert profile_server(second).url() == url
    assert profile_server(second).reused_pid == os.getpid() and not profile_server(second).running
    first.close()
    assert (
        profile_server(second).url() == url and profile_server(second).running
    )  # the port was free again
    assert get(url)[0] == 200


class _Other(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(404)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


def test_a_port_held_by_another_program_moves_to_the_next(
    rt_for: Callable[..., Runtime],
) -> None:
    port = free_port()
    other = ThreadingHTTPServer(("127.0.0.1", port), _Other)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    try:
        rt = rt_for(port=port)
        url = profile_server(rt).url()
        assert port_of(url) > port and profile_server(rt).running
        assert f"port {port} is taken by another program" in profile_server(rt).note
        assert get(url)[0] == 200
    finally:
        other.shutdown()
        other.server_close()


def test_another_users_page_is_not_reused(rt_for: Callable[..., Runtime]) -> None:
    port = free_port()
    bob = rt_for("bob", port=port)
    alice = rt_for("alice", port=port)
    assert port_of(profile_server(bob).url()) == port
    url = profile_server(alice).url()
    assert port_of(url) > port and "BigMind for bob" in profile_server(alice).note
    assert json.loads(get(url + "api/identity")[1])["user"] == "alice"


@pytest.mark.e2e
def test_bigmind_web_serves_until_interrupted_and_a_second_one_points_to_it(
    tmp_path: Path,
) -> None:
    port = free_port()
    env = {**os.environ, "BIGMIND_DB_PATH": str(tmp_path / "m.db")}
    proc = subprocess.Popen(
        [str(BIGMIND), "web", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout
        line = proc.stdout.readline()
        assert line.startswith(f"BigMind profile page for alice: http://127.0.0.1:{port}/"), line
        assert get(f"http://127.0.0.1:{port}/facts")[0] == 200
        again = subprocess.run(
            [str(BIGMIND), "web", "--port", str(port)],
            capture_output=True,
            text=True,
            env=env,
            timeout=60,
        )
        assert again.returncode == 0
        assert f"already served at http://127.0.0.1:{port}/" in again.stdout
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    assert proc.returncode == 130  # Ctrl-C's conventional status, without a traceback
    assert "Traceback" not in err
    assert probe(f"http://127.0.0.1:{port}/") is None


def test_bigmind_web_rejects_a_bad_port(tmp_path: Path) -> None:
    r = run_cli("web", "--port", "70000")
    assert r.returncode == 2 and "--port must be 1–65535" in r.stderr


def _replies(proc: subprocess.Popen[str], ids: set[int]) -> dict[int, dict[str, Any]]:
    assert proc.stdout
    got: dict[int, dict[str, Any]] = {}
    while set(got) < ids:
        line = proc.stdout.readline()
        assert line, "server closed stdout"
        msg = json.loads(line)  # stdout carries JSON-RPC only, web thread or not
        if "id" in msg:
            got[msg["id"]] = msg
    return got


@pytest.mark.e2e
def test_serve_runs_the_page_beside_stdio(tmp_path: Path) -> None:
    port = free_port()
    with spawn_serve(tmp_path / "m.db", BIGMIND_PORT=str(port), BIGMIND_LOG_LEVEL="DEBUG") as proc:
        try:
            deadline = time.monotonic() + 30
            while probe(f"http://127.0.0.1:{port}/") is None:  # started without any tool call
                assert time.monotonic() < deadline, "the page never came up"
                time.sleep(0.1)
            send(proc, ("memory_get_profile_url", {}), ("memory_get_context", {}))
            got = _replies(proc, {1, 2, 3})
            assert got[2]["result"]["structuredContent"]["url"] == f"http://127.0.0.1:{port}/"
            assert "BigMind Context" in got[3]["result"]["content"][0]["text"]
        finally:
            assert proc.stdin
            proc.stdin.close()
            proc.wait(timeout=30)


@pytest.mark.e2e
def test_serve_with_web_off_starts_no_page(tmp_path: Path) -> None:
    port = free_port()
    with spawn_serve(tmp_path / "m.db", BIGMIND_PORT=str(port), BIGMIND_WEB="0") as proc:
        try:
            send(proc, ("memory_get_profile_url", {}))
            got = _replies(proc, {1, 2})
            assert got[2]["result"]["isError"]
            assert "BIGMIND_WEB=0" in got[2]["result"]["content"][0]["text"]
            assert probe(f"http://127.0.0.1:{port}/") is None
        finally:
            assert proc.stdin
            proc.stdin.close()
            proc.wait(timeout=30)


def fake_browser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A desktop whose xdg-open records the URLs it is asked to open."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    log = tmp_path / "opened.txt"
    script = bindir / "xdg-open"
    script.write_text(f'#!/bin/sh\necho "$1" >> "{log}"\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("DISPLAY", ":99")
    return log


def wait_lines(path: Path, n: int) -> list[str]:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if path.exists() and len(lines := path.read_text().split()) >= n:
            return lines
        time.sleep(0.05)
    return path.read_text().split() if path.exists() else []


@pytest.mark.anyio
async def test_open_profile_on_a_headless_machine_says_so(
    client: Client,
    monkeypatch: pytest.MonkeyPatch,  # type: ignore[type-arg]
) -> None:
    monkeypatch.delenv("DISPLAY", raising=False)
    monkeypatch.delenv("WAYLAND_DISPLAY", raising=False)
    text, data = await call(client, "memory_open_profile")
    assert data["opened"] is False and "No desktop browser here" in text
    assert data["url"] in text and get(data["url"])[0] == 200
    text, data2 = await call(client, "memory_get_profile_url")
    assert data2["url"] == data["url"] and text == f"BigMind profile page: {data['url']}"


@pytest.mark.anyio
async def test_open_profile_opens_the_desktop_browser(
    client: Client,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,  # type: ignore[type-arg]
) -> None:
    log = fake_browser(tmp_path, monkeypatch)
    text, data = await call(client, "memory_open_profile")
    assert data["opened"] is True and text == f"Opened {data['url']} in the browser."
    assert wait_lines(log, 1) == [data["url"]]


def test_autoopen_opens_on_the_first_start_only(
    rt_for: Callable[..., Runtime], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = fake_browser(tmp_path, monkeypatch)
    first = rt_for(autoopen=True, port=free_port())
    start_in_background(first)
    assert wait_lines(log, 1) == [profile_server(first).url()]
    first.close()
    again = rt_for(autoopen=True, port=free_port())
    start_in_background(again)
    assert profile_server(again).running
    time.sleep(0.5)
    assert len(wait_lines(log, 1)) == 1  # not again with every IDE window
