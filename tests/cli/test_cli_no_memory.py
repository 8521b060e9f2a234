"""On a machine where BigMind has stored nothing yet, the commands that read or tidy the memory
create nothing (no database, no ~/.mcp/bigmind/): they say so in one line and exit 0, or, asked
for one thing (export a file, forget an id), exit with that command's code."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bigmind.cli.main import main
from bigmind.errors import NoMemoryYet
from bigmind.storage.connect import connect

BIGMIND = Path(sys.executable).parent / "bigmind"
NOTE = "No memory yet at "

# (arguments, exit code): every command that only reads or tidies an existing memory.
COMMANDS = [
    (["search", "broker"], 0),
    (["search", "broker", "--json"], 0),
    (["recall", "which broker", "--json"], 0),
    (["context"], 0),
    (["context", "--json"], 0),
    (["stats"], 0),
    (["stats", "--json"], 0),
    (["user", "list"], 0),
    (["close"], 0),
    (["consolidate"], 0),
    (["scan-secrets", "--dry-run"], 0),
    (["scan-secrets"], 0),
    (["reindex"], 0),
    (["mirror"], 0),
    (["mirror", "--pull"], 0),
    (["purge", "--match", "broker", "--dry-run"], 0),
    (["export"], 6),
    (["forget", "fact", "1"], 3),
    (["doctor", "--quick"], None),  # its verdict is about the install; it never creates
]


def tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


@pytest.fixture
def new_machine(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """HOME in the test's folder and the default database path (~/.mcp/bigmind/memory.db)."""
    monkeypatch.delenv("BIGMIND_DB_PATH")
    monkeypatch.setenv("BIGMIND_EMBED_MODEL", "off")
    (tmp_path / "home").mkdir()
    (tmp_path / "work").mkdir()
    monkeypatch.chdir(tmp_path / "work")
    return tmp_path


@pytest.mark.parametrize(("args", "code"), COMMANDS, ids=[" ".join(a) for a, _ in COMMANDS])
def test_a_reading_command_creates_nothing_and_says_why(
    new_machine: Path, capsys: pytest.CaptureFixture[str], args: list[str], code: int | None
) -> None:
    before = tree(new_machine)
    got = main(args)
    out, err = capsys.readouterr()
    assert tree(new_machine) == before  # no database, no folder, no export, nothing
    if code is None:
        return
    assert got == code, err
    said = out + err
    assert said.count(NOTE) == 1 and "Traceback" not in said, said
    assert str(new_machine / "home" / ".mcp" / "bigmind" / "memory.db") in said
    if "--json" in args and args[0] in ("search", "recall"):
        data = json.loads(out)  # still a document a script can read: no results, and why
        assert data["results"] == [] and data["note"].startswith(NOTE)


def test_commands_that_store_still_make_the_memory(
    new_machine: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["user", "add", "bob"]) == 0
    assert (new_machine / "home" / ".mcp" / "bigmind" / "memory.db").is_file()
    capsys.readouterr()
    assert main(["user", "list", "--json"]) == 0  # and the readers read it
    users = json.loads(capsys.readouterr().out)["users"]
    assert [u["username"] for u in users] == ["bob"]


def test_an_existing_database_opens_without_create(tmp_path: Path) -> None:
    db = tmp_path / "m.db"
    connect(db).close()
    connect(db, create=False).close()  # opened (and migrated, as the server would)
    with pytest.raises(NoMemoryYet) as exc:
        connect(tmp_path / "missing" / "m.db", create=False)
    assert exc.value.exit_code == 0 and exc.value.where.endswith("m.db")
    assert not (tmp_path / "missing").exists()


@pytest.mark.e2e
def test_bigmind_search_on_a_new_machine(tmp_path: Path) -> None:
    """What a person sees, through the installed executable."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("BIGMIND_")}
    env["HOME"] = str(tmp_path)
    r = subprocess.run(
        [str(BIGMIND), "search", "broker"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(NOTE) and r.stdout.count("\n") == 1
    assert list(tmp_path.iterdir()) == []
