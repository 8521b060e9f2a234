"""Memories written by hand in Markdown (CLAUDE.md, AGENTS.md, .cursorrules, copilot
instructions, MEMORY.md) read into facts of the current project.

Bullets become facts; headings give them their context: a heading that names a kind of
memory ("Gotchas", "Decisions", "Conventions"…) is the category, any other heading below the
title prefixes its bullets ("Testing: run pytest -n 0"). A bullet that only labels the ones
nested under it ("Deploys:") prefixes them instead of being a fact. Code blocks, tables,
prose paragraphs, front matter and BigMind's own marker block are skipped and counted.

Each fact is stored as ``memory_store_fact`` stores it: redacted, deduplicated by hash, then,
with the model loaded, checked by meaning at once (:func:`bigmind.memory.dedup.store_many`). The parse is
deterministic, so importing a file again adds nothing.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from markdown_it import MarkdownIt

from bigmind import limits
from bigmind.errors import InvalidInput
from bigmind.memory.dedup import store_many
from bigmind.search.semantic import Semantic
from bigmind.storage.store import Store

DEFAULT_CATEGORY = "codebase"
# A heading naming a kind of memory gives its bullets that category (first match wins).
HEADING_CATEGORIES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (cat, re.compile(rf"\b(?:{words})", re.I))
    for cat, words in (
        ("gotcha", r"gotchas?\b|pitfalls?\b|caveats?\b|warnings?\b|known issues?\b|watch out"),
        ("decision", r"decisions?\b|adrs?\b"),
        ("preference", r"preferences?\b|preferred\b"),
        ("convention", r"conventions?\b|code style\b|style guide|guidelines?\b|rules?\b"),
        ("constraint", r"constraints?\b|requirements?\b|limitations?\b"),
    )
)
BLOCK = re.compile(r"(?ms)^[ \t]*<!-- BIGMIND:BEGIN.*?^[ \t]*<!-- BIGMIND:END -->[ \t]*$")
FRONT_MATTER = re.compile(
    r"\A(?:---|\+\+\+)[ \t]*\r?\n.*?\r?\n(?:---|\+\+\+)[ \t]*(?:\r?\n|\Z)", re.S
)
TASK_BOX = re.compile(r"^\[[ xX]\]\s+")
MIN_LETTERS = 3  # a bullet with fewer letters ("-", "ok") is no memory


@dataclass(frozen=True, slots=True)
class Entry:
    """One memory found in a file: the category and text it is stored with."""

    category: str
    text: str


@dataclass(slots=True)
class Parsed:
    entries: list[Entry] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)  # reason -> blocks


def category_of(heading: str) -> str | None:
    """The category a heading names, or None when it names none."""
    return next((cat for cat, rx in HEADING_CATEGORIES if rx.search(heading)), None)


def _letters(text: str) -> int:
    return sum(c.isalpha() for c in text)


def parse(text: str) -> Parsed:
    """The bullet memories of a Markdown document, with what was skipped and why."""
    out = Parsed()
    text = text.lstrip("\ufeff")
    if FRONT_MATTER.match(text):
        out.skipped["front matter"] += 1
        text = FRONT_MATTER.sub("", text, count=1)
    text, n = BLOCK.subn("", text)
    if n:
        out.skipped["BigMind block"] += n
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    headings: dict[int, str] = {}  # level -> text, of the headings above
    items: list[str | None] = []  # per open list item: its label text, or None
    in_item_paragraph: list[bool] = []  # per open list item: its first paragraph was read
    heading_level = 0
    for i, tok in enumerate(tokens):
        kind = tok.type
        if kind == "heading_open":
            heading_level = int(tok.tag[1:])
        elif kind == "heading_close":
            heading_level = 0
        elif kind == "list_item_open":
            items.append(None)
            in_item_paragraph.append(False)
        elif kind == "list_item_close":
            items.pop()
            in_item_paragraph.pop()
        elif kind in ("fence", "code_block"):
            out.skipped["code block"] += 1
        elif kind == "table_open":
            out.skipped["table"] += 1
        elif kind == "inline" and heading_level:
            headings = {k: v for k, v in headings.items() if k < heading_level}
            headings[heading_level] = tok.content.strip()
        elif kind == "inline" and tokens[i - 1].type == "paragraph_open":
            if not items or in_item_paragraph[-1]:
                out.skipped["prose"] += 1
                continue
            in_item_paragraph[-1] = True
            _bullet(out, headings, items, tok.content)
    return out


def _bullet(out: Parsed, headings: dict[int, str], items: list[str | None], raw: str) -> None:
    text = " ".join(TASK_BOX.sub("", raw.strip()).split())
    labels = [x for x in items[:-1] if x]
    if text.endswith(":") and _letters(text) >= MIN_LETTERS:
        items[-1] = text  # a label: the bullets nested under it carry it
        return
    if _letters(text) < MIN_LETTERS:
        out.skipped["too short"] += 1
        return
    category, prefix = DEFAULT_CATEGORY, ""
    for level in sorted(headings, reverse=True):
        named = category_of(headings[level])
        if named is not None:
            category = named
            break
        if level >= 2 and not prefix:
            prefix = headings[level].rstrip(":")
    parts = [f"{prefix}:"] if prefix else []
    fact = " ".join([*parts, *labels, text])
    if len(fact) > limits.FACT:
        out.skipped["too long"] += 1
        return
    out.entries.append(Entry(category, fact))


@dataclass(slots=True)
class Imported:
    """What an import did: facts added, already known (the same or a paraphrase), skipped."""

    added: list[int] = field(default_factory=list)  # new fact ids
    known: list[int] = field(default_factory=list)  # the existing facts that said it
    skipped: Counter[str] = field(default_factory=Counter)
    files: list[str] = field(default_factory=list)

    def summary(self) -> str:
        why = ", ".join(f"{n} {reason}" for reason, n in sorted(self.skipped.items()))
        skipped = sum(self.skipped.values())
        return (
            f"{len(self.added)} facts added, {len(self.known)} already known, "
            f"{skipped} skipped" + (f" ({why})" if why else "")
        )


def read_file(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise InvalidInput(f"No file {path}: give the path of a Markdown file.") from exc
    except IsADirectoryError as exc:
        raise InvalidInput(f"{path} is a folder: give a Markdown file in it.") from exc
    except UnicodeDecodeError as exc:
        raise InvalidInput(f"{path} is not UTF-8 text: nothing was imported from it.") from exc


def read_all(paths: Iterable[Path]) -> list[tuple[Path, Parsed]]:
    """Every file read and parsed, before anything is stored: an unreadable one stops it all."""
    return [(p, parse(read_file(p))) for p in paths]


def import_files(
    store: Store, semantic: Semantic | None, parsed: Iterable[tuple[Path, Parsed]]
) -> Imported:
    """Store the bullet memories of each parsed file (:func:`read_all`) as facts of the
    current project."""
    report = Imported()
    scope = "project" if store.project is not None else None
    entries = []
    for path, found in parsed:
        report.files.append(str(path))
        report.skipped.update(found.skipped)
        entries += [(e.category, e.text) for e in found.entries]
    stored = store_many(store, semantic, entries, scope)
    report.added, report.known = stored.added, stored.known
    return report
