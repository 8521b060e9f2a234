"""install_proc.sh on a fresh machine (a temp HOME and project): it installs BigMind into a new
virtual environment, wires every client, leaves configs that start a working server, changes
nothing on a second run, and `bigmind uninstall` leaves the project as it was."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import sys
from pathlib import Path

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = Path(__file__).resolve().parent.parent
pytestmark = [
    pytest.mark.skipif(
        os.name == "nt" or shutil.which("bash") is None, reason="install_proc.sh needs bash"
    ),
    pytest.mark.e2e,
    pytest.mark.slow,
]


def _env(home: Path) -> dict[str, str]:
    """A clean environment with a temp HOME that still reaches the package index: the real
    user's pip cache and pip config (an index mirror may be configured there)."""
    real_home = Path(pwd.getpwuid(os.getuid()).pw_dir)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BIGMIND_", "VIRTUAL_ENV"))}
    env.update(HOME=str(home), PYTHON=sys.executable, XDG_CONFIG_HOME=str(home / ".config"))
    env.setdefault("PIP_CACHE_DIR", str(real_home / ".cache" / "pip"))
    for conf in (real_home / ".config" / "pip" / "pip.conf", real_home / ".pip" / "pip.conf"):
        if conf.is_file() and "PIP_CONFIG_FILE" not in env:
            env["PIP_CONFIG_FILE"] = str(conf)
    return env


def _snapshot(*roots: Path) -> dict[str, bytes]:
    return {
        str(f): f.read_bytes() for r in roots if r.exists() for f in r.rglob("*") if f.is_file()
    }


async def _serve_from(config: Path, env: dict[str, str]) -> list[str]:
    entry = json.loads(config.read_text())["mcpServers"]["bigmind"]
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=env)
    with open(os.devnull, "w") as err:
        async with stdio_client(params, errlog=err) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = [t.name for t in (await session.list_tools()).tools]
                r = await session.call_tool("memory_start_session", {"ide_hint": "test"})
                assert r.content[0].text.startswith("🧠 BigMind Session: `")
                return tools


@pytest.mark.timeout(300)  # a venv and a pip install of BigMind: ~45 s idle, minutes under load
def test_install_proc_on_a_fresh_machine(tmp_path: Path) -> None:
    home, project, venv = tmp_path / "home", tmp_path / "proj", tmp_path / "home" / "venv"
    home.mkdir(exist_ok=True)
    project.mkdir()
    (project / "CLAUDE.md").write_text("# Mine\n")
    env = _env(home)
    command = ["bash", str(ROOT / "install_proc.sh"), "--client", "all", "--project", str(project)]
    command += ["--venv", str(venv)]

    first = subprocess.run(
        command, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=900
    )
    assert first.returncode == 0, first.stdout + first.stderr
    exe = venv / "bin" / "bigmind"
    assert exe.is_file() and "bigmind " in first.stdout
    desktop = home / ".config" / "Claude" / "claude_desktop_config.json"
    for cfg in (project / ".mcp.json", project / ".cursor" / "mcp.json", desktop):
        assert json.loads(cfg.read_text())["mcpServers"]["bigmind"]["command"] == str(exe)
    assert "Settings | Tools | AI Assistant" in first.stdout  # jetbrains: where to paste
    assert "✓" in first.stdout  # bigmind doctor ran
    configs = _snapshot(project, desktop.parent)

    second = subprocess.run(
        command, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=900
    )
    assert second.returncode == 0, second.stdout + second.stderr
    assert _snapshot(project, desktop.parent) == configs
    lines = [
        ln for ln in second.stdout.splitlines() if ln.startswith(("copilot ", "cursor ", "claude-"))
    ]
    assert len(lines) == 8 and all(" unchanged " in ln for ln in lines), second.stdout

    db_env = env | {"BIGMIND_DB_PATH": str(tmp_path / "m.db"), "BIGMIND_EMBED_MODEL": "off"}
    tools = anyio.run(_serve_from, project / ".mcp.json", db_env)
    assert "memory_start_session" in tools and "memory_recall" in tools

    r = subprocess.run(
        [str(exe), "uninstall", "--client", "all", "--project", str(project)],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    assert _snapshot(project) == {str(project / "CLAUDE.md"): b"# Mine\n"}
    assert not desktop.exists()
