"""`bigmind install` / `bigmind uninstall`: plan every client edit, back up, then write.

Without ``--project`` the clients are configured for the user (every project on this machine);
with it, the project's own files, which its team commits. BigMind's own source tree is never a
project to wire. All edits are planned first (reading and parsing every file), so one
unreadable config stops the run before anything changed. A file is backed up under
``<data dir>/backups/`` before it is changed or deleted, and written atomically.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import sys
import tempfile
import time
import tomllib
from dataclasses import dataclass, replace
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import bigmind
from bigmind.cli import clients
from bigmind.errors import InvalidInput

CREATED, UPDATED, REMOVED, DELETED, UNCHANGED, SKIPPED = (
    "created",
    "updated",
    "removed",
    "deleted",
    "unchanged",
    "skipped",
)


@dataclass(frozen=True)
class Change:
    """One planned edit of one file; once applied, with where its backup went."""

    client: str
    path: Path | None  # None: skipped, no file
    what: str
    action: str
    text: str | None  # the new content (None: delete the file)
    note: str | None = None
    backup: Path | None = None
    old: str | None = None  # the content it was planned against

    def as_dict(self) -> dict[str, str | None]:
        """The change as reported by ``--json`` (without the file's content)."""
        return {
            "client": self.client,
            "path": str(self.path) if self.path else None,
            "what": self.what,
            "action": self.action,
            "backup": str(self.backup) if self.backup else None,
            "note": self.note,
        }


def _arguments(sp: argparse.ArgumentParser, verb: str) -> None:
    sp.add_argument(
        "--client",
        action="append",
        required=True,
        metavar="NAME",
        help=f"repeatable: {', '.join(clients.CLIENTS)} or all",
    )
    sp.add_argument(
        "--project",
        metavar="PATH",
        help="a project folder: its own client files, which its team commits (default: your "
        "user-level client config, for every project)",
    )
    sp.add_argument("--dry-run", action="store_true", help=f"show what {verb} would change")


def install_arguments(sp: argparse.ArgumentParser) -> None:
    _arguments(sp, "install")
    sp.add_argument(
        "--hooks",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="Claude Code SessionStart/SessionEnd hooks (default: on)",
    )
    sp.add_argument(
        "--tools",
        choices=("full", "compact"),
        default="full",
        help="tool profile: full (every tool, ~5,000 tokens of context) or compact (8 tools, "
        "~1,200 tokens); written as BIGMIND_TOOLS in the server entry (default: full)",
    )
    sp.add_argument(
        "--server",
        metavar="URL",
        help="connect to a BigMind gateway (`bigmind serve --http`) instead of starting "
        f"BigMind: https://host/mcp ({', '.join(clients.REMOTE_CLIENTS)})",
    )
    sp.add_argument(
        "--token-env",
        metavar="NAME",
        help="with --server: the environment variable the client reads the token from when it "
        f"connects; the token is never written to a file (default: {TOKEN_ENV})",
    )


TOKEN_ENV = "BIGMIND_TOKEN"
LOOPBACK = ("127.0.0.1", "localhost", "::1")  # where plain http is allowed (testing)
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{0,99}")


def remote_of(server: str, token_env: str | None) -> clients.Remote:
    """The checked ``--server`` and ``--token-env``: an https:// URL (http:// on this machine
    only), without credentials, query or fragment, ``/mcp`` when it names no path; a valid
    environment variable name."""
    url = server.strip()
    try:
        parts = urlsplit(url)
        host, port = parts.hostname, parts.port
    except ValueError as exc:
        raise InvalidInput(f"--server {server}: not a URL ({exc}).") from exc
    if parts.scheme not in ("https", "http") or not host:
        raise InvalidInput(f"--server {server}: give the gateway's URL, https://host/mcp.")
    if parts.scheme == "http" and host not in LOOPBACK:
        raise InvalidInput(
            f"--server {server}: use https:// (the token travels with every request); plain "
            "http:// is for 127.0.0.1 or localhost only."
        )
    if parts.username or parts.password or parts.query or parts.fragment:
        raise InvalidInput(
            f"--server {url}: no credentials, query or fragment in the URL; the token is read "
            "from --token-env."
        )
    name = TOKEN_ENV if token_env is None else token_env.strip()
    if not _ENV_NAME.fullmatch(name):
        raise InvalidInput(
            f"--token-env {token_env}: not an environment variable name (letters, digits and "
            f"_, not starting with a digit), e.g. {TOKEN_ENV}. Give the variable's name, never "
            "the token."
        )
    netloc = f"[{host}]" if ":" in host else host
    netloc += f":{port}" if port is not None else ""
    path = parts.path if parts.path not in ("", "/") else "/mcp"
    return clients.Remote(urlunsplit((parts.scheme.lower(), netloc, path, "", "")), name)


def _remote_clients(names: list[str]) -> list[str]:
    """``all`` is every client that can connect to a remote server; any other is refused."""
    wanted = list(clients.REMOTE_CLIENTS) if "all" in names else clients.expand(names)
    for name in wanted:
        if name not in clients.REMOTE_CLIENTS:
            raise InvalidInput(
                f"{name} cannot connect to a remote server from a config file; --server works "
                f"with {', '.join(clients.REMOTE_CLIENTS)}."
            )
    return wanted


def uninstall_arguments(sp: argparse.ArgumentParser) -> None:
    _arguments(sp, "uninstall")


def plan(
    names: list[str],
    project: Path | None,
    *,
    remove: bool,
    hooks: bool = True,
    home: Path | None = None,
    platform: str = sys.platform,
    tools: str = "full",
    remote: clients.Remote | None = None,
) -> list[Change]:
    """What install (or uninstall) would do to each client file, without writing anything:
    in ``project``, or (None) in the user's own client config; with ``remote``, entries that
    connect to that server."""
    exe = clients.server_executable()
    home = home or Path.home()
    changes: list[Change] = []
    for client in clients.expand(names):
        skips = [] if remove else clients.skipped(client, project, platform)
        shared = None if remove or not hooks else _hooks_elsewhere(client, project, home)
        skips += [shared] if shared else []
        wanted = remove or (hooks and shared is None)  # uninstall looks for earlier hooks
        changes += [Change(s.client, None, s.what, SKIPPED, None, s.why) for s in skips]
        for t in clients.targets(
            client,
            project,
            home=home,
            hooks=wanted,
            exe=exe,
            platform=platform,
            tools=tools,
            remote=remote,
        ):
            old = clients.read(t.path)
            if remove:
                if old is None or not t.present(old):
                    continue
                edit = t.revert(old)
                action = DELETED if edit.text is None else REMOVED
            else:
                edit = t.apply(old)
                action = CREATED if old is None else UPDATED
            if edit.text == old:
                action = UNCHANGED
            changes.append(Change(client, t.path, t.what, action, edit.text, edit.note, old=old))
    return changes


def _hooks_elsewhere(client: str, project: Path | None, home: Path) -> clients.Skip | None:
    """A project's hooks are skipped when the user's settings already run them everywhere:
    twice, the packet would reach the agent twice."""
    if project is None or client != "claude-code":
        return None
    at = clients.user_hooks(home)
    why = f"already in {at} (user level), which runs them in every project"
    return None if at is None else clients.Skip(client, "hooks", why)


def apply(changes: list[Change], backups: Path) -> list[Change]:
    """Write the planned changes; back up each existing file first."""
    todo = [c for c in changes if c.action not in (UNCHANGED, SKIPPED) and c.path]
    for c in todo:
        if c.path is not None and clients.read(c.path) != c.old:
            raise InvalidInput(
                f"{c.path} changed while BigMind was planning its edit (Claude Code rewrites "
                "its files often): run the command again; nothing was written."
            )
    folder: Path | None = None
    done: list[Change] = []
    for c in changes:
        backup = None
        if c in todo and c.path is not None:
            if c.path.exists():
                folder = folder or _backup_folder(backups)
                backup = _backup(c.path, folder)
            if c.text is None:
                c.path.unlink()
                _prune_empty_dirs(c.path.parent)
            else:
                _write(c.path, c.text)
        done.append(replace(c, backup=backup))
    return done


def bigmind_checkout(folder: Path) -> Path | None:
    """The BigMind source tree ``folder`` is in (itself or a parent), or None.

    A source tree is a pyproject.toml whose project is ``bigmind`` beside the ``bigmind``
    package, or the folder the running package was imported from when that has a
    pyproject.toml (an editable install, whatever the project is called there).
    """
    running = Path(bigmind.__file__).resolve().parent.parent
    here = folder.resolve()
    for d in (here, *here.parents):
        if (d / "pyproject.toml").is_file() and (d == running or _names_bigmind(d)):
            return d
    return None


def _names_bigmind(folder: Path) -> bool:
    if not (folder / "bigmind" / "__init__.py").is_file():
        return False
    try:
        meta = tomllib.loads((folder / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return False
    project = meta.get("project")
    return isinstance(project, dict) and project.get("name") == "bigmind"


def _backup_folder(backups: Path) -> Path:
    """A new folder per run (two runs in one second keep both backups)."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    for n in range(1, 1000):
        folder = backups / (stamp if n == 1 else f"{stamp}-{n}")
        try:
            folder.mkdir(parents=True)
            return folder
        except FileExistsError:
            continue
    raise InvalidInput(f"Too many backup folders named {stamp}* in {backups}.")


def _backup(path: Path, folder: Path) -> Path:
    # The whole absolute path under the folder: two projects' CLAUDE.md never collide.
    target = folder / path.absolute().relative_to(path.absolute().anchor)
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(path, target)
    return target


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = path.stat().st_mode if path.exists() else None
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as f:
            f.write(text)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, path)
    except OSError:
        Path(tmp).unlink(missing_ok=True)
        raise


def _prune_empty_dirs(folder: Path) -> None:
    """Remove the folders install created for its files (.vscode, .cursor/rules…) once empty."""
    for d in (folder, folder.parent):
        if d.name in (".vscode", ".github", ".cursor", "rules", ".claude", "Claude"):
            try:
                d.rmdir()
            except OSError:  # not empty, or not ours to remove
                return


def _run(args: argparse.Namespace, *, remove: bool) -> int:
    from bigmind.cli.main import load_settings

    project = None
    if args.project is not None:
        project = Path(args.project).expanduser().absolute()
        if not project.is_dir():
            raise InvalidInput(f"--project {args.project}: no such folder.")
        checkout = None if remove else bigmind_checkout(project)  # uninstall may clean it up
        if checkout is not None:
            raise InvalidInput(
                f"{checkout} is BigMind's own source tree, not a project to wire: pass "
                "--project with the project you work on, or leave --project out to configure "
                "your clients at user level."
            )
    tools = getattr(args, "tools", "full")
    remote = _remote(args, tools)
    names = clients.expand(args.client) if remote is None else _remote_clients(args.client)
    if remote is not None and not os.environ.get(remote.token_env):
        print(
            f"bigmind: warning: {remote.token_env} is not set here. The client reads it when it "
            f"connects: set it (to the token `bigmind token create USER` printed) where the "
            "client is started.",
            file=sys.stderr,
        )
    hooks = getattr(args, "hooks", True) and remote is None  # hooks read the local database
    changes = plan(names, project, remove=remove, hooks=hooks, tools=tools, remote=remote)
    backups = load_settings().data_dir / "backups"
    try:
        done = changes if args.dry_run else apply(changes, backups)
    except OSError as exc:
        raise InvalidInput(f"Could not write {exc.filename}: {exc.strerror}") from exc
    _report(done, names, args, remove=remove, user_level=project is None, remote=remote)
    return 0


def _remote(args: argparse.Namespace, tools: str) -> clients.Remote | None:
    server, token_env = getattr(args, "server", None), getattr(args, "token_env", None)
    if server is None:
        if token_env is not None:
            raise InvalidInput("--token-env goes with --server URL (a remote BigMind).")
        return None
    if tools != "full":
        raise InvalidInput(
            "--tools applies to a BigMind this machine starts; the gateway's own "
            "BIGMIND_TOOLS decides a remote server's tools."
        )
    return remote_of(server, token_env)


def cmd_install(args: argparse.Namespace) -> int:
    """Write BigMind's instructions and server entry into each client's files."""
    return _run(args, remove=False)


def cmd_uninstall(args: argparse.Namespace) -> int:
    """Remove what install wrote; everything else in those files stays."""
    return _run(args, remove=True)


def _report(
    done: list[Change],
    names: list[str],
    args: argparse.Namespace,
    *,
    remove: bool,
    user_level: bool,
    remote: clients.Remote | None = None,
) -> None:
    jetbrains = "jetbrains" in names
    if args.json:
        out: dict[str, object] = {
            "dry_run": bool(args.dry_run),
            "level": "user" if user_level else "project",
            "changes": [d.as_dict() for d in done],
        }
        if jetbrains:
            out["jetbrains"] = _jetbrains(remove, getattr(args, "tools", "full"))
        if remote is not None:
            out["server"] = {"url": remote.url, "token_env": remote.token_env}
        print(json.dumps(out, indent=1, ensure_ascii=False))
        return
    verb = "would be " if args.dry_run else ""
    for d in done:
        if d.action == SKIPPED:
            print(f"{d.client:<15} {SKIPPED:<9} {d.what}: {d.note}")
            continue
        extra = f" (backup: {d.backup})" if d.backup else ""
        extra += f"; {d.note}" if d.note else ""
        print(f"{d.client:<15} {verb}{d.action:<9} {d.path}: {d.what}{extra}")
    if not done and (remove or not jetbrains):
        print("Nothing to " + ("remove: BigMind is not installed there." if remove else "do."))
    if jetbrains:
        j = _jetbrains(remove, getattr(args, "tools", "full"))
        print(f"\n{j['where']}\n")
        if not remove:
            print(j["server_json"])
            print()
            print(j["instructions"])
    if remove:
        return
    if remote is not None:
        print(
            f"\nConnects to {remote.url}; the token is read from ${remote.token_env} when the "
            "client starts (never written to these files)."
        )
    elif user_level:
        print(
            "\nConfigured for your user: every project on this machine. To wire one project "
            "for its whole team (files it commits; they start `bigmind` from PATH):\n"
            "  bigmind install --client NAME --project PATH"
        )
    elif (note := _path_note()) is not None:
        print(f"\n{note}", file=sys.stderr)
    if not args.dry_run and any(d.action not in (UNCHANGED, SKIPPED) for d in done):
        print(
            "\nRestart the client (or reload its MCP servers) to pick BigMind up; "
            "`bigmind doctor` checks the install.",
            file=sys.stderr,
        )


def _path_note() -> str | None:
    """What is wrong with the ``bigmind`` a project's files will start, if anything."""
    exe = Path(clients.server_executable())
    found = shutil.which(clients.PROJECT_COMMAND)
    if found is None:
        return (
            f"Note: `{clients.PROJECT_COMMAND}` is not on PATH, and the project's MCP files "
            f"start it by that name: add {exe.parent} to PATH, or link {exe} into a folder on "
            "it (install_proc.sh links it into ~/.local/bin)."
        )
    if Path(found).resolve() != exe.resolve():
        return (
            f"Note: `{clients.PROJECT_COMMAND}` on PATH is {found}, not this installation "
            f"({exe}): the project's clients will start that one."
        )
    return None


def _jetbrains(remove: bool, tools: str) -> dict[str, str]:
    if remove:
        return {
            "where": "JetBrains: remove the `bigmind` server under Settings | Tools | AI Assistant "
            "| Model Context Protocol (MCP), and the BigMind rule under AI Assistant | Rules."
        }
    entry = clients.server_entry(clients.server_executable(), typed=False, tools=tools)
    return {
        "where": clients.JETBRAINS_WHERE,
        "server_json": json.dumps({"mcpServers": {clients.SERVER: entry}}, indent=2),
        "instructions": clients.rules_snippet(tools),
    }
