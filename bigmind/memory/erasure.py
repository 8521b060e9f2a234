"""Forgetting for real: a memory and everything made from it leave the database, bytes included.

Deprecation keeps a fact (out of context and search, restorable); forgetting deletes. One call
removes, in one transaction, the rows of the memories named and what was derived from them —
full-text entries (by trigger), vectors, use counts, a fact's earlier versions — and then asks
the backend to scrub the files: SQLite already zeroed the deleted bytes (``secure_delete``,
FTS5's ``secure-delete``) and truncates the WAL that still held older page images; PostgreSQL
rewrites the tables that held the text (``VACUUM FULL``). What a forget of each kind removes:

- ``fact``: the row, its full-text entry, its vector, its earlier versions.
- ``chunk`` (an exchange): the row, its full-text entry, its two vectors; the context vectors of
  the next exchanges, which were made with its text, are re-made without it.
- ``summary``: a session's Tier-2 summary, its full-text entry, its vector, its use counts.
- ``session``: the session with its summary, its exchanges and its focus announcements. Facts,
  hypotheses, attempts, logged token savings and company knowledge written in it stay — without the link
  to it — and the answer names them, to be forgotten one by one if they must go too.
- ``hypothesis``, ``attempt`` (a recorded approach), ``person`` (shared: by whoever added them, a curator, or anyone in personal
  mode), ``focus`` (one focus announcement): the row, its vector and use counts.
- ``reminder``: the row (a session forgotten keeps its reminders, without the link).

Given the :class:`Places` of the files BigMind writes, a forget also drops the memories' lines
from the user's Markdown mirrors (:func:`bigmind.memory.mirror.forget_lines`) and names the
copies it cannot reach (:func:`left`). ``bigmind purge`` (:mod:`bigmind.memory.purge`) adds
rows that are not memories, whose matched text is cut out in place.

Nothing about a forgotten memory is kept, not even a log line with its text or the reason.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bigmind import limits
from bigmind.errors import Forbidden, InvalidInput, NotFound
from bigmind.limits import check_text
from bigmind.memory import globalkb, mirror
from bigmind.memory.quoting import quoted
from bigmind.models import now_ts
from bigmind.search.vectors import VectorStore
from bigmind.storage import purge_rows as purge_rows
from bigmind.storage import schema, upkeep, usage_table
from bigmind.storage.attempts_table import Attempts
from bigmind.storage.db import Tx
from bigmind.storage.fact_history_table import FactHistory
from bigmind.storage.focus_table import FocusAnnouncements
from bigmind.storage.hypotheses_table import Hypotheses
from bigmind.storage.knowledge_table import Knowledge
from bigmind.storage.people_table import People
from bigmind.storage.reminders_table import Reminders
from bigmind.storage.savings_table import Savings
from bigmind.storage.store import Store
from bigmind.storage.vector_tables import CONTEXT_TURNS, table

KINDS = (
    "fact",
    "chunk",
    "summary",
    "session",
    "hypothesis",
    "person",
    "focus",
    "attempt",
    "reminder",
)
LABEL_CHARS = 100
NAMED = 5  # memories an answer names one by one; more are counted per kind
READ_BLOCK = 1 << 20  # characters of an export read at a time, looking for a text
BULK = 100  # memories past which one forget deletes in bulk (full-text indexes merged after)
# Per kind: the tables whose rows hold its text (rewritten on PostgreSQL, so no dead row keeps
# the bytes), the rows it only unlinks (a plain VACUUM tidies them), the vectors made from it.
TEXT_TABLES = {k: schema.forgotten_with(k) for k in KINDS}
LINK_TABLES = {k: tables for k in KINDS if (tables := schema.unlinked_by(k))}
VECTOR_KINDS = {
    k: tuple(dict.fromkeys(v for t in TEXT_TABLES[k] for v in schema.entry(t).vectors))
    for k in KINDS
}


PLURALS = {
    "fact": "facts",
    "chunk": "chunks",
    "summary": "summaries",
    "session": "sessions",
    "hypothesis": "hypotheses",
    "person": "people",
    "focus": "focus announcements",
    "attempt": "attempts",
    "reminder": "reminders",
}
NAMES = {  # what the answer counts, singular and plural
    "facts": "fact",
    "earlier versions": "earlier version",
    "exchanges": "exchange",
    "summaries": "summary",
    "sessions": "session",
    "hypotheses": "hypothesis",
    "people": "person",
    "focus announcements": "focus announcement",
    "attempts": "attempt",
    "reminders": "reminder",
    "vectors": "vector",
    "use counts": "use count",
    "token-savings notes": "token-savings note",
    "links between facts": "link between facts",
    "API token labels": "API token label",
    "company knowledge entries": "company knowledge entry",
}
# What a purge cuts its text out of, per table (the rows stay).
CUT_NAMES = {t.name: cut for t in schema.TABLES if (cut := t.forget.cut)}
# Derived rows (use counts, vectors) a forget deletes with each memory: a plain VACUUM tidies them.
DERIVED = tuple(t.name for t in schema.TABLES if t.forget.derived and t.name != schema.VECTORS)


@dataclass(frozen=True, slots=True)
class Places:
    """The folders of the files BigMind writes for a user: the Markdown mirrors (a forget
    rewrites them) and the exports (copies it leaves, and names)."""

    mirrors: Path
    exports: Path


@dataclass(frozen=True, slots=True)
class Target:
    """One memory to forget: its kind, its id (as text), and what it is, in one line."""

    kind: str
    id: str
    label: str

    @property
    def ref(self) -> str:
        if self.kind == "session":
            return f"session `{self.id}`"
        if self.kind == "summary":
            return f"the summary of session `{self.id}`"
        if self.kind == "person":
            return f"person #{self.id}"
        return f"{self.kind} #{self.id}"


@dataclass(slots=True)
class Forgotten:
    """What a forget removed (rows per kind of thing), what it kept, and the scrub."""

    targets: list[Target]
    removed: dict[str, int] = field(default_factory=dict)
    kept: dict[str, list[str]] = field(default_factory=dict)  # kind → ids kept, link removed
    uses: list[tuple[str, str]] = field(default_factory=list)  # (kind, id) no longer existing
    vector_kinds: set[str] = field(default_factory=set)
    scrub: str = ""
    seconds: float = 0.0
    cut: dict[str, int] = field(default_factory=dict)  # what a purge cut its text out of
    mirrors: list[Path] = field(default_factory=list)  # Markdown mirrors rewritten
    left: list[str] = field(default_factory=list)  # copies no forget reaches

    def count(self, what: str, n: int) -> None:
        if n:
            self.removed[what] = self.removed.get(what, 0) + n

    def summary(self) -> str:
        """One paragraph for the agent or the terminal."""
        if len(self.targets) <= NAMED:
            what = ", ".join(t.ref for t in self.targets)
        else:
            per = Counter(t.kind for t in self.targets)
            what = (
                f"{len(self.targets)} memories ("
                + ", ".join(f"{n} {k if n == 1 else PLURALS[k]}" for k, n in per.items())
                + ")"
            )
        parts = [f"{n} {k if n != 1 else NAMES.get(k, k)}" for k, n in self.removed.items()]
        text = f"Forgot {what} for good: {', '.join(parts) or 'nothing'} deleted; {self.scrub}."
        if not self.targets:
            text = f"No memory to forget; {self.scrub}."
        for kind, ids in self.kept.items():
            text += (
                f"\nKept, without the link to the forgotten session: {kind} "
                + ", ".join(f"#{i}" for i in ids)
                + " (forget them too if they must go)."
            )
        if self.cut:
            cut = [f"{n} {k if n != 1 else NAMES.get(k, k)}" for k, n in self.cut.items()]
            text += f"\nCut out of (the rest stays): {', '.join(cut)}."
        if self.mirrors:
            text += "\nRewrote the Markdown mirror: " + ", ".join(map(str, self.mirrors)) + "."
        if self.left:
            text += "\nNot reached (copies BigMind does not control):"
            text += "".join(f"\n- {line}" for line in self.left)
        return text


# -- naming what to forget -------------------------------------------------------------------------
def excerpt(text: str | None, around: str | None = None) -> str:
    """A memory's text on one line, at most LABEL_CHARS; around the first ``around`` if given."""
    flat = quoted(text)
    if len(flat) <= LABEL_CHARS:
        return flat
    at = flat.casefold().find(around.casefold()) if around else -1
    start = max(0, at - LABEL_CHARS // 3) if at > LABEL_CHARS // 2 else 0
    cut = flat[start : start + LABEL_CHARS - 2].strip()
    return ("…" if start else "") + cut + "…"


def _int_id(kind: str, value: str) -> int:
    n = limits.parse_id(value)
    if n is None:
        raise InvalidInput(f"A {kind} id is a number (#N in results); got {value!r}.")
    return n


def resolve(store: Store, kind: str, item_id: int | str) -> Target:
    """The memory ``kind`` / ``item_id`` names, if it is this user's to forget. Unknown ids and
    other users' private ones are refused alike."""
    k = (kind or "").strip().lower()
    if k not in KINDS:
        raise InvalidInput(
            f"{kind!r} is not a kind of memory that can be forgotten: {', '.join(KINDS)}."
        )
    raw = check_text("id", str(item_id), limits.NAME)
    if k in ("session", "summary"):
        s = store.sessions.get(raw)
        if s is None or (k == "summary" and store.sessions.summary(s.id) is None):
            what = "session" if k == "session" else "summary of a session"
            raise NotFound(f"No {what} '{raw}' in your memory. Nothing was forgotten.")
        line = f"{s.started_at[:10]} {excerpt(s.one_liner) or '(no one-liner)'}"
        return Target(k, s.id, line)
    if k == "person":
        return _person(store, raw)
    n = _int_id(k, raw)
    label = _label(store, k, n)
    if label is None:
        raise NotFound(f"No {k} #{n} in your memory. Nothing was forgotten.")
    return Target(k, str(n), label)


def _label(store: Store, kind: str, n: int) -> str | None:
    if kind == "fact":
        f = store.facts.get(n)
        return None if f is None else f"[{quoted(f.category)}] {excerpt(f.fact)}"
    if kind == "chunk":
        c = store.chunks.get(n)
        return None if c is None else f"{quoted(c.role)}: {excerpt(c.content)}"
    if kind == "hypothesis":
        h = Hypotheses(store.db, store.uid).get(n)
        return None if h is None else excerpt(h.hypothesis)
    if kind == "attempt":
        a = Attempts(store.db, store.uid).get(n)
        return None if a is None else f"[{a.outcome}] {excerpt(a.approach)}"
    if kind == "reminder":
        r = Reminders(store.db, store.uid).get(n)
        return None if r is None else excerpt(r.text)
    fa = FocusAnnouncements(store.db, store.uid).get(n)
    return None if fa is None else f"session {fa.session_id[:8]}…: {excerpt(fa.description)}"


def _person(store: Store, raw: str) -> Target:
    table = People(store.db, store.uid)
    name = raw.strip().lstrip("@")
    n = limits.parse_id(name)
    p = (table.by_id(n) if n is not None else None) or table.get(name)
    if p is None:
        raise NotFound(f"No person '{raw}' in the people list. Nothing was forgotten.")
    may_forget_person(store, p.id, p.username)
    return Target("person", str(p.id), f"@{p.username} {p.display_name or ''}".strip())


def may_forget_person(store: Store, person_id: int, username: str) -> None:
    """People are shared: whoever added them, a curator, or anyone in personal mode."""
    if not (
        globalkb.may_curate(store) or People(store.db, store.uid).added_by(person_id) == store.uid
    ):
        raise Forbidden(
            f"@{username} was added by another user; only they or a curator may forget them."
        )


def preview(store: Store, target: Target) -> list[str]:
    """What forgetting ``target`` deletes and what it keeps, line by line (a confirmation)."""
    if target.kind == "fact":
        n = len(FactHistory(store.db, store.uid).of_fact(int(target.id)))
        return [
            "the fact, its full-text entry and its vector",
            *([f"its {n} earlier version{'s' if n != 1 else ''}"] if n else []),
        ]
    if target.kind == "chunk":
        return ["the exchange, its full-text entry and its vectors"]
    if target.kind == "summary":
        return ["the session's Tier-2 summary, its full-text entry and its vector"]
    if target.kind in ("focus", "reminder"):
        return [f"the {'focus announcement' if target.kind == 'focus' else 'reminder'}"]
    if target.kind == "person":
        return ["the person (everyone using this database sees the people list), their vector"]
    if target.kind != "session":
        return [f"the {target.kind}, its vector and its use counts"]
    sid = target.id
    chunks = len(store.chunks.of_session(sid))
    has_summary = store.sessions.summary(sid) is not None
    lines = [
        "the session (its one-liner, topics and outcome)",
        *(["its Tier-2 summary"] if has_summary else []),
        f"its {chunks} saved exchange{'s' if chunks != 1 else ''} and its focus announcements",
        "their full-text entries and vectors",
    ]
    facts = [f.id for f in store.facts.of_session(sid, 1000)]
    hyps = [h.id for h in Hypotheses(store.db, store.uid).in_session(sid)]
    tries = Attempts(store.db, store.uid).in_session(sid)
    for what, ids in (("facts", facts), ("hypotheses", hyps), ("attempts", tries)):
        if ids:
            refs = ", ".join(f"#{i}" for i in ids[:20]) + (" …" if len(ids) > 20 else "")
            lines.append(f"kept, without the link to it: {what} {refs}")
    return lines


# -- forgetting ------------------------------------------------------------------------------------
def forget(
    store: Store,
    targets: Sequence[Target],
    *,
    places: Places | None = None,
    cuts: Sequence[purge_rows.Cut] = (),
    match: str | None = None,
) -> Forgotten:
    """Delete ``targets`` (from :func:`resolve` or a purge's find) in one transaction, cut
    ``match`` out of the rows ``cuts`` names (a purge), then scrub the files. With ``places``,
    drop the memories' lines (and, with ``match``, every line holding it) from the user's
    Markdown mirrors, and name the copies left. Returns what went and what stayed."""
    started = time.perf_counter()
    done = Forgotten(list(targets))
    rewrite: set[str] = set()
    tidy = set(DERIVED)
    with (
        store.db.transaction() as tx,
        upkeep.bulk_deletes(tx) if len(targets) > BULK else contextlib.nullcontext(),
    ):
        for t in _without_repeats(targets):
            _forget_one(store, tx, t, done)
            rewrite.update(TEXT_TABLES[t.kind])
            tidy.update(LINK_TABLES.get(t.kind, ()))
            done.vector_kinds.update(VECTOR_KINDS[t.kind])
        for c in cuts:
            if match and purge_rows.cut(tx, c, match):
                name = CUT_NAMES[c.table]
                done.cut[name] = done.cut.get(name, 0) + 1
                rewrite.add(c.table)
                done.vector_kinds.update(purge_rows.vector_kinds(c.table))
        tidy.update(table(k) for k in done.vector_kinds if tx.table_exists(table(k)))
        if match is not None or any(t.kind in ("session", "fact") for t in targets):
            store.directory.rebuild(tx, now_ts())  # its counts and topics, without them
        if match is not None:  # the directory may have held the text
            rewrite.update(schema.rebuilt_tables())
        upkeep.drop_samples(tx, sorted(rewrite))
    done.scrub = store.db.scrub(sorted(rewrite), sorted(tidy - rewrite))
    if places is not None:
        gone: dict[str, set[str]] = {}
        for t in targets:
            gone.setdefault(t.kind, set()).add(t.id)
        done.mirrors = mirror.forget_lines(places.mirrors, store.user.username, gone, match)
        done.left = left(places, match)
    done.seconds = time.perf_counter() - started
    return done


def left(places: Places, text: str | None = None) -> list[str]:
    """The copies a forget does not reach, one line each; given ``text``, the exports in the
    exports folder that hold it are named."""
    where = places.exports
    files = sorted(where.glob("*.json")) if where.is_dir() else []
    if not files:
        exports = f"none in {where}"
    elif text is None:
        exports = f"{len(files)} file{'s' if len(files) != 1 else ''} in {where}"
    else:
        holding = [p.name for p in files if _holds(p, text)]
        names = f": {', '.join(holding[:NAMED])}{' …' if len(holding) > NAMED else ''}"
        exports = f"{len(holding)} of the {len(files)} files in {where} hold it" + (
            names if holding else ""
        )
    return [
        f"exports you made: {exports}; and any written elsewhere with `bigmind export --output`",
        "backups: files of `bigmind backup`, file-system snapshots, PostgreSQL dumps, replicas "
        "and WAL archives",
        "logs: BigMind logs no memory text, but your MCP client's logs and the agent's "
        "conversation transcripts may hold it",
        "your own copies: mirrors written with `bigmind mirror --output`, files and messages "
        "you copied it into",
    ]


def _holds(path: Path, text: str) -> bool:
    """Whether a file holds ``text`` (any case), as written or escaped as JSON writes it;
    read a block at a time."""
    needles = {text.casefold(), json.dumps(text.casefold())[1:-1]}
    keep = max(map(len, needles))
    tail = ""
    try:
        with path.open(encoding="utf-8", errors="replace") as f:
            while block := f.read(READ_BLOCK):
                window = tail + block.casefold()
                if any(n in window for n in needles):
                    return True
                tail = window[-keep:]
    except OSError:
        return False
    return False


def _without_repeats(targets: Sequence[Target]) -> list[Target]:
    """Each memory once; what a forgotten session takes with it is not named again."""
    sessions = {t.id for t in targets if t.kind == "session"}
    seen: set[tuple[str, str]] = set()
    out = []
    for t in targets:
        if (t.kind, t.id) in seen or (t.kind == "summary" and t.id in sessions):
            continue
        seen.add((t.kind, t.id))
        out.append(t)
    return out


def _forget_one(store: Store, tx: Tx, t: Target, done: Forgotten) -> None:
    db, uid = store.db, store.uid
    if t.kind == "fact":
        done.count("earlier versions", FactHistory(db, uid).delete(tx, [int(t.id)]))
        gone = store.facts.delete(tx, [int(t.id)])
        done.count("facts", len(gone))
        _derived(tx, "fact", gone, uid, done)
    elif t.kind == "chunk":
        chunk = store.chunks.get(int(t.id), tx)
        if chunk is not None:
            # The next exchanges' context vectors were made with this one's text: re-made.
            VectorStore.forget(
                tx, "chunk_context", store.chunks.following(tx, chunk, CONTEXT_TURNS)
            )
            _chunks(store, tx, [chunk.id], done)
    elif t.kind == "summary":
        _summary(store, tx, t.id, done)
    elif t.kind == "session":
        _session(store, tx, t.id, done)
    elif t.kind == "hypothesis":
        if Hypotheses(db, uid).delete(tx, int(t.id)):
            done.count("hypotheses", 1)
            _derived(tx, "hypothesis", [t.id], uid, done)
    elif t.kind == "attempt":
        if Attempts(db, uid).delete(tx, int(t.id)):
            done.count("attempts", 1)
            _derived(tx, "attempt", [t.id], uid, done)
    elif t.kind == "person":
        if People(db, uid).delete(tx, int(t.id)):
            done.count("people", 1)
            _derived(tx, "person", [t.id], None, done)
    elif t.kind == "reminder":
        done.count("reminders", int(Reminders(db, uid).delete(tx, int(t.id))))
    else:
        gone = FocusAnnouncements(db, uid).delete(tx, [int(t.id)])
        done.count("focus announcements", len(gone))


def _chunks(store: Store, tx: Tx, ids: list[int], done: Forgotten) -> None:
    gone = store.chunks.delete(tx, ids)
    done.count("exchanges", len(gone))
    _derived(tx, "chunk", gone, store.uid, done)
    done.count("vectors", VectorStore.forget(tx, "chunk_context", gone))


def _summary(store: Store, tx: Tx, session_id: str, done: Forgotten) -> None:
    if store.sessions.delete_summary(tx, session_id):
        done.count("summaries", 1)
        _derived(tx, "summary", [session_id], store.uid, done)


def _session(store: Store, tx: Tx, session_id: str, done: Forgotten) -> None:
    db, uid = store.db, store.uid
    _chunks(store, tx, store.chunks.ids_of_session(tx, session_id), done)
    _summary(store, tx, session_id, done)
    gone = FocusAnnouncements(db, uid).delete_of_session(tx, session_id)
    done.count("focus announcements", len(gone))
    for kind, ids in (
        ("facts", store.facts.unlink_session(tx, session_id)),
        ("hypotheses", Hypotheses(db, uid).unlink_session(tx, session_id)),
        ("attempts", Attempts(db, uid).unlink_session(tx, session_id)),
        ("reminders", Reminders(db, uid).unlink_session(tx, session_id)),
    ):
        if ids:
            done.kept.setdefault(kind, []).extend(str(i) for i in ids)
    Savings(db, uid).unlink_session(tx, session_id)
    Knowledge(db, uid).unlink_session(tx, session_id)
    if store.sessions.delete(tx, session_id):
        done.count("sessions", 1)


def _derived(tx: Tx, kind: str, ids: Sequence[object], owner: str | None, done: Forgotten) -> None:
    """A memory's vector and use counts (``owner`` None: a shared memory, everyone's counts)."""
    done.count("vectors", VectorStore.forget(tx, kind, ids))
    done.count("use counts", usage_table.forget(tx, kind, ids, owner))
    done.uses += [(kind, str(i)) for i in ids]
