#!/usr/bin/env python3
"""Rebuild items.json and questions.json of codemem-chunks from the three projects' pinned
documentation (standard library only).

    python3 build_chunks.py --mirror-root DIR [--codemem ../../../../shared/bench-data/codemem-dev]

DIR holds bare git repositories as ``DIR/<owner>+<name>/repo`` (pallets+flask, pytest-dev+pytest,
pypa+pip). Each chunk is one paragraph of a documentation file at the pinned commit, found by its
path and the first words of the paragraph (``ANCHOR``; exactly one paragraph must match), with the
markup stripped and cut at a sentence to at most 600 characters. Its session is the first release
of that project in codemem-dev whose date is on or after the day the paragraph's first words
entered the file (``git log -S``); a paragraph newer than the newest release goes with it.

Checks: every anchor matches one paragraph; every question's gold holds a chunk of its project
(and maybe codemem-dev facts of that project that answer it too); no codemem-dev
abstain question (type f) becomes answerable: none of its absent terms occurs in a chunk.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
MAX_CHARS = 600
PREFIX = {"flask": "fl-", "pytest": "pt-", "pip": "pp-"}  # item ids start with it

PROJECTS = {
    "flask": ("pallets/flask", "2ac89889f4cc330eabd50f295dcef02828522c69", "BSD-3-Clause"),
    "pytest": ("pytest-dev/pytest", "df87db7b0462fb764ef73fa00561adf8ad047572", "MIT"),
    "pip": ("pypa/pip", "6d309205789d368b2749d93fd6193d584811efd5", "MIT"),
}

# (chunk id, project, path, the paragraph's first words)
CHUNKS = [
    ("fl-c01", "flask", "docs/design.rst", "A Python web application based on WSGI has to have"),
    ("fl-c02", "flask", "docs/design.rst", "There are three major reasons for this."),
    ("fl-c03", "flask", "docs/design.rst", "But there is another very important reason why Flask"),
    ("fl-c04", "flask", "docs/design.rst", "Flask uses the Werkzeug routing system which was designed"),
    ("fl-c05", "flask", "docs/design.rst", "Flask decides on one template engine: Jinja."),
    ("fl-c06", "flask", "docs/design.rst", "“Micro” does not mean that your whole web application"),
    ("fl-c07", "flask", "docs/design.rst", "Flask uses special context locals and proxies"),
    ("fl-c08", "flask", "docs/design.rst", "The context and proxies help solve two development issues"),
    ("fl-c09", "flask", "docs/design.rst", "Flask supports ``async`` coroutines for view functions"),
    ("fl-c10", "flask", "docs/design.rst", "Flask will never have a database layer."),
    ("fl-c11", "flask", "docs/async-await.rst", "Async functions require an event loop to run."),
    ("fl-c12", "flask", "docs/async-await.rst", "Async functions will run in an event loop until they"),
    ("fl-c13", "flask", "docs/async-await.rst", "Flask extensions predating Flask's async support"),
    ("fl-c14", "flask", "docs/server.rst", "macOS Monterey and later automatically starts a service"),
    ("fl-c15", "flask", "docs/server.rst", "If a syntax error is already present when calling"),
    ("fl-c16", "flask", "docs/deploying/proxy_fix.rst", "This middleware should only be used if"),
    ("fl-c17", "flask", "docs/config.rst", "Using the option is recommended. While it is possible"),
    ("fl-c18", "flask", "docs/config.rst", "When adding a boolean value with the default JSON parsing"),
    ("pt-c01", "pytest", "doc/en/deprecations.rst", "In pytest 10, first-time fixture requests made during"),
    ("pt-c02", "pytest", "doc/en/deprecations.rst", "``config.inicfg`` was never documented"),
    ("pt-c03", "pytest", "doc/en/deprecations.rst", "When a class-scoped fixture is defined as an instance"),
    ("pt-c04", "pytest", "doc/en/deprecations.rst", "Legacy namespace packages are deprecated in favor of"),
    ("pt-c05", "pytest", "doc/en/deprecations.rst", "Defining a custom pytest node type which is both an"),
    ("pt-c06", "pytest", "doc/en/deprecations.rst", "However, some packages might be installed in the system"),
    ("pt-c07", "pytest", "doc/en/deprecations.rst", "As of ``9.1``, :func:`pytest.importorskip` only captures"),
    ("pt-c08", "pytest", "doc/en/deprecations.rst", "Plugins which implement custom items and collectors are"),
    ("pt-c09", "pytest", "doc/en/deprecations.rst", "Passing the keyword argument ``msg`` to"),
    ("pt-c10", "pytest", "doc/en/deprecations.rst", ":func:`pytest.warns(None) <pytest.warns>` is now deprecated"),
    ("pt-c11", "pytest", "doc/en/deprecations.rst", "The ``Package`` collector node designates a Python package"),
    ("pt-c12", "pytest", "doc/en/deprecations.rst", "Prior to pytest 2.3, this attribute was named"),
    ("pt-c13", "pytest", "doc/en/deprecations.rst", "It is a common mistake to think this parameter will match"),
    ("pt-c14", "pytest", "doc/en/deprecations.rst", "Defining :globalvar:`pytest_plugins` is now deprecated"),
    ("pt-c15", "pytest", "doc/en/explanation/goodpractices.rst", "For historical reasons, pytest defaults to the"),
    ("pt-c16", "pytest", "doc/en/explanation/goodpractices.rst", "Now pytest will load the modules as"),
    ("pt-c17", "pytest", "doc/en/explanation/goodpractices.rst", "If pytest adds new strictness options in the future"),
    ("pt-c18", "pytest", "doc/en/backwards-compatibility.rst", "When the deprecation expires (e.g. 4.0 is released), we"),
    ("pt-c19", "pytest", "doc/en/explanation/flaky.rst", "Broadly speaking, a flaky test indicates"),
    ("pp-c01", "pip", "docs/html/topics/caching.md", "When making any HTTP request, pip will first check"),
    ("pp-c02", "pip", "docs/html/topics/caching.md", "Wheels built from source distributions provided to pip"),
    ("pp-c03", "pip", "docs/html/topics/caching.md", "In some cases, pip's caching behaviour can be undesirable."),
    ("pp-c04", "pip", "docs/html/topics/caching.md", "It is, however, recommended to **NOT** disable"),
    ("pp-c05", "pip", "docs/html/topics/dependency-resolution.md", "During dependency resolution, pip needs to make"),
    ("pp-c06", "pip", "docs/html/topics/dependency-resolution.md", "This can look like pip downloading multiple versions"),
    ("pp-c07", "pip", "docs/html/topics/dependency-resolution.md", "Backtracking reduces the risk that installing a new"),
    ("pp-c08", "pip", "docs/html/topics/dependency-resolution.md", "Sometimes pip's dependency resolver may exceed its"),
    ("pp-c09", "pip", "docs/html/topics/more-dependency-resolution.md", "The process of finding a set of packages to install"),
    ("pp-c10", "pip", "docs/html/topics/more-dependency-resolution.md", "As downloading projects is a costly operation"),
    ("pp-c11", "pip", "docs/html/topics/more-dependency-resolution.md", "The resolver itself is based on a separate package"),
    ("pp-c12", "pip", "docs/html/topics/secure-installs.md", "This is because a partially-hashed requirements file"),
    ("pp-c13", "pip", "docs/html/topics/secure-installs.md", "The recommended hash algorithm at the moment is sha256"),
    ("pp-c14", "pip", "docs/html/topics/secure-installs.md", "When installing from the cache of locally built wheels"),
    ("pp-c15", "pip", "docs/html/topics/secure-installs.md", "Be careful not to nullify all your security work"),
    ("pp-c16", "pip", "docs/html/topics/repeatable-installs.md", "Hash-checking mode is a labour-saving alternative"),
    ("pp-c17", "pip", "docs/html/development/release-process.rst", "The pip project has a release cadence"),
    ("pp-c18", "pip", "docs/html/development/release-process.rst", "Our release months are January, April, July, October."),
    ("pp-c19", "pip", "docs/html/development/release-process.rst", "Any change to pip that removes or significantly alters"),
]  # fmt: skip

# (project, type, question as a later coding session would ask it, gold: chunk ids, and the ids of
# codemem-dev facts that answer it as well — found by reading the floors' top hits; any one counts)
QUESTIONS = [
    ("flask", "a", "port 5000 is already taken on my Mac — is that the AirPlay Receiver?", ["fl-c14"]),
    ("flask", "a", "can I use asyncio.create_task to start background work from an async view?", ["fl-c12"]),
    ("flask", "a", "what is current_app for, and why is it a proxy instead of importing app?", ["fl-c08", "fl-c07"]),
    ("flask", "b", "will older add-on packages that wrap my handlers still work once the handlers become coroutines?", ["fl-c13"]),
    ("flask", "b", "does it matter in which sequence I declare my URL rules across modules?", ["fl-c04"]),
    ("flask", "b", "config from environment variables: which spellings of true and false are accepted?", ["fl-c18"]),
    ("flask", "b", "will the framework ever bundle its own ORM or input-validation toolkit?", ["fl-c10"]),
    ("flask", "c", "why does Flask run async views in a thread rather than on an event loop in the main thread?", ["fl-c09"]),
    ("flask", "c", "why must we create the Flask application object explicitly instead of the framework making one for us?", ["fl-c02", "fl-c03"]),
    ("flask", "c", "why doesn't Flask offer a pluggable template engine interface?", ["fl-c05"]),
    ("flask", "c", "why is setting DEBUG in the config file discouraged?", ["fl-c17"]),
    ("flask", "c", "why does flask run fail straight away on a syntax error at startup but not after a reload?", ["fl-c15"]),
    ("flask", "c", "why do we have to tell the forwarded-headers middleware how many proxies sit in front of the app?", ["fl-c16"]),
    ("pytest", "a", "can a fixture call request.getfixturevalue during its teardown?", ["pt-c01", "pt-007"]),
    ("pytest", "a", "we still use pkg_resources.declare_namespace in __init__.py — what should we migrate to?", ["pt-c04", "pt-118"]),
    ("pytest", "a", "pytest.fail(msg=...) warns — which keyword should we pass instead?", ["pt-c09"]),
    ("pytest", "a", "should we enable strict mode when pytest is not pinned?", ["pt-c17"]),
    ("pytest", "b", "values I store on self in a once-per-class setup helper are missing inside the test methods — why?", ["pt-c03", "pt-006"]),
    ("pytest", "b", "when an old feature's grace period runs out, does it vanish at once?", ["pt-c18"]),
    ("pytest", "b", "our suite passes sometimes and fails other times; what is usually behind that?", ["pt-c19"]),
    ("pytest", "c", "why shouldn't a plugin read config.inicfg directly?", ["pt-c02", "pt-009"]),
    ("pytest", "c", "why did importorskip stop skipping on every ImportError?", ["pt-c06", "pt-c07"]),
    ("pytest", "c", "why is pytest.warns(None) deprecated?", ["pt-c10"]),
    ("pytest", "c", "why is Package no longer a subclass of Module?", ["pt-c11", "pt-348"]),
    ("pytest", "c", "why can't a nested conftest.py define pytest_plugins any more?", ["pt-c14"]),
    ("pytest", "c", "why is prepend still the default import mode if importlib is recommended?", ["pt-c15"]),
    ("pytest", "d", "what does pytest.importorskip catch by default now?", ["pt-c07"]),
    ("pytest", "d", "what was fixturenames called before, and is the old name still around?", ["pt-c12"]),
    ("pip", "a", "is the wheel built by `pip install .` cached across runs?", ["pp-c02"]),
    ("pip", "a", "what does a ResolutionTooDeepError mean?", ["pp-c08"]),
    ("pip", "a", "which library implements the backtracking algorithm behind pip's resolver?", ["pp-c11"]),
    ("pip", "a", "can we use md5 or sha1 hashes in hash-checking mode?", ["pp-c13"]),
    ("pip", "a", "how long must a user-visible behaviour change in pip be deprecated first?", ["pp-c19"]),
    ("pip", "a", "after installing hashed requirements, is it safe to run python setup.py develop for our project?", ["pp-c15"]),
    ("pip", "b", "does the installer fetch a package from the index again if it grabbed it recently?", ["pp-c01", "pp-008"]),
    ("pip", "b", "the installer keeps fetching several releases of one dependency — is something broken?", ["pp-c06", "pp-c05"]),
    ("pip", "b", "pinning digests of every artifact versus running our own private package server?", ["pp-c16"]),
    ("pip", "b", "how often does the installer ship new versions, and in which months?", ["pp-c17", "pp-c18"]),
    ("pip", "c", "why does pip keep using a cached pure-Python wheel after the C extension could be built?", ["pp-c03"]),
    ("pip", "c", "why is turning off pip's cache in CI a bad idea?", ["pp-c04"]),
    ("pip", "c", "why can't pip work out the whole dependency tree before it starts?", ["pp-c10", "pp-c09"]),
    ("pip", "c", "why does --require-hashes insist that every requirement has a hash?", ["pp-c12"]),
]  # fmt: skip


# -- markup ------------------------------------------------------------------------------------
_ROLE = re.compile(
    r"(?::|\{)([\w:.-]+)(?::|\})`([^`<]*?)\s*(?:<[^`>]*>)?`"
)  # :class:`~a.B`, {ref}`x <t>`
_MD_LINK = re.compile(r"\[([^\]]+)\]\([^)]*\)")
_RST_LINK = re.compile(r"`([^`<\s][^`<]*?)\s*(?:<[^`>]*>)?`_{1,2}(?![\w])")  # `Quart`_
_LITERAL = re.compile(r"``([^`]+)``")
_EMPH = re.compile(r"\*\*([^*]+)\*\*|\*([^*\s][^*]*)\*")
PROSE_ROLES = {"ref", "doc", "pypi", "term"}  # their text is words, not code


def clean(text: str) -> str:
    """reStructuredText / MyST markup out: roles to their text (code in backticks, PEPs and
    issues spelled out), links to their text, literals to single backticks, emphasis dropped."""

    def role(m: re.Match[str]) -> str:
        name, target = m.group(1).split(":")[-1], m.group(2).strip()
        if target.startswith("~"):
            target = target[1:].rsplit(".", 1)[-1]
        target = target.lstrip(".")
        if name == "pep":
            return f"PEP {target}"
        if name in ("issue", "pull"):
            return f"#{target}"
        return target if name in PROSE_ROLES else f"\x00{target}\x00"

    t = " ".join(text.split())
    t = _LITERAL.sub(lambda m: f"\x00{m.group(1)}\x00", t)
    t = _ROLE.sub(role, t)
    t = _MD_LINK.sub(r"\1", t)
    t = _RST_LINK.sub(r"\1", t)
    t = _EMPH.sub(lambda m: m.group(1) or m.group(2), t)
    t = re.sub(r"\s*::$", ":", t)
    return t.replace("\x00", "`")


def cut(text: str) -> str:
    if len(text) <= MAX_CHARS:
        return text
    head = text[:MAX_CHARS]
    ends = [m.end() for m in re.finditer(r"[.!?](?=\s)", head)]
    return head[: ends[-1]] if ends else head.rsplit(" ", 1)[0] + " …"


# -- the repositories -------------------------------------------------------------------------
def git(repo: Path, *args: str) -> str:
    out = subprocess.run(["git", "--git-dir", str(repo), *args], capture_output=True, text=True)
    if out.returncode:
        raise SystemExit(f"git {' '.join(args)}: {out.stderr.strip()}")
    return out.stdout


def paragraph(raw: str, anchor: str) -> tuple[str, str]:
    """The one paragraph (blank-line separated, whitespace folded) starting with ``anchor``,
    and the title of the section it is in."""
    want = " ".join(anchor.split())
    found = []
    section = ""
    for block in re.split(r"\n\s*\n", raw):
        lines = block.strip().splitlines()
        for i, line in enumerate(lines):
            if i + 1 < len(lines) and re.fullmatch(r"([=\-~^\"'])\1{2,}", lines[i + 1].strip()):
                section = line.strip()
            elif line.startswith("#"):
                section = line.lstrip("#").strip()
        flat = " ".join(block.split())
        if flat.startswith(want):
            found.append((flat, section))
    if len(found) != 1:
        raise SystemExit(f"{len(found)} paragraphs start with {anchor!r}")
    return found[0]


def introduced(repo: Path, commit: str, path: str, anchor: str) -> str:
    """The day the paragraph's first words entered the file (following renames)."""
    words = " ".join(anchor.split()[:6])
    out = git(repo, "log", "--follow", "--format=%cs", "-S", words, commit, "--", path)
    days = out.split()
    return days[-1] if days else git(repo, "log", "-1", "--format=%cs", commit, "--", path).strip()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirror-root", type=Path, required=True)
    default_codemem = HERE.parents[3] / "shared" / "bench-data" / "codemem-dev"
    ap.add_argument("--codemem", type=Path, default=default_codemem)
    a = ap.parse_args()
    releases = {
        p: sorted((s["date"], s["session"]) for s in d["sessions"])
        for p, d in json.loads((a.codemem / "items.json").read_text())["projects"].items()
    }
    projects: dict[str, dict[str, object]] = {}
    sessions: dict[tuple[str, str], dict[str, object]] = {}
    texts: dict[str, str] = {}
    for cid, project, path, anchor in CHUNKS:
        full, commit, _licence = PROJECTS[project]
        repo = a.mirror_root / full.replace("/", "+") / "repo"
        raw = git(repo, "show", f"{commit}:{path}")
        flat, section = paragraph(raw, anchor)
        text = cut(clean(flat))
        day = introduced(repo, commit, path, anchor)
        date, release = next(
            ((d, s) for d, s in releases[project] if d >= day), releases[project][-1]
        )
        name = f"{release} docs"
        key = (project, name)
        if key not in sessions:
            sessions[key] = {"session": name, "date": date, "items": []}
        item = {"id": cid, "kind": "chunk", "category": "note", "text": text, "date": date,
                "version": release.split()[-1], "section": section, "source": path,
                "introduced": day}  # fmt: skip
        sessions[key]["items"].append(item)  # type: ignore[attr-defined]
        texts[cid] = text
    for project, (full, commit, licence) in PROJECTS.items():
        mine = [s for (p, _), s in sessions.items() if p == project]
        mine.sort(key=lambda s: str(s["date"]), reverse=True)  # newest first, as codemem-dev
        paths = sorted({c[2] for c in CHUNKS if c[1] == project})
        source = {"repo": full, "commit": commit, "paths": paths, "licence": licence}
        projects[project] = {"source": source, "sessions": mine}
    facts = {
        i["id"]
        for d in json.loads((a.codemem / "items.json").read_text())["projects"].values()
        for s in d["sessions"]
        for i in s["items"]
    }
    questions = []
    for n, (project, qtype, question, gold) in enumerate(QUESTIONS, 1):
        known = [g for g in gold if g in texts or g in facts]
        if len(known) < len(gold) or not all(g.startswith(PREFIX[project]) for g in gold):
            raise SystemExit(f"question {n}: gold {gold} is not all items of {project}")
        if not any(g in texts for g in gold):
            raise SystemExit(f"question {n}: no chunk in its gold")
        questions.append({"qid": f"qc{n:02d}", "project": project, "type": qtype, "question": question,
                          "gold": gold, "gold_mode": "any"})  # fmt: skip
    check_abstain(a.codemem, texts)
    about = ("Documentation paragraphs of the codemem-dev projects at the same pinned commits, stored as "
             "chunks; questions whose gold is a chunk. Test data, never shipped.")  # fmt: skip
    (HERE / "items.json").write_text(
        json.dumps({"about": about, "projects": projects}, indent=1, ensure_ascii=False) + "\n"
    )
    types = {"a": "identifier", "b": "paraphrase", "c": "why/decision", "d": "temporal"}
    (HERE / "questions.json").write_text(
        json.dumps({"types": types, "questions": questions}, indent=1, ensure_ascii=False) + "\n"
    )
    print(f"{len(texts)} chunks, {len(questions)} questions written to {HERE}")


def check_abstain(codemem: Path, texts: dict[str, str]) -> None:
    """No codemem-dev type-f question may find its absent terms in a chunk."""
    src = (codemem / "questions_src.py").read_text(encoding="utf-8")
    pattern = re.compile(r'\("(\w+)",\s*"f",\s*"((?:[^"\\]|\\.)*)",\s*\[\],\s*\[([^\]]*)\]\)')
    bad = []
    for project, question, terms in pattern.findall(src):
        for term in re.findall(r'"([^"]+)"', terms):
            for cid, text in texts.items():
                if cid.startswith(PREFIX[project]) and term.lower() in text.lower():
                    bad.append(f"{cid} contains {term!r} (abstain question {question!r})")
    if bad:
        raise SystemExit("chunks answer abstain questions:\n" + "\n".join(bad))


if __name__ == "__main__":
    main()
