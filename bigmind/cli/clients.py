"""Which files each MCP client reads, and what BigMind writes into them.

Two places: the user's own config of each client (no ``--project``: every project on this
machine, with this installation's absolute path), or a project (``--project``: the files a team
commits, which start BigMind by name and so hold no one's home path, plus git-ignored
per-machine files). A :class:`Target` is one file and one reversible edit (a marked instruction
block, a server entry in a JSON config, Claude Code hooks). `bigmind install` applies targets,
`uninstall` reverts them, `doctor` reports their state; the knowledge of clients lives only here.
"""

from __future__ import annotations

import copy
import os
import re
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bigmind.cli import edits, jsontext
from bigmind.errors import InvalidInput
from bigmind.mcp.instructions import COMPACT_INSTRUCTIONS, snippet

CLIENTS = ("copilot", "cursor", "claude-code", "claude-desktop", "jetbrains")
SERVER = "bigmind"
# What the files a team commits run: found on each teammate's PATH (install_proc.sh links it into
# ~/.local/bin), so .mcp.json & co. name no one's virtual environment.
PROJECT_COMMAND = "bigmind"
LOCAL_SETTINGS = ".claude/settings.local.json"  # per machine: git-ignored by install
DESKTOP_PLATFORMS = ("darwin", "win32")  # Claude Desktop exists for macOS and Windows only
HOOK_TIMEOUT_S = 5  # what Claude Code waits at most; our hooks give up after 1.8 s anyway


def rules_snippet(tools: str = "full") -> str:
    """The instructions block for a client's rules file, naming the tools of profile ``tools``."""
    if tools == "full":
        return snippet()
    return "## BigMind memory (MCP server `bigmind`)\n\n" + COMPACT_INSTRUCTIONS + "\n"


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
    remote: Callable[[str], bool] = lambda old: False  # its server entry is a remote one


@dataclass(frozen=True)
class Skip:
    """Something a client cannot take at this level, and why: reported, nothing written."""

    client: str
    what: str
    why: str


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


# -- where each client keeps its user-level config --------------------------------------------
def claude_dir(home: Path) -> Path:
    """Claude Code's user folder (settings.json, CLAUDE.md); CLAUDE_CONFIG_DIR moves it."""
    moved = os.environ.get("CLAUDE_CONFIG_DIR")
    return Path(moved).expanduser() if moved else home / ".claude"


def claude_json(home: Path) -> Path:
    """Claude Code's state file: its top-level ``mcpServers`` are the user-scope servers."""
    moved = os.environ.get("CLAUDE_CONFIG_DIR")
    return (Path(moved).expanduser() if moved else home) / ".claude.json"


def app_data(home: Path, platform: str) -> Path:
    """Where desktop applications keep their settings on ``platform`` (a sys.platform value)."""
    if platform == "darwin":
        return home / "Library" / "Application Support"
    if platform == "win32":
        return Path(os.environ.get("APPDATA") or home / "AppData" / "Roaming")
    return Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")


def claude_desktop_config(home: Path, platform: str = sys.platform) -> Path | None:
    """Claude Desktop's config; None on Linux, which has no Claude Desktop."""
    if platform not in DESKTOP_PLATFORMS:
        return None
    return app_data(home, platform) / "Claude" / "claude_desktop_config.json"


def vscode_user_config(home: Path, platform: str = sys.platform) -> Path:
    """VS Code's user-level MCP config (the file `MCP: Open User Configuration` opens)."""
    return app_data(home, platform) / "Code" / "User" / "mcp.json"


PROFILE_VAR = "BIGMIND_TOOLS"


def server_entry(exe: str, *, typed: bool, tools: str = "full") -> dict[str, Any]:
    """The client's entry for the server; a profile other than full goes in its ``env``."""
    entry: dict[str, Any] = {"command": exe, "args": ["serve"]}
    if tools != "full":
        entry["env"] = {PROFILE_VAR: tools}
    return {"type": "stdio", **entry} if typed else entry


# -- remote servers (the HTTP gateway) ----------------------------------------------------------
# The clients whose config takes a server URL with headers, and how each one's config reads an
# environment variable in a header value when it connects (each client's documented syntax):
# Claude Code expands ${VAR} in .mcp.json's command, args, env, url and headers; VS Code's
# mcp.json takes its predefined variables, ${env:VAR} among them; Cursor's mcp.json
# interpolates ${env:NAME} in command, args, env, url and headers. The token itself is never
# written: only the variable's name.
REMOTE_CLIENTS = ("claude-code", "copilot", "cursor")
TOKEN_SYNTAX = {"claude-code": "${{{}}}", "copilot": "${{env:{}}}", "cursor": "${{env:{}}}"}
LOCAL_KEYS = ("command", "args")  # what a remote entry replaces, and the reverse
REMOTE_KEYS = ("url", "headers")


@dataclass(frozen=True)
class Remote:
    """A remote BigMind server: its MCP URL, and the environment variable holding the token."""

    url: str
    token_env: str


def remote_entry(client: str, remote: Remote, *, typed: bool) -> dict[str, Any]:
    """``client``'s entry for the remote server: its URL, and the token as a reference to the
    environment variable in that client's own syntax."""
    reference = TOKEN_SYNTAX[client].format(remote.token_env)
    entry: dict[str, Any] = {"url": remote.url, "headers": {"Authorization": f"Bearer {reference}"}}
    return {"type": "http", **entry} if typed else entry


def _is_remote(doc: dict[str, Any], keys: tuple[str, ...]) -> bool:
    entry = edits.entry_get(doc, keys)
    return isinstance(entry, dict) and "url" in entry


# -- the kinds of edit ------------------------------------------------------------------------
def _block(client: str, path: Path, what: str, body: str, m: edits.Markers) -> Target:
    where = str(path)
    return Target(
        client,
        path,
        what,
        lambda old: Edit(edits.block_set(old, body, where, m)),
        lambda old: Edit(edits.block_remove(old, where, m)),
        lambda old: edits.block_get(old, where, m) is not None,
    )


def _cursor_rule(path: Path, tools: str) -> Target:
    where = str(path)
    whole = CURSOR_HEAD + edits.block_text(rules_snippet(tools))

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
    remote: Callable[[dict[str, Any]], bool] = lambda doc: False,
) -> Target:
    where = str(path)

    def rewrite(old: str | None, fn: Callable[[dict[str, Any]], None]) -> Edit:
        doc = edits.load_json(old, where)
        new = copy.deepcopy(doc)
        fn(new)
        if old is not None and new == doc:
            return Edit(old)
        # Only what changed is rewritten: the user's other entries, formatting and comments
        # stay byte for byte (jsontext), so removing our part restores the file install found.
        return Edit(jsontext.patch(old, doc, new) if new else None)

    return Target(
        client,
        path,
        what,
        lambda old: rewrite(old, change),
        lambda old: rewrite(old, undo),
        lambda old: present(edits.load_json(old, where)),
        lambda old: remote(edits.load_json(old, where)),
    )


def _server(client: str, path: Path, keys: tuple[str, ...], value: dict[str, Any]) -> Target:
    """The server entry ``value``; its ``env`` (the tool profile) joins the user's variables,
    and a full profile removes the variable an earlier compact install wrote. A remote entry
    (``url``) replaces a local one's command, and a local entry a remote one's URL."""
    where = str(path)
    env = value.get("env", {})
    base = {k: v for k, v in value.items() if k != "env"}
    other = LOCAL_KEYS if "url" in value else REMOTE_KEYS

    def change(doc: dict[str, Any]) -> None:
        edits.entry_set(doc, keys, base, where)
        entry = edits.entry_get(doc, keys)
        for key in other:
            entry.pop(key, None)
        edits.env_var_set(doc, keys, PROFILE_VAR, env.get(PROFILE_VAR))

    return _json_edit(
        client,
        path,
        f'server "{keys[-1]}"',
        change,
        lambda doc: edits.entry_remove(doc, keys),
        lambda doc: edits.entry_get(doc, keys) is not None,
        lambda doc: _is_remote(doc, keys),
    )


def _has_our_hooks(doc: dict[str, Any]) -> bool:
    return any(is_our_hook(c) for c in edits.hook_commands(doc))


def _hooks(path: Path, exe: str) -> Target:
    where = str(path)
    start = shell_command(exe, "context", "--hook")
    end = shell_command(exe, "close", "--hook")

    def change(doc: dict[str, Any]) -> None:
        for event, command, kind in (
            ("SessionStart", start, "context"),
            ("SessionEnd", end, "close"),
        ):
            edits.hook_set(doc, event, command, _our_hook(kind), where, HOOK_TIMEOUT_S)

    return _json_edit(
        "claude-code",
        path,
        "hooks SessionStart/SessionEnd",
        change,
        lambda doc: edits.hook_remove(doc, is_our_hook),
        _has_our_hooks,
    )


def git_exclude(project: Path) -> tuple[Path, str] | None:
    """The ``info/exclude`` file of the git repository ``project`` is in, and the pattern that
    ignores the project's settings.local.json there; None outside a git work tree.

    ``info/exclude`` rather than ``.gitignore``: ignoring a per-machine file changes no file
    the team commits.
    """
    try:
        r = subprocess.run(
            ["git", "-C", str(project), "rev-parse", "--show-prefix", "--git-path", "info/exclude"],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):  # no git here: nothing to ignore it in
        return None
    lines = r.stdout.splitlines()
    if r.returncode != 0 or len(lines) != 2:
        return None
    prefix = re.sub(r"([\\*?\[])", r"\\\1", lines[0])  # gitignore's glob characters
    return project / lines[1], f"/{prefix}{LOCAL_SETTINGS}"


# Per project client: its instruction file, and its MCP config file, key and entry shape
# (VS Code and Claude Code take "type": "stdio"; Cursor and Claude Desktop the bare entry).
PROJECT_FILES: dict[str, tuple[str, str, str, bool]] = {
    "copilot": (".github/copilot-instructions.md", ".vscode/mcp.json", "servers", True),
    "cursor": (".cursor/rules/bigmind.mdc", ".cursor/mcp.json", "mcpServers", False),
    "claude-code": ("CLAUDE.md", ".mcp.json", "mcpServers", True),
}


def targets(
    client: str,
    project: Path | None,
    *,
    home: Path | None = None,
    hooks: bool = True,
    exe: str = "",
    platform: str = sys.platform,
    tools: str = "full",
    remote: Remote | None = None,
) -> list[Target]:
    """The files ``client`` reads, in ``project`` or (None) in the user's own config, with
    BigMind's edit for each (jetbrains: none; it is configured in the IDE's settings dialog,
    see :data:`JETBRAINS_WHERE`). ``platform`` is a sys.platform value; ``tools`` the tool
    profile the entry and the instructions are for; ``remote`` a server to connect to instead
    of starting BigMind (no hooks then: they read the local database)."""
    expand([client])  # an unknown name is an error
    if client == "jetbrains":
        return []
    if remote is not None and client not in REMOTE_CLIENTS:
        raise InvalidInput(f"{client} cannot connect to a remote server")
    home = home or Path.home()
    exe = exe or server_executable()
    hooks = hooks and remote is None
    if project is None:
        return _user_targets(
            client, home, hooks=hooks, exe=exe, platform=platform, tools=tools, remote=remote
        )
    if client == "claude-desktop":
        return []
    rules, config, key, typed = PROJECT_FILES[client]
    entry = (
        server_entry(PROJECT_COMMAND, typed=typed, tools=tools)
        if remote is None
        else remote_entry(client, remote, typed=typed)
    )
    found = [
        _cursor_rule(project / rules, tools)
        if client == "cursor"
        else _block(client, project / rules, "instructions", rules_snippet(tools), edits.HTML),
        _server(client, project / config, (key, SERVER), entry),
    ]
    if client == "claude-code" and hooks:
        # settings.local.json: per machine, so the hooks may name this installation's path;
        # git must not pick it up.
        found.append(_hooks(project / LOCAL_SETTINGS, exe))
        ignore = git_exclude(project)
        if ignore is not None:
            exclude, pattern = ignore
            found.append(
                _block(client, exclude, f"git-ignores {LOCAL_SETTINGS}", pattern, edits.HASH)
            )
    return found


def _user_targets(
    client: str,
    home: Path,
    *,
    hooks: bool,
    exe: str,
    platform: str,
    tools: str,
    remote: Remote | None = None,
) -> list[Target]:
    key = ("mcpServers", SERVER)
    rules = rules_snippet(tools)

    def entry(typed: bool) -> dict[str, Any]:
        if remote is not None:
            return remote_entry(client, remote, typed=typed)
        return server_entry(exe, typed=typed, tools=tools)

    if client == "claude-code":
        found = [
            _block(client, claude_dir(home) / "CLAUDE.md", "instructions", rules, edits.HTML),
            _server(client, claude_json(home), key, entry(True)),
        ]
        if hooks:
            found.append(_hooks(claude_dir(home) / "settings.json", exe))
        return found
    if client == "cursor":
        return [_server(client, home / ".cursor" / "mcp.json", key, entry(False))]
    if client == "copilot":
        config = vscode_user_config(home, platform)
        return [_server(client, config, ("servers", SERVER), entry(True))]
    desktop = claude_desktop_config(home, platform)
    return (
        []
        if desktop is None
        else [_server(client, desktop, key, server_entry(exe, typed=False, tools=tools))]
    )


def skipped(client: str, project: Path | None, platform: str = sys.platform) -> list[Skip]:
    """What ``client`` cannot take at this level, to say so instead of writing it."""
    if client == "claude-desktop" and project is not None:
        return [
            Skip(client, "server", "Claude Desktop has no project files: run without --project")
        ]
    if client == "claude-desktop" and platform not in DESKTOP_PLATFORMS:
        return [Skip(client, "server", "there is no Claude Desktop for Linux: nothing written")]
    own = "the server's own MCP instructions teach the agent"
    if client == "cursor" and project is None:
        return [Skip(client, "rule", f"Cursor has no user rules file; {own} (--project adds one)")]
    if client == "copilot" and project is None:
        return [Skip(client, "instructions", f"none at user level; {own} (--project adds them)")]
    return []


def user_hooks(home: Path) -> Path | None:
    """Claude Code's user settings when they already carry BigMind's hooks (they run in every
    project, so a project needs none of its own), else None."""
    path = claude_dir(home) / "settings.json"
    text = read(path)
    return path if text is not None and _has_our_hooks(edits.load_json(text, str(path))) else None


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


def installed_files(
    project: Path, home: Path | None = None, platform: str = sys.platform
) -> list[ClientFile]:
    """The state of every client file BigMind would write: the user's, then ``project``'s."""
    exe = server_executable()
    out: list[ClientFile] = []
    for place in (None, project):
        for client in CLIENTS:
            for t in targets(client, place, home=home, exe=exe, platform=platform):
                try:
                    old = read(t.path)
                    if old is None or not t.present(old):
                        state = "absent"
                    elif t.remote(old):  # connects to a gateway: nothing to compare it with
                        state = "installed"
                    else:
                        state = "installed" if t.apply(old).text == old else "outdated"
                except InvalidInput as exc:
                    state = f"unreadable: {exc}"
                out.append(ClientFile(client, t.path, t.what, state))
    return out
