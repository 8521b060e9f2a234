"""`bigmind purge` reaches every copy BigMind keeps of a text: a marker written into every text
column of every table — the list read from the database's own schema, so a table or column
added later is covered without touching this file — leaves every column, the full-text
indexes, the SQLite file (or PostgreSQL's table files) and the user's Markdown mirrors; and
purge lists the copies it does not reach. Every text column is sorted in the registry,
``bigmind/storage/schema.py``: one missing there fails here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from conftest import file_bytes
from mcp_calls import Cli, call

from bigmind.cli.main import main
from bigmind.config import Settings
from bigmind.memory import api_tokens, correct, focus, journal, mirror, people, purge
from bigmind.memory.erasure import CUT_NAMES, Places
from bigmind.models import now_ts
from bigmind.runtime import Runtime
from bigmind.storage import schema
from bigmind.storage.attempts_table import Attempts
from bigmind.storage.db import Backend
from bigmind.storage.knowledge_table import Knowledge
from bigmind.storage.people_table import People
from bigmind.storage.profile_table import Profiles
from bigmind.storage.reminders_table import Reminders
from bigmind.storage.savings_table import Savings
from bigmind.storage.store import Store

MARK = "zqpurge7x"  # kept whole by FTS5's porter stemmer and PostgreSQL's english one
KEEP = "zqkeep7x"  # in the rows that must stay (two facts): no marker goes there
PG_TEXT = ("text", "character varying", "character", "json", "jsonb")


# -- the schema, read from the database ----------------------------------------------------------
def text_columns(db: Backend) -> dict[str, list[str]]:
    """Every text column of every table, as the database's catalogue lists them (SQLite: the
    tables, not the full-text and vector indexes' virtual and shadow tables)."""
    out: dict[str, list[str]] = {}
    if db.dialect == "sqlite":
        tables = db.query(
            "SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table'"
            " AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name"
        )
        for t in tables:
            name = str(t["name"])
            cols = db.query(f"SELECT name, type FROM pragma_table_info('{name}')")
            out[name] = [str(c["name"]) for c in cols if "TEXT" in str(c["type"]).upper()]
        return {t: c for t, c in out.items() if c}
    found = db.query(
        "SELECT c.relname AS t, a.attname AS c, format_type(a.atttypid, NULL) AS ty"
        " FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid"
        " JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') AND a.attnum > 0"
        " AND NOT a.attisdropped ORDER BY c.relname, a.attnum"
    )
    for r in found:
        if str(r["ty"]) in PG_TEXT:
            out.setdefault(str(r["t"]), []).append(str(r["c"]))
    return out


def fulltext_indexes(db: Backend) -> list[str]:
    """SQLite's FTS5 tables; PostgreSQL's tables with a tsvector column."""
    if db.dialect == "sqlite":
        found = db.query(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND sql LIKE '%USING fts5%'"
        )
        return [str(r["name"]) for r in found]
    found = db.query(
        "SELECT c.relname AS t FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid"
        " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = current_schema()"
        " AND format_type(a.atttypid, NULL) = 'tsvector' AND NOT a.attisdropped"
    )
    return [str(r["t"]) for r in found]


def indexed(db: Backend, index: str, word: str) -> int:
    if db.dialect == "sqlite":
        sql = f"SELECT count(*) AS n FROM {index} WHERE {index} MATCH ?"
        return int(db.query(sql, (f'"{word}"',))[0]["n"])
    sql = f"SELECT count(*) AS n FROM {index} WHERE CAST(tsv AS TEXT) LIKE ?"
    return int(db.query(sql, (f"%{word}%",))[0]["n"])


def holding(db: Backend, columns: dict[str, list[str]], word: str) -> list[str]:
    """``table.column`` of every column with a row holding ``word`` (any case)."""
    out = []
    for table, cols in columns.items():
        for col in cols:
            sql = f"SELECT count(*) AS n FROM {table} WHERE lower({col}) LIKE ?"
            if int(db.query(sql, (f"%{word}%",))[0]["n"]):
                out.append(f"{table}.{col}")
    return out


def test_every_text_column_is_sorted(backend: Backend) -> None:
    """Each text column of the schema is in exactly one of its registry entry's three kinds
    (tests/storage/test_schema.py holds the entries to the schema, and checks that a purge deals with
    each table it matches one way)."""
    for table, cols in text_columns(backend).items():
        t = schema.entry(table)
        for col in cols:
            where = [k for k in ("text", "labels", "not_text") if col in getattr(t, k)]
            assert len(where) == 1, (
                f"{table}.{col} is in {where or 'none'} of text, labels, not_text"
            )


# -- a memory with the marker everywhere -----------------------------------------------------------
def seed(store: Store) -> None:
    """A row in every table that has a text column (through the features where they exist)."""
    s = store.start_session(ide_hint="vscode").session
    store.append_chunk("the broker is down", s.id, "user", flag_reason="decision")
    fact, _, _ = store.store_fact("ops", "Deploys run from CI", session_id=s.id, files=["ci.yml"])
    correct.update_fact(store, None, fact.id, fact="Deploys run from CI only", reason="clearer")
    other, _, _ = store.store_fact("ops", "Deploys run by hand")
    store.deprecate_fact(other.id, "superseded")
    keep, _, _ = store.store_fact("ops", f"{KEEP} nightly builds")
    keep2, _, _ = store.store_fact("ops", f"{KEEP} weekly builds")
    h, _ = journal.add(store, "the queue stalls", session_id=s.id)
    focus.announce(store, s.id, "billing", files=["bill.py"], ide_hint="vscode")
    people.remember(store, "ops-bot", "Ops Bot", "SRE", "infra", ["k8s"], "on call")
    store.update_profile("engineer", "short answers", ["uses vim"])
    api_tokens.create(store.db, "alice", label="laptop")
    ts = now_ts()
    with store.db.transaction() as tx:
        store.links.add(tx, keep.id, keep2.id, "conflict", "opposites", 0.9, ts)
        Attempts(store.db, store.uid).add(tx, s.id, "restart the broker", "failed", "no", ts)
        Reminders(store.db, store.uid).add(tx, s.id, "rotate the keys", None, ts)
        Savings(store.db, store.uid).add(tx, s.id, "recalled the runbook", 500, "recall", ts)
        Profiles(store.db, store.uid).update(tx, {"pinned_facts": "- uses vim"}, ts)
        entry = Knowledge(store.db, store.uid).add(
            tx, "ops", "Deploys", "Deploys run from CI", 5, s.id, ts, approved=True
        )
        Knowledge(store.db, store.uid).approve(tx, entry, "fine", ts)
    store.end_session(s.id, "broker outage", ["broker", "ci"], "fixed", "the broker summary")
    with store.db.transaction() as tx:
        store.directory.rebuild(tx, now_ts())
    assert h.status == "open"


def with_marker(value: object) -> str:
    """``value`` holding MARK, in its own format: a JSON list gets one more item."""
    if isinstance(value, str) and value.startswith("["):
        try:
            items = json.loads(value)
        except ValueError:
            items = None
        if isinstance(items, list):
            return json.dumps([*items, f"x {MARK.upper()} y"])
    return f"{value or ''} ({MARK})".strip()


def mark_everything(db: Backend, columns: dict[str, list[str]]) -> list[str]:
    """MARK into every column that is not sorted as ids, keys, times or digests (those the
    schema has that the registry does not know included), in every row but KEEP's. Returns
    ``table.column`` of each."""
    marked = []
    key, at = ("rowid", "?") if db.dialect == "sqlite" else ("ctid", "CAST(? AS tid)")
    for table, all_cols in columns.items():
        known = table.startswith("vec_") or table in {t.name for t in schema.TABLES}
        cols = [c for c in all_cols if not known or c not in schema.entry(table).not_text]
        if not cols:
            continue
        sets = ", ".join(f"{c} = ?" for c in cols)
        with db.transaction() as tx:
            for r in tx.execute(f"SELECT {key} AS k, {', '.join(cols)} FROM {table}"):
                if not any(KEEP in str(r[c]) for c in all_cols if c in r):
                    values = [with_marker(r[c]) for c in cols]
                    tx.execute(f"UPDATE {table} SET {sets} WHERE {key} = {at}", (*values, r["k"]))
        marked += [f"{table}.{c}" for c in cols]
    return marked


def pg_table_files(db: Backend) -> list[tuple[str, Path]]:
    """Every table's, TOAST table's and index's data files (with its name), after a
    CHECKPOINT."""
    db.query("CHECKPOINT")
    folder = Path(str(db.query("SHOW data_directory")[0]["data_directory"]))
    found = db.query(
        "SELECT c.relname AS name, pg_relation_filepath(c.oid) AS p FROM pg_class c"
        " JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname IN"
        " (current_schema(), 'pg_toast') AND c.relkind IN ('r', 'i', 't')"
    )
    out: list[tuple[str, Path]] = []
    for r in found:
        if r["p"]:
            out += [(str(r["name"]), p) for p in sorted(folder.glob(str(r["p"]) + "*"))]
    return out


def test_purge_reaches_every_column_index_and_mirror(
    store: Store, settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    db = store.db
    seed(store)
    columns = text_columns(db)
    marked = mark_everything(db, columns)
    # So the check can fail: the marker is in every column marked, a row of each table.
    assert holding(db, columns, MARK) == marked
    assert {t.split(".")[0] for t in marked} >= set(schema.matched_tables())
    indexes = fulltext_indexes(db)
    assert len(indexes) == 4 and all(indexed(db, i, MARK) for i in indexes)
    if db.dialect == "sqlite":
        assert MARK.encode() in file_bytes(settings)
    else:
        assert any(MARK.encode() in p.read_bytes() for _, p in pg_table_files(db))
    # The mirror BigMind keeps for alice holds it; another user's mirror and an export too.
    mine = mirror.default_path(settings.data_dir, None)
    mirror.write(store, mine)
    theirs = mine.with_name("theirs.md")
    theirs.write_text(mine.read_text().replace("for user `alice`", "for user `bob`"))
    export = settings.data_dir / "exports" / "bigmind_export_1.json"
    export.parent.mkdir()
    export.write_text(json.dumps({"format": "bigmind-export", "facts": [f"a {MARK} b"]}))
    before = {p: p.read_text() for p in (theirs, export)}
    assert MARK in mine.read_text().lower()

    assert main(["purge", "--match", MARK.upper(), "--yes", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)

    assert holding(db, columns, MARK) == []
    assert [i for i in indexes if indexed(db, i, MARK)] == []
    if db.dialect == "sqlite":
        assert MARK.encode() not in file_bytes(settings).lower()
    else:
        files = pg_table_files(db)
        assert [name for name, p in files if MARK.encode() in p.read_bytes().lower()] == []
    assert MARK not in mine.read_text().lower() and not mirror.has_edits(mine)
    assert data["mirrors"] == [str(mine)]
    assert {p: p.read_text() for p in (theirs, export)} == before  # not BigMind's to change
    # What stays: the memory without the text, the rows it was cut out of.
    assert holding(db, columns, KEEP) == ["facts.fact"]
    assert store.get_profile().role == "engineer ([purged])"
    assert set(data["cut"]) == set(CUT_NAMES.values())
    assert store.links.of_facts([int(r["id"]) for r in store.facts.holding(KEEP, 5)])
    # What it leaves, always listed: the export holding it named.
    assert [line.split(":")[0] for line in data["left"]] == [
        "exports you made",
        "backups",
        "logs",
        "your own copies",
    ]
    assert "1 of the 1 files" in data["left"][0] and export.name in data["left"][0]
    assert main(["purge", "--match", MARK]) == 0
    out = capsys.readouterr().out
    assert out.startswith("Nothing in your memory contains") and "does not reach" in out
    assert f"1 of the 1 files in {export.parent} hold it: {export.name}" in out  # still
    assert "- backups:" in out


def test_forget_drops_the_memorys_lines_from_the_mirror(
    store: Store, settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    """A forget by id (here `bigmind forget`) rewrites the mirror without the memory's lines
    — a fact with its files line — and the mirror still reads as unedited."""
    s = store.start_session().session
    gone, _, _ = store.store_fact("ops", "The vault token is in 1Password", files=["vault.py"])
    kept, _, _ = store.store_fact("ops", "Deploys run from CI")
    h, _ = journal.add(store, "the vault leaks", session_id=s.id)
    store.end_session(s.id, "vault review", None, None, None)
    path = mirror.default_path(settings.data_dir, None)
    mirror.write(store, path)
    text = path.read_text()
    assert f"[#{gone.id}]" in text and "`vault.py`" in text and f"(h{h.id}," in text

    for kind, item in (("fact", gone.id), ("hypothesis", h.id), ("session", s.id)):
        assert main(["forget", kind, str(item)]) == 0
        assert f"Rewrote the Markdown mirror: {path}" in capsys.readouterr().out
    text = path.read_text()
    assert "vault" not in text and f"[#{kept.id}] Deploys run from CI" in text
    assert not mirror.has_edits(path)
    assert mirror.pull(store, None, path).summary().startswith("0 facts updated, 0 deprecated")


@pytest.mark.anyio
async def test_memory_forget_rewrites_the_mirror_and_names_what_it_leaves(
    client: Cli, runtime: Runtime, settings: Settings
) -> None:
    store = runtime.store
    gone, _, _ = store.store_fact("ops", "The vault token is in 1Password")
    store.store_fact("ops", "Deploys run from CI")
    path = mirror.default_path(settings.data_dir, None)
    mirror.write(store, path)
    assert "vault" in path.read_text()
    text, _ = await call(client, "memory_forget", kind="fact", id=gone.id)
    assert f"Rewrote the Markdown mirror: {path}." in text
    assert "Not reached (copies BigMind does not control):\n- exports you made: none in" in text
    assert "vault" not in path.read_text() and "Deploys run from CI" in path.read_text()


def test_purge_lists_what_it_leaves_even_when_nothing_matches(
    store: Store, settings: Settings, capsys: pytest.CaptureFixture[str]
) -> None:
    places = Places(mirror.folder(settings.data_dir), settings.data_dir / "exports")
    found = purge.find(store, "nothing-like-it", places)
    assert not found.anything and len(found.left) == 4
    assert main(["purge", "--match", "nothing-like-it", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["left"] == found.left


def test_purge_touches_only_what_is_the_users_to_touch(backend: Backend) -> None:
    """Team mode, alice a member: bob's profile is not searched; the person bob added and the
    company knowledge he promoted are named, untouched; alice's own profile is cut."""
    alice = Store(backend, "alice", mode="team")
    bob = Store(backend, "bob", mode="team")
    for who in (alice, bob):
        who.update_profile(f"{who.user.username} ({MARK})")
    people.remember(bob, "jdoe", notes=f"knows {MARK}")
    with backend.transaction() as tx:  # approved (a curator's doing)
        entry = Knowledge(backend, bob.uid).add(
            tx, "ops", "Vault", f"The {MARK} vault", 5, None, now_ts(), approved=True
        )
    found = purge.find(alice, MARK)
    assert [c.table for c in found.cuts] == ["identity_profile"]
    assert [line.split(":")[0] for line in found.refused] == [
        "person #1 @jdoe",
        f"company knowledge #{entry}",
    ]
    purge.purge(alice, found)
    assert alice.get_profile().role == "alice ([purged])"
    assert MARK in str(bob.get_profile().role)
    assert MARK in str(People(backend, "").get("jdoe"))
    assert MARK in str(Knowledge(backend, "").get(entry))
