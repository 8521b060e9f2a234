"""A readable Markdown copy of a project's memory, and a person's edits of it applied back.

:func:`write` renders the active facts seen from the current project (by category, each
line tagged with its id: ``- [#12] text``), the open hypotheses, the approaches that failed,
the reminders not done yet and the recent sessions (gotchas are facts of category ``gotcha``
and show there; a fact bound to files has them on an indented ``files:`` line under it,
read-only). A comment at the top records each fact's id and the hash of the text it had, so
:func:`pull` knows what the person changed:

- a fact line whose text (or category heading) changed → the fact is corrected
  (:func:`bigmind.memory.correct.update_fact`: the old version stays in its history);
- a fact line deleted → the fact is deprecated;
- a new ``- text`` line under a category heading → a new fact (deduplicated);
- a fact keeps its files whatever is done to its text (the ``files:`` lines are not read);
- a fact changed in memory since the mirror was written is left as memory has it (the
  edit would overwrite what someone else wrote): reported, and the mirror is rewritten.

Only the Facts section is read back; hypotheses, failed approaches, reminders and sessions are
there to be read.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field, fields
from pathlib import Path

from bigmind import project as projects
from bigmind.errors import InvalidInput
from bigmind.limits import check_category
from bigmind.memory import attempts, gotchas, journal, reminders
from bigmind.memory.correct import update_fact
from bigmind.memory.dedup import store_many
from bigmind.memory.handwritten import read_file
from bigmind.models import Fact, content_hash, now_ts
from bigmind.search.semantic import Semantic
from bigmind.storage.facts_table import fact_from_row
from bigmind.storage.store import Store

MAX_FACTS = 5_000  # a mirror longer than that is no longer read by a person
HYPOTHESES = 20
ATTEMPTS = 20
SESSIONS = 10
META = re.compile(r"<!-- bigmind-mirror: (\{.*?\}) -->")
LINE = re.compile(r"^[-*+]\s+(?:\[#(\d+)\]\s*)?(.*)$")
HASH_CHARS = 12
WRITTEN_FOR = re.compile(r"^Written .* for user `([^`]+)`", re.MULTILINE)
# The line of each kind of memory a mirror shows, and the id it is tagged with.
TAGGED = {
    "fact": re.compile(r"^[-*+]\s+\[#(\d+)\]"),
    "hypothesis": re.compile(r"^- \(h(\d+), "),
    "attempt": re.compile(r"^- \S+ \(a(\d+)\) "),
    "reminder": re.compile(r"^- \(r(\d+), "),
    "session": re.compile(r"^- \S+ `([^`]+)` \("),
}
DEPRECATED_REASON = "deleted from the Markdown mirror"
UPDATED_REASON = "edited in the Markdown mirror"


def folder(data_dir: Path) -> Path:
    """Where BigMind writes the mirrors it keeps: ``<data dir>/mirrors``."""
    return data_dir / "mirrors"


def default_path(data_dir: Path, project: projects.Project | None) -> Path:
    """``<data dir>/mirrors/<project name>-<key hash>.md`` (``no-project.md`` outside any)."""
    if project is None:
        return folder(data_dir) / "no-project.md"
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", project.name).strip("-.") or "project"
    digest = hashlib.sha1(project.key.encode("utf-8")).hexdigest()[:8]
    return folder(data_dir) / f"{slug}-{digest}.md"


def _one_line(text: str) -> str:
    return " ".join(text.split())


def _digest(category: str, text: str) -> str:
    """What the mirror records of a fact's line, to tell later whether it changed."""
    return content_hash(f"{category}: {text}")[:HASH_CHARS]


def _facts(store: Store) -> list[Fact]:
    rows = store.facts.page_with_sessions("active", None, MAX_FACTS, 0, store.project_key)
    names = {f.name for f in fields(Fact)}
    facts = (fact_from_row({k: v for k, v in r.items() if k in names}) for r in rows)
    return sorted(facts, key=lambda f: (f.category, f.id))


@dataclass(frozen=True, slots=True)
class Written:
    path: Path
    facts: int
    hypotheses: int
    sessions: int


def render(store: Store) -> tuple[str, int, int, int]:
    """The mirror's text, and how many facts, hypotheses and sessions it shows."""
    p = store.project
    facts = _facts(store)
    meta = {
        "project": p.key if p else None,
        "facts": {str(f.id): _digest(f.category, f.fact) for f in facts},
    }
    lines = [
        f"# BigMind memory: {p.name if p else 'no project'}",
        "",
        f"<!-- bigmind-mirror: {json.dumps(meta, separators=(',', ':'))} -->",
        f"Written {now_ts()[:16]} UTC by `bigmind mirror` for user `{store.user.username}`"
        + (f", project `{p.key}`." if p else "."),
        "Edit the fact lines, then run `bigmind mirror --pull`: change a line's text to correct "
        "that fact, delete a line to deprecate it, add `- text` under a category to add a fact. "
        "Keep the `[#id]` tags. Files and the other sections are read-only here.",
        "",
        "## Facts",
    ]
    category = None
    files = gotchas.of_facts(store, [f.id for f in facts])
    for f in facts:
        if f.category != category:
            category = f.category
            lines += ["", f"### {category}", ""]
        lines.append(f"- [#{f.id}] {_one_line(f.fact)}")
        if f.id in files:
            lines.append("  files: " + ", ".join(f"`{p}`" for p in files[f.id]))
    if not facts:
        lines += ["", "(none yet)"]
    if len(facts) == MAX_FACTS:
        lines += ["", f"(the newest {MAX_FACTS} facts; older ones are not shown here)"]
    hyps = journal.list_(store, "open", HYPOTHESES, store.project_key)
    lines += ["", "## Open hypotheses", ""]
    lines += [f"- (h{h.id}, {h.confidence:.0%}) {_one_line(h.hypothesis)}" for h in hyps]
    lines += [] if hyps else ["(none)"]
    failed = attempts.list_(store, "failed", ATTEMPTS)
    lines += ["", "## Approaches that failed", ""]
    for a in failed:
        why = f" — {_one_line(a.why)}" if a.why else ""
        lines.append(f"- {a.created_at[:10]} (a{a.id}) {_one_line(a.approach)}{why}")
    lines += [] if failed else ["(none)"]
    lines += ["", "## Reminders", "", *(_reminder_lines(store) or ["(none)"])]
    sessions = store.list_sessions(SESSIONS)
    lines += ["", "## Recent sessions", ""]
    for s in sessions:
        state = "open" if s.is_open else "closed"
        lines.append(f"- {s.started_at[:10]} `{s.id}` ({state}): {_one_line(s.one_liner)}")
    lines += [] if sessions else ["(none)"]
    return "\n".join(lines) + "\n", len(facts), len(hyps), len(sessions)


def _reminder_lines(store: Store) -> list[str]:
    """The reminders not done yet, seen from the project: when each is due, and its text."""
    return [
        f"- (r{r.id}, due {reminders.when_text(r)}) {_one_line(r.text)}"
        for r in reminders.pending(store, project=store.project_key)
    ]


def write(store: Store, path: Path) -> Written:
    """Write the mirror of the current project's memory to ``path`` (replacing it)."""
    text, n_facts, n_hyps, n_sessions = render(store)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    return Written(path, n_facts, n_hyps, n_sessions)


def has_edits(path: Path) -> bool:
    """Whether the mirror at ``path`` holds edits not pulled yet (lines changed, deleted or
    added since it was written). A file that is not a mirror counts as edited: keep it."""
    try:
        meta, lines = _read(read_file(path), path)
    except InvalidInput:
        return True
    written = meta.get("facts")
    now = {str(ln.fact_id): _digest(ln.category, ln.text) for ln in lines if ln.fact_id}
    return now != written or any(ln.fact_id is None and ln.text for ln in lines)


def refresh(store: Store, path: Path) -> Written | None:
    """Write the mirror again unless a person's edits there wait for a pull (then None)."""
    if path.exists() and has_edits(path):
        return None
    return write(store, path)


@dataclass(slots=True)
class Pulled:
    """What :func:`pull` applied, by fact id, and what it left alone and why."""

    updated: list[int] = field(default_factory=list)
    deprecated: list[int] = field(default_factory=list)
    added: list[int] = field(default_factory=list)
    known: list[int] = field(default_factory=list)  # new lines memory already held
    left: list[str] = field(default_factory=list)  # edits not applied, with the reason

    def summary(self) -> str:
        return (
            f"{len(self.updated)} facts updated, {len(self.deprecated)} deprecated, "
            f"{len(self.added)} added, {len(self.known)} already known, "
            f"{len(self.left)} edits left alone"
        )


@dataclass(frozen=True, slots=True)
class _Line:
    fact_id: int | None
    category: str
    text: str


def _read(text: str, where: Path) -> tuple[dict[str, object], list[_Line]]:
    found = META.search(text)
    if found is None:
        raise InvalidInput(
            f"{where} has no bigmind-mirror comment (its first lines): it was not written by "
            "`bigmind mirror`, or the comment was deleted. Run `bigmind mirror` to write it "
            "again (your edits there are lost), or `bigmind import-md` to import a file."
        )
    try:
        meta = json.loads(found.group(1))
    except json.JSONDecodeError as exc:
        raise InvalidInput(
            f"{where}: the bigmind-mirror comment was edited; write it again."
        ) from exc
    lines: list[_Line] = []
    section = category = None
    for raw in text.splitlines():
        if raw.startswith("## "):
            section, category = raw[3:].strip().lower(), None
        elif section == "facts" and raw.startswith("### "):
            category = check_category(raw[4:].strip())
        elif section == "facts" and category and (m := LINE.match(raw.strip())):
            fact_id = int(m.group(1)) if m.group(1) else None
            lines.append(_Line(fact_id, category, _one_line(m.group(2))))
    return meta, lines


def pull(store: Store, semantic: Semantic | None, path: Path) -> Pulled:
    """Apply the edits made in the mirror at ``path`` to the current project's memory, then
    write the mirror again (new facts get their ids; a second pull changes nothing)."""
    meta, lines = _read(read_file(path), path)
    key = store.project_key
    if meta.get("project") != key:
        raise InvalidInput(
            f"{path} mirrors project {meta.get('project') or '(none)'}, not "
            f"{key or '(none)'}: run the pull with --project set to that project."
        )
    written = meta.get("facts")
    if not isinstance(written, dict):
        raise InvalidInput(f"{path}: the bigmind-mirror comment was edited; write it again.")
    out = Pulled()
    by_id = {ln.fact_id: ln for ln in lines if ln.fact_id is not None}
    for sid, digest in written.items():
        _apply(store, semantic, int(sid), str(digest), by_id.get(int(sid)), out)
    new = []
    for ln in lines:
        if ln.fact_id is not None and str(ln.fact_id) not in written:
            out.left.append(f"#{ln.fact_id}: not in this mirror when written (remove the tag)")
        elif ln.fact_id is None and ln.text:
            new.append((ln.category, ln.text))
    stored = store_many(store, semantic, new, "project" if key is not None else None)
    out.added, out.known = stored.added, stored.known
    write(store, path)
    return out


def _apply(
    store: Store,
    semantic: Semantic | None,
    fact_id: int,
    digest: str,
    line: _Line | None,
    out: Pulled,
) -> None:
    current = store.facts.get(fact_id)
    if current is None:
        out.left.append(f"#{fact_id}: forgotten since the mirror was written")
        return
    if line is not None and (
        line.category == current.category and line.text == _one_line(current.fact)
    ):
        return  # unchanged
    if current.deprecated:
        out.left.append(f"#{fact_id}: deprecated since the mirror was written")
        return
    if _digest(current.category, current.fact) != digest:
        out.left.append(f"#{fact_id}: changed in memory since the mirror was written")
        return
    if line is None:
        store.deprecate_fact(fact_id, DEPRECATED_REASON)
        out.deprecated.append(fact_id)
        return
    if not line.text:
        out.left.append(f"#{fact_id}: its line has no text (delete the line to deprecate it)")
        return
    try:
        update_fact(
            store,
            semantic,
            fact_id,
            fact=line.text if line.text != _one_line(current.fact) else None,
            category=line.category,
            reason=UPDATED_REASON,
        )
    except InvalidInput as exc:  # it would duplicate another fact
        out.left.append(f"#{fact_id}: {exc}")
        return
    out.updated.append(fact_id)


# -- forgetting: the mirrors BigMind keeps lose what was forgotten --------------------------------
def of_user(where: Path, username: str) -> list[Path]:
    """The mirrors in ``where`` written for ``username`` (other files are left alone)."""
    out = []
    for path in sorted(where.glob("*.md")) if where.is_dir() else ():
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        user = WRITTEN_FOR.search(text)
        if META.search(text) and user is not None and user.group(1) == username:
            out.append(path)
    return out


def holding(where: Path, username: str, text: str) -> list[Path]:
    """``username``'s mirrors in ``where`` with a line of memory holding ``text`` (any case)."""
    return [p for p in of_user(where, username) if _without(_read_text(p), {}, text) is not None]


def forget_lines(
    where: Path, username: str, gone: dict[str, set[str]], text: str | None = None
) -> list[Path]:
    """Drop from ``username``'s mirrors in ``where`` the lines of the memories forgotten
    (``gone``: kind → ids) and, given ``text``, every line of memory holding it (any case); a
    fact's ``files:`` line goes with it and the mirror comment forgets the facts dropped, so
    the file reads as unedited. Returns the files rewritten."""
    changed = []
    for path in of_user(where, username):
        new = _without(_read_text(path), gone, text)
        if new is not None:
            tmp = path.with_name(path.name + ".tmp")
            tmp.write_text(new, encoding="utf-8")
            tmp.replace(path)
            changed.append(path)
    return changed


def _read_text(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _without(raw: str, gone: dict[str, set[str]], text: str | None) -> str | None:
    """``raw`` without those lines, or None when it has none of them. The title, the lines
    before the first section and the section headings are BigMind's, not memory: kept."""
    needle = text.casefold() if text else None
    out: list[str] = []
    facts: set[str] = set()
    meta_at, body, files_of_dropped, dropped = -1, False, False, False
    for line in raw.splitlines(keepends=True):
        bare = line.strip()
        if files_of_dropped and line.startswith("  files:"):
            continue
        files_of_dropped = False
        body = body or line.startswith("## ")
        if META.search(line):
            meta_at = len(out)
        if not body or line.startswith("## ") or meta_at == len(out):
            out.append(line)  # BigMind's own lines
            continue
        drop, fact = needle is not None and needle in bare.casefold(), None
        for kind, tag in TAGGED.items():
            if m := tag.match(bare):
                fact = m.group(1) if kind == "fact" else None
                drop = drop or m.group(1) in gone.get(kind, set())
                break
        if not drop:
            out.append(line)
            continue
        dropped = True
        if fact is not None:
            facts.add(fact)
            files_of_dropped = True
    if not dropped:
        return None
    if facts and meta_at >= 0:
        out[meta_at] = META.sub(lambda m: _meta_without(m.group(1), facts), out[meta_at])
    return "".join(out)


def _meta_without(raw: str, facts: set[str]) -> str:
    try:
        meta = json.loads(raw)
    except json.JSONDecodeError:
        return f"<!-- bigmind-mirror: {raw} -->"
    written = meta.get("facts")
    if isinstance(written, dict):
        meta["facts"] = {k: v for k, v in written.items() if k not in facts}
    return f"<!-- bigmind-mirror: {json.dumps(meta, separators=(',', ':'))} -->"
