"""``bigmind migrate-db``: a SQLite memory copied into PostgreSQL, row for row, resumable.

Every test here copies into the ``pg_url`` fixture (a fresh, migrated PostgreSQL database)
from a SQLite file built on purpose; they are not parametrised over the two backends.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from bigmind.cli.main import main
from bigmind.memory import (
    correct,
    focus,
    globalkb,
    journal,
    megamind,
    people,
    reminders,
    savings,
)
from bigmind.models import now_ts
from bigmind.search import keyword
from bigmind.search.vectors import SOURCES, Pending, VectorStore
from bigmind.storage.connect import connect, connect_pg
from bigmind.storage.db import SQLiteBackend
from bigmind.storage.migratedb import REMADE, TABLES
from bigmind.storage.pg import PostgresBackend
from bigmind.storage.store import Store

MODEL, DIM = "test-model", 8  # sqlite-vec's bit quantisation needs a multiple of 8
PASSWORD = "s3cret-pw"


def _fill(store: Store, who: str) -> None:
    """One user's memory through the store: every tier."""
    s = store.start_session(ide_hint="vscode").session
    store.update_profile(role=f"{who} engineer", preferences="Terse", pinned_facts=["uses uv"])
    f, _, _ = store.store_fact("decision", f"{who} chose RabbitMQ as the message broker", 0.9, s.id)
    store.store_fact("preference", f"{who} prefers pytest over unittest", importance=8)
    store.deprecate_fact(f.id, "replaced")
    kafka, _, _ = store.store_fact("decision", f"{who} chose Kafka as the message broker")
    with store.db.transaction() as tx:
        store.links.add(tx, kafka.id, f.id, "supersedes", "replaces rabbitmq", 0.8, now_ts())
    correct.update_fact(
        store, None, kafka.id, fact=f"{who} chose Kafka 3.7 as the broker", reason="v"
    )
    store.append_chunk(f"{who}: which broker do we use?", s.id, "user")
    store.append_chunk(f"{who}: Kafka, since last Tuesday.", s.id, "assistant", "decision")
    h, _ = journal.add(store, f"{who}: the cache will fix the latency", 0.6, s.id)
    journal.resolve(store, h.id, "refuted", "it did not")
    journal.add(store, f"{who}: retries are enough", 0.8, s.id)
    reminders.done(store, reminders.add(store, f"{who}: bump Kafka", "2020-01-01", s.id)[0].id)
    reminders.add(store, f"{who}: rerun the importer", session_id=s.id)
    focus.announce(store, s.id, f"{who} edits the importer", ["bigmind/transfer.py"])
    savings.log(store, s.id, "recalled instead of reading", 1200, "memory")
    people.remember(store, f"{who}-colleague", "Jane", "SRE", "platform", "kafka", "on call")
    globalkb.promote(store, "standard", f"{who}'s rule", "Always run ruff before commit.", 7)
    store.end_session(s.id, f"{who} chose a broker", ["infra"], "done", "Long summary", ["k1"])
    store.start_session()  # one left open
    with store.db.transaction() as tx:
        tx.execute(
            "INSERT INTO memory_usage(kind, item_id, user_id, access_count, last_accessed_at)"
            " VALUES ('fact', ?, ?, 3, '2024-05-01 10:00:00')",
            (str(f.id), store.uid),
        )


def _add_vectors(db: SQLiteBackend) -> None:
    vs = VectorStore(db)
    vs.adopt(MODEL, DIM)
    items = [
        Pending(k, str(r["id"]), str(r["user_id"]), "text", f"h{r['id']}")
        for k, t in (("fact", "facts"), ("chunk", "conversation_chunks"))
        for r in db.query(f"SELECT id, user_id FROM {t} ORDER BY id")
    ]
    items += [
        Pending("person", str(r["id"]), "", "p", "hp") for r in db.query("SELECT id FROM people")
    ]
    rng = np.random.default_rng(7)
    vs.write(items, rng.standard_normal((len(items), DIM)).astype(np.float32), MODEL)


def build_source(path: Path) -> Path:
    db = connect(path)
    try:
        alice, bob = Store(db, "alice"), Store(db, "bob")
        _fill(alice, "alice")
        _fill(bob, "bob")
        _add_vectors(db)
    finally:
        db.close()
    return path


@pytest.fixture
def source(tmp_path: Path) -> Path:
    """A populated SQLite memory at BIGMIND_DB_PATH (the command's default source)."""
    return build_source(tmp_path / "data" / "memory.db")


@pytest.fixture
def target(pg_url: str) -> Any:
    db = connect_pg(pg_url)
    yield db.maintenance()  # the test reads every user's rows (row-level security)
    db.close()


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["migrate-db", *args])
    out, err = capsys.readouterr()
    return code, out, err


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, dict[str, Any]]:
    code, out, _ = run(capsys, *args, "--json")
    return code, json.loads(out)


def _table_rows(db: Any, table: str, columns: list[str], key: tuple[str, ...]) -> list[tuple]:
    rows = db.query(f"SELECT {', '.join(columns)} FROM {table} ORDER BY {', '.join(key)}")
    out = []
    for r in rows:
        vals = []
        for c in columns:
            v = r[c]
            if c == "embedding":
                v = np.frombuffer(v, dtype=np.float32) if isinstance(v, bytes) else v.to_numpy()
                v = tuple(v.tolist())
            vals.append(v)
        out.append(tuple(vals))
    return out


def assert_same(src: SQLiteBackend, tgt: PostgresBackend, *, vectors: bool = True) -> None:
    """Every table of the source, row by row and column by column, is in the target."""
    for spec in TABLES:
        if spec.vectors and not vectors:
            continue
        if spec.name.startswith("vec_"):
            columns = ["rowid", "user_id", "embedding"]
        elif spec.name == "bigmind_migrations":
            columns = ["name"]  # the target applied its own migrations, at its own time
        else:
            columns = sorted(src.columns(spec.name) - {"tsv"})
        have = _table_rows(src, spec.name, columns, spec.key)
        got = _table_rows(tgt, spec.name, columns, spec.key)
        if spec.name == "embedding_state":
            got = [r for r in got if r in have]  # nothing else to compare there
        assert got == have, spec.name


def test_copies_every_table_row_by_row(
    source: Path, target: PostgresBackend, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "--to", pg_url)  # the source is BIGMIND_DB_PATH
    assert code == 0, err
    assert "Vectors: copied (test-model, 8 d)." in out
    assert "Copying facts" not in err  # progress bars only on a terminal (this is no tty)
    src = connect(source)
    try:
        assert_same(src, target)
        assert {r["username"] for r in target.query("SELECT username FROM users")} == {
            "alice",
            "bob",
        }
        assert target.query("SELECT count(*) AS n FROM vec_fact")[0]["n"] == 6
    finally:
        src.close()
    assert VectorStore(target).model() == (MODEL, DIM)

    # The target works as a memory: search finds a migrated fact, new ids do not collide.
    alice = Store(target, "alice")
    hits = keyword.hits(alice, "fact", "kafka message broker")
    assert any("alice chose Kafka" in h.text for h in hits)
    before = target.query("SELECT max(id) AS m FROM facts")[0]["m"]
    fact, created, _ = alice.store_fact("decision", "a brand new fact after the migration")
    assert created and fact.id > before
    alice.append_chunk("a new chunk in PostgreSQL")


def test_second_run_copies_nothing(
    source: Path, target: PostgresBackend, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, first = run_json(capsys, "--to", pg_url)
    assert code == 0
    assert first["copied"] > 0 and first["missing"] == 0 and first["vectors_copied"]
    code, second = run_json(capsys, "--to", pg_url, "--from", str(source))
    assert code == 0
    assert second["copied"] == 0 and second["missing"] == 0
    for name, t in second["tables"].items():
        assert t["target"] == t["source"] == first["tables"][name]["target"], name
        assert t["copied"] == 0
    src = connect(source)
    try:
        assert_same(src, target)
    finally:
        src.close()


def test_interrupted_copy_resumes(
    source: Path, target: PostgresBackend, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(capsys, "--to", pg_url)[0] == 0
    # As if the first run had stopped part-way: some rows of several tables never arrived.
    with target.transaction() as tx:
        tx.execute("DELETE FROM focus_announcements")
        tx.execute("DELETE FROM conversation_chunks WHERE id > 1")
        tx.execute("DELETE FROM vec_chunk")
        tx.execute("DELETE FROM embeddings WHERE kind = 'chunk'")
    code, again = run_json(capsys, "--to", pg_url)
    assert code == 0
    assert again["tables"]["focus_announcements"]["copied"] == 2
    assert again["tables"]["conversation_chunks"]["copied"] == 3
    assert again["tables"]["vec_chunk"]["copied"] == 4
    assert again["tables"]["facts"]["copied"] == 0
    src = connect(source)
    try:
        assert_same(src, target)
    finally:
        src.close()


def test_other_model_in_target_skips_vectors(
    source: Path, target: PostgresBackend, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    VectorStore(target).adopt("other-model", 16)
    code, out, _ = run(capsys, "--to", pg_url)
    assert code == 0
    assert "holds vectors of other-model (16 d)" in out
    assert "the server embeds the copied memories in the background" in out
    assert target.query("SELECT count(*) AS n FROM embeddings")[0]["n"] == 0
    assert VectorStore(target).model() == ("other-model", 16)
    src = connect(source)
    try:
        assert_same(src, target, vectors=False)
    finally:
        src.close()


def test_existing_user_in_target_is_merged(
    source: Path, target: PostgresBackend, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The server ran once on the target (its own 'alice' row): alice's memories join it."""
    there = Store(target, "alice").uid
    code, report = run_json(capsys, "--to", pg_url)
    assert code == 0, report
    assert report["missing"] == 0
    assert any("already existed" in n for n in report["notes"])
    alice = Store(target, "alice")
    assert alice.uid == there
    assert any("alice chose Kafka" in h.text for h in keyword.hits(alice, "fact", "kafka broker"))
    assert alice.get_profile().role == "alice engineer"  # the profile follows the user
    owners = {r["user_id"] for r in target.query("SELECT DISTINCT user_id FROM vec_fact")}
    assert there in owners


def test_rows_held_by_other_data_fail_verification(
    source: Path, target: PostgresBackend, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A target with its own fact #1: the source's fact #1 cannot be copied, and it says so."""
    Store(target, "carol").store_fact("decision", "carol's own fact")
    code, out, err = run(capsys, "--to", pg_url)
    assert code == 7
    assert "facts" in out and "missing" in out
    assert "not in the target" in err and "different row" in err
    last = err.strip().splitlines()[-1]  # the progress bars come before it
    assert last.startswith("bigmind: ") and "facts (1)" in last


@pytest.mark.parametrize(
    ("url", "code", "message"),
    [
        (f"mysql://u:{PASSWORD}@localhost/db", 2, "must be a PostgreSQL URL"),
        (
            f"postgresql://u:{PASSWORD}@127.0.0.1:1/db",
            5,
            "Cannot connect to PostgreSQL at postgresql://u:***@127.0.0.1:1/db",
        ),
    ],
    ids=["not-postgresql", "unreachable"],
)
def test_a_bad_target_is_a_clear_error_without_the_password(
    source: Path, capsys: pytest.CaptureFixture[str], url: str, code: int, message: str
) -> None:
    got, out, err = run(capsys, "--to", url)
    assert got == code and message in err
    assert PASSWORD not in err + out


def test_missing_source_is_refused_and_not_created(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"postgresql://u:{PASSWORD}@127.0.0.1:1/db"  # never reached
    code, _, err = run(capsys, "--to", url)  # default source: BIGMIND_DB_PATH, absent
    assert code == 3 and "No SQLite database at" in err
    assert not (tmp_path / "data" / "memory.db").exists()
    missing = tmp_path / "elsewhere" / "nope.db"
    code, _, err = run(capsys, "--to", url, "--from", str(missing))
    assert code == 3 and str(missing) in err
    assert not missing.exists() and not missing.parent.exists()


@pytest.mark.sqlite_only
def test_every_table_of_the_schema_is_copied(backend: SQLiteBackend) -> None:
    """A table left out of TABLES would stay behind in the SQLite file without a word (the
    directory's are made again on the target from what was copied)."""
    rows = backend.query("SELECT name FROM sqlite_master WHERE type = 'table'")
    names = {r["name"] for r in rows}
    made = {n for n in names if not n.startswith("sqlite_") and "_fts" not in n}
    assert made - {s.name for s in TABLES} == set(REMADE) == {"directory_cards", "directory_topics"}


def test_vector_tables_cover_every_kind() -> None:
    names = {s.name for s in TABLES}
    assert {f"vec_{k}" for k in SOURCES} <= names


def test_small_blocks_and_a_rebuilt_vector_index(
    source: Path,
    target: PostgresBackend,
    pg_url: str,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Many blocks per table; a bulk vector copy drops the HNSW index and builds it after."""
    from bigmind.storage import migratedb

    monkeypatch.setattr(migratedb, "BLOCK", 2)
    code, report = run_json(capsys, "--to", pg_url)
    assert code == 0 and report["missing"] == 0
    assert report["tables"]["vec_fact"]["copied"] == 6
    indexes = {r["n"] for r in target.query("SELECT indexname AS n FROM pg_indexes")}
    assert {"vec_fact_hnsw", "vec_chunk_hnsw", "vec_person_hnsw"} <= indexes
    src = connect(source)
    try:
        assert_same(src, target)
    finally:
        src.close()


def test_a_bad_row_is_reported_and_the_rest_copied(
    source: Path, target: PostgresBackend, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """An old file written without foreign keys: its dangling row fails alone, by name."""
    import apsw

    conn = apsw.Connection(str(source))
    conn.execute("PRAGMA foreign_keys=OFF")
    uid = conn.execute("SELECT id FROM users WHERE username = 'alice'").fetchone()[0]
    conn.execute(
        "INSERT INTO facts(user_id, category, fact, source_session, content_hash, created_at,"
        " updated_at) VALUES (?, 'decision', 'orphan', 'no-such-session', 'x', '2024-01-01',"
        " '2024-01-01')",
        (uid,),
    )
    conn.close()
    code, out, err = run(capsys, "--to", pg_url)
    assert code == 7
    assert "← missing" in out
    last = err.strip().splitlines()[-1]
    assert "facts (1)" in last and "foreign key" in last and "run the same command again" in last
    facts = target.query("SELECT fact FROM facts")
    assert len(facts) == 6 and "orphan" not in {r["fact"] for r in facts}


def _directory(db: Any) -> tuple[list[Any], list[Any]]:
    cards = db.query(
        "SELECT user_id, first_seen, last_seen, sessions, facts, hidden FROM directory_cards"
        " ORDER BY user_id"
    )
    topics = db.query(
        "SELECT user_id, topic, sessions, last_at FROM directory_topics ORDER BY user_id, topic"
    )
    return [dict(r) for r in cards], [dict(r) for r in topics]


def test_the_directory_is_made_again_on_the_target_with_hidden_cards_kept(
    source: Path, target: PostgresBackend, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    src = connect(source)
    try:
        megamind.hide(Store(src, "bob"), True)
        want = _directory(src)
    finally:
        src.close()
    code, _, err = run(capsys, "--to", pg_url)
    assert code == 0, err
    assert _directory(target) == want
    assert [c["hidden"] for c in want[0]] == [0, 1] or [c["hidden"] for c in want[0]] == [1, 0]
    assert {t["topic"] for t in want[1]} == {"infra"}
