"""Curation judgement on memories we did not write: what an agent sees after BigMind stored older
and newer memories about the same subjects (bench/data/curation-dev: real changelog entries of
flask, pytest and pip, in pairs of five kinds: replaces, conflicts, duplicates, compatible,
unrelated).

    .venv/bin/python bench/curation.py                        # all 232 pairs, three memories
    .venv/bin/python bench/curation.py --json /tmp/c.json     # everything, per pair
    .venv/bin/python bench/curation.py --size tiny            # 12 flask pairs (bench/run.py --quick)
    .venv/bin/python bench/curation.py --keep /tmp/cdb        # keep the loaded memories
    .venv/bin/python bench/curation.py --reuse /tmp/cdb       # ask them again (new server)

Each project's memories are loaded into one fresh memory through the MCP tools the way an agent
writes them over time: one session per release date, oldest first (``memory_start_session``,
``memory_store_fact(category, fact, session_id)``, ``memory_end_session``); then the script
waits for the background embedder and fact check (bench/memserver.py) and, for every pair, asks
its question twice in one resumed session: ``memory_recall(query=question, limit=10)`` and the
packet of ``memory_start_session(session_id=…, focus=question)``. After the server stops it
reads the SQLite file (``facts.deprecated``, ``deprecation_reason``, ``fact_links``).

Figures (95 % Wilson intervals; see bench/README.md, "Curation"):

- **true facts hidden** — a fact deprecated (superseded or merged away) by a fact that does not
  replace it: hiding the older of a replaces pair (or of a chain of them) is allowed; a
  merged-away duplicate is allowed when the kept wording is the newer or says strictly more
  (its words include the other's); anything else hidden is a true fact hidden;
- **current first** (replaces) — the newer ranked above the older in recall (absent older counts
  as below);
- **stale unmarked** (replaces) — the older shown in the recall reply or the packet without a
  marker naming the newer on its block (a rival line such as "↪️ superseded by #N" or
  "⚠️ conflicts with #N", or any future "updated by #N" wording; structured ``rivals`` too);
- **duplicates merged** (and which wording was kept), **conflicts marked** (linked as a conflict,
  or both shown with ⚠️ naming each other), **false conflicts** (compatible / unrelated /
  duplicate pairs linked as a conflict or shown with ⚠️ naming each other), **false updates**
  (a supersedes or merged link inside a compatible / unrelated pair), and the **packet lines**
  spent on a pair whose block carries a marker.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import shutil
import sqlite3
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from memserver import MemServer, environment  # noqa: E402

DATA = HERE / "data" / "curation-dev" / "pairs.json"
KINDS = ("replaces", "conflicts", "duplicates", "compatible", "unrelated")
TINY_PROJECT = "flask"
TINY_PER_KIND = 3
LIMIT = 10
# A marker on a fact's block: the rival lines rivals.py writes today (↪️ superseded by / supersedes,
# ⚠️ conflicts with, 🔀 merged) and the wordings issue 28 asks for ("updated by", "replaced by").
MARKER = re.compile(
    r"↪️|⚠️|🔀|superseded|supersedes|updated by|replaced by|replaces|outdated|stale|conflicts? with",
    re.IGNORECASE,
)
_PREFIX = re.compile(r"^\S+ [a-z/ ]+?: ")
_WORD = re.compile(r"[a-z0-9]+(?:[._-][a-z0-9]+)*")


# -- the data --------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Side:
    text: str
    date: str
    version: str
    category: str


@dataclass(frozen=True, slots=True)
class Pair:
    id: str
    project: str
    repo: str
    kind: str
    older: Side
    newer: Side
    question: str
    current: str
    similarity: float


def read_pairs(path: Path) -> list[Pair]:
    raw = json.loads(path.read_text(encoding="utf-8"))["pairs"]
    out = []
    for p in raw:
        out.append(
            Pair(
                p["id"],
                p["project"],
                p["repo"],
                p["kind"],
                Side(**{k: p["older"][k] for k in ("text", "date", "version", "category")}),
                Side(**{k: p["newer"][k] for k in ("text", "date", "version", "category")}),
                p["question"],
                p["current"],
                float(p["similarity"] or 0.0),
            )
        )
    return out


def tiny(pairs: Sequence[Pair]) -> list[Pair]:
    """≤ 12 pairs of one project, every kind it has, the first ones of each."""
    out: list[Pair] = []
    for kind in KINDS:
        out += [p for p in pairs if p.project == TINY_PROJECT and p.kind == kind][:TINY_PER_KIND]
    return out


def memories(pairs: Sequence[Pair]) -> list[list[Side]]:
    """A project's distinct memories grouped into sessions by date, oldest first."""
    by_text: dict[str, Side] = {}
    for p in pairs:
        for s in (p.older, p.newer):
            by_text.setdefault(s.text, s)
    by_date: dict[str, list[Side]] = defaultdict(list)
    for s in by_text.values():
        by_date[s.date].append(s)
    return [by_date[d] for d in sorted(by_date)]


# -- loading and asking ---------------------------------------------------------------------------
def load(server: MemServer, sessions: Sequence[Sequence[Side]], project: str) -> dict[str, int]:
    """Every session through the tools; returns text → fact id."""
    ids: dict[str, int] = {}
    for group in sessions:
        sid = server.call("memory_start_session", ide_hint="curation")["session_id"]
        for s in group:
            got = server.call("memory_store_fact", category=s.category, fact=s.text, session_id=sid)
            ids[s.text] = int(got["fact_id"])
        versions = ", ".join(sorted({s.version for s in group}))
        server.call(
            "memory_end_session",
            session_id=sid,
            one_liner=f"Recorded {project} {versions}",
            topics="release notes",
            outcome=f"{len(group)} memories",
            summary=f"Release {project} {versions} ({group[0].date}).",
        )
    return ids


def blocks(text: str) -> dict[int, list[str]]:
    """Each fact's block in a reply: its own line and the indented lines under it (rivals).
    Recall renders ``- **fact #12** …``; the packet ``- [cat] text — #12, date, …``."""
    out: dict[int, list[str]] = {}
    cur: int | None = None
    for line in text.splitlines():
        m = re.match(r"- \*\*fact #(\d+)\*\*", line) or re.match(r"- \[.*? — #(\d+), ", line)
        if m:
            cur = int(m.group(1))
            out.setdefault(cur, []).append(line)
        elif cur is not None and line.startswith("  "):
            out[cur].append(line)
        else:
            cur = None
    return out


def marked(block: Sequence[str], other: int | None) -> bool:
    """A marker on the block — naming ``other`` when given. Stored texts are left out (a
    changelog entry may say "replaces" or cite "#12"): the packet line's text before its
    " — #id, date" tail, recall's "> " and "why:" lines, and every quoted “…” rival text."""
    if not block:
        return False
    head = block[0]
    tail = re.search(r" — #\d+, .*$", head)
    head = tail.group(0) if tail and head.startswith("- [") else head
    rest = [ln for ln in block[1:] if not ln.lstrip().startswith(("> ", "why:"))]
    for ln in [head, *rest]:
        ln = re.sub(r"“.*?”", "", ln)
        if MARKER.search(ln) and (other is None or re.search(rf"#{other}\b", ln)):
            return True
    return False


@dataclass(slots=True)
class Seen:
    """What one question showed about one pair."""

    recall_ids: list[int] = field(default_factory=list)  # fact hits in order
    recall_kinds: list[str] = field(default_factory=list)  # every hit's kind, in order
    fact_ids: list[int] = field(default_factory=list)  # memory_recall(kinds=["fact"])
    recall_rivals: dict[int, list[int]] = field(default_factory=dict)  # hit id → rival ids
    recall_blocks: dict[int, list[str]] = field(default_factory=dict)
    packet_blocks: dict[int, list[str]] = field(default_factory=dict)
    packet_tokens: int = 0


def call(server: MemServer, tool: str, **arguments: Any) -> tuple[dict[str, Any], str]:
    """A tool's structured result and the text the agent reads."""
    res = server.server.call_tool(tool, arguments)
    text = "\n".join(c.get("text", "") for c in res.get("content", []))
    data: dict[str, Any] = res.get("structuredContent") or {}
    return data, text


def ask(server: MemServer, sid: str, question: str) -> Seen:
    seen = Seen()
    rec, rec_text = call(server, "memory_recall", query=question, limit=LIMIT)
    for h in rec.get("results", []):
        seen.recall_kinds.append(str(h.get("kind")))
        if h.get("kind") == "fact":
            seen.recall_ids.append(int(h["id"]))
            seen.recall_rivals[int(h["id"])] = [int(r["fact_id"]) for r in h.get("rivals") or []]
    seen.recall_blocks = blocks(rec_text)
    # The same question for facts only: the order of the two facts, apart from how other kinds
    # of memory (session summaries) crowd the first reply.
    facts = server.call("memory_recall", query=question, limit=LIMIT, kinds=["fact"])
    seen.fact_ids = [int(h["id"]) for h in facts.get("results", []) if h.get("kind") == "fact"]
    pk, pk_text = call(server, "memory_start_session", session_id=sid, focus=question)
    seen.packet_blocks = blocks(pk_text)
    seen.packet_tokens = int(pk.get("context_tokens") or 0)
    return seen


# -- the database after the run ---------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class State:
    deprecated: dict[int, str]  # fact id → reason
    links: list[tuple[int, int, str, str, float]]  # fact_id, other_id, kind, why, similarity
    texts: dict[int, str]


def read_state(db: Path) -> State:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=30)
    try:
        facts = con.execute("SELECT id, fact, deprecated, deprecation_reason FROM facts").fetchall()
        links = con.execute(
            "SELECT fact_id, other_id, kind, coalesce(why, ''), coalesce(similarity, 0) "
            "FROM fact_links"
        ).fetchall()
    finally:
        con.close()
    return State(
        {int(i): str(r or "") for i, _t, d, r in facts if d},
        [(int(a), int(b), str(k), str(w), float(s)) for a, b, k, w, s in links],
        {int(i): str(t) for i, t, _d, _r in facts},
    )


def warned(block: Sequence[str], other: int) -> bool:
    """A ⚠️ conflict line naming ``other`` in a fact's block (rival texts left out)."""
    for ln in block[1:]:
        ln = re.sub(r"“.*?”", "", ln)
        if "⚠️" in ln and re.search(rf"#{other}\b", ln):
            return True
    return False


def hider(reason: str) -> int | None:
    m = re.search(r"#(\d+)", reason)
    return int(m.group(1)) if m else None


def content(text: str) -> set[str]:
    return set(_WORD.findall(_PREFIX.sub("", text.lower())))


# -- scoring ----------------------------------------------------------------------------------------
def allowed_hiders(pairs: Sequence[Pair], ids: dict[str, int]) -> dict[int, set[int]]:
    """Which facts may hide a fact: the newer of a replaces pair (transitively: a chain of
    replacements), and a duplicate partner whose wording is the newer or says strictly more."""
    direct: dict[int, set[int]] = defaultdict(set)
    for p in pairs:
        o, n = ids[p.older.text], ids[p.newer.text]
        if p.kind == "replaces":
            direct[o].add(n)
        elif p.kind == "duplicates":
            direct[o].add(n)  # the newer kept
            if content(p.older.text) >= content(p.newer.text):
                direct[n].add(o)  # the older kept: it says at least as much
    closed: dict[int, set[int]] = {}
    for f in direct:
        reach: set[int] = set()
        todo = list(direct[f])
        while todo:
            x = todo.pop()
            if x not in reach:
                reach.add(x)
                todo += direct.get(x, set())
        closed[f] = reach
    return closed


def score_pair(
    p: Pair, ids: dict[str, int], seen: Seen, state: State, allowed: dict[int, set[int]]
) -> dict[str, Any]:
    o, n = ids[p.older.text], ids[p.newer.text]
    row: dict[str, Any] = {"id": p.id, "project": p.project, "kind": p.kind, "older_id": o}
    row |= {"newer_id": n, "similarity": p.similarity, "question": p.question}
    wrong = []
    for side, f in (("older", o), ("newer", n)):
        reason = state.deprecated.get(f)
        row[f"{side}_hidden"] = reason is not None
        row[f"{side}_reason"] = reason
        if reason is not None:
            h = hider(reason)
            row[f"{side}_hider"] = {
                "id": h,
                "text": state.texts.get(h or 0),
                "why": next((w for a, b, _k, w, _s in state.links if {a, b} == {h, f}), None),
            }
            if h is None or h not in allowed.get(f, set()):
                wrong.append(side)
    row["wrongly_hidden"] = wrong
    between = [(a, b, k, w, s) for a, b, k, w, s in state.links if {a, b} == {o, n}]
    row["links"] = [{"fact_id": a, "other_id": b, "kind": k, "why": w, "similarity": s}
                    for a, b, k, w, s in between]  # fmt: skip
    kinds = {k for _a, _b, k, _w, _s in between}
    row["linked"] = sorted(kinds)
    merged = [(a, b) for a, b, k, _w, _s in between if k == "merged"]
    row["kept"] = ("older" if merged[0][0] == o else "newer") if merged else None
    # recall
    r_o = seen.recall_ids.index(o) + 1 if o in seen.recall_ids else None
    r_n = seen.recall_ids.index(n) + 1 if n in seen.recall_ids else None
    row["recall_rank_older"], row["recall_rank_newer"] = r_o, r_n
    row["current_first"] = r_n is not None and (r_o is None or r_n < r_o)
    f_o = seen.fact_ids.index(o) + 1 if o in seen.fact_ids else None
    f_n = seen.fact_ids.index(n) + 1 if n in seen.fact_ids else None
    row["facts_rank_older"], row["facts_rank_newer"] = f_o, f_n
    row["current_first_facts"] = f_n is not None and (f_o is None or f_n < f_o)
    row["recall_kinds"] = seen.recall_kinds
    o_rec_marked = (n in seen.recall_rivals.get(o, [])) or marked(seen.recall_blocks.get(o, []), n)
    n_rec_marked = (o in seen.recall_rivals.get(n, [])) or marked(seen.recall_blocks.get(n, []), o)
    o_pk, n_pk = seen.packet_blocks.get(o), seen.packet_blocks.get(n)
    o_pk_marked = bool(o_pk) and marked(o_pk or [], n)
    n_pk_marked = bool(n_pk) and marked(n_pk or [], o)
    row["older_in_recall"], row["older_in_packet"] = r_o is not None, o_pk is not None
    row["newer_in_packet"] = n_pk is not None
    row["older_marked_recall"], row["older_marked_packet"] = o_rec_marked, o_pk_marked
    row["stale_unmarked_recall"] = r_o is not None and not o_rec_marked
    row["stale_unmarked_packet"] = o_pk is not None and not o_pk_marked
    row["stale_unmarked"] = row["stale_unmarked_recall"] or row["stale_unmarked_packet"]
    o_warn = warned(seen.recall_blocks.get(o, []) + (o_pk or []), n)
    n_warn = warned(seen.recall_blocks.get(n, []) + (n_pk or []), o)
    row["conflict_linked"] = "conflict" in kinds
    row["conflict_shown"] = o_warn or n_warn
    row["both_marked"] = (o_rec_marked or o_pk_marked) and (n_rec_marked or n_pk_marked)
    marked_blocks = [b for b, m in ((o_pk, o_pk_marked), (n_pk, n_pk_marked)) if b and m]
    row["packet_lines"] = sum(len(b) for b in (o_pk, n_pk) if b) if marked_blocks else 0
    row["packet_marker_lines"] = sum(
        1 for b in (o_pk, n_pk) if b for ln in b[1:] if MARKER.search(ln)
    )
    row["older_text"], row["newer_text"] = p.older.text, p.newer.text
    return row


# -- figures ----------------------------------------------------------------------------------------
def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return (0.0, 0.0)
    p = k / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def rate(k: int, n: int) -> dict[str, Any]:
    lo, hi = wilson(k, n)
    return {"k": k, "n": n, "rate": k / n if n else None, "ci": [lo, hi]}


def figures(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kind in (*KINDS, "all"):
        rs = [r for r in rows if kind in ("all", r["kind"])]
        if not rs:
            continue
        f: dict[str, Any] = {"pairs": len(rs)}
        n = len(rs)
        f["older_hidden"] = rate(sum(r["older_hidden"] for r in rs), n)
        f["newer_hidden"] = rate(sum(r["newer_hidden"] for r in rs), n)
        f["true_fact_hidden"] = rate(sum(bool(r["wrongly_hidden"]) for r in rs), n)
        f["linked"] = dict(Counter(k for r in rs for k in r["linked"]))
        f["reasons"] = dict(
            Counter(
                " ".join(str(r[f"{s}_reason"]).split()[:2]).rstrip("#").strip() + f" ({s})"
                for r in rs
                for s in ("older", "newer")
                if r[f"{s}_hidden"]
            )
        )
        f["whys"] = dict(Counter(lk["why"].split(":")[0] for r in rs for lk in r["links"]))
        if kind in ("replaces", "all"):
            rep = [r for r in rs if r["kind"] == "replaces"]
            m = len(rep)
            f["current_first"] = rate(sum(r["current_first"] for r in rep), m)
            f["newer_at_1"] = rate(sum(r["recall_rank_newer"] == 1 for r in rep), m)
            f["current_first_facts"] = rate(sum(r["current_first_facts"] for r in rep), m)
            f["newer_at_1_facts"] = rate(sum(r["facts_rank_newer"] == 1 for r in rep), m)
            shown = [r for r in rep if r["older_in_recall"] or r["older_in_packet"]]
            f["stale_unmarked_of_shown"] = rate(sum(r["stale_unmarked"] for r in shown), len(shown))
            f["stale_unmarked"] = rate(sum(r["stale_unmarked"] for r in rep), m)
            f["stale_unmarked_recall"] = rate(sum(r["stale_unmarked_recall"] for r in rep), m)
            f["stale_unmarked_packet"] = rate(sum(r["stale_unmarked_packet"] for r in rep), m)
            f["older_retired"] = rate(sum(r["older_hidden"] for r in rep), m)
        if kind in ("duplicates", "all"):
            dup = [r for r in rs if r["kind"] == "duplicates"]
            f["duplicates_merged"] = rate(sum(r["kept"] is not None for r in dup), len(dup))
            f["kept"] = dict(Counter(str(r["kept"]) for r in dup if r["kept"]))
        if kind in ("conflicts", "all"):
            con = [r for r in rs if r["kind"] == "conflicts"]
            f["conflicts_marked"] = rate(
                sum(r["conflict_linked"] or r["both_marked"] for r in con), len(con)
            )
        # Per kind also for duplicates (a conflict between two wordings of one change); in
        # "all" only the pairs that are both true and about different claims.
        neg_kinds = (
            ("compatible", "unrelated")
            if kind == "all"
            else ("compatible", "unrelated", "duplicates")
        )
        neg = [r for r in rs if r["kind"] in neg_kinds]
        if neg:
            f["false_conflicts"] = rate(
                sum(r["conflict_linked"] or r["conflict_shown"] for r in neg), len(neg)
            )
        true_pairs = [r for r in rs if r["kind"] in ("compatible", "unrelated")]
        if true_pairs:
            f["false_updates"] = rate(
                sum(bool({"supersedes", "merged"} & set(r["linked"])) for r in true_pairs),
                len(true_pairs),
            )
        f["recall_hit_kinds"] = dict(Counter(k for r in rs for k in r["recall_kinds"]))
        spent = [r["packet_lines"] for r in rs if r["packet_lines"]]
        f["packet_lines_marked_pairs"] = {
            "pairs": len(spent),
            "mean_lines": sum(spent) / len(spent) if spent else None,
            "marker_lines": sum(r["packet_marker_lines"] for r in rs),
        }
        out[kind] = f
    return out


def distinct_hidden(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Distinct facts hidden wrongly, per project (a fact belongs to several pairs)."""
    wrong: set[tuple[str, int]] = set()
    facts: set[tuple[str, int]] = set()
    for r in rows:
        for s in ("older", "newer"):
            facts.add((r["project"], r[f"{s}_id"]))
            if s in r["wrongly_hidden"]:
                wrong.add((r["project"], r[f"{s}_id"]))
    return rate(len(wrong), len(facts))


def pct(x: dict[str, Any] | None) -> str:
    if not x or x["n"] == 0:
        return "—"
    lo, hi = x["ci"]
    return f"{x['k']}/{x['n']} {x['rate']:.2f} ({lo:.2f}–{hi:.2f})"


def table(result: dict[str, Any]) -> str:
    figs = result["figures"]
    cols: list[tuple[str, Callable[[dict[str, Any]], str]]] = [
        ("pairs", lambda f: str(f["pairs"])),
        ("true fact hidden", lambda f: pct(f["true_fact_hidden"])),
        ("older hidden", lambda f: pct(f["older_hidden"])),
        ("newer hidden", lambda f: pct(f["newer_hidden"])),
        ("current first", lambda f: pct(f.get("current_first"))),
        ("stale unmarked", lambda f: pct(f.get("stale_unmarked"))),
        ("dups merged", lambda f: pct(f.get("duplicates_merged"))),
        ("conflicts marked", lambda f: pct(f.get("conflicts_marked"))),
        ("false conflicts", lambda f: pct(f.get("false_conflicts"))),
        ("false updates", lambda f: pct(f.get("false_updates"))),
    ]
    lines = ["| kind | " + " | ".join(c for c, _ in cols) + " |"]
    lines.append("|---|" + "---:|" * len(cols))
    for kind, f in figs.items():
        lines.append(f"| {kind} | " + " | ".join(fn(f) for _, fn in cols) + " |")
    a = figs.get("all", {})
    extra = [
        "",
        f"distinct facts wrongly hidden: {pct(result['distinct_wrongly_hidden'])}",
        f"replaces — newer ranked 1st in recall: {pct(a.get('newer_at_1'))}; "
        f"stale unmarked in recall {pct(a.get('stale_unmarked_recall'))}, "
        f"in the packet {pct(a.get('stale_unmarked_packet'))}; "
        f"of the pairs whose older is shown {pct(a.get('stale_unmarked_of_shown'))}",
        f"replaces, facts only (kinds=['fact']) — current first "
        f"{pct(a.get('current_first_facts'))}, newer 1st {pct(a.get('newer_at_1_facts'))}",
        f"kinds of memory_recall's hits: {a.get('recall_hit_kinds', {})}",
        f"duplicates kept wording: {a.get('kept', {})}",
        f"links made inside pairs: {a.get('linked', {})}; why: {a.get('whys', {})}",
        f"hidden, by reason: {a.get('reasons', {})}",
        f"packet lines on pairs with a marker: {a.get('packet_lines_marked_pairs', {})}",
    ]
    return "\n".join(lines + extra)


# -- main -------------------------------------------------------------------------------------------
def progress(msg: str) -> None:
    print(f"  … {msg}", file=sys.stderr, flush=True)


def run_project(
    project: str, pairs: Sequence[Pair], folder: Path, model: Path, reuse: bool
) -> list[dict[str, Any]]:
    ids_file = folder / "ids.json"
    t0 = time.monotonic()
    if reuse:
        server = MemServer.reopen(folder, model)
        ids = {k: int(v) for k, v in json.loads(ids_file.read_text(encoding="utf-8")).items()}
    else:
        server = MemServer.fresh(folder, f"https://github.com/{pairs[0].repo}.git", model)
        sessions = memories(pairs)
        ids = load(server, sessions, project)
        ids_file.write_text(json.dumps(ids), encoding="utf-8")
        progress(f"{project}: {len(ids)} facts in {len(sessions)} sessions stored")
    try:
        stats = server.settle()
        state = stats.get("semantic", {}).get("state")
        if state != "ready" or server.unchecked():
            raise SystemExit(f"{project}: the semantic index is {state!r}: nothing was checked")
        progress(f"{project}: settled after {time.monotonic() - t0:.0f} s")
        sid = server.call("memory_start_session", ide_hint="curation-ask")["session_id"]
        seen = {p.id: ask(server, sid, p.question) for p in pairs}
    finally:
        server.close()
    state = read_state(folder / "memory.db")
    allowed = allowed_hiders(pairs, ids)
    return [score_pair(p, ids, seen[p.id], state, allowed) for p in pairs]


def model_dir(given: Path | None) -> Path | None:
    if given:
        return given.resolve()  # the server runs in the project folder
    from smoke import exported_model_dir

    return exported_model_dir()


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--data", type=Path, default=DATA, help="pairs.json")
    ap.add_argument("--size", choices=["full", "tiny"], default="full")
    ap.add_argument("--project", action="append", default=[], help="only this project")
    ap.add_argument("--model", type=Path, default=None, help="an exported model folder")
    ap.add_argument("--keep", type=Path, default=None, help="load into DIR and keep it")
    ap.add_argument("--reuse", type=Path, default=None, help="ask the memories kept in DIR")
    ap.add_argument("--json", type=Path, default=None, help="write everything to FILE")
    a = ap.parse_args(argv)
    if not a.data.is_file():
        print(f"skipped: no curation data at {a.data}")
        return 0
    model = model_dir(a.model)
    if model is None or not model.is_dir():
        print("skipped: no exported model (run the tests, or --model / BIGMIND_BENCH_MODEL)")
        return 0
    pairs = read_pairs(a.data)
    if a.size == "tiny":
        pairs = tiny(pairs)
    if a.project:
        pairs = [p for p in pairs if p.project in a.project]
    root = a.reuse or a.keep or Path(tempfile.mkdtemp(prefix="bigmind-curation-"))
    rows: list[dict[str, Any]] = []
    try:
        for project in sorted({p.project for p in pairs}):
            mine = [p for p in pairs if p.project == project]
            rows += run_project(project, mine, root / project, model, a.reuse is not None)
    finally:
        if a.keep is None and a.reuse is None:
            shutil.rmtree(root, ignore_errors=True)
    result = {
        "environment": environment(),
        "data": str(a.data),
        "size": a.size,
        "figures": figures(rows),
        "distinct_wrongly_hidden": distinct_hidden(rows),
        "pairs": rows,
    }
    print(table(result))
    if a.json:
        a.json.write_text(json.dumps(result, indent=1, ensure_ascii=False), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
