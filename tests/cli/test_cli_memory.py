"""`bigmind search`, `recall`, `stats` and `user` on a seeded temporary database.

The tests call ``bigmind.cli.main.main`` in-process (the conftest points BIGMIND_DB_PATH at a
temp file and sets BIGMIND_USER=alice); the error-path tests look at exactly what a user sees,
through ``cli_run.run_cli``: one line on stderr, an exit code, no traceback (that the
executable exits with main's code is tests/test_cli.py's, in a real process).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest
from cli_run import run_cli

from bigmind.cli.main import main
from bigmind.errors import Forbidden, InvalidInput, NotFound
from bigmind.memory import journal, savings, users
from bigmind.storage.store import Store


@pytest.fixture
def seeded(store: Store) -> Store:
    """alice's memory: facts, a flagged exchange, a resolved hypothesis, a token save."""
    store.store_fact(
        "preference", "Prefers pytest over unittest for every test suite", importance=8
    )
    store.store_fact("codebase", "The message broker is RabbitMQ, chosen for its routing")
    store.store_fact("codebase", "The API server listens on port 8080")
    store.store_fact("constraint", "Never push directly to the main branch")
    store.store_fact("preference", "Uses tabs, not spaces, in Go code")
    store.append_chunk(
        "We chose RabbitMQ rather than Kafka because the whole team already runs it",
        flag_reason="decision",
    )
    h, _ = journal.add(store, "The flaky login test is a timing issue", 0.8)
    journal.resolve(store, h.id, "confirmed", "a sleep hid a race")
    savings.log(store, None, "recalled the broker choice", 1200, "memory_recall")
    return store


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out, err = capsys.readouterr()
    return code, out, err


def cli_json(capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    code, out, err = cli(capsys, *args, "--json")
    assert code == 0, err
    return json.loads(out)


def run(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """The command, with the test's BIGMIND_* settings (from the conftest) and ``env``."""
    return run_cli(*args, **env)


def assert_one_line_error(r: subprocess.CompletedProcess[str], code: int, text: str) -> None:
    assert r.returncode == code, r.stderr
    assert r.stdout == ""
    assert r.stderr.startswith("bigmind: ") and text in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


# -- search -----------------------------------------------------------------------------------
def test_search_prints_two_lines_per_hit(seeded: Store, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = cli(capsys, "search", "RabbitMQ", "broker")
    assert code == 0 and err == ""
    lines = out.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("fact #2 [codebase]  "))
    assert at % 2 == 0 and "The message broker is RabbitMQ" in lines[at]
    assert lines[at + 1].startswith("    why: keyword match on 'rabbitmq', 'broker'")
    chunk = next(line for line in lines[::2] if line.startswith("chunk #1  "))
    assert "We chose RabbitMQ rather" in chunk  # the excerpt's **bold** markers are gone
    assert "**" not in out and len(lines) % 2 == 0


def test_search_kind_facts_json_lists_only_facts(
    seeded: Store, capsys: pytest.CaptureFixture[str]
) -> None:
    data = cli_json(capsys, "search", "RabbitMQ", "--kind", "facts")
    assert data["query"] == "RabbitMQ" and data["note"] is None
    assert [(h["kind"], h["id"]) for h in data["results"]] == [("fact", 2)]
    hit = data["results"][0]
    assert hit["category"] == "codebase" and hit["score"] > 0 and "keyword" in hit["why"]


def test_search_kind_chunks_and_limit(seeded: Store, capsys: pytest.CaptureFixture[str]) -> None:
    data = cli_json(capsys, "search", "RabbitMQ", "--kind", "chunks", "--limit", "1")
    assert [(h["kind"], h["id"]) for h in data["results"]] == [("chunk", 1)]
    assert "flagged: decision" in data["results"][0]["why"]


def test_search_without_a_match_says_so(seeded: Store, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "search", "kubernetes")
    assert code == 0 and out.startswith("No memories match 'kubernetes'.")
    assert cli_json(capsys, "search", "kubernetes")["results"] == []


def test_search_does_not_count_as_a_use(seeded: Store, capsys: pytest.CaptureFixture[str]) -> None:
    cli(capsys, "search", "RabbitMQ")
    assert seeded.get_fact(2).access_count == 0


def test_search_limit_out_of_range_is_one_line(seeded: Store) -> None:
    assert_one_line_error(run("search", "x", "--limit", "0"), 2, "'limit' must be between 1")


# -- recall -----------------------------------------------------------------------------------
def test_recall_without_a_model_is_keyword_only_and_says_so(
    seeded: Store, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BIGMIND_EMBED_MODEL", "off")
    code, out, err = cli(capsys, "recall", "RabbitMQ")
    assert code == 0
    assert err.startswith("bigmind: keyword search only:")
    first = out.splitlines()[0]
    assert "RabbitMQ" in first and first.startswith(("fact #2 [codebase]", "chunk #1 "))
    assert "fact #2 [codebase]" in out and "chunk #1 " in out


def test_recall_finds_a_paraphrase_with_the_model(
    seeded: Store,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    model_dir: Path,
) -> None:
    monkeypatch.setenv("BIGMIND_EMBED_MODEL", str(model_dir))
    code, out, err = cli(capsys, "recall", "which", "queue", "system", "--kinds", "fact")
    assert code == 0
    assert "have no vector yet" in err  # nothing embedded yet: keywords only, and it says so
    assert out.startswith("No memories match")
    assert cli(capsys, "reindex")[0] == 0
    code, out, err = cli(capsys, "recall", "which", "queue", "system", "--kinds", "fact")
    assert code == 0 and err == ""
    # Found by meaning alone, and not closely (cosine ≈ 0.3): said to be a weak match first.
    weak, first, why = out.splitlines()[:3]
    assert weak == "Nothing clearly relevant to 'which queue system'; the closest:"
    assert first.startswith("fact #2 [codebase] (weak match)") and "RabbitMQ" in first
    assert why.startswith("    why: semantic #1")
    data = cli_json(capsys, "recall", "which queue system", "-n", "2")
    assert len(data["results"]) == 2 and data["results"][0]["text"].count("RabbitMQ")
    assert {"kind", "id", "date", "score", "text", "why"} <= set(data["results"][0])


def test_recall_unknown_kind_is_one_line(seeded: Store) -> None:
    r = run("recall", "broker", "--kinds", "fact,nope", BIGMIND_EMBED_MODEL="off")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert r.stderr.strip().splitlines()[-1].startswith("bigmind: Unknown kind 'nope'")
    assert r.stdout == ""


# -- stats ------------------------------------------------------------------------------------
def test_stats_human(seeded: Store, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "stats")
    assert code == 0
    rows = {line.split("  ", 1)[0]: line for line in out.splitlines()}
    assert "alice (admin, personal mode)" in rows["User"]
    assert "5 active, 0 deprecated: codebase 2, preference 2, constraint 1" in rows["Facts"]
    assert "0.7–0.9: 1/1" in rows["Hypotheses"]
    assert "1,200 in 1 entries (memory_recall 1,200)" in rows["Tokens saved"]
    assert "0 vectors (no vectors yet)" in rows["Semantic"]


def test_stats_json_has_what_the_tool_reports(
    seeded: Store, capsys: pytest.CaptureFixture[str]
) -> None:
    data = cli_json(capsys, "stats")
    assert data["counts"]["facts"] == 5 and data["counts"]["chunks"] == 1
    assert data["facts_by_category"]["codebase"] == 2
    band = next(b for b in data["hypothesis_calibration"] if b["resolved"])
    assert band["confirmed_rate"] == 1.0
    assert data["token_savings"]["total"] == 1200
    assert data["semantic"]["vectors"] == 0 and data["semantic"]["waiting"] >= 5


# -- user -------------------------------------------------------------------------------------
def test_user_list_add_and_set_role(store: Store, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = cli(capsys, "user", "list")
    assert code == 0
    assert out.splitlines()[0].split() == ["USER", "ROLE", "LAST", "SEEN"]
    assert out.splitlines()[1].split()[:2] == ["alice", "admin"]
    assert cli(capsys, "user", "add", "bob")[1] == "Added user bob (member).\n"
    assert cli(capsys, "user", "set-role", "bob", "Curator")[1] == "bob: member → curator.\n"
    assert cli(capsys, "user", "set-role", "bob", "curator")[1] == "bob: already curator.\n"
    data = cli_json(capsys, "user", "add", "carol", "--role", "admin")
    assert data["user"]["username"] == "carol" and data["user"]["role"] == "admin"
    data = cli_json(capsys, "user", "set-role", "carol", "member")
    assert data["previous_role"] == "admin" and data["user"]["role"] == "member"
    listed = cli_json(capsys, "user", "list")["users"]
    assert [(u["username"], u["role"]) for u in listed] == [
        ("alice", "admin"),
        ("bob", "curator"),
        ("carol", "member"),
    ]
    # --json also works before the action
    code, out, _ = cli(capsys, "user", "--json", "list")
    assert code == 0 and [u["username"] for u in json.loads(out)["users"]] == [
        "alice",
        "bob",
        "carol",
    ]


def test_user_errors_are_one_line_with_their_exit_code(store: Store) -> None:
    assert run("user", "add", "bob", "--role", "curator").returncode == 0
    assert_one_line_error(run("user", "add", "bob"), 2, "already exists (role curator)")
    assert_one_line_error(run("user", "set-role", "zed", "admin"), 3, "No user 'zed'")
    assert_one_line_error(run("user", "set-role", "bob", "wizard"), 2, "Unknown role 'wizard'")
    assert_one_line_error(run("user", "add", "dan", "--role", "root"), 2, "Unknown role 'root'")
    assert_one_line_error(run("user", "set-role", "alice", "member"), 4, "last admin")


def test_users_are_administered_by_an_admin_and_listed_by_anyone(store: Store) -> None:
    assert run("user", "add", "bob").returncode == 0  # BIGMIND_USER is alice, the admin
    for who in ("mallory", "bob"):  # not a user here; a member
        r = run("user", "set-role", "bob", "curator", BIGMIND_USER=who)
        assert_one_line_error(r, 4, "Only an admin can change users")
    r = run("user", "set-role", "bob", "curator")
    assert r.returncode == 0 and "bob: member → curator." in r.stdout
    listed = json.loads(run("user", "list", "--json", BIGMIND_USER="mallory").stdout)
    assert [u["username"] for u in listed["users"]] == ["alice", "bob"]  # nobody registered


def test_the_last_admin_keeps_the_role_until_another_exists(store: Store) -> None:
    db = store.db
    with pytest.raises(Forbidden, match="last admin"):
        users.set_role(db, "alice", "member")
    users.add_user(db, "bob", "admin")
    user, before = users.set_role(db, "alice", "member")
    assert (before, user.role) == ("admin", "member")
    with pytest.raises(Forbidden, match="last admin"):
        users.set_role(db, "bob", "curator")
    with pytest.raises(Forbidden, match="Only an admin"):
        users.add_user(db, "eve", by=user)
    with pytest.raises(NotFound):
        users.get_user(db, "eve")
    with pytest.raises(InvalidInput):
        users.add_user(db, "  ")
