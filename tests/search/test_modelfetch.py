"""`bigmind model fetch` and the server's first-start download, against a mirror on 127.0.0.1.

The real download code runs against ``tests/model_mirror.py``: the tests' exported MiniLM laid
out as the Hugging Face hub lays it out, behind a small HTTP server that honours Range and can
break off, ignore Range, or hold a file back until the test lets it go.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
from cli_run import run_cli
from conftest import free_port
from fastmcp import Client
from mcp_calls import call
from model_fixture import ready
from model_mirror import ONNX, Mirror, build_mirror, replace, serving

from bigmind.config import Settings
from bigmind.errors import DownloadError
from bigmind.mcp.server import build_server
from bigmind.runtime import Runtime
from bigmind.search import modelfetch
from bigmind.search.embedder import (
    INT8_FILE,
    METADATA_FILE,
    ModelMetadata,
    OnnxEmbedder,
    resolve_model_dir,
)
from bigmind.search.modelcache import sha256
from bigmind.search.modelfetch import (
    MAX_ABS_DIFF,
    REFERENCE_FILE,
    auto_fetch_target,
    compare,
    fetch_model,
)
from bigmind.storage.connect import open_database

pytestmark = pytest.mark.anyio

BIGMIND = Path(sys.executable).parent / "bigmind"
REFERENCE = Path(modelfetch.__file__).with_name(REFERENCE_FILE)
HEAD = (
    "The payments service publishes every settled invoice to RabbitMQ; the ledger consumes "
    "the queue, retries failed writes three times and then parks the message for a human. "
)
TAIL = (
    "Unrelated notes from the design review: the profile page should load in under a second, "
    "the colour palette moves to a darker blue, and the on-call rotation changes every "
    "Monday at nine. "
)
# What the shipped reference embeds: short and one-word texts, non-ASCII, code, and a long
# text whose second half lies past 128 tokens (a model cut at 128 differs by ~0.08).
SENTENCES = [
    "Which testing library do we use?",
    "The team prefers pytest for tests.",
    "ok",
    "Déjà vu: naïve café owners in Zürich serve crème brûlée — 東京でラーメン 🍜!",
    "def add(a: int, b: int) -> int:\n    return a + b  # trivial helper",
    (HEAD * 3 + TAIL * 4).strip(),
]
FACTS = [
    ("preference", "The user prefers pytest for all Python tests"),
    ("decision", "Deployments go out through GitHub Actions on every merge to main"),
    ("codebase", "The database is PostgreSQL 16 with the pgvector extension"),
]


# -- the reference embeddings ------------------------------------------------------------------
def write_reference(embedder: OnnxEmbedder, path: Path) -> None:
    """The reference file: one vector per line, rounded to 6 decimals (~25 KB)."""
    vectors = embedder.embed(SENTENCES)
    head = {
        "model_id": embedder.model_id,
        "dim": embedder.dim,
        "max_seq_length": embedder.max_seq_length,
        "made_by": "REGENERATE_REFERENCE=1 pytest tests/search/test_modelfetch.py -k reference",
        "sentences": SENTENCES,
    }
    rows = ",\n".join("  " + json.dumps([round(float(x), 6) for x in v]) for v in vectors)
    body = json.dumps(head, ensure_ascii=False, indent=1)[:-2]
    path.write_text(f'{body},\n "embeddings": [\n{rows}\n ]\n}}\n', encoding="utf-8")


def test_the_reference_embeddings_come_from_the_exported_model(embedder: OnnxEmbedder) -> None:
    if os.environ.get("REGENERATE_REFERENCE"):
        write_reference(embedder, REFERENCE)
        modelfetch.reference.cache_clear()
    ref = modelfetch.reference()
    assert list(ref.sentences) == SENTENCES and ref.vectors.shape == (len(SENTENCES), 384)
    assert len(embedder._tokenizer.encode(SENTENCES[-1]).ids) == 256  # really truncated
    diff, _sentence = compare(embedder)
    assert diff < 1e-5  # rounding to 6 decimals, and nothing else
    assert REFERENCE.stat().st_size < 40_000


def test_the_reference_is_shipped_inside_the_package() -> None:
    from importlib import resources

    assert resources.files("bigmind.search").joinpath(REFERENCE_FILE).is_file()
    root = Path(__file__).resolve().parents[2]
    wheel = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["hatch"]["build"]
    # hatchling puts every file under the package in the wheel unless excluded or git-ignored.
    assert wheel["targets"]["wheel"] == {"packages": ["bigmind"]} and "exclude" not in wheel
    ignored = subprocess.run(["git", "check-ignore", "-q", str(REFERENCE)], cwd=root, check=False)
    assert ignored.returncode == 1  # not ignored


# -- the mirror --------------------------------------------------------------------------------
@pytest.fixture
def mirror_root(tmp_path: Path, model_dir: Path) -> Path:
    return build_mirror(tmp_path / "mirror", model_dir)


@pytest.fixture
def mirror(mirror_root: Path) -> Iterator[Mirror]:
    with serving(mirror_root) as m:
        yield m


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """BIGMIND_HOME in tmp; the database elsewhere (the conftest's tmp/data)."""
    folder = tmp_path / "bm-home"
    monkeypatch.setenv("BIGMIND_HOME", str(folder))
    return folder


def installed(home: Path) -> Path:
    return home / "models" / "all-MiniLM-L6-v2"


@pytest.mark.timeout(180)  # quantising alone is ~2.5 s of CPU; 60+ s when busy
def test_a_fetch_installs_a_checked_model_with_its_metadata(mirror: Mirror, home: Path) -> None:
    target = installed(home)
    seen: list[tuple[str, int, int]] = []
    report = fetch_model(mirror.url, target, progress=lambda *a: seen.append(a))
    assert report.fetched and report.target == target and report.dim == 384
    assert report.max_abs_diff is not None and report.max_abs_diff <= MAX_ABS_DIFF
    meta = ModelMetadata.read(target)
    assert meta.model_id == "all-MiniLM-L6-v2" and meta.max_seq_length == 256
    assert meta.source == mirror.url and len(meta.onnx_sha256) == 64
    assert sorted(p.name for p in target.iterdir()) == [
        METADATA_FILE,
        "model.onnx",
        "model_int8.onnx",
        "tokenizer.json",
    ]
    # The int8 model was made from the download and held to the float model's vectors.
    assert report.int8 and report.int8_cosine is not None and report.int8_cosine >= 0.975
    assert meta.int8_sha256 == sha256(target / INT8_FILE)
    assert [p.name for p in target.parent.iterdir() if ".download" in p.name] == []
    onnx_total = seen[-1][2]
    assert seen[-1] == (ONNX, onnx_total, onnx_total) and onnx_total > 80_000_000
    # Installed: a second fetch downloads nothing.
    asked = len(mirror.requests)
    assert not fetch_model(mirror.url, target).fetched
    assert len(mirror.requests) == asked


async def test_a_fresh_fetch_gives_semantic_search_wherever_the_database_is(
    mirror: Mirror, home: Path, settings_for: Callable[[str], Settings]
) -> None:
    fetch_model(mirror.url, installed(home), int8=False)  # the float model runs then
    settings = settings_for("alice")  # BIGMIND_HOME from the environment, the database in tmp/data
    assert settings.home == home and not settings.db_path.is_relative_to(home)
    assert resolve_model_dir(settings) == installed(home)
    rt = Runtime(settings, background=True)
    try:
        async with Client(build_server(settings, rt)) as client:
            for category, fact in FACTS:
                await call(client, "memory_store_fact", category=category, fact=fact)
            ready(rt)
            text, data = await call(client, "memory_recall", query="how do releases ship")
    finally:
        rt.close()
    top = data["results"][0]
    assert "GitHub Actions" in top["text"] and "semantic #1" in top["why"], text
    assert data["note"] is None


def test_a_broken_download_resumes_where_it_stopped(mirror: Mirror, home: Path) -> None:
    target = installed(home)
    mirror.cut_after[ONNX] = 10_000_000
    with pytest.raises(DownloadError, match=r"broke off after 10,000,000 of [\d,]+ bytes.*resume"):
        fetch_model(mirror.url, target)
    part = target.with_name(f".{target.name}.download") / "model.onnx.part"
    assert part.stat().st_size == 10_000_000 and not target.exists()
    del mirror.cut_after[ONNX]
    assert fetch_model(mirror.url, target, int8=False).fetched
    onnx_asks = [r for p, r in mirror.requests if p == ONNX]
    assert onnx_asks == [None, "bytes=10000000-"]
    assert OnnxEmbedder(target).dim == 384  # verified and whole


def test_a_server_that_ignores_range_starts_the_file_over(mirror: Mirror, home: Path) -> None:
    target = installed(home)
    work = target.with_name(f".{target.name}.download")
    work.mkdir(parents=True)
    (work / "model.onnx.part").write_bytes(b"\xff" * 1_000_000)  # appended to, it would break
    mirror.ignore_range = True
    assert fetch_model(mirror.url, target, int8=False).fetched
    assert ("onnx/model.onnx", "bytes=1000000-") in mirror.requests
    assert OnnxEmbedder(target).dim == 384


def _flipped(model_dir: Path) -> bytes:
    """4 KB flipped in the encoder's weights. (The first half of the file is the token table:
    a flip in the rows of words the reference sentences do not use goes unnoticed.)"""
    data = bytearray((model_dir / "model.onnx").read_bytes())
    at = len(data) * 3 // 4
    data[at : at + 4096] = bytes(b ^ 0x5A for b in data[at : at + 4096])
    return bytes(data)


def _other_tokenizer(model_dir: Path) -> bytes:
    """The tokenizer of "another model": the same vocabulary under other ids."""
    doc = json.loads((model_dir / "tokenizer.json").read_text(encoding="utf-8"))
    vocab = doc["model"]["vocab"]
    n = len(vocab)
    doc["model"]["vocab"] = {
        t: (i if i < 1000 else 1000 + (i * 7919) % (n - 1000)) for t, i in vocab.items()
    }
    return json.dumps(doc).encode()


@pytest.mark.parametrize(
    ("name", "make", "said"),
    [
        (ONNX, _flipped, "differs from all-MiniLM-L6-v2's by"),
        ("tokenizer.json", _other_tokenizer, "differs from all-MiniLM-L6-v2's by"),
        (ONNX, lambda _d: b"\x08\x07 not an onnx graph", "does not load"),
    ],
    ids=["flipped-bytes", "another-tokenizer", "not-onnx"],
)
def test_a_wrong_or_corrupt_model_is_refused_and_nothing_is_installed(
    mirror: Mirror,
    mirror_root: Path,
    model_dir: Path,
    home: Path,
    name: str,
    make: Callable[[Path], bytes],
    said: str,
) -> None:
    replace(mirror_root, name, make(model_dir))
    target = installed(home)
    with pytest.raises(DownloadError, match="not installed") as exc:
        fetch_model(mirror.url, target)
    assert said in str(exc.value)
    assert not target.exists() and list(target.parent.iterdir()) == [
        target.with_name(f".{target.name}.lock")
    ]  # the refused download is gone too: the next run starts afresh


def test_a_model_without_mean_pooling_is_refused_before_the_download(
    mirror: Mirror, mirror_root: Path, home: Path
) -> None:
    pooling = {"word_embedding_dimension": 384, "pooling_mode_cls_token": True}
    replace(mirror_root, "1_Pooling/config.json", json.dumps(pooling).encode())
    with pytest.raises(DownloadError, match="does not use mean pooling"):
        fetch_model(mirror.url, installed(home))
    assert ONNX not in mirror.paths()


def test_two_fetches_at_once_download_once(mirror: Mirror, home: Path) -> None:
    target = installed(home)
    mirror.gates[ONNX] = threading.Event()
    reports: list[modelfetch.FetchReport] = []
    waited = threading.Event()
    first = threading.Thread(
        target=lambda: reports.append(fetch_model(mirror.url, target, int8=False))
    )
    first.start()
    assert mirror.was_asked(ONNX).wait(30)
    second = threading.Thread(
        target=lambda: reports.append(fetch_model(mirror.url, target, waiting=waited.set))
    )
    second.start()
    assert waited.wait(30)  # the second holds off while the first downloads
    mirror.gates[ONNX].set()
    first.join(60)
    second.join(60)
    assert sorted(r.fetched for r in reports) == [False, True]
    assert mirror.paths().count(ONNX) == 1


# -- the command line --------------------------------------------------------------------------
def bigmind(*args: str, home: Path, **env: str) -> subprocess.CompletedProcess[str]:
    """The command in this process (the download's own code; only the terminal's progress bar
    below needs the real executable), with BIGMIND_* settings from ``env`` only."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("BIGMIND_")}
    full |= {"HOME": str(home.parent / "user-home"), "BIGMIND_HOME": str(home)}
    return run_cli(*args, env=full, **env)


def one_line(r: subprocess.CompletedProcess[str]) -> str:
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in r.stderr, r.stderr
    return lines[0]


def test_the_command_fetches_into_bigmind_home(mirror: Mirror, home: Path) -> None:
    r = bigmind(
        "model",
        "fetch",
        "--url",
        mirror.url.rstrip("/"),
        home=home,
        BIGMIND_EMBED_PRECISION="float",
    )
    assert r.returncode == 0, r.stderr
    assert f"ready in {installed(home)}" in r.stdout and "Downloading" not in r.stderr  # no tty
    assert OnnxEmbedder(installed(home)).dim == 384
    r = bigmind("model", "fetch", home=home, BIGMIND_MODEL_URL=mirror.url)
    assert r.returncode == 0 and "already in" in r.stdout


@pytest.mark.e2e
def test_a_terminal_gets_a_progress_bar_in_megabytes(mirror: Mirror, home: Path) -> None:
    import pty

    env = {k: v for k, v in os.environ.items() if not k.startswith("BIGMIND_")}
    env |= {"BIGMIND_HOME": str(home), "BIGMIND_EMBED_PRECISION": "float"}
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [str(BIGMIND), "model", "fetch", "--url", mirror.url],
        stdout=subprocess.PIPE,
        stderr=follower,
        env=env,
    )
    os.close(follower)
    shown = bytearray()
    while True:  # read as it comes: a full terminal buffer would block the download
        try:
            chunk = os.read(leader, 1 << 16)
        except OSError:  # the terminal closed: all was read
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 0 and b"ready in" in out
    bars = [b for b in bytes(shown).decode().split("\r") if b.startswith("Downloading onnx")]
    last = bars[-1]  # (a terminal ends lines with \r\n)
    size = f"{(mirror.root / 'onnx' / 'model.onnx').stat().st_size / 1e6:.1f}"
    assert last.startswith(f"Downloading onnx/model.onnx [{'█' * 30}] {size}/{size} MB (")
    assert last.rstrip().endswith("MB/s)")


def test_a_missing_file_is_one_line_naming_it_and_the_url(
    mirror: Mirror, mirror_root: Path, home: Path
) -> None:
    (mirror_root / "tokenizer.json").unlink()
    r = bigmind("model", "fetch", "--url", mirror.url, home=home)
    line = one_line(r)
    assert r.returncode == DownloadError.exit_code
    assert f"tokenizer.json is missing at {mirror.url}tokenizer.json (HTTP 404)" in line
    assert not installed(home).exists()


def test_an_unreachable_mirror_is_one_line(home: Path) -> None:
    port = free_port()  # nothing listens there
    r = bigmind("model", "fetch", "--url", f"http://127.0.0.1:{port}/", home=home)
    line = one_line(r)
    assert r.returncode == DownloadError.exit_code
    assert f"Cannot reach 127.0.0.1:{port}" in line and "refused" in line


@pytest.mark.parametrize("url", ["ftp://mirror/x/", "file:///srv/models/", "mirror.example.com"])
def test_only_http_urls_are_taken(url: str, home: Path) -> None:
    with pytest.raises(DownloadError, match="is not an http"):
        fetch_model(url, installed(home))
    assert not installed(home).parent.exists()


def test_a_target_that_cannot_be_written_is_one_line(mirror: Mirror, tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("in the way")
    r = bigmind("model", "fetch", "--url", mirror.url, "--to", str(tmp_path / "a-file" / "m"),
                home=tmp_path / "bm")  # fmt: skip
    line = one_line(r)
    assert r.returncode == DownloadError.exit_code and "Cannot write the model under" in line
    assert mirror.requests == []


def test_one_shot_commands_never_download(mirror: Mirror, home: Path, tmp_path: Path) -> None:
    env = {"BIGMIND_OFFLINE": "0", "BIGMIND_MODEL_URL": mirror.url, "HF_HUB_OFFLINE": "0"}
    env["BIGMIND_DB_PATH"] = str(tmp_path / "data" / "memory.db")
    open_database(Settings(db_path=tmp_path / "data" / "memory.db", user="alice")).close()
    r = bigmind("recall", "which test runner", home=home, **env)
    assert r.returncode == 0, r.stderr
    assert "keyword search only" in r.stderr and "`bigmind model fetch`" in r.stderr
    assert mirror.requests == []


# -- the server's first start ------------------------------------------------------------------
def fetching(settings_for: Callable[[str], Settings], mirror: Mirror, **more: object) -> Settings:
    return settings_for("alice").model_copy(
        update={"offline": False, "model_url": mirror.url} | more
    )


@pytest.mark.timeout(180)  # quantising alone is ~2.5 s of CPU; 60+ s when busy
async def test_the_server_downloads_the_model_on_its_first_start(
    mirror: Mirror, home: Path, settings_for: Callable[[str], Settings]
) -> None:
    settings = fetching(settings_for, mirror)
    mirror.gates[ONNX] = threading.Event()
    rt = Runtime(settings, background=True)
    try:
        async with Client(build_server(settings, rt)) as client:
            for category, fact in FACTS:
                await call(client, "memory_store_fact", category=category, fact=fact)
            assert mirror.was_asked(ONNX).wait(30)
            text, data = await call(client, "memory_recall", query="pytest")
            assert "pytest" in data["results"][0]["text"]  # by keywords, meanwhile
            assert "the embedding model is downloading" in data["note"]
            assert "keyword search until it is ready" in data["note"] and data["note"] in text
            _text, data = await call(client, "memory_health_check")
            check = next(c for c in data["checks"] if c["name"] == "semantic index")
            assert "downloading" in check["detail"]
            mirror.gates[ONNX].set()
            ready(rt)
            _text, data = await call(client, "memory_recall", query="how do releases ship")
            assert "semantic #1" in data["results"][0]["why"] and data["note"] is None
            assert rt.semantic is not None
            assert rt.semantic.status().model == "all-MiniLM-L6-v2-int8"  # made and run
    finally:
        rt.close()
    assert OnnxEmbedder(installed(home)).dim == 384


def test_a_failed_first_start_download_is_said_and_not_retried(
    mirror: Mirror, mirror_root: Path, home: Path, settings_for: Callable[[str], Settings]
) -> None:
    (mirror_root / ONNX).unlink()
    rt = Runtime(fetching(settings_for, mirror), background=True)
    try:
        rt.store.store_fact("preference", "The user prefers pytest")
        sem = rt.semantic
        assert sem is not None and sem.wait_idle(30)
        status = sem.status()
        assert status.state == "error" and "could not be downloaded" in status.detail
        assert "HTTP 404" in status.detail and "`bigmind model fetch`" in status.detail
        found = rt.recall().search("pytest", 5)
        assert found.hits and "keyword results only" in found.note
        rt.wrote()  # a write wakes nothing that downloads again
        rt.store.store_fact("preference", "The user prefers tabs")
        assert sem.status().state == "error"
    finally:
        rt.close()
    assert mirror.paths().count(ONNX) == 1


@pytest.mark.parametrize(
    ("env", "why"),
    [
        ({"BIGMIND_OFFLINE": "1"}, "`bigmind model fetch`"),
        ({"BIGMIND_OFFLINE": None, "HF_HUB_OFFLINE": "1"}, "`bigmind model fetch`"),
        ({"BIGMIND_OFFLINE": "0", "BIGMIND_EMBED_MODEL": "off"}, "BIGMIND_EMBED_MODEL=off"),
        ({"BIGMIND_OFFLINE": "0", "BIGMIND_EMBED_MODEL": "my-model"}, "No embedding model named"),
    ],
    ids=["offline", "hf-hub-offline", "off", "custom-name"],
)
def test_offline_off_or_a_custom_model_never_touch_the_network(
    mirror: Mirror,
    home: Path,
    db_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    env: dict[str, str | None],
    why: str,
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "0")
    for key, value in env.items():
        if value is None:
            monkeypatch.delenv(key)
        else:
            monkeypatch.setenv(key, value)
    monkeypatch.setenv("BIGMIND_MODEL_URL", mirror.url)
    settings = Settings(db_path=db_path)
    assert auto_fetch_target(settings) is None
    rt = Runtime(settings, background=True)
    try:
        rt.store.store_fact("preference", "The user prefers pytest")
        sem = rt.semantic
        assert sem is not None
        sem.wait_idle(30)
        assert why in sem.status().detail
    finally:
        rt.close()
    assert mirror.requests == []


def test_a_model_an_older_version_exported_beside_the_database_is_found(
    model_dir: Path, home: Path, db_path: Path, mirror: Mirror
) -> None:
    legacy = db_path.parent / "models" / "all-MiniLM-L6-v2"
    legacy.parent.mkdir(parents=True)
    os.symlink(model_dir, legacy)
    settings = Settings(db_path=db_path, offline=False, model_url=mirror.url)
    assert resolve_model_dir(settings) == legacy and auto_fetch_target(settings) is None
    fetch_model(mirror.url, installed(home), int8=False)
    assert resolve_model_dir(settings) == installed(home)  # the cache comes first
    assert np.allclose(
        OnnxEmbedder(legacy).embed(["x"]), OnnxEmbedder(installed(home)).embed(["x"]), atol=1e-3
    )
