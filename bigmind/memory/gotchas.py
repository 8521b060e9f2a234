"""Facts bound to files: a gotcha of ``src/db.py`` shown when that file is touched.

``memory_store_fact(..., files=[…])`` binds a fact of any category to files (:func:`paths`
checks and normalises them as focus announcements are; a repeat of a fact adds its new
files). :func:`for_files` finds the active facts seen from the current project bound to
files that overlap the given ones — equal, or one a path suffix of the other, as focus
conflicts are decided (:func:`bigmind.memory.focus.same_file`): ``./src\\db.py`` and
``/abs/repo/src/db.py`` are one file. memory_announce_focus shows them for its files, and
memory_recall for the file names in its question (:func:`named_in`). Reads only: recall
stays read-only.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from bigmind.memory.focus import file_list, normalise_path, same_file
from bigmind.memory.quoting import quoted
from bigmind.models import Fact, now_ts
from bigmind.storage.db import Tx
from bigmind.storage.fact_files_table import FactFiles, file_name
from bigmind.storage.store import Store

SHOWN = 8  # facts one reply shows at most
CANDIDATES = 200  # rows read per lookup before the path rule filters them
EXCERPT = 200  # characters of a fact's text in the one-line warning
# A token of a question that names a file: a path (a slash) or a name with an extension.
_FILE = re.compile(r"^(?:.*[/\\].*[^/\\]|[\w.-]*\w\.[A-Za-z][A-Za-z0-9]{0,7})$")
_EDGES = "`'\"()[]{}<>,;:!?"


@dataclass(frozen=True, slots=True)
class Bound:
    """A fact bound to ``path`` (as it was bound), shown for the file ``file`` (as asked)."""

    file: str
    path: str
    fact: Fact

    def as_dict(self) -> dict[str, object]:
        return {
            "file": self.file,
            "path": self.path,
            "fact_id": self.fact.id,
            "category": self.fact.category,
            "fact": self.fact.fact,
        }


def paths(files: str | Sequence[str] | None) -> list[str]:
    """The files of a fact: normalised, distinct, bounded, secrets redacted."""
    return file_list(files, "fact")


def bind(store: Store, tx: Tx, fact_id: int, files: Sequence[str]) -> int:
    """Bind checked ``files`` (:func:`paths`) to a fact; how many were new to it."""
    return FactFiles(store.db, store.uid).add(tx, fact_id, files, now_ts()) if files else 0


def of_facts(store: Store, fact_ids: Sequence[int]) -> dict[int, list[str]]:
    """The files bound to each of these facts (those with none are left out)."""
    return FactFiles(store.db, store.uid).of_facts(fact_ids)


def for_files(store: Store, files: Sequence[str], limit: int = SHOWN) -> list[Bound]:
    """The active facts seen from the current project bound to files overlapping ``files``
    (normalised paths): gotchas first, each fact once, at most ``limit``."""
    wanted = [p for p in files if p]
    names = sorted({file_name(p) for p in wanted} - {""})
    rows = FactFiles(store.db, store.uid).named(names, CANDIDATES, store.project_key)
    out: list[Bound] = []
    seen: set[int] = set()
    for path, fact in rows:
        if fact.id in seen:
            continue
        asked = next((f for f in wanted if same_file(f, path)), None)
        if asked is not None:
            seen.add(fact.id)
            out.append(Bound(asked, path, fact))
            if len(out) == limit:
                break
    return out


def named_in(text: str) -> list[str]:
    """The files a question names (``db.py``, ``src/app/main.ts``), normalised, in order."""
    out: list[str] = []
    for token in text.split():
        token = token.strip(_EDGES).rstrip(".")
        if len(token) > 1 and _FILE.match(token):
            p = normalise_path(token)
            if p and p not in out:
                out.append(p)
    return out[:20]


def lines(found: Sequence[Bound]) -> list[str]:
    """The warning lines a reply shows for ``found``: one per fact."""
    out = []
    for b in found:
        text = quoted(b.fact.fact)
        if len(text) > EXCERPT:
            text = text[: EXCERPT - 1] + "…"
        tag = "" if b.fact.category == "gotcha" else f" [{quoted(b.fact.category)}]"
        out.append(f"⚠️ Gotcha for {quoted(b.file)}: #{b.fact.id}{tag} {text}")
    return out
