"""Each surface speaks its own words: the agent reads argument and tool names, the command line
its options and commands, the profile page the pages a person clicks (BigMindError hints)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from cli_run import run_cli
from mcp_calls import Cli, refused
from starlette.testclient import TestClient
from web_world import WebWorld, csrf_of

from bigmind.config import Settings
from bigmind.errors import NotFound
from bigmind.runtime import Runtime
from bigmind.storage.connect import open_database

TOOL_WORDS = re.compile(r"memory_\w+|\w+=|session_id|output_path|input_path|overwrite=True")


def bigmind(*args: str, db: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BIGMIND_")}
    return run_cli(*args, env=env, BIGMIND_DB_PATH=str(db), BIGMIND_USER="carol")


def test_a_hint_follows_the_message_on_its_own_surface_only() -> None:
    exc = NotFound("No fact #4 in your memory.", tool="Use memory_search_facts.", web="See Facts.")
    assert str(exc) == "No fact #4 in your memory."
    assert exc.message_for("tool") == "No fact #4 in your memory. Use memory_search_facts."
    assert exc.message_for("web") == "No fact #4 in your memory. See Facts."
    assert exc.message_for("cli") == "No fact #4 in your memory."


def test_export_twice_names_the_cli_option(tmp_path: Path) -> None:
    db, out = tmp_path / "m.db", tmp_path / "backup.json"
    open_database(Settings(db_path=db, user="alice")).close()  # export makes no memory
    assert bigmind("export", "--output", str(out), db=db).returncode == 0
    r = bigmind("export", "--output", str(out), db=db)
    assert r.returncode == 6 and r.stdout == ""
    assert r.stderr.count("\n") == 1 and r.stderr.startswith(f"bigmind: {out} already exists.")
    assert "--overwrite" in r.stderr and "--output" in r.stderr
    assert not TOOL_WORDS.search(r.stderr), r.stderr
    assert bigmind("export", "--output", str(out), "--overwrite", db=db).returncode == 0


def test_import_of_a_missing_file_names_the_cli_command(tmp_path: Path) -> None:
    r = bigmind("import", str(tmp_path / "nope.json"), db=tmp_path / "m.db")
    assert r.returncode == 3 and r.stderr.count("\n") == 1
    assert "`bigmind export`" in r.stderr and not TOOL_WORDS.search(r.stderr), r.stderr


def page_message(html: str) -> str:
    found = re.search(r'<p class="message">(.*?)</p>', html, re.S)
    assert found, html[:500]
    return found.group(1).strip()


def test_the_404_pages_speak_to_a_person(web: TestClient, world: WebWorld) -> None:
    r = web.get("/sessions/no-such-session")
    said = page_message(r.text)
    assert r.status_code == 404 and "No session" in said and "Sessions page" in said
    assert not TOOL_WORDS.search(said), said
    r = web.get("/nowhere")
    assert r.status_code == 404 and "There is no page at /nowhere" in page_message(r.text)
    csrf = csrf_of(web.get("/facts").text)
    posts = {
        "/facts/987654/deprecate": {"reason": "gone"},
        "/facts/987654/restore-version": {"version": "1"},
        f"/facts/{world.fact_id}/restore-version": {"version": "99"},
        "/global/987654/review": {"action": "approve"},
    }
    for path, form in posts.items():
        r = web.post(path, data={"csrf": csrf, **form})
        said = page_message(r.text)
        assert r.status_code == 404, (path, said)
        assert not TOOL_WORDS.search(said), (path, said)
        assert "page" in said or "card" in said, (path, said)


@pytest.mark.anyio
async def test_the_agent_still_reads_tool_words(client: Cli, runtime: Runtime) -> None:
    msg = await refused(client, "memory_get_session_detail", session_id="nope")
    assert "memory_list_sessions" in msg
    msg = await refused(client, "memory_deprecate_fact", fact_id=987_654, reason="x")
    assert "memory_search_facts" in msg


def test_the_tree_drawn_in_errors_py_is_the_tree_of_classes() -> None:
    """Each line of the drawing names a class, its parent (by indentation) and its exit code."""
    from bigmind import errors

    drawn: dict[str, tuple[str | None, int]] = {}
    parents: list[str] = []
    for line in (errors.__doc__ or "").splitlines():
        m = re.match(r"^ {4}((?:[│ ] {3})*)(?:[├└]── )?(\w+) \((\d+)\)", line)
        if m is None:
            continue
        depth = len(m.group(1)) // 4 + (1 if "──" in line else 0)
        parents[depth:] = [m.group(2)]
        drawn[m.group(2)] = (parents[depth - 1] if depth else None, int(m.group(3)))
    classes = {
        name: c
        for name, c in vars(errors).items()
        if isinstance(c, type) and issubclass(c, errors.BigMindError)
    }
    assert set(drawn) == set(classes)
    for name, (parent, code) in drawn.items():
        c = classes[name]
        assert c.exit_code == code, name
        assert (c.__base__.__name__ if parent else None) == parent, name
