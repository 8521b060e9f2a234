"""`bigmind install --server URL --token-env NAME`: remote-server entries for the clients that
take them, the token read from the environment by each client's own syntax, never written."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from cli_run import run_cli
from test_install import HAND_MCP
from test_install import run as bigmind

from bigmind.cli import clients
from bigmind.cli.install import remote_of
from bigmind.errors import InvalidInput

TOKEN = "bm_live_9f8e7d6c5b4a39281706f5e4d3c2b1a0"  # what the variable holds: never in a file
URL = "https://bigmind.example.com/mcp"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "proj").mkdir()
    return tmp_path / "proj"


def run(
    *args: str, token: str | None = TOKEN, var: str = "BIGMIND_TOKEN"
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != var}
    if token is not None:
        env[var] = token
    return run_cli("install", *args, env=env)


def files(*roots: Path) -> dict[str, str]:
    return {
        str(f): f.read_text(encoding="utf-8")
        for root in roots
        if root.exists()
        for f in root.rglob("*")
        if f.is_file() and "backups" not in f.parts
    }


def entry(path: Path, key: str = "mcpServers") -> dict[str, object]:
    found: dict[str, object] = json.loads(path.read_text())[key]["bigmind"]
    return found


def test_each_client_gets_the_url_and_a_reference_to_the_variable_in_its_own_syntax(
    project: Path,
) -> None:
    r = run("--client", "all", "--project", str(project), "--server", URL)
    assert r.returncode == 0, r.stderr
    assert entry(project / ".mcp.json") == {  # Claude Code: ${VAR}
        "type": "http",
        "url": URL,
        "headers": {"Authorization": "Bearer ${BIGMIND_TOKEN}"},
    }
    assert entry(project / ".vscode" / "mcp.json", "servers") == {  # VS Code: ${env:VAR}
        "type": "http",
        "url": URL,
        "headers": {"Authorization": "Bearer ${env:BIGMIND_TOKEN}"},
    }
    assert entry(project / ".cursor" / "mcp.json") == {  # Cursor: ${env:NAME}, no type
        "url": URL,
        "headers": {"Authorization": "Bearer ${env:BIGMIND_TOKEN}"},
    }
    assert "memory_start_session" in (project / "CLAUDE.md").read_text()  # the same tools
    assert not (project / clients.LOCAL_SETTINGS).exists()  # no hooks: they read a local db
    assert "claude-desktop" not in r.stdout and "jetbrains" not in r.stdout
    assert "warning" not in r.stderr
    written = files(project, Path(os.environ["HOME"]))
    assert written and not any(TOKEN in text for text in written.values())


def test_user_level_with_another_variable_warns_when_it_is_unset(project: Path) -> None:
    home = Path(os.environ["HOME"])
    r = run(
        "--client",
        "claude-code",
        "--client",
        "cursor",
        "--server",
        "https://bigmind.example.com",  # no path: the gateway's /mcp
        "--token-env",
        "ACME_BIGMIND",
        token=None,
        var="ACME_BIGMIND",
    )
    assert r.returncode == 0, r.stderr
    assert "warning: ACME_BIGMIND is not set" in r.stderr
    claude = entry(home / ".claude.json")
    assert claude["url"] == URL
    assert claude["headers"] == {"Authorization": "Bearer ${ACME_BIGMIND}"}
    assert entry(home / ".cursor" / "mcp.json")["headers"] == {
        "Authorization": "Bearer ${env:ACME_BIGMIND}"
    }
    assert not (home / ".claude" / "settings.json").exists()  # no hooks
    assert "Connects to https://bigmind.example.com/mcp" in r.stdout


def test_switching_between_local_and_remote_leaves_one_valid_entry_and_uninstall_restores(
    project: Path,
) -> None:
    cfg = project / ".mcp.json"
    cfg.write_text(HAND_MCP)
    assert run("--client", "claude-code", "--project", str(project)).returncode == 0
    assert entry(cfg)["command"] == "bigmind"
    assert (
        run("--client", "claude-code", "--project", str(project), "--server", URL).returncode == 0
    )
    assert set(entry(cfg)) == {"type", "url", "headers"}
    assert json.loads(cfg.read_text())["mcpServers"]["other"]["command"] == "npx"
    states = {f"{f.client}:{f.path.name}": f.state for f in clients.installed_files(project)}
    assert states["claude-code:.mcp.json"] == "installed"  # doctor: not "outdated"
    assert run("--client", "claude-code", "--project", str(project)).returncode == 0
    assert set(entry(cfg)) == {"type", "command", "args"}
    done = bigmind("uninstall", "--client", "claude-code", "--project", str(project))
    assert done.returncode == 0, done.stderr
    assert cfg.read_text() == HAND_MCP


def test_a_client_without_remote_servers_is_refused_naming_those_with(project: Path) -> None:
    for client in ("claude-desktop", "jetbrains"):
        r = run("--client", client, "--project", str(project), "--server", URL)
        assert r.returncode == 2
        (line,) = r.stderr.strip().splitlines()
        assert client in line and "claude-code, copilot, cursor" in line
    assert not any(project.iterdir())


def test_bad_combinations_are_one_line_errors(project: Path) -> None:
    r = run("--client", "cursor", "--project", str(project), "--token-env", "X")
    assert r.returncode == 2 and "--token-env goes with --server" in r.stderr
    r = run("--client", "cursor", "--project", str(project), "--server", URL, "--tools", "compact")
    assert r.returncode == 2 and "BIGMIND_TOOLS" in r.stderr
    assert not any(project.iterdir())


@pytest.mark.parametrize(
    ("server", "expected"),
    [
        ("https://bigmind.example.com/mcp", URL),
        ("https://bigmind.example.com", URL),
        ("https://bigmind.example.com/", URL),
        ("HTTPS://bigmind.example.com:8443/team/mcp", "https://bigmind.example.com:8443/team/mcp"),
        ("http://127.0.0.1:8700", "http://127.0.0.1:8700/mcp"),
        ("http://localhost:8700/mcp", "http://localhost:8700/mcp"),
        ("http://[::1]:8700/mcp", "http://[::1]:8700/mcp"),
    ],
)
def test_accepted_servers(server: str, expected: str) -> None:
    assert remote_of(server, None) == clients.Remote(expected, "BIGMIND_TOKEN")


@pytest.mark.parametrize(
    ("server", "why"),
    [
        ("http://bigmind.example.com/mcp", "use https://"),
        ("ftp://bigmind.example.com/mcp", "https://host/mcp"),
        ("bigmind.example.com", "https://host/mcp"),
        ("https://alice:pw@bigmind.example.com/mcp", "no credentials"),
        ("https://bigmind.example.com/mcp?token=abc", "no credentials, query"),
        ("https://bigmind.example.com:99999/mcp", "not a URL"),
    ],
)
def test_refused_servers(server: str, why: str) -> None:
    with pytest.raises(InvalidInput, match=why.replace("?", r"\?")):
        remote_of(server, None)


@pytest.mark.parametrize("name", ["bm_live_9f8e.7d6c", "1TOKEN", "MY-TOKEN", "", "A" * 101])
def test_the_token_variable_must_be_a_variable_name(name: str) -> None:
    with pytest.raises(InvalidInput, match="never the token"):
        remote_of(URL, name)
