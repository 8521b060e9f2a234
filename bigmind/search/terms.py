"""Turn what an agent types into a full-text query that never errors and rarely returns nothing.

FTS5's own syntax AND-matches every bare token and treats ``"``, ``*``, ``-``,
``:``, ``NEAR``, ``AND``/``OR``/``NOT`` as operators, so a pasted question
either raises a syntax error or matches nothing. Here every meaningful term is
quoted (so it can only be a term or a phrase) and the terms are OR-ed; BM25
then ranks rows that match more, and rarer, terms first. Stop words are dropped
(unless nothing else is left) and stemming comes from the porter tokenizer.
A trailing ``*`` on a word keeps its meaning: a prefix search.

:class:`TermMatcher` reads back how well a found text shows the query's terms — as written
(or inflected) or only through the stemmer — for recall's coordination and tie-breaks.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass

from bigmind.storage.fulltext import quote_term as quote_term

MAX_TERMS = 32

# Words that carry no topic. FTS operator words are here too, so "A AND B" means A, B.
STOP_WORDS = frozenset(
    """
a about above after again against all also am an and any are aren't as at be because been
before being below between both but by can can't cannot could couldn't did didn't do does
doesn't doing don't down during each either else ever few for from further get got had hadn't
has hasn't have haven't having he her here hers herself him himself his how i if in into is
isn't it it's its itself just let's like me might more most much must mustn't my myself near
need no nor not now of off on once one only or other ought our ours ourselves out over own
please same shall shan't she should shouldn't so some such tell than that that's the their
theirs them themselves then there there's these they this those through to too under until up
upon us use used using very via want was wasn't we were weren't what what's when where which
while who whom why will with won't would wouldn't yes yet you your yours yourself yourselves
remember recall know knew find show say said think thing things anything something ever again
last time
""".split()  # noqa: SIM905 - a word list reads better as text
)

# A term: letters/digits glued by in-word punctuation (pre-commit, config.py, snake_case, v1.2).
_TERM = re.compile(r"[^\W_]+(?:[._/'\-][^\W_]+)*\*?|[^\W_]+(?:_[^\W_]+)+\*?", re.UNICODE)


@dataclass(frozen=True, slots=True)
class FtsQuery:
    """A safe FTS5 MATCH expression and the terms it was built from."""

    expression: str
    terms: tuple[str, ...]


def terms_of(text: str) -> list[str]:
    """Meaningful lower-cased terms of ``text``, in order, without duplicates."""
    raw: list[str] = []
    for m in _TERM.finditer(text):
        tok = m.group(0).lower().strip("'")
        if tok and tok not in raw:
            raw.append(tok)
    kept = [t for t in raw if t.rstrip("*") not in STOP_WORDS]
    return (kept or raw)[:MAX_TERMS]


_SEPARATOR = re.compile(r"[._/'\-]")


def is_phrase(term: str) -> bool:
    """Whether the full-text index splits ``term`` into several words (config.py, snake_case)."""
    return bool(_SEPARATOR.search(term.rstrip("*")))


def build_fts_query(text: str) -> FtsQuery | None:
    """Build an OR query of quoted terms, or None when the text has no searchable term. A
    derived word also looks for its base (:func:`base_prefix`: "deployment" → ``deplo*``)."""
    terms = terms_of(text)
    if not terms:
        return None
    more = [b for t in terms if (b := base_prefix(t)) and b not in terms]
    terms += list(dict.fromkeys(more))
    return FtsQuery(" OR ".join(quote_term(t) for t in terms), tuple(terms))


# Derivational suffixes the porter stemmer does not undo the same way on both sides: it makes
# "deploy" of "deployment" but "deploi" of "deploy" and "deployed".
_DERIVED = ("ations", "ation", "itions", "ition", "ments", "ment", "nesses", "ness", "ities", "ity")


def base_prefix(term: str) -> str | None:
    """A prefix query for the base of a derived word, short of the letter a stemmer may change
    ("deployment" → ``deplo*``, matching deploy, deployed, deploying), or None."""
    word = term.rstrip("*")
    if term.endswith("*") or is_phrase(word):
        return None
    for suffix in _DERIVED:
        if word.endswith(suffix) and len(word) - len(suffix) >= 5:
            return word[: len(word) - len(suffix) - 1] + "*"
    return None


_WORDS = re.compile(r"\S+")


def stem_prefix(term: str) -> str:
    """The part of a query term its other word forms share (a crude stem, ≥ 4 characters)."""
    word = term.rstrip("*").lower()
    return word[: max(4, len(word) - 3)]


# A query term found in a text only through its stem ("production" → "Product search…": the
# porter and 'english' stemmers both make "product" of it) counts this much of a term found as
# written or inflected ("deployed", "deploys" for "deploy").
STEM_ONLY = 0.5
_SUFFIXES = (("ies", "y"), ("ied", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", ""))


@functools.lru_cache(maxsize=4096)
def inflections(word: str) -> frozenset[str]:
    """``word`` and the bases it may be an inflection of (plural, past, -ing: "caching" →
    cach, cache; "preferred" → prefer), never a derivation ("production" stays itself)."""
    w = word.lower().removesuffix("'s")
    out = {w}
    for suffix, repl in _SUFFIXES:
        if w.endswith(suffix) and len(w) - len(suffix) >= 2:
            base = w[: -len(suffix)] + repl
            out.add(base)
            if base[-1] == base[-2] and base[-1] not in "aeiou":  # running → run
                out.add(base[:-1])
            if suffix in ("ing", "ed"):  # caching → cache
                out.add(base + "e")
    return frozenset(out)


class TermMatcher:
    """How well a text shows a query's terms, read off the text (no SQL): a term counts 1 when
    a word of the text is the term as written or inflected, :data:`STEM_ONLY` when a word only
    starts with its stem (what the full-text stemmer matched, near enough), 0 when absent.

    One regex scan per text; what each distinct word shows is worked out once per query."""

    def __init__(self, terms: Sequence[str]) -> None:
        self.terms = [t for t in dict.fromkeys(terms) if t.rstrip("*")]
        self._stems = [stem_prefix(t) for t in self.terms]
        # A derived word's base counts as its stem ("deploy" for "deployment").
        self._bases = [(base_prefix(t) or "").rstrip("*") or None for t in self.terms]
        prefixes = set(self._stems) | {b for b in self._bases if b}
        alternatives = "|".join(map(re.escape, sorted(prefixes, key=len, reverse=True)))
        self._words = re.compile(r"(?<!\w)(?:" + alternatives + r")\w*(?:[._/'\-]\w+)*")
        self._seen: dict[str, tuple[int, int]] = {}  # word → (terms by stem, terms as written)

    def credit(self, text: str) -> tuple[float, int]:
        """(the share of the query's terms the text shows, 0…1; how many as written)."""
        if not self.terms:
            return 0.0, 0
        each = self.credits(text)
        return sum(each) / len(self.terms), sum(1 for c in each if c == 1.0)

    def credits(self, text: str) -> list[float]:
        """Per query term: 1 as written (or inflected), :data:`STEM_ONLY` by its stem, else 0."""
        stem = exact = 0
        for word in set(self._words.findall(text.lower())):
            masks = self._seen.get(word) or self._masks(word)
            stem |= masks[0]
            exact |= masks[1]
        return [
            1.0 if exact >> i & 1 else STEM_ONLY if stem >> i & 1 else 0.0
            for i in range(len(self.terms))
        ]

    def _masks(self, word: str) -> tuple[int, int]:
        forms = inflections(word)
        stem = exact = 0
        for i, (term, prefix) in enumerate(zip(self.terms, self._stems, strict=True)):
            base = self._bases[i]
            if not word.startswith(prefix) and not (base and word.startswith(base)):
                continue
            stem |= 1 << i
            written = (
                word.startswith(term[:-1]) if term.endswith("*") else forms & inflections(term)
            )
            if written:
                exact |= 1 << i
        self._seen[word] = (stem, exact)
        return stem, exact


EXCERPT_WINDOW = 2_000  # characters each side of the first match that are split into words


@functools.lru_cache(maxsize=256)
def _excerpt_patterns(stems: tuple[str, ...]) -> tuple[re.Pattern[str], re.Pattern[str]]:
    """(a word that starts with a stem, a stem at any word start) — compiled once per query."""
    alternatives = "|".join(map(re.escape, stems))
    return (
        re.compile(r"[\"'(`\[{<*]*(?:" + alternatives + ")", re.I),
        re.compile(r"(?<!\w)(?:" + alternatives + ")", re.I),
    )


def excerpt(text: str, terms: tuple[str, ...] | list[str], width: int = 40) -> str:
    """About ``width`` words of ``text`` around the first query term, terms in **bold**.

    Computed here rather than with FTS5's snippet(), which costs as much per row as ranking.
    """
    # Phrase terms (pre-commit, config.py) are matched on their first part.
    stems = {re.split(r"[._/'\-]", stem_prefix(t))[0] for t in terms if t.rstrip("*")}
    stems.discard("")
    pattern, anywhere = _excerpt_patterns(tuple(sorted(stems))) if stems else (None, None)
    # Long texts: split into words only a window around the first match (C-speed search).
    first_hit = anywhere.search(text) if anywhere else None
    pos = first_hit.start() if first_hit else 0
    lo = max(0, pos - EXCERPT_WINDOW)
    hi = pos + EXCERPT_WINDOW
    words = _WORDS.findall(text[lo:hi])
    marks = [bool(pattern and pattern.match(w)) for w in words]
    first = marks.index(True) if True in marks else 0
    start = max(0, min(first - width // 4, len(words) - width))
    end = start + width
    out = " ".join(
        f"**{w}**" if m else w for w, m in zip(words[start:end], marks[start:end], strict=True)
    )
    if start > 0 or lo > 0:
        out = "…" + out
    if end < len(words) or hi < len(text):
        out += "…"
    return out
