"""The command line: every command documented, errors as one line and an exit code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_run import run_cli
from model_fixture import EXPORT_TIMEOUT_S, export_of_this_run, run_export

from bigmind import __version__
from bigmind.cli.main import COMMANDS, main

ROOT = Path(__file__).resolve().parents[2]
BIGMIND = Path(sys.executable).parent / "bigmind"


def run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The command in this process, with BIGMIND_* settings from ``env`` only."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith("BIGMIND_")}
    return run_cli(*args, env=clean, **env)


def run_process(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The installed executable, with BIGMIND_* settings from ``env`` only."""
    full = {k: v for k, v in os.environ.items() if not k.startswith("BIGMIND_")} | env
    return subprocess.run(
        [str(BIGMIND), *args], capture_output=True, text=True, env=full, timeout=60
    )


def test_help_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    out = capsys.readouterr().out
    for name in COMMANDS:
        assert name in out


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_has_help_with_an_example(
    name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit):
        main([name, "--help"])
    out = capsys.readouterr().out
    assert "example:" in out and f"bigmind {name}" in out


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_is_documented_in_the_readme(name: str) -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"bigmind {name}" in readme


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["version"]) == 0
    assert capsys.readouterr().out.startswith("bigmind ")
    assert main(["version", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"version": __version__}


@pytest.mark.e2e
@pytest.mark.parametrize(("given", "used"), [(None, "1"), ("2", "2")])
def test_the_command_holds_openblas_to_one_thread_unless_told(given: str | None, used: str) -> None:
    """Before numpy loads: a second BLAS thread waking on a busy machine was a search's tail."""
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    probe = (  # OpenBLAS's own count, read from the library numpy loaded
        "import ctypes, bigmind.cli.main, numpy\n"
        "lib = next(ln.split()[-1] for ln in open('/proc/self/maps') if 'openblas' in ln)\n"
        "dll = ctypes.CDLL(lib)\n"
        "names = ('scipy_openblas_get_num_threads64_', 'openblas_get_num_threads')\n"
        "print(next(getattr(dll, n) for n in names if hasattr(dll, n))())"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == used


def test_context_prints_the_packet(tmp_path: Path) -> None:
    from bigmind.storage.connect import connect

    connect(tmp_path / "m.db").close()  # context reads a memory; it never makes one
    r = run("context", BIGMIND_DB_PATH=str(tmp_path / "m.db"), BIGMIND_USER="carol")
    assert r.returncode == 0, r.stderr
    assert "BigMind Context" in r.stdout and "`carol`" in r.stdout


def test_bad_setting_is_one_clear_line_and_nonzero_exit(tmp_path: Path) -> None:
    r = run("context", BIGMIND_MODE="galactic", BIGMIND_DB_PATH=str(tmp_path / "m.db"))
    assert r.returncode != 0
    assert r.stderr.strip().startswith("bigmind: Invalid setting BIGMIND_MODE")
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_unusable_db_path_names_the_setting(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("x")
    r = run("context", BIGMIND_DB_PATH=str(tmp_path / "file" / "m.db"))
    assert r.returncode == 5
    assert "BIGMIND_DB_PATH" in r.stderr and "Traceback" not in r.stderr


@pytest.mark.e2e
def test_the_executable_exits_with_the_code_and_the_one_line_of_the_command(
    tmp_path: Path,
) -> None:
    """What the tests above see in this process, the installed executable does: main's exit
    code is the process's, and its one line is all there is on stderr."""
    r = run_process("context", BIGMIND_MODE="galactic", BIGMIND_DB_PATH=str(tmp_path / "m.db"))
    assert r.returncode == run("context", BIGMIND_MODE="galactic").returncode != 0
    assert r.stdout == "" and r.stderr.startswith("bigmind: Invalid setting BIGMIND_MODE")
    assert len(r.stderr.strip().splitlines()) == 1
    (tmp_path / "file").write_text("x")
    r = run_process("context", BIGMIND_DB_PATH=str(tmp_path / "file" / "m.db"))
    assert r.returncode == 5 and "BIGMIND_DB_PATH" in r.stderr and "Traceback" not in r.stderr


def test_export_then_import_on_the_command_line(tmp_path: Path) -> None:
    env = {"BIGMIND_DB_PATH": str(tmp_path / "a.db"), "BIGMIND_USER": "carol"}
    from bigmind.storage.connect import connect
    from bigmind.storage.store import Store

    b = connect(tmp_path / "a.db")
    Store(b, "carol").store_fact("preference", "Prefers tabs")
    b.close()
    out = tmp_path / "backup.json"
    r = run("export", "--output", str(out), **env)
    assert r.returncode == 0 and "1 facts" in r.stdout and out.exists()
    # No terminal: no progress bar (carriage returns would litter a log).
    assert "Exporting tables [" not in r.stderr and "Traceback" not in r.stderr
    r = run("export", "--output", str(out), **env)
    assert r.returncode == 6 and "already exists" in r.stderr
    other = {"BIGMIND_DB_PATH": str(tmp_path / "b.db"), "BIGMIND_USER": "carol"}
    r = run("import", str(out), **other)
    assert r.returncode == 0 and "1 facts" in r.stdout
    assert "Importing rows [" not in r.stderr
    r = run("import", str(out), **other)
    assert r.returncode == 0 and "nothing new" in r.stdout
    r = run("import", str(out), "--json", **other)
    report = json.loads(r.stdout)
    assert report["source_user"] == "carol" and report["skipped"]["facts"] == 1
    assert sum(report["added"].values()) == 0
    r = run("export", "--output", str(tmp_path / "again.json"), "--json", **env)
    written = json.loads(r.stdout)
    assert written["path"] == str(tmp_path / "again.json") and written["rows"]["facts"] == 1
    (tmp_path / "junk.json").write_text("[]")
    r = run("import", str(tmp_path / "junk.json"), **other)
    assert r.returncode == 2 and "not a BigMind export" in r.stderr


@pytest.mark.e2e
def test_progress_is_drawn_on_a_terminal_only(tmp_path: Path) -> None:
    """stderr on a real pseudo-terminal gets the bar; the pipes above got none."""
    import pty

    from bigmind.storage.connect import connect
    from bigmind.storage.store import Store

    b = connect(tmp_path / "a.db")
    Store(b, "carol").store_fact("preference", "Prefers tabs")
    b.close()
    env = {k: v for k, v in os.environ.items() if not k.startswith("BIGMIND_")}
    env |= {"BIGMIND_DB_PATH": str(tmp_path / "a.db"), "BIGMIND_USER": "carol"}
    leader, follower = pty.openpty()
    try:
        r = subprocess.run(
            [str(BIGMIND), "export", "--output", str(tmp_path / "x.json")],
            stdout=subprocess.PIPE,
            stderr=follower,
            env=env,
            timeout=60,
        )
        os.close(follower)
        follower = -1
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the terminal closed: all was read
                break
            if not chunk:
                break
            shown += chunk
    finally:
        if follower >= 0:
            os.close(follower)
        os.close(leader)
    assert r.returncode == 0 and b"Exporting tables [" in shown


def test_export_refuses_a_folder_that_does_not_exist(tmp_path: Path) -> None:
    from bigmind.storage.connect import connect

    connect(tmp_path / "a.db").close()
    env = {"BIGMIND_DB_PATH": str(tmp_path / "a.db"), "BIGMIND_USER": "carol"}
    target = tmp_path / "missing" / "dir" / "x.json"
    r = run("export", "--output", str(target), **env)
    assert r.returncode != 0 and "does not exist" in r.stderr
    assert not (tmp_path / "missing").exists()
    r = run("export", "--output", "nested/x.json", **env)  # inside BigMind's exports folder
    assert r.returncode == 0 and (tmp_path / "exports" / "nested" / "x.json").exists()


def test_reindex_embeds_everything(tmp_path: Path, model_dir: Path) -> None:
    from bigmind.storage.connect import connect
    from bigmind.storage.store import Store

    db = tmp_path / "m.db"
    b = connect(db)
    store = Store(b, "carol")
    for i in range(5):
        store.store_fact("codebase", f"Service {i} listens on port {8000 + i}")
    b.close()
    env = {"BIGMIND_DB_PATH": str(db), "BIGMIND_USER": "carol"}
    r = run("reindex", BIGMIND_EMBED_MODEL=str(model_dir), **env)
    assert r.returncode == 0, r.stderr
    assert "Re-embedded 5 memories with all-MiniLM-L6-v2-int8." in r.stdout
    assert "Embedding [" not in r.stderr  # no terminal: no bar
    r = run("reindex", "--json", BIGMIND_EMBED_MODEL=str(model_dir), **env)
    assert json.loads(r.stdout) == {"embedded": 5, "model": "all-MiniLM-L6-v2-int8"}
    r = run("reindex", BIGMIND_EMBED_MODEL=str(tmp_path / "nowhere"), **env)
    assert r.returncode != 0 and "bigmind model export" in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.slow
@pytest.mark.timeout(EXPORT_TIMEOUT_S + 60)
def test_model_export_writes_a_loadable_model(tmp_path: Path, model_dir: Path) -> None:
    # The real export, once per test run: when this run's cache was stale, model_fixture (set up
    # first: ``model_dir``) exported through this very command, and its output is checked here;
    # else the export runs now.
    done = export_of_this_run()
    if done is None:
        done = run_export(tmp_path / "models" / "mini")
    target = done.target
    assert done.returncode == 0, done.stderr
    assert "all-MiniLM-L6-v2 (384 d" in done.stdout and "max |diff| vs the reference" in done.stdout
    assert f"BIGMIND_EMBED_MODEL={target}" in done.stdout
    from bigmind.search.embedder import OnnxEmbedder

    assert OnnxEmbedder(target).embed(["hello"]).shape == (1, 384)
    again = tmp_path / "elsewhere"
    r = run("model", "export", "--source", str(tmp_path / "missing"), "--to", str(again))
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert not again.exists()


@pytest.mark.e2e
def test_a_reader_that_stops_early_gets_no_traceback(tmp_path: Path) -> None:
    # `true` exits before bigmind writes a byte: its first print meets a closed pipe.
    script = f"'{BIGMIND}' install --client all --dry-run --project '{tmp_path}' | true"
    r = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=60)
    assert r.stderr == ""
