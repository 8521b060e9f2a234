"""Markdown in and out: `bigmind import-md` reads hand-written memories (CLAUDE.md and the
like) into project facts; `bigmind mirror` writes the project's memory to a Markdown file and
`bigmind mirror --pull` applies a person's edits of it (update, deprecate, add)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cli_run import run_cli
from fastmcp import Client
from mcp_calls import call
from model_fixture import ready
from secret_corpus import Fakes

from bigmind import project
from bigmind.config import Settings
from bigmind.mcp.server import build_server
from bigmind.memory import correct, handwritten, mirror
from bigmind.runtime import Runtime
from bigmind.storage.store import Store

KEY = Fakes(31).make("aws-access-key")[0]

CLAUDE_MD = f"""---
description: notes for agents
---
# Payments service

This file guides coding agents in this repository.

## Commands

- Run the tests with `pytest -n 0`
- [x] Lint with ruff before each commit

```bash
make build
```

## Gotchas

- The staging database resets every night at 02:00 UTC
- Deploys:
  - need the VPN on
  - take about ten minutes
- Use the key {KEY} only in CI

| service | port |
|---------|------|
| api     | 8080 |

### Decisions

* We chose RabbitMQ over Kafka for the job queue
* ok

<!-- BIGMIND:BEGIN (written by `bigmind install`; `bigmind uninstall` removes it) -->
## BigMind memory
- Call memory_bootstrap at the start of every session
<!-- BIGMIND:END -->
"""

EXPECTED = [
    ("codebase", "Commands: Run the tests with `pytest -n 0`"),
    ("codebase", "Commands: Lint with ruff before each commit"),
    ("gotcha", "The staging database resets every night at 02:00 UTC"),
    ("gotcha", "Deploys: need the VPN on"),
    ("gotcha", "Deploys: take about ten minutes"),
    ("gotcha", f"Use the key {KEY} only in CI"),
    ("decision", "We chose RabbitMQ over Kafka for the job queue"),
]
SKIPPED = {
    "front matter": 1,
    "BigMind block": 1,
    "prose": 1,
    "code block": 1,
    "table": 1,
    "too short": 1,
}


def test_bullets_become_facts_and_headings_their_context() -> None:
    parsed = handwritten.parse(CLAUDE_MD)
    assert [(e.category, e.text) for e in parsed.entries] == EXPECTED
    assert dict(parsed.skipped) == SKIPPED


@pytest.mark.parametrize(
    ("heading", "category"),
    [
        ("Gotchas", "gotcha"),
        ("Known issues", "gotcha"),
        ("Architecture decisions", "decision"),
        ("Preferences", "preference"),
        ("Coding conventions", "convention"),
        ("Testing", None),
    ],
)
def test_a_heading_naming_a_kind_of_memory_is_the_category(
    heading: str, category: str | None
) -> None:
    assert handwritten.category_of(heading) == category


@pytest.fixture
def repo(tmp_path: Path) -> project.Project:
    folder = tmp_path / "payments"
    folder.mkdir()
    return project.of_folder(folder)


def _edit(path: Path, facts: dict[str, int]) -> None:
    """A person's edits: one fact reworded, one deleted, one added."""
    text = path.read_text(encoding="utf-8")
    changed = f"- [#{facts['staging']}] The staging database resets every night at 03:00 UTC"
    text = text.replace(
        f"- [#{facts['staging']}] The staging database resets every night at 02:00 UTC", changed
    )
    lines = [ln for ln in text.splitlines() if not ln.startswith(f"- [#{facts['vpn']}] ")]
    at = lines.index("### decision") + 1
    lines.insert(at + 1, "- Payments use idempotency keys on every POST request")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def _ids(store: Store) -> dict[str, int]:
    texts = {f.fact: f.id for f in store.top_facts(50)}
    return {
        "staging": texts["The staging database resets every night at 02:00 UTC"],
        "vpn": texts["Deploys: need the VPN on"],
    }


def test_import_then_mirror_and_pull(store: Store, repo: project.Project, tmp_path: Path) -> None:
    source = tmp_path / "CLAUDE.md"
    source.write_text(CLAUDE_MD, encoding="utf-8")
    with project.using(repo):
        first = handwritten.import_files(store, None, handwritten.read_all([source]))
        assert (len(first.added), len(first.known), dict(first.skipped)) == (7, 0, SKIPPED)
        facts = store.top_facts(50)
        assert {(f.category, f.fact) for f in facts} == {
            (c, t.replace(KEY, "[REDACTED:aws-access-key]")) for c, t in EXPECTED
        }
        assert {(f.project, f.scope) for f in facts} == {(repo.key, "project")}
        again = handwritten.import_files(store, None, handwritten.read_all([source]))
        assert (again.added, sorted(again.known)) == ([], sorted(first.added))

        path = mirror.default_path(tmp_path / "data", repo)
        written = mirror.write(store, path)
        assert written.facts == 7 and path.parent == tmp_path / "data" / "mirrors"
        text = path.read_text(encoding="utf-8")
        assert "### gotcha" in text and KEY not in text
        for f in facts:
            assert f"- [#{f.id}] {f.fact}\n" in text
        ids = _ids(store)
        _edit(path, ids)
        pulled = mirror.pull(store, None, path)
        assert (pulled.updated, pulled.deprecated, pulled.left) == (
            [ids["staging"]],
            [ids["vpn"]],
            [],
        )
        assert len(pulled.added) == 1 and pulled.known == []

        fact, versions = correct.history(store, ids["staging"])
        assert fact.fact.endswith("03:00 UTC") and versions[0].fact.endswith("02:00 UTC")
        gone = store.get_fact(ids["vpn"])
        assert gone.deprecated and gone.deprecation_reason == mirror.DEPRECATED_REASON
        new = store.get_fact(pulled.added[0])
        assert (new.category, new.project) == ("decision", repo.key)
        assert f"- [#{new.id}] Payments use idempotency keys" in path.read_text(encoding="utf-8")
        assert mirror.pull(store, None, path).summary().startswith("0 facts updated, 0 dep")


def test_an_edit_of_a_fact_changed_since_is_left_alone(
    store: Store, repo: project.Project, tmp_path: Path
) -> None:
    with project.using(repo):
        f, _, _ = store.store_fact("codebase", "The API listens on port 8080", scope="project")
        path = tmp_path / "mirror.md"
        mirror.write(store, path)
        correct.update_fact(store, None, f.id, fact="The API listens on port 9090")
        path.write_text(
            path.read_text(encoding="utf-8").replace("port 8080", "port 8000"), encoding="utf-8"
        )
        pulled = mirror.pull(store, None, path)
        assert pulled.updated == [] and "changed in memory since" in pulled.left[0]
        assert store.get_fact(f.id).fact == "The API listens on port 9090"
        assert "port 9090" in path.read_text(encoding="utf-8")  # written again as memory has it


def test_a_pull_refuses_a_file_it_did_not_write(store: Store, tmp_path: Path) -> None:
    from bigmind.errors import InvalidInput

    path = tmp_path / "notes.md"
    path.write_text("## Facts\n\n### codebase\n\n- something\n", encoding="utf-8")
    with pytest.raises(InvalidInput, match="no bigmind-mirror comment"):
        mirror.pull(store, None, path)


# -- the commands, as a person runs them -------------------------------------------------------
def run(*args: str) -> subprocess.CompletedProcess[str]:
    """The command with the test's settings (the conftest's environment)."""
    return run_cli(*args, BIGMIND_EMBED_MODEL="off")


def run_json(*args: str) -> Any:
    r = run(*args, "--json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_the_commands_import_mirror_and_pull(
    store: Store, repo: project.Project, tmp_path: Path
) -> None:
    assert repo.root is not None
    source = Path(repo.root) / "CLAUDE.md"
    source.write_text(CLAUDE_MD, encoding="utf-8")
    r = run("import-md", str(source), "--project", repo.root)
    assert r.returncode == 0, r.stderr
    assert "7 facts added, 0 already known, 6 skipped" in r.stdout
    assert "Redacted before storing: 1 AWS access key" in r.stderr and KEY not in r.stderr
    again = run_json("import-md", str(source), "--project", repo.root)
    assert (again["added"], len(again["known"]), again["project"]) == ([], 7, repo.key)

    r = run("mirror", "--project", repo.root)
    assert r.returncode == 0, r.stderr
    path = Path(r.stdout.split(": ", 1)[0].removeprefix("Wrote "))
    assert path.parent.name == "mirrors" and not path.is_relative_to(repo.root)
    with project.using(repo):
        ids = _ids(store)
    _edit(path, ids)
    pulled = run_json("mirror", "--pull", "--project", repo.root)
    assert (pulled["updated"], pulled["deprecated"], len(pulled["added"])) == (
        [ids["staging"]],
        [ids["vpn"]],
        1,
    )
    out = tmp_path / "memory.md"
    assert run_json("mirror", "--project", repo.root, "--output", str(out))["facts"] == 7
    assert "Payments use idempotency keys" in out.read_text(encoding="utf-8")


def test_a_paraphrase_of_a_known_fact_is_not_imported_again(
    sem_runtime: Runtime, tmp_path: Path
) -> None:
    """With the model ready, the store's paraphrase check applies too."""
    store = sem_runtime.store
    known, _, _ = store.store_fact("codebase", "The user prefers pytest for all Python tests")
    sem = ready(sem_runtime)
    notes = tmp_path / "MEMORY.md"
    notes.write_text("- The user prefers pytest for all of the Python tests\n", encoding="utf-8")
    report = handwritten.import_files(store, sem, handwritten.read_all([notes]))
    assert report.added == [] and len(report.known) == 1  # the newer wording is kept
    assert store.get_fact(known.id).deprecation_reason == f"merged into #{report.known[0]}"


@pytest.mark.anyio
async def test_bigmind_mirror_1_writes_the_mirror_at_each_session_end(
    settings: Settings,
) -> None:
    s = settings.model_copy(update={"mirror": True})
    rt = Runtime(s)
    try:
        async with Client(build_server(s, rt)) as c:
            _, started = await call(c, "memory_start_session")
            await call(c, "memory_store_fact", category="codebase", fact="Orders ship in 2 days")
            text, _ = await call(c, "memory_end_session", one_liner="shipping rules")
            path = mirror.default_path(s.data_dir, rt.store.project)
            assert f"Mirror written: {path} (1 facts)" in text
            body = path.read_text(encoding="utf-8")
            assert "Orders ship in 2 days" in body and started["session_id"] in body
            path.write_text(
                body.replace("### codebase\n", "### codebase\n\n- Returns take 30 days\n"),
                encoding="utf-8",
            )
            text, _ = await call(c, "memory_end_session", one_liner="shipping rules again")
            assert "not rewritten: it has edits" in text
            assert "Returns take 30 days" in path.read_text(encoding="utf-8")
    finally:
        rt.close()


def test_a_file_that_cannot_be_read_is_one_line_and_makes_nothing(tmp_path: Path) -> None:
    r = run("import-md", str(tmp_path / "CLAUDE.md"))
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith("bigmind: No file ") and len(r.stderr.splitlines()) == 1
    assert not (tmp_path / "data").exists()  # no memory was made for it
