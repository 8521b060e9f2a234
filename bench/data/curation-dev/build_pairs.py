#!/usr/bin/env python3
"""Build and check the curation development set (pairs.json) from three public changelogs.

    python3 build_pairs.py --mirror-root DIR            # re-extract every text, write pairs.json
    python3 build_pairs.py --mirror-root DIR --check    # re-extract and compare with pairs.json
    python3 build_pairs.py --mirror-root DIR --pool pip # print every extracted item of one project

DIR holds bare git snapshots (DIR/<owner>+<name>/repo, read with ``git show <commit>:<path>``),
e.g. the ``fetch`` tool's /work/.mirror. The labels (kind, question, which side is current, a
note) are in ``pairs_src.py``; each side of a pair is named there by (version, fragment): the one
changelog entry of that release whose cleaned text contains the fragment. The text is made the
way codemem-dev's ``build_items.py`` makes its items (reStructuredText markup stripped,
contributor credits dropped, ``"<version> <kind>: "`` prefix, cut at 380 characters), so a pair's
texts are the memories an agent fed with codemem-dev would hold.

The similarity is the cosine of all-MiniLM-L6-v2 embeddings of the two texts (float ONNX export,
mean pooling, L2-normalised, max 256 tokens: the floor codemem-dev uses). It needs numpy,
onnxruntime and tokenizers and a model folder (``--model``, default the one BigMind's tests
export); without them the similarity already in pairs.json is kept (``--check`` then skips it).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
MAX_CHARS = 380

SOURCES: dict[str, dict[str, str]] = {
    "flask": {
        "repo": "pallets/flask",
        "commit": "2ac89889f4cc330eabd50f295dcef02828522c69",
        "path": "CHANGES.rst",
        "licence": "BSD-3-Clause",
        "fmt": "pallets",
    },
    "pytest": {
        "repo": "pytest-dev/pytest",
        "commit": "df87db7b0462fb764ef73fa00561adf8ad047572",
        "path": "doc/en/changelog.rst",
        "licence": "MIT",
        "fmt": "towncrier",
    },
    "pip": {
        "repo": "pypa/pip",
        "commit": "6d309205789d368b2749d93fd6193d584811efd5",
        "path": "NEWS.rst",
        "licence": "MIT",
        "fmt": "towncrier",
    },
}

# -- the changelog parser: the same rules as codemem-dev/build_items.py ------------------------
SECTION_CATEGORY = {
    "bug fixes": "bugfix",
    "bugfixes": "bugfix",
    "security fixes": "bugfix",
    "features": "feature",
    "new features": "feature",
    "improvements": "feature",
    "improvements in existing functionality": "feature",
    "deprecations": "decision",
    "deprecations (removal in next major release)": "decision",
    "deprecations and removals": "decision",
    "removals": "decision",
    "breaking changes": "decision",
    "removals and backward incompatible breaking changes": "decision",
    "enhancements": "feature",
    "other breaking changes": "decision",
    "old deprecations are now errors": "decision",
    "performance": "performance",
    "vendored libraries": "config",
    "packaging updates and notes for downstreams": "config",
    "improved documentation": "codebase",
    "documentation": "codebase",
    "process": "codebase",
    "contributor-facing changes": "codebase",
    "miscellaneous internal changes": "codebase",
    "trivial/internal changes": "codebase",
}
CATEGORY_WORD = {
    "bugfix": "bug fix",
    "feature": "feature",
    "decision": "change",
    "performance": "performance",
    "config": "build/config",
    "codebase": "change",
    "note": "release note",
}


def git_show(root: Path, repo: str, commit: str, path: str) -> str:
    d = root / repo.replace("/", "+") / "repo"
    return subprocess.run(
        ["git", "--git-dir", str(d), "show", f"{commit}:{path}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def clean_rst(s: str) -> str:
    s = re.sub(
        r"\s*(?:--\s*)?\(?\s*(?:[Oo]riginal patch )?by :user:`[^`]+`(?:(?:,| and) :user:`[^`]+`)*\s*\)?\.?",
        "",
        s,
    )
    s = re.sub(r":(?:issue|pr):`([\d, ]+)`", lambda m: "#" + m.group(1).replace(" ", ""), s)
    s = re.sub(r":ghsa:`([^`]+)`", r"GHSA-\1", s)
    s = re.sub(r":pep:`(\d+)`", r"PEP \1", s)
    s = re.sub(r":ref:`([^`<]+?)\s*<[^>]+>`", r"\1", s)
    s = re.sub(r":ref:`([^`]+)`", r"\1", s)
    s = re.sub(r"`([^`<]+?)\s*<[^>]+>`__?", r"\1", s)
    s = re.sub(r":[\w:]+:`~?([^`]+)`", r"\1", s)
    s = s.replace("``", "`")
    s = re.sub(r"\*\*([^*\s][^*]*?)\*\*", r"\1", s)
    return s


def tidy(s: str) -> str:
    s = re.sub(r"\s+", " ", s).strip()
    s = re.sub(r"\s*Thanks,? [^.()]*?\.(?=\s|$)", "", s)
    s = re.sub(r"\s*Thanks to [^.()]*?\.(?=\s|$)", "", s)
    s = re.sub(r"\(\s*\)", "", s).strip()
    return s


def cut(s: str, n: int = MAX_CHARS) -> str:
    if len(s) <= n:
        return s
    head = s[:n]
    ends = [m.end() for m in re.finditer(r"[.!?](?=\s)", head)]
    if ends and ends[-1] > n // 3:
        return head[: ends[-1]].strip()
    return head.rsplit(" ", 1)[0].rstrip(",;:") + " …"


def parse_date(s: str) -> str:
    s = re.sub(r"(\d+)(st|nd|rd|th)", r"\1", s.strip())
    s = s.split(",  codename")[0]
    for fmt in ("%Y-%m-%d", "%d %B, %Y", "%d %B %Y", "%B %d, %Y", "%B %d %Y", "%d %b, %Y"):
        try:
            return datetime.strptime(s, fmt).strftime("%Y-%m-%d")
        except ValueError:
            pass
    return ""


Release = dict[str, Any]
Block = tuple[str, str, str]


def releases_pallets(text: str) -> list[Release]:
    lines = text.splitlines()
    rels: list[Release] = []
    i = 0
    while i < len(lines):
        m = re.fullmatch(r"Version (\d+\.\d+(?:\.\d+)?)", lines[i].strip())
        if m and i + 1 < len(lines) and re.fullmatch(r"-{3,}", lines[i + 1].strip()):
            rels.append({"version": m.group(1), "date": "", "lines": []})
            i += 2
            continue
        if rels and not rels[-1]["date"] and not rels[-1]["lines"] and not lines[i].strip():
            i += 1
            continue
        if (
            rels
            and not rels[-1]["date"]
            and lines[i].strip().startswith(("Released", "Unreleased"))
        ):
            dm = re.match(r"Released (?:on )?(.+?)(?:, codename .*)?$", lines[i].strip())
            rels[-1]["date"] = parse_date(dm.group(1)) if dm else ""
            rels[-1]["lines"].append("")
            i += 1
            continue
        if rels:
            rels[-1]["lines"].append(lines[i])
        i += 1
    rels = [r for r in rels if r["date"]]
    for r in rels:
        r["blocks"] = blocks(r["lines"], bullet=r"- ")
    return rels


def releases_towncrier(text: str) -> list[Release]:
    lines = text.splitlines()
    rels: list[Release] = []
    i = 0
    while i < len(lines):
        m = re.fullmatch(
            r"(?:pytest )?(\d+\.\d+(?:\.\d+)?(?:\w+\d*)?)\s+\((\d{4}-\d{2}-\d{2})\)",
            lines[i].strip(),
        )
        if m and i + 1 < len(lines) and re.fullmatch(r"={3,}", lines[i + 1].strip()):
            rels.append({"version": m.group(1), "date": m.group(2), "lines": []})
            i += 2
            continue
        if rels:
            rels[-1]["lines"].append(lines[i])
        i += 1
    for r in rels:
        r["blocks"] = blocks(r["lines"], bullet=r"- ")
    return rels


def blocks(lines: list[str], bullet: str) -> list[Block]:
    """(section, kind, text): kind 'bullet' or 'para'; rst underlined titles are sections."""
    out: list[Block] = []
    section = ""
    cur: list[str] | None = None
    in_code = False

    def flush() -> None:
        nonlocal cur
        if cur and cur[2].strip():
            out.append((cur[0], cur[1], cur[2]))
        cur = None

    for n, line in enumerate(lines):
        s = line.rstrip()
        if in_code:
            if s and not s.startswith((" ", "\t")):
                in_code = False
            else:
                continue
        nxt = lines[n + 1].strip() if n + 1 < len(lines) else ""
        if (
            s
            and not s.startswith((" ", "\t", "-"))
            and re.fullmatch(r"[-~^]{3,}", nxt)
            and len(nxt) >= len(s.strip())
        ):
            flush()
            section = clean_rst(s.strip()).rstrip(":").lower()
            continue
        if re.match(
            r"\s*\.\. (code-block|code|_|note|warning|versionadded|towncrier)", s
        ) or s.strip().endswith("::"):
            if (
                cur
                and cur[1] == "bullet"
                and s.strip().endswith("::")
                and not s.strip().startswith("..")
            ):
                cur[2] += " " + s.strip()[:-1]
            flush()
            in_code = True
            continue
        if not s.strip():
            if cur and cur[1] == "para":
                flush()
            continue
        if re.match(bullet, s):
            flush()
            cur = [section, "bullet", s[2:]]
            continue
        if cur and cur[1] == "bullet" and s.startswith((" ", "\t")):
            cur[2] += " " + s.strip()
            continue
        if s.startswith((" ", "\t")):
            continue
        if re.fullmatch(r"[=\-~^]{3,}", s.strip()):
            continue
        if cur and cur[1] == "para":
            cur[2] += " " + s.strip()
        else:
            flush()
            cur = [section, "para", s.strip()]
    flush()
    return out


def category_for(section: str, text: str) -> str:
    c = SECTION_CATEGORY.get(section)
    if c:
        return c
    t = text.lower()
    if re.search(r"\b(fix|fixed|fixes|bug|bugfix|crash|crashed|regression)\b", t[:90]):
        return "bugfix"
    if re.search(
        r"(breaking change|backwards-incompatible|no longer|\bremoved?\b|deprecat|now defaults|\bdrop(ped)?\b)",
        t,
    ):
        return "decision"
    if re.match(r"(new |add|added|support)", t) or re.search(
        r"\bnow (accepts?|supports?)\b|\bnew\b.{0,40}\b(option|method|command|parameter|argument|flag|function|property)\b",
        t,
    ):
        return "feature"
    if re.search(r"\b(faster|performance|speed)\b", t):
        return "performance"
    return "codebase"


def pool(root: Path, project: str) -> list[dict[str, str]]:
    """Every changelog entry of a project as a memory item (all releases, newest first)."""
    src = SOURCES[project]
    raw = git_show(root, src["repo"], src["commit"], src["path"])
    parse = releases_pallets if src["fmt"] == "pallets" else releases_towncrier
    items: list[dict[str, str]] = []
    for r in parse(raw):
        for section, kind, text in r["blocks"]:
            if kind != "bullet":
                continue
            t = tidy(clean_rst(text))
            t = re.sub(r"^(#\d+(?:, #\d+)*)\s*:\s*", r"\1: ", t)
            if len(t) < 25:
                continue
            cat = category_for(section, re.sub(r"^#[\d, #]+:\s*", "", t))
            items.append(
                {
                    "version": r["version"],
                    "date": r["date"],
                    "section": section,
                    "category": cat,
                    "full": t,
                    "text": f"{r['version']} {CATEGORY_WORD[cat]}: {cut(t)}",
                }
            )
    return items


def resolve(items: list[dict[str, str]], version: str, fragment: str) -> dict[str, str]:
    """The one entry of ``version`` whose text contains ``fragment``; fails loudly otherwise."""
    found = [i for i in items if i["version"] == version and fragment in i["full"]]
    if len(found) != 1:
        raise SystemExit(f"{version} {fragment!r}: {len(found)} entries match (want 1)")
    return found[0]


# -- similarity -----------------------------------------------------------------------------------
class MiniLM:
    """all-MiniLM-L6-v2 on ONNX Runtime: mean pooling, L2-normalised (as codemem-dev's floor)."""

    def __init__(self, model_dir: Path) -> None:
        import numpy as np
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.np = np
        self.tok = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tok.enable_truncation(max_length=256)
        self.tok.enable_padding()
        self.sess = ort.InferenceSession(
            str(model_dir / "model.onnx"), providers=["CPUExecutionProvider"]
        )
        self.inputs = {i.name for i in self.sess.get_inputs()}

    def embed(self, texts: list[str]) -> Any:
        np = self.np
        enc = self.tok.encode_batch(texts)
        ids = np.array([e.ids for e in enc], dtype=np.int64)
        mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self.inputs:
            feed["token_type_ids"] = np.zeros_like(ids)
        out = self.sess.run(None, feed)[0]
        m = mask[..., None].astype(np.float32)
        v = (out * m).sum(1) / np.clip(m.sum(1), 1e-9, None)
        return v / np.linalg.norm(v, axis=1, keepdims=True)

    def cosine(self, a: str, b: str) -> float:
        v = self.embed([a, b])
        return float(v[0] @ v[1])


def load_model(path: Path) -> MiniLM | None:
    try:
        return MiniLM(path)
    except Exception as exc:  # noqa: BLE001 - any missing piece means: keep the stored figure
        print(f"no similarity model ({exc}); keeping the stored similarities", file=sys.stderr)
        return None


# -- the set ---------------------------------------------------------------------------------------
def side(items: list[dict[str, str]], project: str, ref: tuple[str, str]) -> dict[str, str]:
    it = resolve(items, *ref)
    src = SOURCES[project]
    return {
        "text": it["text"],
        "date": it["date"],
        "version": it["version"],
        "category": it["category"],
        "source": f"{src['repo']}@{src['commit'][:12]}:{src['path']} ({it['version']})",
    }


def build(root: Path, model: MiniLM | None, old: dict[str, Any]) -> dict[str, Any]:
    from pairs_src import PAIRS  # the labels, as written

    items = {p: pool(root, p) for p in SOURCES}
    prev = {p["id"]: p for p in old.get("pairs", [])}
    pairs: list[dict[str, Any]] = []
    seen: set[str] = set()
    for spec in PAIRS:
        pid, project = spec["id"], spec["project"]
        if pid in seen:
            raise SystemExit(f"duplicate id {pid}")
        seen.add(pid)
        older = side(items[project], project, spec["older"])
        newer = side(items[project], project, spec["newer"])
        if older["date"] > newer["date"] and spec["kind"] != "unrelated":
            raise SystemExit(f"{pid}: older is newer than newer")
        if older["text"] == newer["text"]:
            raise SystemExit(f"{pid}: the same text twice")
        if model is not None:
            sim = round(model.cosine(older["text"], newer["text"]), 3)
        else:
            sim = prev.get(pid, {}).get("similarity")
        pairs.append(
            {
                "id": pid,
                "project": project,
                "repo": SOURCES[project]["repo"],
                "kind": spec["kind"],
                "older": older,
                "newer": newer,
                "question": spec["question"],
                "current": spec["current"],
                "similarity": sim,
                "note": spec["note"],
            }
        )
    return {
        "about": "Curation development set: older/newer memory pairs of five kinds from real changelogs",
        "sources": [
            {"project": p, **{k: s[k] for k in ("repo", "commit", "path", "licence")}}
            for p, s in SOURCES.items()
        ],
        "pairs": pairs,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--mirror-root", default=os.environ.get("MIRROR_ROOT", "/work/.mirror"))
    default_model = HERE.parents[2] / ".cache" / "bigmind-tests" / "minilm-onnx-0.1.0-v2"
    ap.add_argument("--model", default=os.environ.get("CURATION_MODEL", str(default_model)))
    ap.add_argument("--out", default=str(HERE / "pairs.json"))
    ap.add_argument("--check", action="store_true", help="compare with --out, write nothing")
    ap.add_argument("--pool", metavar="PROJECT", help="print one project's extracted entries")
    a = ap.parse_args()
    root = Path(a.mirror_root)
    if a.pool:
        for it in pool(root, a.pool):
            print(json.dumps(it, ensure_ascii=False))
        return
    sys.path.insert(0, str(HERE))
    out = Path(a.out)
    old = json.loads(out.read_text(encoding="utf-8")) if out.is_file() else {}
    data = build(root, load_model(Path(a.model)), old)
    if a.check:
        bad = [
            p["id"]
            for p, q in zip(data["pairs"], old.get("pairs", []), strict=False)
            if {k: v for k, v in p.items() if k != "similarity"}
            != {k: v for k, v in q.items() if k != "similarity"}
            or (
                p["similarity"] is not None
                and q.get("similarity") is not None
                and abs(p["similarity"] - q["similarity"]) > 0.002
            )
        ]
        if bad or len(data["pairs"]) != len(old.get("pairs", [])):
            raise SystemExit(f"pairs.json differs from the sources: {bad[:10]}")
        print(f"ok: {len(data['pairs'])} pairs re-extracted and equal", file=sys.stderr)
        return
    out.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    counts: dict[tuple[str, str], int] = {}
    for p in data["pairs"]:
        counts[(p["kind"], p["project"])] = counts.get((p["kind"], p["project"]), 0) + 1
    for k in sorted(counts):
        print(*k, counts[k], file=sys.stderr)
    print(len(data["pairs"]), "pairs", file=sys.stderr)


if __name__ == "__main__":
    main()
