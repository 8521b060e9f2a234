"""`bigmind install` / `uninstall`: idempotent, bounded edits that keep what the user wrote."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_run import run_cli

from bigmind.cli import clients, edits
from bigmind.cli.install import SKIPPED, UNCHANGED, apply, plan
from bigmind.errors import InvalidInput

USER_CLAUDE_MD = "# My project\r\n\r\nUse tabs, never spaces.\r\n"
# Formatted by hand, as teams do: four spaces, an inline entry, odd spacing, no final newline.
HAND_MCP = (
    '{\n    "mcpServers": {\n        "other":   { "command": "npx", "args": ["-y", "x"] }\n'
    '    },\n    "note": "ours"\n}'
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    p = tmp_path / "proj"
    p.mkdir()
    return p


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return Path(os.environ["HOME"])


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return run_cli(*args, cwd=cwd)


def snapshot(*roots: Path) -> dict[str, bytes]:
    return {
        str(f): f.read_bytes()
        for root in roots
        if root.exists()
        for f in root.rglob("*")
        if f.is_file()
    }


def test_install_all_writes_every_client_file_and_a_second_run_changes_nothing(
    project: Path, home: Path
) -> None:
    r = run("install", "--client", "all", "--project", str(project))
    assert r.returncode == 0, r.stderr
    exe = clients.server_executable()
    assert Path(exe).is_absolute() and Path(exe).is_file()
    vscode = json.loads((project / ".vscode" / "mcp.json").read_text())
    assert vscode["servers"]["bigmind"] == {
        "type": "stdio",
        "command": "bigmind",
        "args": ["serve"],
    }
    for cfg in (project / ".mcp.json", project / ".cursor" / "mcp.json"):
        assert json.loads(cfg.read_text())["mcpServers"]["bigmind"]["command"] == "bigmind"
    assert "claude-desktop  skipped   server: Claude Desktop has no project files" in r.stdout
    assert not home.exists() or snapshot(home) == {}  # a project install writes nothing there
    for md in (project / "CLAUDE.md", project / ".github" / "copilot-instructions.md"):
        text = md.read_text()
        assert edits.BEGIN in text and edits.END in text and "memory_start_session" in text
    rule = (project / ".cursor" / "rules" / "bigmind.mdc").read_text()
    assert rule.startswith("---\n") and "alwaysApply: true" in rule
    hooks = json.loads((project / ".claude" / "settings.local.json").read_text())["hooks"]
    assert hooks["SessionStart"][0]["hooks"][0]["command"] == f"{exe} context --hook"
    assert hooks["SessionEnd"][0]["hooks"][0]["command"] == f"{exe} close --hook"
    assert "Settings | Tools | AI Assistant" in r.stdout  # jetbrains: printed, not written

    before = snapshot(project, home)
    again = run("install", "--client", "all", "--project", str(project), "--json")
    assert again.returncode == 0, again.stderr
    report = json.loads(again.stdout)
    assert report["level"] == "project"
    assert {c["action"] for c in report["changes"]} == {UNCHANGED, SKIPPED}
    assert "server_json" in report["jetbrains"]
    assert snapshot(project, home) == before


def test_files_a_team_commits_name_no_one_s_home_or_venv(project: Path, home: Path) -> None:
    """.mcp.json, .vscode/mcp.json and .cursor/ start `bigmind` from PATH; only the git-ignored
    settings.local.json carries this machine's path."""
    assert run("install", "--client", "all", "--project", str(project)).returncode == 0
    exe = Path(clients.server_executable())
    machine = (str(home), str(exe.parent), sys.prefix, str(Path(sys.prefix).resolve()))
    committed = [
        f
        for f in project.rglob("*")
        if f.is_file() and f.relative_to(project).as_posix() != clients.LOCAL_SETTINGS
    ]
    assert {f.relative_to(project).as_posix() for f in committed} == {
        ".mcp.json",
        "CLAUDE.md",
        ".vscode/mcp.json",
        ".github/copilot-instructions.md",
        ".cursor/mcp.json",
        ".cursor/rules/bigmind.mdc",
    }
    for f in committed:
        text = f.read_text()
        assert not [m for m in machine if m in text], f
    assert str(exe) in (project / clients.LOCAL_SETTINGS).read_text()


def test_uninstall_restores_every_file_byte_for_byte(project: Path, home: Path) -> None:
    (project / "CLAUDE.md").write_bytes(USER_CLAUDE_MD.encode())
    (project / ".mcp.json").write_text(HAND_MCP)
    settings = project / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    own_hook = {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "echo hi"}]}]}}
    settings.write_text(json.dumps(own_hook))
    originals = snapshot(project)

    assert run("install", "--client", "all", "--project", str(project)).returncode == 0
    claude_md = (project / "CLAUDE.md").read_bytes().decode()
    assert claude_md.startswith(USER_CLAUDE_MD) and "\r\n<!-- BIGMIND:END -->\r\n" in claude_md
    mcp = (project / ".mcp.json").read_text()
    assert set(json.loads(mcp)["mcpServers"]) == {"other", "bigmind"}
    # The other server's entry, its odd spacing and the key order are untouched.
    assert mcp.startswith(HAND_MCP[: HAND_MCP.index("]") + 1])
    starts = json.loads(settings.read_text())["hooks"]["SessionStart"]
    assert next(h["command"] for g in starts for h in g["hooks"]) == "echo hi"

    r = run("uninstall", "--client", "all", "--project", str(project))
    assert r.returncode == 0, r.stderr
    assert snapshot(project) == originals
    assert not (project / ".vscode").exists() and not (project / ".cursor").exists()
    again = run("uninstall", "--client", "all", "--project", str(project))
    assert again.returncode == 0 and "not installed" in again.stdout


def test_user_fields_and_other_servers_survive_a_reinstall(project: Path) -> None:
    cfg = project / ".mcp.json"
    cfg.write_text(
        json.dumps({"mcpServers": {"bigmind": {"command": "/old/bigmind", "env": {"X": "1"}}}})
    )
    changes = plan(["claude-code"], project, remove=False, hooks=False)
    done = apply(changes, project.parent / "backups")
    entry = json.loads(cfg.read_text())["mcpServers"]["bigmind"]
    assert entry["env"] == {"X": "1"} and entry["command"] == clients.PROJECT_COMMAND
    backups = list((project.parent / "backups").rglob(".mcp.json"))
    assert len(backups) == 1 and "/old/bigmind" in backups[0].read_text()
    reported = [c.as_dict() for c in done if c.backup]
    assert [(r["action"], r["backup"]) for r in reported] == [("updated", str(backups[0]))]


def test_a_moved_install_replaces_its_hooks_instead_of_adding_more(project: Path) -> None:
    settings = project / ".claude" / "settings.local.json"
    for exe in ("/old place/bin/bigmind", "/new/bin/bigmind"):
        for t in clients.targets("claude-code", project, exe=exe):
            if t.path == settings:
                text = t.apply(settings.read_text() if settings.exists() else None).text
                assert text is not None
                settings.parent.mkdir(exist_ok=True)
                settings.write_text(text)
    hooks = json.loads(settings.read_text())["hooks"]
    commands = [h["command"] for ev in hooks.values() for g in ev for h in g["hooks"]]
    assert commands == ["/new/bin/bigmind context --hook", "/new/bin/bigmind close --hook"]
    assert clients.shell_command("/old place/bin/bigmind", "x") == "'/old place/bin/bigmind' x"


def test_one_unreadable_config_stops_the_run_before_anything_is_written(project: Path) -> None:
    (project / ".vscode").mkdir()
    (project / ".vscode" / "mcp.json").write_text('{"servers": {"a": 1,,}}')
    r = run("install", "--client", "claude-code", "--client", "copilot", "--project", str(project))
    assert r.returncode == 2
    assert r.stderr.startswith("bigmind: ") and "mcp.json is not valid JSON (line 1" in r.stderr
    assert "Traceback" not in r.stderr
    assert not (project / "CLAUDE.md").exists() and not (project / ".mcp.json").exists()


def test_dry_run_writes_nothing(project: Path, home: Path) -> None:
    r = run("install", "--client", "all", "--project", str(project), "--dry-run")
    assert r.returncode == 0 and "would be created" in r.stdout
    assert snapshot(project, home) == {}


def test_vscode_jsonc_comments_and_trailing_commas_are_kept(project: Path) -> None:
    cfg = project / ".vscode" / "mcp.json"
    cfg.parent.mkdir()
    original = '{\n  // mine\n  "servers": {"x": {"url": "http://a//b"},},\n}\n'
    cfg.write_text(original)
    r = run("install", "--client", "copilot", "--project", str(project))
    assert r.returncode == 0, r.stderr
    text = cfg.read_text()
    assert text.startswith('{\n  // mine\n  "servers": {"x": {"url": "http://a//b"}, "bigmind"')
    servers = json.loads(edits.strip_jsonc(text))["servers"]
    assert servers["x"] == {"url": "http://a//b"} and "bigmind" in servers
    assert run("uninstall", "--client", "copilot", "--project", str(project)).returncode == 0
    assert cfg.read_text() == original


def test_unknown_client_and_missing_project_are_one_line_errors(project: Path) -> None:
    r = run("install", "--client", "emacs", "--project", str(project))
    assert r.returncode == 2 and "Unknown client 'emacs'" in r.stderr
    r = run("uninstall", "--client", "all", "--project", str(project / "nope"))
    assert r.returncode == 2 and "no such folder" in r.stderr


def test_broken_markers_are_refused_not_guessed() -> None:
    text = f"mine\n{edits.BEGIN_LINE}\nhalf a block\n"
    with pytest.raises(InvalidInput, match="broken BigMind markers"):
        edits.block_set(text, "body", "CLAUDE.md")
    assert edits.block_remove(edits.block_set(None, "body", "f"), "f") is None


def test_a_foreign_cursor_rule_is_not_overwritten(project: Path) -> None:
    rule = project / ".cursor" / "rules" / "bigmind.mdc"
    rule.parent.mkdir(parents=True)
    rule.write_text("my own rule\n")
    r = run("install", "--client", "cursor", "--project", str(project))
    assert r.returncode == 2 and "not written by BigMind" in r.stderr
    assert rule.read_text() == "my own rule\n"


def test_installed_files_reports_each_state(project: Path, home: Path) -> None:
    def states() -> dict[str, str]:
        return {f"{f.client}:{f.path.name}": f.state for f in clients.installed_files(project)}

    assert set(states().values()) == {"absent"}
    assert run("install", "--client", "claude-code", "--project", str(project)).returncode == 0
    s = states()
    assert s["claude-code:CLAUDE.md"] == s["claude-code:.mcp.json"] == "installed"
    assert s["copilot:mcp.json"] == "absent"
    cfg = project / ".mcp.json"
    cfg.write_text(cfg.read_text().replace('"bigmind",', '"/elsewhere/bigmind",'))
    assert states()["claude-code:.mcp.json"] == "outdated"


def test_an_unwritable_target_is_a_one_line_error(project: Path) -> None:
    (project / ".github").write_text("a file where a folder should be")
    r = run("install", "--client", "claude-code", "--client", "copilot", "--project", str(project))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.startswith("bigmind: Cannot read") and len(r.stderr.splitlines()) == 1
    assert not (project / "CLAUDE.md").exists()  # found while planning: nothing was written


def git(repo: Path, *args: str) -> str:
    r = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True)
    return r.stdout


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
@pytest.mark.parametrize("sub", ["", "services/api"])
def test_settings_local_json_is_git_ignored_in_a_git_repository(tmp_path: Path, sub: str) -> None:
    repo = tmp_path / "repo"
    project = repo / sub
    project.mkdir(parents=True)
    git(repo, "init", "-q")
    exclude = repo / ".git" / "info" / "exclude"
    before = exclude.read_bytes() if exclude.exists() else None

    r = run("install", "--client", "claude-code", "--project", str(project))
    assert r.returncode == 0, r.stderr
    assert "git-ignores .claude/settings.local.json" in r.stdout
    untracked = set(git(repo, "status", "--porcelain", "--untracked-files=all").splitlines())
    prefix = f"{sub}/" if sub else ""
    assert untracked == {f"?? {prefix}CLAUDE.md", f"?? {prefix}.mcp.json"}
    ignored = git(repo, "check-ignore", "-v", f"{prefix}.claude/settings.local.json")
    assert ".git/info/exclude" in ignored  # no committed file (.gitignore) was changed
    assert not (repo / ".gitignore").exists()

    assert run("uninstall", "--client", "claude-code", "--project", str(project)).returncode == 0
    assert (exclude.read_bytes() if exclude.exists() else None) == before


def test_a_project_gets_no_hooks_when_the_user_settings_run_them(project: Path, home: Path) -> None:
    assert run("install", "--client", "claude-code").returncode == 0  # user level: hooks too
    r = run("install", "--client", "claude-code", "--project", str(project))
    assert r.returncode == 0, r.stderr
    assert "skipped   hooks: already in" in r.stdout and "(user level)" in r.stdout
    assert not (project / ".claude").exists()
    assert (project / ".mcp.json").exists() and (project / "CLAUDE.md").exists()


def test_install_tools_compact_sets_the_profile_and_uninstall_restores_the_files(
    project: Path,
) -> None:
    (project / ".mcp.json").write_text(HAND_MCP)
    originals = snapshot(project)
    r = run("install", "--client", "all", "--project", str(project), "--tools", "compact")
    assert r.returncode == 0, r.stderr
    for config, key in ((".mcp.json", "mcpServers"), (".cursor/mcp.json", "mcpServers")):
        entry = json.loads((project / config).read_text())[key]["bigmind"]
        assert entry["env"] == {"BIGMIND_TOOLS": "compact"}, config
    vscode = json.loads((project / ".vscode" / "mcp.json").read_text())["servers"]["bigmind"]
    assert vscode["env"] == {"BIGMIND_TOOLS": "compact"}
    rules = (project / "CLAUDE.md").read_text()
    assert "memory_get(" in rules and "memory_get_context" not in rules  # the compact tools

    assert run("install", "--client", "claude-code", "--project", str(project)).returncode == 0
    assert "env" not in json.loads((project / ".mcp.json").read_text())["mcpServers"]["bigmind"]

    r = run("uninstall", "--client", "all", "--project", str(project))
    assert r.returncode == 0, r.stderr
    assert snapshot(project) == originals


def test_the_profile_variable_joins_the_user_s_env_and_leaves_it_as_it_was() -> None:
    doc = {"mcpServers": {"bigmind": {"command": "bigmind", "env": {"MY_VAR": "1"}}}}
    keys = ("mcpServers", "bigmind")
    edits.env_var_set(doc, keys, "BIGMIND_TOOLS", "compact")
    assert doc["mcpServers"]["bigmind"]["env"] == {"MY_VAR": "1", "BIGMIND_TOOLS": "compact"}
    edits.env_var_set(doc, keys, "BIGMIND_TOOLS", None)
    assert doc["mcpServers"]["bigmind"]["env"] == {"MY_VAR": "1"}
    edits.env_var_set(doc, keys, "MY_VAR", None)
    assert "env" not in doc["mcpServers"]["bigmind"]
