"""install_proc.sh on a fresh machine (a temporary HOME), run from a clone of BigMind as the
README says: it installs BigMind into a new virtual environment, configures every client at user
level without touching the clone, links `bigmind` into ~/.local/bin for the project files (which
start it from PATH), changes nothing on a second run, and uninstall gives every file back."""

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

ROOT = Path(__file__).resolve().parents[2]
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
    # Without PYTHONPATH: the new venv runs the BigMind it installed, not this checkout's.
    skip = ("BIGMIND_", "VIRTUAL_ENV", "PYTHONPATH")
    env = {k: v for k, v in os.environ.items() if not k.startswith(skip)}
    env.update(HOME=str(home), PYTHON=sys.executable, XDG_CONFIG_HOME=str(home / ".config"))
    env.setdefault("PIP_NO_COMPILE", "1")
    env.setdefault("PIP_CACHE_DIR", str(real_home / ".cache" / "pip"))
    for conf in (real_home / ".config" / "pip" / "pip.conf", real_home / ".pip" / "pip.conf"):
        if conf.is_file() and "PIP_CONFIG_FILE" not in env:
            env["PIP_CONFIG_FILE"] = str(conf)
    return env


def _snapshot(*roots: Path) -> dict[str, bytes]:
    """Every file under these folders (or these files), with its bytes."""
    files = [f for r in roots if r.is_dir() for f in r.rglob("*")] + [r for r in roots]
    return {str(f): f.read_bytes() for f in files if f.is_file()}


def _clone(tmp_path: Path) -> Path:
    """The part of a BigMind clone that pip and install_proc.sh use."""
    clone = tmp_path / "BigMind"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "bigmind", clone / "bigmind", ignore=ignore)
    for name in ("pyproject.toml", "README.md", "install_proc.sh"):
        shutil.copy(ROOT / name, clone / name)
    return clone


async def _serve_from(config: Path, key: str, env: dict[str, str]) -> list[str]:
    entry = json.loads(config.read_text())[key]["bigmind"]
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=env)
    with open(os.devnull, "w") as err:
        async with stdio_client(params, errlog=err) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                tools = [t.name for t in (await session.list_tools()).tools]
                r = await session.call_tool("memory_start_session", {"ide_hint": "test"})
                assert r.content[0].text.startswith("🧠 BigMind Session: `")
                return tools


def _run(command: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=900,
    )


def test_install_proc_refuses_bigmind_s_own_folder_before_installing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    clone = _clone(tmp_path)
    before = _snapshot(clone)
    script = ["bash", str(clone / "install_proc.sh"), "--client", "all"]
    for project, cwd in ((str(clone), tmp_path), (".", clone / "bigmind")):
        r = _run([*script, "--project", project], _env(home), cwd)
        assert r.returncode == 2, r.stdout + r.stderr
        assert "is BigMind's own folder, not a project to wire: pass --project" in r.stderr
    assert _snapshot(clone) == before and not any(home.iterdir())  # no venv, no config


@pytest.mark.timeout(420)  # a venv and a pip install of BigMind: ~45 s idle, minutes under load
def test_install_proc_from_a_clone_configures_the_user_and_leaves_the_clone_alone(
    tmp_path: Path,
) -> None:
    home, project, venv = tmp_path / "home", tmp_path / "proj", tmp_path / "home" / "venv"
    home.mkdir()
    project.mkdir()
    (project / "CLAUDE.md").write_text("# Mine\n")
    clone = _clone(tmp_path)
    tree = _snapshot(clone)
    env = _env(home)
    command = ["bash", str(clone / "install_proc.sh"), "--client", "all", "--venv", str(venv)]

    first = _run(command, env, clone)  # from the clone, without --project, as the README says
    assert first.returncode == 0, first.stdout + first.stderr
    exe = venv / "bin" / "bigmind"
    assert exe.is_file() and "bigmind " in first.stdout
    assert _snapshot(clone) == tree  # no CLAUDE.md, .mcp.json or .claude/ in the clone
    user_configs = {
        home / ".claude.json": "mcpServers",
        home / ".cursor" / "mcp.json": "mcpServers",
        home / ".config" / "Code" / "User" / "mcp.json": "servers",
    }
    for cfg, key in user_configs.items():
        assert json.loads(cfg.read_text())[key]["bigmind"]["command"] == str(exe)
    assert not list(home.rglob("claude_desktop_config.json"))  # Linux: no Claude Desktop
    assert (home / ".local" / "bin" / "bigmind").resolve() == exe.resolve()
    assert f"{home}/.local/bin is not on your PATH" in first.stderr
    assert "bigmind install --client NAME --project PATH" in first.stdout
    assert "Settings | Tools | AI Assistant" in first.stdout  # jetbrains: where to paste
    assert "✓" in first.stdout  # bigmind doctor ran
    user_files = (home / ".claude", home / ".cursor", home / ".config", home / ".claude.json")
    configs = _snapshot(*user_files)

    second = _run(command, env, clone)
    assert second.returncode == 0, second.stdout + second.stderr
    assert (
        _snapshot(home / ".claude", home / ".cursor", home / ".config")
        | _snapshot(home / ".claude.json")
        == configs
    )
    lines = [ln for ln in second.stdout.splitlines() if ln.startswith(("copilot ", "cursor "))]
    lines += [ln for ln in second.stdout.splitlines() if ln.startswith("claude-")]
    assert len(lines) == 8, second.stdout
    assert all(" unchanged " in ln or " skipped " in ln for ln in lines), second.stdout

    # A project, wired for its team: its files start `bigmind` from PATH (~/.local/bin).
    on_path = env | {"PATH": f"{home}/.local/bin:{env['PATH']}"}
    wired = _run([str(exe), "install", "--client", "all", "--project", str(project)], on_path, home)
    assert wired.returncode == 0, wired.stderr
    assert "not on PATH" not in wired.stderr
    assert json.loads((project / ".mcp.json").read_text())["mcpServers"]["bigmind"]["command"] == (
        "bigmind"
    )
    db_env = on_path | {"BIGMIND_DB_PATH": str(tmp_path / "m.db"), "BIGMIND_EMBED_MODEL": "off"}
    for config, key in (
        (project / ".mcp.json", "mcpServers"),
        (home / ".claude.json", "mcpServers"),
    ):
        tools = anyio.run(_serve_from, config, key, db_env)
        assert "memory_start_session" in tools and "memory_recall" in tools

    for where in (["--project", str(project)], []):
        r = _run([str(exe), "uninstall", "--client", "all", *where], env, home)
        assert r.returncode == 0, r.stderr
    assert _snapshot(project) == {str(project / "CLAUDE.md"): b"# Mine\n"}
    assert not [c for c in user_configs if c.exists()]
