"""`bigmind install` / `uninstall`: idempotent, bounded edits that keep what the user wrote."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from mcp_calls import BIGMIND

from bigmind.cli import clients, edits
from bigmind.cli.install import UNCHANGED, apply, plan
from bigmind.errors import InvalidInput

USER_CLAUDE_MD = "# My project\r\n\r\nUse tabs, never spaces.\r\n"
USER_MCP = {"mcpServers": {"other": {"command": "/usr/bin/other", "args": []}}}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    p = tmp_path / "proj"
    p.mkdir()
    return p


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return Path(os.environ["HOME"])


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIGMIND), *args], capture_output=True, text=True, timeout=60, cwd=cwd
    )


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
    assert vscode["servers"]["bigmind"] == {"type": "stdio", "command": exe, "args": ["serve"]}
    for cfg in (project / ".mcp.json", project / ".cursor" / "mcp.json"):
        assert json.loads(cfg.read_text())["mcpServers"]["bigmind"]["command"] == exe
    desktop = clients.claude_desktop_config(home)
    assert json.loads(desktop.read_text())["mcpServers"]["bigmind"]["args"] == ["serve"]
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
    assert {c["action"] for c in report["changes"]} == {UNCHANGED}
    assert "server_json" in report["jetbrains"]
    assert snapshot(project, home) == before


def test_uninstall_removes_exactly_what_install_added(project: Path, home: Path) -> None:
    (project / "CLAUDE.md").write_bytes(USER_CLAUDE_MD.encode())
    (project / ".mcp.json").write_text(json.dumps(USER_MCP, indent=4) + "\n")
    settings = project / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    own_hook = {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "echo hi"}]}]}}
    settings.write_text(json.dumps(own_hook))
    originals = snapshot(project)

    assert run("install", "--client", "all", "--project", str(project)).returncode == 0
    claude_md = (project / "CLAUDE.md").read_bytes().decode()
    assert claude_md.startswith(USER_CLAUDE_MD) and "\r\n<!-- BIGMIND:END -->\r\n" in claude_md
    merged = json.loads((project / ".mcp.json").read_text())["mcpServers"]
    assert set(merged) == {"other", "bigmind"}
    starts = json.loads(settings.read_text())["hooks"]["SessionStart"]
    assert next(h["command"] for g in starts for h in g["hooks"]) == "echo hi"

    r = run("uninstall", "--client", "all", "--project", str(project))
    assert r.returncode == 0, r.stderr
    assert snapshot(project) == {k: v for k, v in originals.items()} | {
        str(project / ".mcp.json"): (json.dumps(USER_MCP, indent=4) + "\n").encode()
    }
    assert not (project / ".vscode").exists() and not (project / ".cursor").exists()
    assert not clients.claude_desktop_config(home).exists()
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
    assert entry["env"] == {"X": "1"} and entry["command"] == clients.server_executable()
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


def test_vscode_jsonc_comments_and_trailing_commas_are_read(project: Path) -> None:
    cfg = project / ".vscode" / "mcp.json"
    cfg.parent.mkdir()
    cfg.write_text('{\n  // mine\n  "servers": {"x": {"url": "http://a//b"},},\n}\n')
    r = run("install", "--client", "copilot", "--project", str(project))
    assert r.returncode == 0, r.stderr
    assert "comments were dropped" in r.stdout and "backup:" in r.stdout
    servers = json.loads(cfg.read_text())["servers"]
    assert servers["x"] == {"url": "http://a//b"} and "bigmind" in servers


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
    cfg.write_text(cfg.read_text().replace(clients.server_executable(), "/elsewhere/bigmind"))
    assert states()["claude-code:.mcp.json"] == "outdated"


def test_an_unwritable_target_is_a_one_line_error(project: Path) -> None:
    (project / ".github").write_text("a file where a folder should be")
    r = run("install", "--client", "claude-code", "--client", "copilot", "--project", str(project))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.startswith("bigmind: Cannot read") and len(r.stderr.splitlines()) == 1
    assert not (project / "CLAUDE.md").exists()  # found while planning: nothing was written
