"""`bigmind install` without --project: each client's user-level config, on a temporary HOME;
and never BigMind's own source tree as a project."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_install import run, snapshot

from bigmind.cli import clients, edits
from bigmind.cli.install import SKIPPED, UNCHANGED, apply, bigmind_checkout, plan
from bigmind.errors import InvalidInput

ROOT = Path(__file__).resolve().parents[2]

# ~/.claude.json as Claude Code keeps it (JSON.stringify, two spaces): all its state, ours a
# single member among it.
CLAUDE_STATE = {
    "numStartups": 42,
    "installMethod": "native",
    "tipsHistory": {"new-user-warmup": 7},
    "projects": {
        "/home/u/app": {
            "allowedTools": [],
            "mcpServers": {},
            "history": [{"display": "fix the “login” test", "pastedContents": {}}],
        }
    },
    "oauthAccount": {"emailAddress": "u@example.com"},
}
CURSOR_MCP = (
    '{\n\t"mcpServers": {\n\t\t"github": {"url": "https://api.githubcopilot.com/mcp/"}\n\t}\n}'
)
VSCODE_MCP = (
    "// VS Code user MCP config\r\n"
    '{\r\n  "servers": {\r\n    "fetch": {"type": "stdio", "command": "uvx", "args": ["f"]},\r\n'
    '  },\r\n  "inputs": []\r\n}\r\n'
)


@pytest.fixture
def home() -> Path:
    h = Path.home()  # the conftest's temporary HOME
    h.mkdir(parents=True, exist_ok=True)
    return h


def test_user_level_install_configures_each_client_and_a_second_run_changes_nothing(
    home: Path, tmp_path: Path
) -> None:
    cwd = tmp_path / "anywhere"
    cwd.mkdir()
    dry = run("install", "--client", "all", "--dry-run", cwd=cwd)
    assert dry.returncode == 0 and "would be created" in dry.stdout
    assert snapshot(home) == {}
    r = run("install", "--client", "all", cwd=cwd)
    assert r.returncode == 0, r.stderr
    exe = clients.server_executable()
    typed = {"type": "stdio", "command": exe, "args": ["serve"]}
    claude = json.loads((home / ".claude.json").read_text())
    assert claude["mcpServers"]["bigmind"] == typed
    vscode = json.loads((home / ".config" / "Code" / "User" / "mcp.json").read_text())
    assert vscode["servers"]["bigmind"] == typed
    cursor = json.loads((home / ".cursor" / "mcp.json").read_text())
    assert cursor["mcpServers"]["bigmind"] == {"command": exe, "args": ["serve"]}
    assert edits.BEGIN in (home / ".claude" / "CLAUDE.md").read_text()
    hooks = json.loads((home / ".claude" / "settings.json").read_text())["hooks"]
    assert hooks["SessionStart"][0]["hooks"][0]["command"] == f"{exe} context --hook"
    # Linux: no Claude Desktop, so no file for it; each client says what it skipped.
    assert "claude-desktop  skipped   server: there is no Claude Desktop for Linux" in r.stdout
    assert "cursor          skipped   rule: Cursor has no user rules file" in r.stdout
    assert not list(home.rglob("claude_desktop_config.json"))
    assert "bigmind install --client NAME --project PATH" in r.stdout
    assert snapshot(cwd) == {}

    before = snapshot(home)
    again = run("install", "--client", "all", "--json", cwd=cwd)
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert report["level"] == "user"
    assert {c["action"] for c in report["changes"]} == {UNCHANGED, SKIPPED}
    assert snapshot(home) == before

    assert run("uninstall", "--client", "all", cwd=cwd).returncode == 0
    assert {Path(p).name for p in snapshot(home)} == set()


def test_uninstall_gives_back_every_user_config_byte_for_byte(home: Path) -> None:
    state = json.dumps(CLAUDE_STATE, indent=2, ensure_ascii=False)  # no final newline
    files = {
        home / ".claude.json": state,
        home / ".cursor" / "mcp.json": CURSOR_MCP,
        home / ".config" / "Code" / "User" / "mcp.json": VSCODE_MCP,
        home / ".claude" / "settings.json": '{\n  "model": "opus"\n}\n',
        home / ".claude" / "CLAUDE.md": "# Me\n\nShort answers.\n",
    }
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode())
    originals = snapshot(home)

    r = run("install", "--client", "all")
    assert r.returncode == 0, r.stderr
    after = (home / ".claude.json").read_text()
    # Only our member was added, at the end: Claude Code's state is as it was, to the byte.
    assert after.startswith(state[:-2]) and after.endswith("\n}")
    assert json.loads(after) == CLAUDE_STATE | {"mcpServers": json.loads(after)["mcpServers"]}
    github = CURSOR_MCP[: CURSOR_MCP.index("}") + 1]
    assert (home / ".cursor" / "mcp.json").read_text().startswith(github + ',\n\t\t"bigmind": {')
    assert (
        (home / ".config" / "Code" / "User" / "mcp.json")
        .read_bytes()
        .startswith(
            b'// VS Code user MCP config\r\n{\r\n  "servers": {\r\n    "fetch": {"type": "stdio", '
            b'"command": "uvx", "args": ["f"]},\r\n    "bigmind": {\r\n'
        )
    )

    assert run("uninstall", "--client", "all").returncode == 0
    assert snapshot(home) == originals


def test_uninstall_keeps_what_claude_code_changed_in_its_file_meanwhile(home: Path) -> None:
    (home / ".claude.json").write_text(json.dumps(CLAUDE_STATE, indent=2))
    assert run("install", "--client", "claude-code", "--no-hooks").returncode == 0
    # Claude Code rewrites its whole file (a new startup, a new project) with our entry in it.
    doc = json.loads((home / ".claude.json").read_text())
    doc["numStartups"] += 1
    doc["projects"]["/home/u/other"] = {"allowedTools": []}
    (home / ".claude.json").write_text(json.dumps(doc, indent=2))

    assert run("uninstall", "--client", "claude-code").returncode == 0
    del doc["mcpServers"]
    assert (home / ".claude.json").read_text() == json.dumps(doc, indent=2)


def test_a_file_changed_after_planning_stops_the_run_before_any_write(home: Path) -> None:
    changes = plan(["claude-code", "cursor"], None, remove=False, home=home)
    (home / ".claude.json").write_text('{"numStartups": 1}')  # Claude Code, meanwhile
    with pytest.raises(InvalidInput, match=r"\.claude\.json changed while BigMind was planning"):
        apply(changes, home / "backups")
    assert snapshot(home) == {str(home / ".claude.json"): b'{"numStartups": 1}'}


@pytest.mark.parametrize(
    ("platform", "desktop", "vscode"),
    [
        (
            "darwin",
            "Library/Application Support/Claude/claude_desktop_config.json",
            "Library/Application Support/Code/User/mcp.json",
        ),
        (
            "win32",
            "Roaming/Claude/claude_desktop_config.json",
            "Roaming/Code/User/mcp.json",
        ),
    ],
)
def test_claude_desktop_and_vscode_user_config_on_macos_and_windows(
    home: Path,
    monkeypatch: pytest.MonkeyPatch,
    platform: str,
    desktop: str,
    vscode: str,
) -> None:
    monkeypatch.setenv("APPDATA", str(home / "Roaming"))  # Windows' %APPDATA%; macOS ignores it
    names = ["claude-desktop", "copilot"]
    changes = plan(names, None, remove=False, home=home, platform=platform)
    assert [(c.client, c.path) for c in changes if c.action != SKIPPED] == [
        ("claude-desktop", home / desktop),
        ("copilot", home / vscode),
    ]
    apply(changes, home / "backups")
    entry = json.loads((home / desktop).read_text())["mcpServers"]["bigmind"]
    assert entry == {"command": clients.server_executable(), "args": ["serve"]}
    again = plan(names, None, remove=False, home=home, platform=platform)
    assert {c.action for c in again} == {UNCHANGED, SKIPPED}
    apply(plan(names, None, remove=True, home=home, platform=platform), home / "backups")
    assert not (home / desktop).exists() and not (home / vscode).exists()


def test_claude_config_dir_moves_claude_code_user_files(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    moved = tmp_path / "claude-work"
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(moved))
    changes = plan(["claude-code"], None, remove=False, home=home)
    assert [c.path for c in changes] == [
        moved / "CLAUDE.md",
        moved / ".claude.json",
        moved / "settings.json",
    ]


def _tree_copy(tmp_path: Path) -> Path:
    """What makes a folder BigMind's source tree: its pyproject.toml and the package."""
    clone = tmp_path / "BigMind-clone"
    (clone / "bigmind").mkdir(parents=True)
    shutil.copy(ROOT / "pyproject.toml", clone)
    (clone / "bigmind" / "__init__.py").write_text("")
    return clone


def test_install_refuses_bigmind_s_own_source_tree(tmp_path: Path) -> None:
    clone = _tree_copy(tmp_path)
    written = [".mcp.json", "CLAUDE.md", ".claude", ".vscode", ".cursor", ".github"]
    in_root = [w for w in written if (ROOT / w).exists()]
    for target, cwd in (
        (str(clone), None),
        (str(clone / "bigmind"), None),
        (".", clone),
        (str(ROOT), None),  # the tree the running package comes from
    ):
        r = run("install", "--client", "all", "--project", target, cwd=cwd)
        assert r.returncode == 2, (target, r.stdout)
        assert len(r.stderr.splitlines()) == 1
        assert "is BigMind's own source tree, not a project to wire: pass --project" in r.stderr
    assert not [w for w in written if (clone / w).exists()]
    assert [w for w in written if (ROOT / w).exists()] == in_root
    # Cleaning up after an older install there is allowed.
    r = run("uninstall", "--client", "all", "--project", str(clone))
    assert r.returncode == 0 and "not installed" in r.stdout


def test_a_project_that_merely_has_a_bigmind_folder_is_not_the_checkout(tmp_path: Path) -> None:
    app = tmp_path / "app"
    (app / "bigmind").mkdir(parents=True)
    (app / "bigmind" / "__init__.py").write_text("")
    (app / "pyproject.toml").write_text('[project]\nname = "app"\n')
    assert bigmind_checkout(app) is None
    assert bigmind_checkout(_tree_copy(tmp_path) / "bigmind") == tmp_path / "BigMind-clone"
