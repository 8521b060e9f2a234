"""Memory in and out of files: the JSON export and its import, hand-written Markdown memories
imported as facts, and a project's Markdown mirror written and its edits pulled back.

The JSON export (:mod:`bigmind.memory.transfer`) goes where :mod:`bigmind.memory.exportpath`
allows: ``exports/`` for a tool (``confined``), any path for a person at the command line.
The Markdown imports check new facts for paraphrases when the embedding model loads; without
it identical texts are still found (``without_model`` is told why, and the running server
checks the new facts later). Each runs in the project a surface names (a folder, a project
key or a known project's name), else the running call's own.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from bigmind import project
from bigmind.errors import BigMindError

if TYPE_CHECKING:
    from bigmind.memory.handwritten import Imported as Imported
    from bigmind.memory.mirror import Pulled as Pulled
    from bigmind.memory.mirror import Written as Written
    from bigmind.memory.transfer import ImportReport as ImportReport
    from bigmind.runtime import Runtime
    from bigmind.search.semantic import Semantic

Progress = Callable[[int, int], None]
Told = Callable[[BigMindError], None]  # why the embedding model did not load


@dataclass(frozen=True, slots=True)
class Exported:
    """Where :func:`export_json` wrote the export, and its rows per table."""

    path: Path
    rows: dict[str, int]


@dataclass(frozen=True, slots=True)
class Merged:
    """The export :func:`import_json` read, and what it added and skipped."""

    path: Path
    report: ImportReport


@dataclass(frozen=True, slots=True)
class MarkdownImport:
    """What :func:`import_markdown` stored, and in which project (key; None: none)."""

    report: Imported
    project: str | None


@dataclass(frozen=True, slots=True)
class MirrorPull:
    """The mirror :func:`pull_mirror` applied (and wrote again), and what it changed."""

    path: Path
    pulled: Pulled


def export_json(
    rt: Runtime,
    output: str | None = None,
    *,
    overwrite: bool = False,
    confined: bool = True,
    progress: Progress | None = None,
) -> Exported:
    """Write the running call's user's whole memory to one JSON file: ``output`` (default:
    a new name in ``exports/``), kept in ``exports/`` when ``confined``.

    Raises:
        ExportError: the path is refused, exists (without ``overwrite``) or cannot be written.
        NoMemoryYet: a one-shot command found no memory (nothing is written).
    """
    from bigmind.memory import exportpath, transfer

    target = exportpath.resolve_export_path(
        output, rt.files_dir, confined=confined, overwrite=overwrite
    )
    rows = transfer.write_export(rt.store, target, overwrite=overwrite, progress=progress)
    return Exported(target, rows)


def import_json(
    rt: Runtime, source: str, mode: str = "merge", progress: Progress | None = None
) -> Merged:
    """Merge an export file (a path, or a name in ``exports/``) into the running call's
    user's memory; importing it again adds nothing.

    Raises:
        NotFound: no such file.
        InvalidInput: a file that is no export, or a row it refuses (nothing of that batch
            is written).
    """
    from bigmind.memory import exportpath, transfer

    path = exportpath.resolve_import_path(source, rt.files_dir)
    report = transfer.import_data(rt.store, transfer.load_export(path), mode, progress)
    rt.wrote()
    return Merged(path, report)


def import_markdown(
    rt: Runtime,
    files: list[Path],
    project_name: str | None = None,
    *,
    without_model: Told | None = None,
) -> MarkdownImport:
    """Store the bullet memories of hand-written Markdown files (CLAUDE.md, AGENTS.md…) as
    facts of the project ``project_name`` names; known ones (the same text, or a paraphrase)
    are not stored again. Every file is read before anything is opened or stored.

    Raises:
        InvalidInput: a file that cannot be read (nothing is stored).
        NotFound: no project of that name.
    """
    from bigmind.memory import handwritten

    parsed = handwritten.read_all(files)
    where = _project(rt, project_name)
    with project.using(where):
        report = handwritten.import_files(rt.store, _semantic(rt, without_model), parsed)
    rt.wrote()
    return MarkdownImport(report, where.key if where else None)


def write_mirror(
    rt: Runtime, project_name: str | None = None, output: Path | None = None
) -> Written:
    """Write the project's memory as an editable Markdown file: ``output``, else the
    project's file in ``<data dir>/mirrors/``."""
    from bigmind.memory import mirror

    where = _project(rt, project_name)
    path = output or mirror.default_path(rt.settings.data_dir, where)
    with project.using(where):
        return mirror.write(rt.store, path)


def pull_mirror(
    rt: Runtime,
    project_name: str | None = None,
    output: Path | None = None,
    *,
    without_model: Told | None = None,
) -> MirrorPull:
    """Apply the edits made in the project's mirror (a changed line updates its fact, a
    deleted one deprecates it, a new one adds a fact), then write it again.

    Raises:
        InvalidInput: the file is missing, mirrors another project, or its header was edited.
    """
    from bigmind.memory import mirror

    where = _project(rt, project_name)
    path = output or mirror.default_path(rt.settings.data_dir, where)
    with project.using(where):
        pulled = mirror.pull(rt.store, _semantic(rt, without_model), path)
    rt.wrote()
    return MirrorPull(path, pulled)


def _project(rt: Runtime, value: str | None) -> project.Project | None:
    """The project named by ``value``, else the running call's."""
    return rt.store.find_project(value) if value else rt.store.project


def _semantic(rt: Runtime, told: Told | None) -> Semantic | None:
    """The model for the paraphrase check, or None (off: nothing said; failed: ``told``)."""
    from bigmind.service import embedding

    loaded = embedding.load(rt, unless_off=True)
    if loaded.error is not None and told is not None:
        told(loaded.error)
    return loaded.semantic
