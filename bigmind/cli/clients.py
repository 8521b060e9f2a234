"""Which files each MCP client reads, and what BigMind writes into them.

A :class:`Target` is one file and one reversible edit (a marked instruction block, a server
entry in a JSON config, Claude Code hooks). `bigmind install` applies targets, `uninstall`
reverts them, `doctor` reports their state; the knowledge of clients lives only here.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bigmind.cli import edits
from bigmind.errors import InvalidInput
from bigmind.mcp.instructions import SERVER_INSTRUCTIONS

CLIENTS = ("copilot", "cursor", "claude-code", "claude-desktop", "jetbrains")
SERVER = "bigmind"
HOOK_TIMEOUT_S = 5  # what Claude Code waits at most; our hooks give up after 1.8 s anyway

SNIPPET = "## BigMind memory (MCP server `bigmind`)\n\n" + SERVER_INSTRUCTIONS + "\n"
CURSOR_HEAD = (
    "---\ndescription: BigMind persistent memory: session ritual and tools\n"
    "alwaysApply: true\n---\n"
)
JETBRAINS_WHERE = (
    "JetBrains AI Assistant: Settings | Tools | AI Assistant | Model Context Protocol (MCP) | "
    "Add | As JSON — paste the server JSON; then Settings | Tools | AI Assistant | Rules | "
    "New project rules file (rule type: Always) — paste the instructions."
)


@dataclass(frozen=True)
class Edit:
    """The text a target leaves in its file (None: delete it) and a note for the user."""

    text: str | None
    note: str | None = None


@dataclass(frozen=True)
class Target:
    client: str
    path: Path
    what: str
    apply: Callable[[str | None], Edit]
    revert: Callable[[str], Edit]
    present: Callable[[str], bool]


@dataclass(frozen=True)
class ClientFile:
    """What `bigmind doctor` reports per target: installed, outdated, absent (or unreadable)."""

    client: str
    path: Path
    what: str
    state: str


def server_executable() -> str:
    """Absolute path of the ``bigmind`` script of this installation (works without activating
    its virtual environment)."""
    name = "bigmind.exe" if os.name == "nt" else "bigmind"
    beside = Path(sys.executable).parent / name  # venv/bin or venv\Scripts
    if beside.is_file():
        return str(beside.absolute())
    found = shutil.which("bigmind")
    if found:
        return str(Path(found).absolute())
    raise InvalidInput(
        "Cannot find the `bigmind` executable of this installation; install BigMind with pip "
        "(or run ./install_proc.sh) and run `bigmind install` from there."
    )


def shell_command(*argv: str) -> str:
    """A command line for the client's shell (hooks run through it)."""
    return subprocess.list2cmdline(argv) if os.name == "nt" else shlex.join(argv)


def is_our_hook(command: str) -> bool:
    return "bigmind" in command and command.rstrip().endswith(("context --hook", "close --hook"))


def _our_hook(kind: str) -> Callable[[str], bool]:
    return lambda command: is_our_hook(command) and f" {kind} --hook" in command


def claude_desktop_config(home: Path) -> Path:
    if sys.platform == "darwin":
        base = home / "Library" / "Application Support"
    elif os.name == "nt":
        base = Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming")
    else:
        base = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
    return base / "Claude" / "claude_desktop_config.json"


def server_entry(exe: str, *, typed: bool) -> dict[str, Any]:
    entry: dict[str, Any] = {"command": exe, "args": ["serve"]}
    return {"type": "stdio", **entry} if typed else entry


# -- the three kinds of edit ------------------------------------------------------------------
def _instructions(client: str, path: Path) -> Target:
    where = str(path)

    def apply(old: str | None) -> Edit:
        return Edit(edits.block_set(old, SNIPPET, where))

    return Target(
        client,
        path,
        "instructions",
        apply,
        lambda old: Edit(edits.block_remove(old, where)),
        lambda old: edits.block_get(old, where) is not None,
    )


def _cursor_rule(path: Path) -> Target:
    where = str(path)
    whole = CURSOR_HEAD + edits.block_text(SNIPPET)

    def apply(old: str | None) -> Edit:
        if old is not None and old.strip() and edits.block_get(old, where) is None:
            raise InvalidInput(f"{where} exists and was not written by BigMind; move it away.")
        return Edit(whole)

    def revert(old: str) -> Edit:
        return Edit(None if edits.block_get(old, where) is not None else old)

    return Target(
        "cursor",
        path,
        "rule",
        apply,
        revert,
        lambda old: edits.block_get(old, where) is not None,
    )


def _json_edit(
    client: str,
    path: Path,
    what: str,
    change: Callable[[dict[str, Any]], None],
    undo: Callable[[dict[str, Any]], None],
    present: Callable[[dict[str, Any]], bool],
) -> Target:
    where = str(path)

    def rewrite(old: str | None, fn: Callable[[dict[str, Any]], None]) -> Edit:
        doc, comments = edits.load_json(old, where)
        before = edits.dump_json(doc)
        fn(doc)
        if old is not None and edits.dump_json(doc) == before:
            return Edit(old)  # nothing to do: leave the user's formatting alone
        if not doc:
            return Edit(None)
        note = "its comments were dropped (they are in the backup)" if comments else None
        return Edit(edits.dump_json(doc, old), note)

    return Target(
        client,
        path,
        what,
        lambda old: rewrite(old, change),
        lambda old: rewrite(old, undo),
        lambda old: present(edits.load_json(old, where)[0]),
    )


def _server(client: str, path: Path, keys: tuple[str, ...], value: dict[str, Any]) -> Target:
    where = str(path)
    return _json_edit(
        client,
        path,
        f'server "{keys[-1]}"',
        lambda doc: edits.entry_set(doc, keys, value, where),
        lambda doc: edits.entry_remove(doc, keys),
        lambda doc: edits.entry_get(doc, keys) is not None,
    )


def _hooks(path: Path, exe: str) -> Target:
    where = str(path)
    start = shell_command(exe, "context", "--hook")
    end = shell_command(exe, "close", "--hook")

    def change(doc: dict[str, Any]) -> None:
        for event, command, kind in (
            ("SessionStart", start, "context"),
            ("SessionEnd", end, "close"),
        ):
            edits.hook_set(
                doc,
                event,
                command,
                _our_hook(kind),
                where,
                HOOK_TIMEOUT_S,
            )

    def present(doc: dict[str, Any]) -> bool:
        return any(is_our_hook(c) for c in edits.hook_commands(doc))

    return _json_edit(
        "claude-code",
        path,
        "hooks SessionStart/SessionEnd",
        change,
        lambda doc: edits.hook_remove(doc, is_our_hook),
        present,
    )


# Per project client: its instruction file, and its MCP config file, key and entry shape
# (VS Code and Claude Code take "type": "stdio"; Cursor and Claude Desktop the bare entry).
PROJECT_FILES: dict[str, tuple[str, str, str, bool]] = {
    "copilot": (".github/copilot-instructions.md", ".vscode/mcp.json", "servers", True),
    "cursor": (".cursor/rules/bigmind.mdc", ".cursor/mcp.json", "mcpServers", False),
    "claude-code": ("CLAUDE.md", ".mcp.json", "mcpServers", True),
}


def targets(
    client: str, project: Path, *, home: Path | None = None, hooks: bool = True, exe: str = ""
) -> list[Target]:
    """The files ``client`` reads, with BigMind's edit for each (jetbrains: none; it is
    configured in the IDE's settings dialog, see :data:`JETBRAINS_WHERE`)."""
    exe = exe or server_executable()
    if client == "claude-desktop":
        path = claude_desktop_config(home or Path.home())
        return [_server(client, path, ("mcpServers", SERVER), server_entry(exe, typed=False))]
    if client == "jetbrains":
        return []
    if client not in PROJECT_FILES:
        raise InvalidInput(f"Unknown client '{client}'; choose from {', '.join(CLIENTS)} or all.")
    rules, config, key, typed = PROJECT_FILES[client]
    found = [
        _cursor_rule(project / rules)
        if client == "cursor"
        else _instructions(client, project / rules),
        _server(client, project / config, (key, SERVER), server_entry(exe, typed=typed)),
    ]
    if client == "claude-code" and hooks:
        # settings.local.json: per machine and not committed; the hook names this machine's path.
        found.append(_hooks(project / ".claude" / "settings.local.json", exe))
    return found


def expand(names: list[str]) -> list[str]:
    """``all`` and repeated names to the ordered list of clients."""
    out: list[str] = []
    for name in names:
        for n in CLIENTS if name == "all" else (name,):
            if n not in CLIENTS:
                raise InvalidInput(
                    f"Unknown client '{n}'; choose from {', '.join(CLIENTS)} or all."
                )
            if n not in out:
                out.append(n)
    return out


def read(path: Path) -> str | None:
    """A target file's text, or None when it does not exist."""
    try:
        with path.open(encoding="utf-8", newline="") as f:  # keep CRLF line endings as they are
            return f.read()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"Cannot read {path}: {exc}") from exc


def installed_files(project: Path, home: Path | None = None) -> list[ClientFile]:
    """The state of every client file BigMind would write for ``project``."""
    exe = server_executable()
    out: list[ClientFile] = []
    for client in CLIENTS:
        for t in targets(client, project, home=home, exe=exe):
            try:
                old = read(t.path)
                if old is None or not t.present(old):
                    state = "absent"
                else:
                    state = "installed" if t.apply(old).text == old else "outdated"
            except InvalidInput as exc:
                state = f"unreadable: {exc}"
            out.append(ClientFile(client, t.path, t.what, state))
    return out
