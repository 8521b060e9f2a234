"""``bigmind model fetch``: the hub's ready ONNX export of all-MiniLM-L6-v2, checked, no torch.

The ``sentence-transformers/all-MiniLM-L6-v2`` repository on the Hugging Face hub publishes
``onnx/model.onnx`` beside ``tokenizer.json`` and its configs; a mirror (``--url``,
``BIGMIND_MODEL_URL``) is the same files under another base URL. The two large files are
downloaded into ``.<name>.download/`` beside the target, as ``*.part`` files first, so an
interrupted download resumes with an HTTP Range request (a server that ignores Range sends
the whole file, which then replaces the part). The model is installed only if it reproduces
the reference embeddings shipped in the package (``reference_embeddings.json``, made from the
exported model, see tests/search/test_modelfetch.py) within 1e-3; anything else — another model, a
truncated or flipped file — is refused and deleted. The int8 model is then made here from the
download (``modelquant.py``) when ``onnx`` is installed; without it only the float model is
installed (the server runs it, and says how to get the faster one). The standard library's
``urllib`` does the HTTP: no dependency for two GET requests with a Range header.
"""

from __future__ import annotations

import http.client
import json
import logging
import shutil
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.error import HTTPError, URLError
from urllib.parse import urlsplit
from urllib.request import Request, urlopen

from bigmind import __version__
from bigmind.config import Settings
from bigmind.errors import BackendUnavailable, DownloadError
from bigmind.search import modelquant
from bigmind.search.embedder import (
    INT8_FILE,
    METADATA_FILE,
    ONNX_FILE,
    TOKENIZER_FILE,
    ModelMetadata,
    OnnxEmbedder,
    resolve_model_dir,
)
from bigmind.search.modelcache import (
    DEFAULT_HUB_NAME,
    DEFAULT_MODEL_ID,
    check_target,
    locked,
    sha256,
    swap_into_place,
)

REMOTE_ONNX = "onnx/model.onnx"
# (path in the repository, file in the model directory), small first: a wrong mirror fails fast.
LARGE_FILES = ((TOKENIZER_FILE, TOKENIZER_FILE), (REMOTE_ONNX, ONNX_FILE))
# What the model directory's metadata is made of: the dimension, the sequence limit, the pooling.
CONFIG_FILES = ("config.json", "sentence_bert_config.json", "1_Pooling/config.json")
REFERENCE_FILE = "reference_embeddings.json"
MAX_ABS_DIFF = 1e-3
TIMEOUT_S = 30.0
CHUNK = 1 << 16
MAX_CONFIG_BYTES = 1 << 20
USER_AGENT = f"bigmind/{__version__} (model fetch)"

log = logging.getLogger(__name__)

Progress = Callable[[str, int, int], None]
"""Called as bytes arrive: (file in the repository, bytes so far, bytes in all; 0 if unknown)."""


@dataclass(frozen=True)
class FetchReport:
    """What :func:`fetch_model` installed (or found already installed)."""

    target: Path
    model_id: str
    dim: int
    onnx_bytes: int
    fetched: bool  # False: a model was already there (and ``force`` was not given)
    max_abs_diff: float | None  # against the reference embeddings; None when not fetched
    int8: bool = False  # the directory holds the int8 model
    int8_cosine: float | None = None  # its mean cosine to the float model's; None: not made now


@dataclass(frozen=True)
class Reference:
    """The shipped reference: sentences and what all-MiniLM-L6-v2 makes of them."""

    model_id: str
    dim: int
    sentences: tuple[str, ...]
    vectors: Any  # float32 array (len(sentences), dim)


def fetch_model(
    base_url: str,
    target: Path,
    *,
    force: bool = False,
    progress: Progress | None = None,
    stop: threading.Event | None = None,
    waiting: Callable[[], None] | None = None,
    int8: bool = True,
) -> FetchReport:
    """Download the model under ``base_url`` into ``target``, check it, install it.

    Under the lock of ``target`` (``waiting`` is called if another process holds it). With a
    model already at ``target`` nothing is downloaded unless ``force``. A set ``stop`` ends
    the download at the next chunk (the ``.part`` files stay, to resume). With ``int8`` and
    ``onnx`` installed the int8 model is made too. Raises DownloadError, saying what failed
    and what to do; nothing is installed then.
    """
    base = normalize_url(base_url)
    target = Path(target).expanduser().resolve()
    check_target(target, DownloadError)
    try:
        with locked(target, stop=stop, waiting=waiting):
            if not force and _installed(target):
                meta = ModelMetadata.read(target)
                size = (target / ONNX_FILE).stat().st_size
                has_int8 = (target / INT8_FILE).is_file()
                return FetchReport(target, meta.model_id, meta.dim, size, False, None, has_int8)
            work = target.with_name(f".{target.name}.download")
            work.mkdir(exist_ok=True)
            configs = {name: _get_json(base, name) for name in CONFIG_FILES}
            dim, max_len = _shape(configs, base)
            for remote, local in LARGE_FILES:
                _download(base + remote, work / local, remote, progress, stop)
            meta = ModelMetadata(
                model_id=DEFAULT_MODEL_ID,
                dim=dim,
                max_seq_length=max_len,
                source=base,
                exported_at=datetime.now(UTC).isoformat(timespec="seconds"),
                onnx_sha256=sha256(work / ONNX_FILE),
            )
            meta.write(work)
            try:
                diff = verify(work, base)
                cosine = _quantised(work, meta) if int8 else None
            except DownloadError:
                shutil.rmtree(work, ignore_errors=True)  # never resume what was refused
                raise
            size = (work / ONNX_FILE).stat().st_size
            swap_into_place(work, target, DownloadError)
    except OSError as exc:  # the cache folder: permissions, a file in the way, a full disk
        where = exc.filename or target.parent
        in_the_way = isinstance(exc, FileExistsError | NotADirectoryError)
        why = "a file is in the way" if in_the_way else exc.strerror or exc
        raise DownloadError(
            f"Cannot write the model under {where}: {why}; free some space or choose another "
            "folder (--to, or BIGMIND_HOME)."
        ) from exc
    return FetchReport(
        target, meta.model_id, meta.dim, size, True, diff, cosine is not None, cosine
    )


def _quantised(work: Path, meta: ModelMetadata) -> float | None:
    """Make and check the int8 model in ``work``: its mean cosine to the float model's, or
    None (said in the log) when it cannot be made or is not close enough; the float model is
    installed either way."""
    if not modelquant.can_quantise():
        log.warning(
            "onnx is not installed: only the float model was installed; `pip install onnx` "
            "and `bigmind model fetch --force` add the int8 model (about twice as fast)"
        )
        return None
    try:
        modelquant.quantise(work, DownloadError)
        cosine = modelquant.check(work, reference().sentences, DownloadError)
    except DownloadError as exc:
        log.warning("only the float model was installed: %s", exc)
        return None
    replace(meta, int8_sha256=sha256(work / INT8_FILE)).write(work)
    return cosine


def auto_fetch_target(settings: Settings) -> Path | None:
    """Where the server downloads the model on its first start, or None: only the default
    model, by name, when it is in neither model folder and downloading is allowed."""
    if settings.offline or settings.embed_model.strip() != DEFAULT_MODEL_ID:
        return None
    found = resolve_model_dir(settings)
    if found is None or found.is_dir():
        return None
    return found


def normalize_url(url: str) -> str:
    """``url`` as a base for the repository's file paths (ends with ``/``)."""
    url = url.strip()
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise DownloadError(
            f"{url!r} is not an http(s) URL; --url / BIGMIND_MODEL_URL must be the base URL of "
            f"a copy of {DEFAULT_HUB_NAME} (for the hub: https://huggingface.co/"
            f"{DEFAULT_HUB_NAME}/resolve/main/)."
        )
    return url if url.endswith("/") else url + "/"


@cache
def reference() -> Reference:
    """The reference embeddings shipped in the package."""
    import numpy as np

    raw = json.loads(
        resources.files("bigmind.search").joinpath(REFERENCE_FILE).read_text(encoding="utf-8")
    )
    vectors = np.asarray(raw["embeddings"], dtype=np.float32)
    return Reference(raw["model_id"], int(raw["dim"]), tuple(raw["sentences"]), vectors)


def compare(embedder: OnnxEmbedder) -> tuple[float, str]:
    """The largest |difference| from the reference embeddings, and its sentence."""
    import numpy as np

    ref = reference()
    got = embedder.embed(list(ref.sentences))
    per_sentence = np.nan_to_num(np.abs(got - ref.vectors), nan=np.inf).max(axis=1)
    worst = int(per_sentence.argmax())
    return float(per_sentence[worst]), ref.sentences[worst]


def verify(model_dir: Path, source: str) -> float:
    """Refuse (DownloadError) a model that does not reproduce the reference embeddings."""
    from onnxruntime.capi import onnxruntime_pybind11_state as ort_state

    ref = reference()
    refused = f"it was not installed: {source} does not serve {DEFAULT_HUB_NAME} intact"
    try:
        emb = OnnxEmbedder(model_dir)
    except BackendUnavailable as exc:
        raise DownloadError(f"The downloaded model does not load ({exc}); {refused}.") from exc
    if emb.dim != ref.dim:
        raise DownloadError(
            f"The downloaded model makes {emb.dim}-dimensional vectors, {ref.model_id} "
            f"{ref.dim}-dimensional ones; {refused}."
        )
    try:
        diff, sentence = compare(emb)
    except (ort_state.Fail, ort_state.InvalidArgument, ort_state.RuntimeException) as exc:
        raise DownloadError(f"The downloaded model cannot embed ({exc}); {refused}.") from exc
    if not diff <= MAX_ABS_DIFF:
        shown = sentence if len(sentence) <= 60 else sentence[:57] + "..."
        raise DownloadError(
            f"The downloaded model's embedding of {shown!r} differs from {ref.model_id}'s by "
            f"{diff:.2g} (more than {MAX_ABS_DIFF:g}): another model, or a corrupt file; "
            f"{refused}."
        )
    return diff


def _installed(target: Path) -> bool:
    """A complete model directory is at ``target``."""
    if not all((target / f).is_file() for f in (ONNX_FILE, TOKENIZER_FILE, METADATA_FILE)):
        return False
    try:
        ModelMetadata.read(target)
    except BackendUnavailable:
        return False
    return True


def _shape(configs: dict[str, dict[str, Any]], base: str) -> tuple[int, int]:
    """(dimension, max sequence length) from the repository's configs; only mean pooling."""
    pooling = configs["1_Pooling/config.json"]
    if not pooling.get("pooling_mode_mean_tokens", False):
        raise DownloadError(
            f"The model at {base} does not use mean pooling (1_Pooling/config.json); BigMind "
            f"runs only mean-pooling models such as {DEFAULT_HUB_NAME}."
        )
    dim = configs["config.json"].get("hidden_size")
    max_len = configs["sentence_bert_config.json"].get("max_seq_length")
    if not isinstance(dim, int) or not isinstance(max_len, int) or dim <= 0 or max_len <= 0:
        raise DownloadError(
            f"The configs at {base} give no dimension (config.json hidden_size={dim!r}) or "
            f"no sequence limit (sentence_bert_config.json max_seq_length={max_len!r})."
        )
    return dim, max_len


def _open(url: str, remote: str, start: int = 0) -> http.client.HTTPResponse:
    """GET ``url`` (from byte ``start``); one clear DownloadError for every failure."""
    headers = {"User-Agent": USER_AGENT}
    if start:
        headers["Range"] = f"bytes={start}-"
    try:
        resp: http.client.HTTPResponse = urlopen(Request(url, headers=headers), timeout=TIMEOUT_S)
    except HTTPError as exc:
        exc.close()
        if exc.code == 404:
            raise DownloadError(
                f"{remote} is missing at {url} (HTTP 404): --url / BIGMIND_MODEL_URL must be a "
                f"copy of {DEFAULT_HUB_NAME} laid out as on the Hugging Face hub "
                "(onnx/model.onnx, tokenizer.json, config.json, …)."
            ) from exc
        if exc.code == 416 and start:
            raise  # the .part is whole or longer than the file: the caller starts over
        raise DownloadError(f"{url} answered HTTP {exc.code} {exc.reason}.") from exc
    except (URLError, http.client.HTTPException, OSError) as exc:  # refused, DNS, TLS, timeout
        reason = exc.reason if isinstance(exc, URLError) else exc
        host = urlsplit(url).netloc
        raise DownloadError(
            f"Cannot reach {host} to download the embedding model ({reason}); check the "
            "network or the mirror (--url, BIGMIND_MODEL_URL), or make the model without "
            "internet: `bigmind model export`."
        ) from exc
    return resp


def _get_json(base: str, remote: str) -> dict[str, Any]:
    """A small JSON file of the repository."""
    url = base + remote
    with _open(url, remote) as resp:
        try:
            body = resp.read(MAX_CONFIG_BYTES + 1)
        except (http.client.HTTPException, OSError) as exc:
            raise DownloadError(f"The download of {url} broke off ({exc}).") from exc
    try:
        data = json.loads(body) if len(body) <= MAX_CONFIG_BYTES else None
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise DownloadError(f"{url} is not a JSON config ({remote} of {DEFAULT_HUB_NAME}).")
    return data


def _download(
    url: str, dest: Path, remote: str, progress: Progress | None, stop: threading.Event | None
) -> None:
    """``url`` into ``dest`` through ``dest.part``, resuming what an earlier run left."""
    if dest.is_file():
        return  # finished by an earlier, interrupted run
    part = dest.with_name(dest.name + ".part")
    part.parent.mkdir(parents=True, exist_ok=True)
    have = part.stat().st_size if part.is_file() else 0
    try:
        resp = _open(url, remote, have)
    except HTTPError:  # 416: nothing left to send from there; the part is not trusted
        part.unlink()
        have, resp = 0, _open(url, remote)
    with resp:
        start, total = _span(resp, have)
        if start not in (0, have):
            part.unlink()
            raise _broken(url, have, total, f"the server sent bytes from {start}, not {have}")
        have = done = start  # 0: the server ignored Range (200) and sends it all: start over
        with part.open("ab" if have else "wb") as out:
            while True:
                if stop is not None and stop.is_set():
                    raise DownloadError(
                        f"The download of {remote} was stopped; it resumes next time."
                    )
                try:
                    chunk = resp.read(CHUNK)
                except (http.client.HTTPException, OSError) as exc:
                    raise _broken(url, done, total, exc) from exc
                if not chunk:
                    break
                out.write(chunk)
                done += len(chunk)
                if progress is not None:
                    progress(remote, done, total)
    if total and done != total:
        raise _broken(url, done, total, "the connection closed early")
    part.replace(dest)


def _span(resp: http.client.HTTPResponse, have: int) -> tuple[int, int]:
    """(first byte sent, size of the whole file; 0 if unknown) of a 200 or 206 answer."""
    length = int(resp.headers.get("Content-Length") or 0)
    if resp.status != 206:
        return 0, length
    # Content-Range: bytes 1000-9999/10000
    span, _, size = (resp.headers.get("Content-Range") or "").partition("/")
    first = span.removeprefix("bytes ").partition("-")[0]
    try:
        return int(first), int(size) if size.strip() != "*" else have + length
    except ValueError:
        return -1, 0  # unreadable: treated as a span we did not ask for


def _broken(url: str, done: int, total: int, why: object) -> DownloadError:
    of = f" of {total:,}" if total else ""
    return DownloadError(
        f"The download of {url} broke off after {done:,}{of} bytes ({why}); run "
        "`bigmind model fetch` again to resume it."
    )
