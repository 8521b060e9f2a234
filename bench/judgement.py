"""Retrieval judgement on memories we did not write: a data set loaded through BigMind's own MCP
tools, every question asked with ``memory_recall``, and the two floors (SQLite FTS5 BM25, plain
all-MiniLM-L6-v2 cosine) computed in the same run over the same texts.

    .venv/bin/python bench/judgement.py                          # codemem-dev, full
    .venv/bin/python bench/judgement.py --set codemem,locomo,codemem-chunks --json /tmp/j.json
    .venv/bin/python bench/judgement.py --set codemem --size tiny  # CI (bench/run.py --quick)
    .venv/bin/python bench/judgement.py --keep /tmp/jdb            # keep the loaded memories
    .venv/bin/python bench/judgement.py --reuse /tmp/jdb           # ask them again (new server)
    .venv/bin/python bench/judgement.py --compare before.json after.json

Sets: ``codemem`` (../shared/bench-data/codemem-dev: three projects' release notes, question types
a-f), ``locomo`` (../shared/bench-data/locomo: 5 conversations, categories 1-4, turn level) and
``codemem-chunks`` (codemem-dev plus bench/data/codemem-chunks: documentation paragraphs stored as
chunks, with their own questions). One ``bigmind serve`` and one fresh database per project or
conversation (bench/memserver.py). Figures: per question type R@1, R@5, R@10 and MRR with 95 %
bootstrap intervals; the abstain AUROC (type f); the kinds of BigMind's first hits; facts the
background check deprecated. See bench/README.md, "Judgement".
"""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

from judgement_score import (  # noqa: E402
    FloatMiniLM,
    K,
    Ranker,
    TextMap,
    abstain,
    aggregate,
    dedupe,
    fts5_floor,
    minilm_floor,
    paired,
    score,
)
from memserver import MemServer, environment  # noqa: E402

DATA = ROOT.parent / "shared" / "bench-data"
CODEMEM = DATA / "codemem-dev"
LOCOMO = DATA / "locomo" / "locomo-dev.json"
CHUNKS = HERE / "data" / "codemem-chunks"
SETS = ("codemem", "locomo", "codemem-chunks")
CODEMEM_TYPES = {
    "a": "identifier",
    "b": "paraphrase",
    "c": "why/decision",
    "d": "temporal",
    "e": "multi-item",
    "f": "abstain",
}
LOCOMO_TYPES = {"1": "multi-hop", "2": "temporal", "3": "open-domain", "4": "single-hop"}
TINY_ITEMS, TINY_QUESTIONS = 60, 8


# -- the data: corpora of sessions of items, and questions -----------------------------------
@dataclass(slots=True)
class Item:
    id: str
    kind: str  # fact | chunk
    text: str
    category: str = "note"
    files: list[str] | None = None
    role: str = "assistant"
    flag_reason: str | None = "release note rationale"


@dataclass(slots=True)
class Session:
    name: str
    date: str
    items: list[Item]
    ide_hint: str = "codemem"
    topics: str | None = "release notes"
    summary: bool = True  # codemem's end_session arguments (LoCoMo: a one-liner only)


@dataclass(slots=True)
class Question:
    qid: str
    type: str  # a-f (codemem), 1-4 (LoCoMo)
    text: str
    gold: list[str]
    mode: str  # any | all | none
    part: str  # the group the set reports apart (codemem-chunks: "chunks" / "codemem")


@dataclass(slots=True)
class Corpus:
    key: str  # project or conversation
    repo_url: str | None
    sessions: list[Session]
    questions: list[Question] = field(default_factory=list)

    def items(self) -> list[Item]:
        return [i for s in self.sessions for i in s.items]


def _codemem_corpora(folder: Path) -> list[Corpus]:
    data = json.loads((folder / "items.json").read_text(encoding="utf-8"))
    qs = json.loads((folder / "questions.json").read_text(encoding="utf-8"))["questions"]
    out = []
    for project, d in data["projects"].items():
        sessions = []
        for s in sorted(d["sessions"], key=lambda s: s["date"]):  # oldest first
            items = [
                Item(i["id"], i["kind"], i["text"], i.get("category") or "note", i.get("files"))
                for i in s["items"]
            ]
            sessions.append(Session(s["session"], s["date"], items))
        c = Corpus(project, f"https://github.com/{d['source']['repo']}.git", sessions)
        c.questions = [
            Question(q["qid"], q["type"], q["question"], q["gold"], q["gold_mode"], "codemem")
            for q in qs
            if q["project"] == project
        ]
        out.append(c)
    return out


def _with_chunks(corpora: list[Corpus], folder: Path) -> list[Corpus]:
    """codemem-dev plus bench/data/codemem-chunks: each project's documentation chunks in one
    session per release they came with, placed among the release sessions by date."""
    data = json.loads((folder / "items.json").read_text(encoding="utf-8"))
    qs = json.loads((folder / "questions.json").read_text(encoding="utf-8"))["questions"]
    by_key = {c.key: c for c in corpora}
    for project, d in data["projects"].items():
        c = by_key[project]
        for s in d["sessions"]:
            items = [
                Item(i["id"], "chunk", i["text"], "note", None, "assistant", "documentation")
                for i in s["items"]
            ]
            c.sessions.append(Session(s["session"], s["date"], items, topics="documentation"))
        c.sessions.sort(key=lambda s: s.date)  # stable: a release before its docs
        c.questions += [
            Question(q["qid"], q["type"], q["question"], q["gold"], q["gold_mode"], "chunks")
            for q in qs
            if q["project"] == project
        ]
    return corpora


def _locomo_corpora(path: Path) -> list[Corpus]:
    from locomo import load, turn_text

    out = []
    for conv in load(path, None):
        sessions: dict[int, Session] = {}
        for t in conv.turns:  # the product run's chunks: '[date] speaker: text [image: …]'
            s = sessions.setdefault(
                t.session,
                Session(f"LoCoMo session {t.session}", t.date, [], "locomo", None, False),
            )
            s.items.append(Item(t.dia_id, "chunk", turn_text(t, "dated"), "", None, "user", None))
        c = Corpus(f"conv-{conv.index}", None, [sessions[n] for n in sorted(sessions)])
        c.questions = [
            Question(f"{conv.sample_id}-{n}", str(q.category), q.text, list(q.evidence), "all", "")
            for n, q in enumerate(conv.questions)
        ]
        out.append(c)
    return out


def tiny(corpora: list[Corpus]) -> list[Corpus]:
    """One corpus, ≤ 60 memories, ≤ 8 questions: one question of each type first (the parts
    taking turns; its gold kept), the newest sessions' items filling the rest, in their order."""
    c = corpora[0]
    firsts: dict[str, list[Question]] = {}  # per part, the first question of each type
    for part, t in dict.fromkeys((q.part, q.type) for q in c.questions):
        firsts.setdefault(part, []).append(
            next(q for q in c.questions if (q.part, q.type) == (part, t))
        )
    chosen = [q for row in itertools.zip_longest(*firsts.values()) for q in row if q]
    chosen += [q for q in c.questions if q not in chosen]
    keep: set[str] = set()
    questions: list[Question] = []
    for q in chosen:
        if len(questions) == TINY_QUESTIONS:
            break
        if len(keep | set(q.gold)) <= TINY_ITEMS // 2:
            keep |= set(q.gold)
            questions.append(q)
    for item in reversed(c.items()):
        if len(keep) >= TINY_ITEMS:
            break
        keep.add(item.id)
    sessions = [Session(s.name, s.date, [i for i in s.items if i.id in keep], s.ide_hint,
                        s.topics, s.summary) for s in c.sessions]  # fmt: skip
    return [Corpus(c.key, c.repo_url, [s for s in sessions if s.items], questions)]


def corpora_for(name: str, args: argparse.Namespace) -> list[Corpus]:
    if name == "codemem":
        out = _codemem_corpora(args.data)
    elif name == "codemem-chunks":
        out = _with_chunks(_codemem_corpora(args.data), args.chunks)
    else:
        out = _locomo_corpora(args.locomo)
    return tiny(out) if args.size == "tiny" else out


def types_of(name: str) -> dict[str, str]:
    return LOCOMO_TYPES if name == "locomo" else CODEMEM_TYPES


# -- BigMind over MCP ------------------------------------------------------------------------
def load(server: MemServer, corpus: Corpus) -> dict[str, str]:
    """Every session, oldest first, through the tools; returns 'fact:12' / 'chunk:7' -> item."""
    ids: dict[str, str] = {}
    for s in corpus.sessions:
        sid = server.call("memory_start_session", ide_hint=s.ide_hint)["session_id"]
        for it in s.items:
            if it.kind == "fact":
                args: dict[str, Any] = {"category": it.category, "fact": it.text, "session_id": sid}
                if it.files:
                    args["files"] = it.files
                ids[f"fact:{server.call('memory_store_fact', **args)['fact_id']}"] = it.id
            else:
                args = {"content": it.text, "session_id": sid, "role": it.role}
                if it.flag_reason:
                    args["flag_reason"] = it.flag_reason
                ids[f"chunk:{server.call('memory_append_chunk', **args)['chunk_id']}"] = it.id
        end: dict[str, Any] = {"one_liner": f"Recorded {s.name}", "session_id": sid}
        if s.summary:
            end |= {"topics": s.topics, "outcome": f"{len(s.items)} memories",
                    "summary": f"Release {s.name} ({s.date})."}  # fmt: skip
        else:
            end["one_liner"] = s.name
        server.call("memory_end_session", **end)
    return ids


@dataclass(slots=True)
class Asker:
    """One way of asking BigMind: a tool and its extra arguments."""

    name: str
    tool: str
    extra: dict[str, Any]


def askers(server: MemServer, modes: Sequence[str]) -> tuple[list[Asker], list[str]]:
    out = [Asker("bigmind", "memory_recall", {})]
    notes = []
    for m in modes:
        if m == "semantic":
            out.append(Asker("bigmind:semantic", "memory_search_semantic", {}))
        elif m == "facts":
            out.append(Asker("bigmind:facts", "memory_recall", {"kinds": ["fact"]}))
        elif server.has_argument("memory_recall", "mode"):
            out.append(Asker(f"bigmind:{m}", "memory_recall", {"mode": m}))
        else:
            notes.append(f"--also-mode {m}: memory_recall has no 'mode' argument here")
    return out, notes


def ask(
    server: MemServer, asker: Asker, q: Question, texts: TextMap, ids: dict[str, str]
) -> dict[str, Any]:
    res = server.call(asker.tool, query=q.text, limit=K, **asker.extra)
    hits = res.get("results") or []
    ranked: list[str] = []
    by_id = 0
    for h in hits:
        kind = str(h.get("kind"))
        found = texts.find(str(h.get("text", ""))) if kind in ("fact", "chunk") else []
        if not found and f"{kind}:{h.get('id')}" in ids:
            found, by_id = [ids[f"{kind}:{h.get('id')}"]], by_id + 1
        ranked.append(found[0] if found else f"~{kind}:{h.get('id')}")  # holds its rank
    out: dict[str, Any] = {
        "ranked": dedupe(ranked),
        "best": float(hits[0]["score"]) if hits else None,
        "kinds": [str(h.get("kind")) for h in hits],
        "mapped_by_id": by_id,
    }
    if hits:
        top = hits[0]
        out["top"] = {"kind": top.get("kind"), "id": top.get("id"), "why": top.get("why"),
                      "text": str(top.get("text", ""))[:160]}  # fmt: skip
    if any("weak" in h for h in hits):
        out["weak"] = [bool(h.get("weak")) for h in hits]
    if "nothing_relevant" in res:
        out["nothing_relevant"] = bool(res["nothing_relevant"])
    return out


# -- one set ---------------------------------------------------------------------------------
def run_set(name: str, args: argparse.Namespace, floor_embedder: FloatMiniLM) -> dict[str, Any]:
    corpora = corpora_for(name, args)
    kind_of = {i.id: i.kind for c in corpora for i in c.items()}
    per_q: dict[str, list[dict[str, Any]]] = {}
    info: dict[str, Any] = {"corpora": {}, "load_s": 0.0, "settle_s": 0.0, "ask_s": 0.0}
    notes: list[str] = []
    for c in corpora:
        progress(f"{name}/{c.key}: {len(c.items())} memories, {len(c.questions)} questions")
        folder = (args.workdir / name / c.key).resolve()
        texts = TextMap({i.id: i.text for i in c.items()})
        t0 = time.perf_counter()
        if args.reuse:
            server = MemServer.reopen(folder, args.model, env=args.server_env)
            ids = json.loads((folder / "loaded.json").read_text())["ids"]
        else:
            server = MemServer.fresh(folder, c.repo_url, args.model, env=args.server_env)
            ids = load(server, c)
            (folder / "loaded.json").write_text(json.dumps({"ids": ids}))
        t1 = time.perf_counter()
        stats = server.settle()
        t2 = time.perf_counter()
        ways, notes = askers(server, args.also_mode)
        for q in c.questions:
            for way in ways:
                row = ask(server, way, q, texts, ids)
                per_q.setdefault(way.name, []).append(_row(c, q, row))
        t3 = time.perf_counter()
        server.close()
        dep = server.deprecated()
        info["corpora"][c.key] = {
            "memories": len(c.items()),
            "questions": len(c.questions),
            "load_s": t1 - t0,
            "settle_s": t2 - t1,
            "ask_s": t3 - t2,
            "semantic": stats.get("semantic"),
            "counts": stats.get("counts"),
            "facts": dep["facts"],
            "deprecated": dep["deprecated"],
            "deprecated_by_reason": dep["by_reason"],
            "deprecated_rows": dep["rows"],
        }
        info["load_s"] += t1 - t0
        info["settle_s"] += t2 - t1
        info["ask_s"] += t3 - t2
        # the floors, over the same texts
        t4 = time.perf_counter()
        items = [(i.id, i.text) for i in c.items()]
        floors: dict[str, Ranker] = {"fts5": fts5_floor(items)}
        floors["minilm"] = minilm_floor(floor_embedder, items, [q.text for q in c.questions])
        for fname, rank in floors.items():
            for q in c.questions:
                hits = rank(q.text)
                row = {"ranked": [h[0] for h in hits], "best": hits[0][1] if hits else None,
                       "kinds": [kind_of[h[0]] for h in hits]}  # fmt: skip
                per_q.setdefault(fname, []).append(_row(c, q, row))
        info["floors_s"] = info.get("floors_s", 0.0) + time.perf_counter() - t4
    info["notes"] = notes
    return {"info": info, "per_question": per_q, "figures": figures(name, per_q, kind_of)}


def _row(c: Corpus, q: Question, row: dict[str, Any]) -> dict[str, Any]:
    out = {"corpus": c.key, "qid": q.qid, "type": q.type, "part": q.part, "question": q.text,
           "gold": q.gold, "mode": q.mode} | row  # fmt: skip
    if q.mode != "none":
        out["scores"] = score(out["ranked"], q.gold, q.mode)
    return out


def figures(
    name: str, per_q: dict[str, list[dict[str, Any]]], kind_of: dict[str, str]
) -> dict[str, Any]:
    """Per system and part: every type's aggregate, 'all' over the answerable ones, the abstain
    scores, the kinds of the first hits."""
    out: dict[str, Any] = {}
    for system, rows in per_q.items():
        for part in dict.fromkeys(r["part"] for r in rows):
            mine = [r for r in rows if r["part"] == part]
            answerable = [r for r in mine if r["mode"] != "none"]
            fig: dict[str, Any] = {"types": {}}
            for t in sorted({r["type"] for r in answerable}):
                fig["types"][t] = aggregate([r for r in answerable if r["type"] == t])
            fig["types"]["all"] = aggregate(answerable)
            unans = [r for r in mine if r["mode"] == "none"]
            if unans:
                fig["abstain"] = abstain(
                    [r["best"] for r in answerable], [r["best"] for r in unans]
                )
                fig["abstain"] |= own_abstain(answerable, unans)
            top = Counter(r["kinds"][0] if r["kinds"] else "none" for r in answerable)
            fig["top1_kinds"] = {k: v / max(1, len(answerable)) for k, v in top.most_common()}
            if system.startswith("bigmind"):
                fig["mapped_by_id"] = sum(r.get("mapped_by_id", 0) for r in mine)
            out.setdefault(system, {})[part] = fig
    return out


def _first_weak(r: dict[str, Any]) -> bool | None:
    """The first hit is marked weak (no hit at all counts as abstaining); None: no marks."""
    if "weak" in r:
        return bool(r["weak"][0])
    return True if not r["kinds"] else None


def own_abstain(answerable: list[dict[str, Any]], unans: list[dict[str, Any]]) -> dict[str, Any]:
    """BigMind's own signals, when its results carry them (``nothing_relevant``; a first hit
    marked ``weak``): the share of abstain questions it flags, and of answerable ones."""
    out: dict[str, Any] = {}
    signals: dict[str, Callable[[dict[str, Any]], bool | None]] = {
        "nothing_relevant": lambda r: r.get("nothing_relevant"),
        "first_hit_weak": _first_weak,
    }
    for label, get in signals.items():
        f = [get(r) for r in unans]
        a = [get(r) for r in answerable]
        marked = [r for r in unans + answerable if "weak" in r or "nothing_relevant" in r]
        if not marked or all(v is None for v in f + a):
            continue
        out[label] = {
            "abstain_rate_f": sum(bool(v) for v in f) / len(f),
            "false_abstain_rate": sum(bool(v) for v in a) / len(a) if a else float("nan"),
        }
    return out


# -- printing --------------------------------------------------------------------------------
def ci(fig: dict[str, Any], m: str) -> str:
    lo, hi = fig[m + "_ci"]
    return f"{fig[m]:.3f} [{lo:.2f}–{hi:.2f}]"


def table(name: str, result: dict[str, Any]) -> str:
    figs = result["figures"]
    names = types_of(name)
    lines = [f"## {name}", "", "| part | type | system | n | R@1 | R@5 [95% CI] | R@10 | MRR [95% CI] |",
             "|---|---|---|---:|---:|---|---:|---|"]  # fmt: skip
    systems = list(figs)
    parts = list(dict.fromkeys(p for s in systems for p in figs[s]))
    for part in parts:
        types = list(
            dict.fromkeys(t for s in systems for t in figs[s].get(part, {}).get("types", {}))
        )
        for t in types:
            label = "**all**" if t == "all" else f"{t} {names.get(t, '')}".strip()
            for s in systems:
                f = figs[s].get(part, {}).get("types", {}).get(t)
                if f:
                    lines.append(f"| {part or '—'} | {label} | {s} | {f['n']} | {f['R@1']:.3f} | "
                                 f"{ci(f, 'R@5')} | {f['R@10']:.3f} | {ci(f, 'MRR')} |")  # fmt: skip
    ab = [
        (p, s, figs[s][p]["abstain"]) for s in systems for p in figs[s] if "abstain" in figs[s][p]
    ]
    if ab:
        lines += ["", "| part | system | abstain n | AUROC | threshold (keep 95 %) | abstain rate there | own signal: abstain f / false abstain a–e |",
                  "|---|---|---:|---:|---:|---:|---|"]  # fmt: skip
        for p, s, a in ab:
            own = "; ".join(f"{k} {v['abstain_rate_f']:.2f} / {v['false_abstain_rate']:.2f}"
                            for k, v in a.items() if isinstance(v, dict)) or "—"  # fmt: skip
            lines.append(f"| {p or '—'} | {s} | {a['n']} | {a['auroc']:.3f} | {a['threshold_keep95']:.3f} | "
                         f"{a['abstain_rate_at_keep95']:.3f} | {own} |")  # fmt: skip
    lines += ["", "first hit's kind (answerable questions):"]
    for part in parts:
        for s in systems:
            k = figs[s].get(part, {}).get("top1_kinds")
            if k:
                kinds = ", ".join(f"{x} {v:.0%}" for x, v in k.items())
                lines.append(f"  {part or '—'} {s}: {kinds}")
    info = result["info"]
    dep = [(c, v["deprecated"], v["facts"], v["deprecated_by_reason"])
           for c, v in info["corpora"].items() if v["facts"]]  # fmt: skip
    if dep:
        lines += [
            "",
            "facts deprecated after loading (background check; database read after close):",
        ]
        lines += [f"  {c}: {d} of {n} {r}" for c, d, n, r in dep]
    lines += ["", f"wall time: load {info['load_s']:.0f} s, settle (embedding + check) "
              f"{info['settle_s']:.0f} s, ask {info['ask_s']:.0f} s, floors {info.get('floors_s', 0):.0f} s"]  # fmt: skip
    lines += [f"note: {n}" for n in info.get("notes", [])]
    return "\n".join(lines)


# -- compare ---------------------------------------------------------------------------------
def _side(spec: str) -> tuple[Path, str | None]:
    """'FILE' or 'FILE:SYSTEM' (one system of that file, e.g. run.json:minilm)."""
    path, _, system = spec.rpartition(":")
    if path and system and not Path(spec).exists():
        return Path(path), system
    return Path(spec), None


def compare(a_spec: str, b_spec: str) -> str:
    """Per set, part, type and system: the paired difference B - A of R@5 and MRR over the
    questions both answered, with its bootstrap CI. ``FILE:SYSTEM`` pairs one system of a file
    with one of another (or the same) file: ``run.json:minilm run.json:bigmind``."""
    (a_path, a_sys), (b_path, b_sys) = _side(a_spec), _side(b_spec)
    a, b = (json.loads(p.read_text()) for p in (a_path, b_path))
    lines = [f"paired differences, B - A (A = {a_spec}, B = {b_spec}); 95 % bootstrap CI",
             "", "| set | part | type | system | n | ΔR@5 [CI] | ΔMRR [CI] |", "|---|---|---|---|---:|---|---|"]  # fmt: skip
    for name, sa in a["sets"].items():
        sb = b["sets"].get(name)
        if not sb:
            continue
        for system, rows_a in sa["per_question"].items():
            if a_sys and system != a_sys:
                continue
            other = b_sys or system
            label = system if other == system else f"{other} − {system}"
            rows_b = {(r["corpus"], r["qid"]): r for r in sb["per_question"].get(other, [])}
            pairs = [(r, rows_b[(r["corpus"], r["qid"])]) for r in rows_a
                     if "scores" in r and (r["corpus"], r["qid"]) in rows_b]  # fmt: skip
            for part in dict.fromkeys(r["part"] for r, _ in pairs):
                mine = [p for p in pairs if p[0]["part"] == part]
                for t in [*sorted({r["type"] for r, _ in mine}), "all"]:
                    sel = [p for p in mine if t == "all" or p[0]["type"] == t]
                    cells = []
                    for m in ("R@5", "MRR"):
                        d = paired(
                            [x["scores"][m] for x, _ in sel], [y["scores"][m] for _, y in sel]
                        )
                        cells.append(f"{d['diff']:+.3f} [{d['ci'][0]:+.2f}, {d['ci'][1]:+.2f}]")
                    lines.append(f"| {name} | {part or '—'} | {t} | {label} | {len(sel)} | {cells[0]} | {cells[1]} |")  # fmt: skip
    return "\n".join(lines)


# -- main ------------------------------------------------------------------------------------
def progress(msg: str) -> None:
    print(f"  … {msg}", file=sys.stderr, flush=True)


def model_dir(given: Path | None) -> Path:
    """--model, else BIGMIND_BENCH_MODEL or the tests' export (smoke.exported_model_dir), else
    bench/embedding.py's export under bench/.cache (made now if missing)."""
    if given:
        return given
    from smoke import exported_model_dir

    found = exported_model_dir()
    if found:
        return found
    from embedding import embedder_for

    return Path(embedder_for("minilm").model().model_dir)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--set", default="codemem", help=f"comma list of {', '.join(SETS)}")
    ap.add_argument("--size", choices=["full", "tiny"], default="full")
    ap.add_argument("--data", type=Path, default=CODEMEM, help="codemem-dev folder")
    ap.add_argument("--locomo", type=Path, default=LOCOMO, help="locomo-dev.json")
    ap.add_argument("--chunks", type=Path, default=CHUNKS, help="codemem-chunks folder")
    ap.add_argument("--model", type=Path, default=None, help="an exported model folder")
    ap.add_argument("--keep", type=Path, default=None, help="load into DIR and keep it")
    ap.add_argument("--reuse", type=Path, default=None, help="ask the memories kept in DIR")
    ap.add_argument("--json", type=Path, default=None, help="write everything to FILE")
    ap.add_argument(
        "--also-mode", action="append", default=[], choices=["keyword", "semantic", "facts"]
    )
    ap.add_argument("--env", action="append", default=[], help="KEY=VALUE for the servers")
    ap.add_argument(
        "--compare", nargs=2, metavar=("A", "B"), help="two JSON files (FILE or FILE:SYSTEM)"
    )
    args = ap.parse_args(argv)
    if args.compare:
        print(compare(*args.compare))
        return 0
    names = [s.strip() for s in args.set.split(",") if s.strip()]
    for n in names:
        if n not in SETS:
            ap.error(f"unknown set {n!r}")
    needs = {"codemem": args.data / "items.json", "locomo": args.locomo,
             "codemem-chunks": args.chunks / "items.json"}  # fmt: skip
    missing = [f"{n}: {needs[n]}" for n in names if not needs[n].is_file()]
    if "codemem-chunks" in names and not needs["codemem"].is_file():
        missing.append(f"codemem-chunks: {needs['codemem']}")
    if missing:
        print("no data: " + "; ".join(missing))
        return 2
    args.model = model_dir(args.model)
    args.server_env = dict(kv.split("=", 1) for kv in args.env)
    if args.reuse and args.keep:
        ap.error("--reuse or --keep, not both")
    tmp = None
    if args.reuse or args.keep:
        args.workdir = args.reuse or args.keep
    else:
        tmp = Path(tempfile.mkdtemp(prefix="judgement-"))
        args.workdir = tmp
    out: dict[str, Any] = {"env": environment(), "model": str(args.model), "size": args.size,
                           "server_env": args.server_env, "sets": {}}  # fmt: skip
    floor_embedder = FloatMiniLM(args.model)
    try:
        for n in names:
            out["sets"][n] = run_set(n, args, floor_embedder)
            print(table(n, out["sets"][n]), flush=True)
            print()
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, indent=1, default=_jsonable) + "\n")
        print(f"JSON written to {args.json}")
    return 0


def _jsonable(o: object) -> object:
    if hasattr(o, "__dataclass_fields__"):
        return asdict(o)  # type: ignore[call-overload]
    return str(o)


if __name__ == "__main__":
    raise SystemExit(main())
