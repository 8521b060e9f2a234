"""`bigmind forget` and `bigmind purge` on a seeded database, as a user runs them: what they print,
what they ask, their exit codes, and what is left afterwards."""

from __future__ import annotations

import io
import json
import sys
from typing import Any

import pytest
from cli_run import run_cli

from bigmind.cli.main import main
from bigmind.memory import correct, focus, journal, people
from bigmind.storage.store import Store

TOKEN = "orbit-ZQ7xAbCdEf-kite"  # a marker, not a secret: secrets never reach storage


@pytest.fixture
def seeded(store: Store) -> dict[str, Any]:
    """A token pasted into memories of every kind, inside longer words and in other cases."""
    s = store.start_session().session
    store.append_chunk(f"here it is: {TOKEN}; keep it safe", s.id, "user")
    kept_chunk, _ = store.append_chunk("We chose RabbitMQ over Kafka", s.id)
    store.end_session(s.id, f"Set up CI with {TOKEN}", "ci", None, "CI summary")
    s3 = store.start_session().session
    store.end_session(s3.id, "Rotated keys", "ops", None, f"The CI uses {TOKEN.lower()} to push")
    f, _, _ = store.store_fact("ops", f"The deploy marker is x{TOKEN}y")
    old, _, _ = store.store_fact("ops", f"Old marker {TOKEN}")
    correct.update_fact(store, None, old.id, fact="The old token was revoked")
    kept, _, _ = store.store_fact("ops", "Deploys run from CI only")
    h, _ = journal.add(store, f"{TOKEN} may be expired")
    s2 = store.start_session().session
    chunk, _ = store.append_chunk(f"pushed with {TOKEN.upper()}", s2.id)
    fa, _ = focus.announce(store, s2.id, f"rotating {TOKEN}")
    p = people.remember(store, "ops-bot", notes=f"holds {TOKEN}").person
    return {
        "session": s.id,
        "summary": s3.id,
        "chunk": chunk.id,
        "fact": f.id,
        "old": old.id,
        "kept_fact": kept.id,
        "kept_chunk": kept_chunk.id,
        "hypothesis": h.id,
        "focus": fa.id,
        "person": p.id,
    }


def cli(
    capsys: pytest.CaptureFixture[str], *args: str, stdin: str | None = None
) -> tuple[int, str, str]:
    before = sys.stdin
    if stdin is not None:
        sys.stdin = io.StringIO(stdin)
    try:
        code = main(list(args))
    finally:
        sys.stdin = before
    out, err = capsys.readouterr()
    return code, out, err


def holding(store: Store, text: str) -> int:
    """Rows of the user's memory (any table) holding ``text``, any case."""
    from bigmind.memory import purge

    return len(purge.find(store, text).targets)


def test_purge_lists_asks_and_forgets_every_kind(
    seeded: dict[str, Any], store: Store, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = cli(capsys, "purge", "--match", "zq7XABCDEF", "--dry-run")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "8 memories contain 'zq7XABCDEF':"
    listed = [tuple(line.split()[:2]) for line in lines[1:9]]
    assert listed == [
        ("session", seeded["session"]),  # its exchange and summary go with it: not listed again
        ("summary", seeded["summary"]),
        ("chunk", f"#{seeded['chunk']}"),
        ("fact", f"#{seeded['fact']}"),
        ("fact", f"#{seeded['old']}"),  # an earlier version holds it
        ("hypothesis", f"#{seeded['hypothesis']}"),
        ("focus", f"#{seeded['focus']}"),
        ("person", f"#{seeded['person']}"),
    ]
    assert "(an earlier version matches)" in lines[5]
    assert lines[9] == "Purge does not reach these copies (BigMind does not control them):"
    assert holding(store, TOKEN) == 8  # a dry run deletes nothing
    # Not confirmed: nothing goes, exit 1.
    code, out, err = cli(capsys, "purge", "--match", TOKEN, stdin="n\n")
    assert code == 1 and "Forget all 8 for good? [y/N]" in out and "Nothing was forgotten" in err
    code, out, err = cli(capsys, "purge", "--match", TOKEN, stdin="")
    assert code == 1 and "pass --yes" in err
    assert holding(store, TOKEN) == 8
    # Confirmed.
    code, out, _ = cli(capsys, "purge", "--match", TOKEN, stdin="yes\n")
    assert code == 0 and "Forgot 8 memories (1 session, 1 summary, 1 chunk, 2 facts," in out
    assert holding(store, TOKEN) == 0
    assert store.get_fact(seeded["kept_fact"]).fact == "Deploys run from CI only"
    code, out, _ = cli(capsys, "purge", "--match", TOKEN)
    assert code == 0 and out.startswith("Nothing in your memory contains")


def test_purge_yes_and_json(
    seeded: dict[str, Any], store: Store, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = cli(capsys, "purge", "--match", "Rabbitmq OVER", "--yes", "--json")
    assert code == 0
    data = json.loads(out)
    assert [(f["kind"], f["id"]) for f in data["found"]] == [("chunk", str(seeded["kept_chunk"]))]
    assert data["removed"] == {"exchanges": 1} and data["scrub"]
    assert holding(store, "rabbitmq") == 0


@pytest.mark.parametrize(
    ("args", "code", "says"),
    [
        (("purge", "--match", "ab"), 2, "at least 3 characters"),
        (("forget", "planet", "1"), 2, "'planet' is not a kind of memory"),
        (("forget", "fact", "987654"), 3, "No fact #987654"),
        (("forget", "fact", "abc"), 2, "is a number"),
        # An id no row can have: once an OverflowError inside the driver (a traceback).
        (("forget", "fact", "99999999999999999999"), 2, "is a number"),
        (("forget", "fact", "²"), 2, "is a number"),
        (("forget", "person", "9223372036854775808"), 3, "No person"),
        (("forget", "session", "nope"), 3, "No session 'nope'"),
    ],
)
def test_bad_input_is_one_line_and_an_exit_code(
    seeded: dict[str, Any], args: tuple[str, ...], code: int, says: str
) -> None:
    r = run_cli(*args)
    assert r.returncode == code, r.stderr
    assert r.stdout == "" and r.stderr.startswith("bigmind: ") and says in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_forget_one_memory(
    seeded: dict[str, Any], store: Store, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = cli(capsys, "forget", "fact", str(seeded["old"]), "--reason", "revoked")
    assert code == 0
    assert out.startswith(f"Forgot fact #{seeded['old']} for good: 1 earlier version, 1 fact")
    assert "Reason: revoked" in out
    code, out, _ = cli(capsys, "forget", "session", seeded["session"], "--json")
    data = json.loads(out)
    assert code == 0 and data["removed"]["sessions"] == 1 and data["removed"]["exchanges"] == 2
    assert data["removed"]["summaries"] == 1
    code, out, _ = cli(capsys, "forget", "person", "@ops-bot")
    assert code == 0 and "person #" in out
    assert store.sessions.get(seeded["session"]) is None


def test_a_forget_deletes_the_vector_index_files_of_what_it_forgot(
    seeded: dict[str, Any], store: Store, capsys: pytest.CaptureFixture[str]
) -> None:
    """A persisted vector index holds the forgotten memory's vector: the CLI, which runs no
    index builder, deletes the files of the kinds it forgot (a server rebuilds them)."""
    from bigmind.cli.main import load_settings
    from bigmind.search.ann import AnnFiles, index_dir

    root = index_dir(store.db.location, store.db.dialect, load_settings().home_dir)
    assert root is not None
    root.mkdir(parents=True)
    files = AnnFiles(root)
    for kind in ("fact", "chunk"):
        stem = files._stem(kind, store.uid)
        for name in (f"{stem}.json", f"{stem}-0123456789ab.usearch"):
            (root / name).write_text("an index")
    kept = sorted(p.name for p in root.glob(f"{files._stem('chunk', store.uid)}*"))
    code, _, _ = cli(capsys, "forget", "fact", str(seeded["old"]))
    assert code == 0
    assert sorted(p.name for p in root.iterdir()) == kept  # the facts' index is gone
