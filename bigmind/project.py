"""Which project a memory belongs to: found from the client's workspace, never asked of the agent.

A project is a git repository when there is one: its identity (``key``) is the normalised
remote URL of ``origin`` (else the first remote), so two clones of one repository share
their memory; a repository without remotes, or a workspace folder outside git, is known by
its root path. ``BIGMIND_PROJECT`` names one when nothing else does: a path (taken as
above) or a bare name.

Where it comes from, first found wins (PLAN Decision 28): the client's MCP roots (set per
call by :mod:`bigmind.mcp.roots` through :func:`using`), else the git repository holding the
server's working directory (clients start stdio servers in the workspace), else the
setting. Reading ``.git/config`` directly costs a few file reads and needs no git binary.
"""

from __future__ import annotations

import configparser
import contextlib
import re
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

SCOPES = ("project", "global")
SEARCH_SCOPES = ("all", "project")
# Fact categories that hold across projects when no scope is given; every other category
# (codebase, decision, gotcha, bugfix, constraint, …) belongs to the project it was made in.
GLOBAL_CATEGORIES = frozenset(
    {
        "preference",
        "preferences",
        "identity",
        "person",
        "people",
        "personal",
    }
)


@dataclass(frozen=True, slots=True)
class Project:
    """A project's identity (``key``: what rows store), its short name and where it was found."""

    key: str
    name: str
    root: str | None = None


def name_of(key: str) -> str:
    """The short name of a project key: a repository's last path segment, a folder's name."""
    tail = key.split(":", 1)[1] if key.startswith(("path:", "name:")) else key
    return tail.rstrip("/").rsplit("/", 1)[-1] or tail


def normalise_remote(url: str) -> str | None:
    """``host/owner/repo`` for a git remote URL in any of its spellings (https, ssh, scp-like
    ``git@host:owner/repo.git``, with user, port or ``.git``), lowercase host; None if the URL
    names no repository (a local path remote, say)."""
    url = url.strip()
    scp = re.match(r"^(?:[^@/\s]+@)?([^:/\s]+):(?!//)(.+)$", url)
    if "://" in url:
        parts = urlsplit(url)
        if parts.scheme == "file" or not parts.hostname:
            return None
        host, path = parts.hostname.lower(), parts.path
    elif scp and not url.startswith("/"):
        host, path = scp.group(1).lower(), scp.group(2)
    else:
        return None
    path = path.strip("/")
    if path.endswith(".git"):
        path = path[:-4]
    path = path.strip("/")
    return f"{host}/{path}" if path else None


def _git_dir(root: Path) -> Path | None:
    """The git directory of a work tree (a ``.git`` folder, or the file a worktree or
    submodule has instead), the common one for a worktree."""
    dot = root / ".git"
    if dot.is_dir():
        return dot
    if dot.is_file():
        text = dot.read_text(encoding="utf-8", errors="replace").strip()
        if text.startswith("gitdir:"):
            gitdir = (root / text.split(":", 1)[1].strip()).resolve()
            common = gitdir / "commondir"
            if common.is_file():
                return (gitdir / common.read_text(encoding="utf-8").strip()).resolve()
            return gitdir
    return None


def _remote_key(git_dir: Path) -> str | None:
    config = configparser.RawConfigParser(strict=False)
    try:
        config.read(git_dir / "config", encoding="utf-8")
    except (configparser.Error, OSError, UnicodeDecodeError):
        return None
    remotes = [s for s in config.sections() if s.startswith('remote "')]
    remotes.sort(key=lambda s: (s != 'remote "origin"', s))
    for section in remotes:
        url = config.get(section, "url", fallback="")
        key = normalise_remote(url) if url else None
        if key:
            return key
    return None


def repository(path: str | Path) -> Project | None:
    """The git repository containing ``path``, or None."""
    try:
        here = Path(path).expanduser().resolve()
    except (OSError, RuntimeError):
        return None
    for root in (here, *here.parents):
        git_dir = _git_dir(root)
        if git_dir is not None:
            key = _remote_key(git_dir) or f"path:{root}"
            return Project(
                key, name_of(key) if not key.startswith("path:") else root.name, str(root)
            )
    return None


def of_folder(path: str | Path) -> Project:
    """A workspace folder's project: its git repository, else the folder itself."""
    found = repository(path)
    if found is not None:
        return found
    root = Path(path).expanduser().resolve()
    return Project(f"path:{root}", root.name or str(root), str(root))


def from_setting(value: str | None) -> Project | None:
    """``BIGMIND_PROJECT``: a folder (its repository or itself), else a bare name."""
    value = (value or "").strip()
    if not value:
        return None
    if "/" in value or value.startswith(("~", ".")):
        path = Path(value).expanduser()
        if path.is_dir():
            return of_folder(path)
    return Project(f"name:{value}", value)


def detect(cwd: str | Path, setting: str | None) -> Project | None:
    """The project of a process that has no client roots: its working directory's git
    repository, else the setting, else None (memories are then global)."""
    return repository(cwd) or from_setting(setting)


_current: ContextVar[Project | None] = ContextVar("bigmind_project", default=None)


def current() -> Project | None:
    """The project set for the running call by :func:`using` (a client's roots), if any."""
    return _current.get()


@contextlib.contextmanager
def using(project: Project | None) -> Iterator[None]:
    """Run the enclosed calls in ``project`` (None: fall back to the process's project)."""
    token = _current.set(project)
    try:
        yield
    finally:
        _current.reset(token)
