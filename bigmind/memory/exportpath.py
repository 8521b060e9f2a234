"""Where an export may be written and an import read: files stay where they belong.

The tool form (``memory_export``) is *confined*: an agent can be asked by any text it reads,
a stored prompt injection included, to write a file, so it writes only inside the data
folder's ``exports/`` — a relative path never climbs out with ``..``, an absolute one must lie
inside too, no symbolic link is written through, and ``overwrite`` replaces only a file that is
itself a BigMind export. The command line (``bigmind export --output PATH``) is the user's own
hand and may write anywhere. Every path is checked as text first (NUL, length of the whole and
of each name), so the operating system is never asked about one it would refuse with an error.
"""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime
from pathlib import Path

from bigmind.errors import ExportError, InvalidInput, NotFound

NAME_MAX = 255  # bytes in one file or folder name (Linux, macOS, Windows)
PATH_MAX = 4096  # bytes in a whole path (Linux)
EXPORT_FORMAT = "bigmind-export"
_EXPORT_HEAD = re.compile(rb'^\s*\{\s*"format"\s*:\s*"' + EXPORT_FORMAT.encode() + rb'"')


def exports_folder(data_dir: Path) -> Path:
    return data_dir / "exports"


def default_export_path(data_dir: Path) -> Path:
    stamp = datetime.now(UTC).strftime("%Y%m%d_%H%M%S")
    return exports_folder(data_dir) / f"bigmind_export_{stamp}.json"


def check_path_text(raw: str, what: str) -> None:
    """Refuse a path the operating system would refuse with an error: NUL, too long."""
    if "\x00" in raw:
        raise InvalidInput(f"{what} holds a NUL character; no path may.")
    data = os.fsencode(raw)
    if len(data) > PATH_MAX:
        raise InvalidInput(f"{what} is {len(data):,} bytes long; a path is at most {PATH_MAX:,}.")
    for name in re.split(rb"[/\\]", data):
        if len(name) > NAME_MAX:
            shown = os.fsdecode(name[:24])
            raise InvalidInput(
                f"{what} has a name of {len(name):,} bytes ({shown}…); a file or folder name "
                f"is at most {NAME_MAX}."
            )


def resolve_export_path(
    output_path: str | None, data_dir: Path, *, confined: bool = True, overwrite: bool = False
) -> Path:
    """The absolute file to write: the default name in ``exports/``, a relative path under
    it, or (``confined=False``: the command line) any absolute path. A folder that does not
    exist is refused, not created (a typo would hide the file)."""
    exports = exports_folder(data_dir)
    if output_path is None or not output_path.strip():
        return default_export_path(data_dir)
    raw = output_path.strip()
    check_path_text(raw, "output_path" if confined else "The output path")
    p = Path(raw) if confined else _home(raw)  # `~` is the shell's: a file name to the tool
    if not p.is_absolute():
        p = exports / p
    if confined:
        _confine(p, exports)
    if p.is_dir():
        raise ExportError(f"{p} is a folder; give a file path such as {p / 'bigmind.json'}.")
    if not p.parent.is_dir() and exports not in (p.parent, *p.parent.parents):  # ours: made
        raise ExportError(
            f"The folder {p.parent} does not exist; create it first or choose another path."
        )
    if confined and overwrite and p.exists() and not is_export(p):
        raise ExportError(
            f"{p} exists and is not a BigMind export; overwrite replaces only an earlier export.",
            tool="Choose another output_path.",
        )
    return p


def _home(raw: str) -> Path:
    """``raw`` with a leading ``~`` or ``~user`` expanded; an unknown user is refused."""
    try:
        return Path(raw).expanduser()
    except RuntimeError as exc:  # "Could not determine home directory"
        raise InvalidInput(f"{raw}: {exc}; give the path without ~.") from exc


def _confine(p: Path, exports: Path) -> None:
    """``p`` lies inside ``exports`` once every link on the way is followed, and is no link."""
    home = os.path.realpath(exports)
    where = os.path.realpath(p)
    if where == home or os.path.commonpath([home, where]) != home:
        raise ExportError(
            f"{p} is outside {exports}: memory_export writes there only.",
            tool=f"Give a file name such as 'backup.json' (written to {exports}); the user can "
            "write anywhere with `bigmind export --output PATH`.",
        )
    if p.is_symlink():
        raise ExportError(
            f"{p} is a symbolic link; an export is never written through one.",
            tool="Choose another output_path.",
        )


def is_export(path: Path) -> bool:
    """Whether the file at ``path`` starts as a BigMind export does."""
    try:
        with path.open("rb") as fh:
            return bool(_EXPORT_HEAD.match(fh.read(512)))
    except OSError:
        return False


def resolve_import_path(input_path: str, data_dir: Path) -> Path:
    """An absolute path, or a relative one found under <data dir>/exports or the working folder."""
    raw = (input_path or "").strip()
    if not raw:
        raise InvalidInput(
            "No export file named.",
            tool="Give input_path: the path memory_export reported.",
            cli="Give the path `bigmind export` printed.",
        )
    check_path_text(raw, "input_path")
    p = _home(raw)
    candidates = [p] if p.is_absolute() else [exports_folder(data_dir) / p, Path.cwd() / p]
    for c in candidates:
        if c.is_file():
            return c
    raise NotFound(
        f"No export file at {' or '.join(str(c) for c in candidates)}.",
        tool="Give the path memory_export reported.",
        cli="Give the path `bigmind export` printed.",
    )
