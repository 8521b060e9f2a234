"""What two close facts claim: the same thing, contradicting things, or one updating the other.

The embedding says two facts are about the same thing; it barely separates "we deploy on
Fridays" from "we never deploy on Fridays" (cosine 0.91), Python 3.11 from 3.12 (0.94), or
two unrelated fixes of one tool (0.76). These rules read the words the embedding blurs, and
stay general (no topic lists):

- **what a text is** — references (#123, gh-123, issue 123) name the record a memory comes
  from and a leading release label ("9.1.0 change:") where it came from; neither is a value.
  Two records of different changes are never one fact nor a contradiction, two notes of
  different releases never a contradiction: only their words make one an update;
- **polarity** — negations (not, never, no, n't, without, forbidden…) counted outside
  contrast phrases ("X, not Y", "X rather than Y" name an alternative, they do not negate);
  an odd number of flips, antonyms included (enabled/disabled, sync/async, public/private…),
  contradicts only when the texts differ by little else (:data:`POLARITY_SLACK`), so "must run
  serially" and "cannot run in parallel" agree and a reworded rule with a "never" is no rival;
- **values** — a number belongs to the word before it ("certifi 2023.5.7", "Python 3.9"); a
  new value of the same thing is an update when the newer says so or restates the statement
  in a later release, else a contradiction;
- **updates** — an explicit replacement of what the older is about ("instead of X", "replaced
  X with Y", "switched from X to Y", "renamed X to Y"), a later stage of life (added →
  deprecated → removed), a revert of the older's record, "no longer X";
- **rejection** — a contrast phrase rejects something the other fact asserts ("uses
  RabbitMQ, not Kafka" against "uses Kafka");
- **one changed term** — the same sentence with one short span swapped after a shared start
  (the subject): "the project indents with tabs / spaces" is a contradiction below
  :data:`SLOT_SAME_AT`; above it the swap may be a synonym or another value, and the two are
  left alone (never merged); a swap at the start is another subject.

:func:`judge` combines these with the cosine similarity into one :class:`Verdict`;
``bigmind.memory.dedup`` acts on it (docs/contradictions.md). It was developed on real
changelog pairs (bench/data/curation-dev, bench/curation.py); ``tests/memory/test_fact_pairs.py``
holds it to written pairs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

DUPLICATE_AT = 0.85  # cosine at or above which two facts with the same claims are one fact…
DUPLICATE_WORDS = 0.6  # …when they also share this share of the shorter one's content words…
IDENTICAL_AT = 0.95  # …or are this close
RESTATED = 0.8  # share of words two records share to be one statement with a new value
CONFLICT_AT = 0.75  # cosine at or above which a contradiction cue makes two facts rivals
REPLACES_AT = 0.60  # an update of one named value ("PostgreSQL 15" → "16") counts from here
EXPLICIT_AT = 0.45  # an explicit "X was replaced by Y" naming the older's X counts from here
POLARITY_SLACK = 2  # other words two texts may differ by for a negation to contradict
SLOT_SAME_AT = 0.92  # one swapped span: a contradiction below, left alone at or above
SLOT_MAX = 3  # words in a swapped span

DUPLICATE = "duplicate"
CONFLICT = "conflict"
SUPERSEDES = "supersedes"

_TOKEN = re.compile(r"[a-z0-9]+(?:[._/'\-][a-z0-9]+)*")
_NEGATORS = frozenset(
    """not no never none nothing nobody neither nor cannot without forbidden forbids forbid
prohibited disallowed avoid""".split()  # noqa: SIM905 - a word list reads better as text
)
_CARDINALS = "zero one two three four five six seven eight nine ten eleven twelve"
_ORDINALS = "first - third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth"
# Number words read as digits ("second" is left out: it is also a unit).
_NUMBER_WORDS = {w: str(i) for i, w in enumerate(_CARDINALS.split())} | {
    w: str(i) for i, w in enumerate(_ORDINALS.split(), start=1) if w != "-"
}
_STOP = frozenset(
    """a an the this that these those it its it's is are was were be been being am has have
had do does did doing will would shall should can could may might must to of in on at by
for with from into onto as and or but so then than also just only very our ours we us you
your they their them he she his her i me my there here which who whom what when where while
now all any each every some such per via e.g i.e etc because since due""".split()  # noqa: SIM905 - a word list reads better as text
)
_ANTONYMS = {
    frozenset(p.split("/"))
    for p in """enabled/disabled enable/disable on/off true/false sync/async
synchronous/asynchronous synchronously/asynchronously parallel/serial parallel/serially
parallel/sequential parallel/sequentially concurrent/sequential public/private
internal/external mutable/immutable required/optional mandatory/optional manual/automatic
manually/automatically included/excluded include/exclude accepted/rejected accept/reject
allowed/denied allow/deny allowlist/denylist whitelist/blacklist before/after
uppercase/lowercase upper/lower increase/decrease increased/decreased minimum/maximum
min/max open/closed local/remote online/offline success/failure succeeded/failed
strict/lenient ascending/descending""".split()  # noqa: SIM905 - a word list reads better as text
}
_ANTONYM_OF: dict[str, set[str]] = {}
for _pair in _ANTONYMS:
    _a, _b = sorted(_pair)
    _ANTONYM_OF.setdefault(_a, set()).add(_b)
    _ANTONYM_OF.setdefault(_b, set()).add(_a)

_SPAN = r"((?:[^,.;:()]|[.:](?=[^\s,;()]))+?)"  # a dot or colon inside a name (a.b, a::b) stays
_END = r"(?=[,.;:()]|$| and | but | for | because | since | so )"
# Phrases that name an alternative the fact rejects: (pattern, replacement?)
_REJECTS: tuple[tuple[re.Pattern[str], bool], ...] = (
    (re.compile(rf"\binstead of {_SPAN}{_END}"), True),
    (re.compile(rf"\brather than {_SPAN}{_END}"), False),
    (re.compile(rf",\s*(?:and\s+)?not {_SPAN}{_END}"), False),
    (
        re.compile(
            r"\b(?:switch|switched|switching|move|moved|moving|migrate|migrated|migrating|"
            r"change|changed|went|go|upgrade|upgraded|downgrade|downgraded|convert|converted|"
            rf"port|ported|transition|transitioned)\b[^.;]*?\bfrom {_SPAN} (?:to|onto|in favou?r of)\b"
        ),
        True,
    ),
    (re.compile(rf"\breplace[sd]? {_SPAN} (?:with|by)\b"), True),
    (re.compile(rf"\brenamed? {_SPAN} (?:to|as|into)\b"), True),
    (
        re.compile(
            rf"(?:^|[,.;:] ?){_SPAN} (?:is |are |was |were |has been |have been |got )?"
            r"renamed (?:to|as|into)\b"
        ),
        True,
    ),
    (
        re.compile(
            rf"(?:^|[,.;:] ?){_SPAN} (?:is |are |was |were |has been |have been |got |gets |"
            r"is being |are being )?(?:replaced|superseded|succeeded) (?:by|with)\b"
        ),
        True,
    ),
)
# "X … in favour of Y" rejects what precedes.
_IN_FAVOUR = re.compile(rf"(?:^|[,.;:] ?){_SPAN} (?:\w+ )?in favou?r of\b")
_NO_LONGER = re.compile(r"\bno longer\b|\bnot [^.;]*\b(?:anymore|any more|any longer)\b")
# What "no longer …" says has stopped: the words after it, up to the end of the clause.
_NO_LONGER_WHAT = re.compile(
    rf"\bno longer {_SPAN}{_END}|\bnot ([^.;]*?) (?:anymore|any more|any longer)\b"
)
# A reference to a record, not a value: #123, gh-123, PR 123, issue 123, (ABC-123).
_REF = re.compile(r"(?:#|\bgh-|\b(?:pr|issue|bug|ticket|pull request)s? ?#?)(\d+)\b")
# "Revert(ed) … #123": the change it undoes.
_REVERTS = re.compile(r"\brevert\w*\b[^.;]*?#(\d+)\b")
# Where a thing is in its life: added (0), deprecated (1), removed (2). A newer text at a later
# stage of the same subject is an update ("Deprecate --egg" → "Removed the deprecated --egg").
_STAGES = {
    **dict.fromkeys(
        "add added adds adding introduce introduced introduces upgrade upgraded upgrades".split(),  # noqa: SIM905
        0,
    ),
    **dict.fromkeys(
        ["deprecate", "deprecated", "deprecates", "deprecating", "deprecation", "deprecations"],
        1,
    ),
    **dict.fromkeys(
        """remove removed removes removing removal drop dropped drops dropping disallow
disallowed disallows delete deleted deletes""".split(),  # noqa: SIM905
        2,
    ),
}
# A leading release label ("9.1.0 change:", "v2.3 bug fix:"): where the memory came from.
_LABEL = re.compile(r"^\s*v?\d+(?:\.\w+)*\s+[a-z][a-z /-]{0,24}:\s")
# Words that sit between a thing and its number without naming the thing ("Python version 3").
_SLOT_SKIP = frozenset(
    "version versions v release releases to from at least most of".split()  # noqa: SIM905
)
_UPDATED = re.compile(
    r"\b(?:upgrade[ds]?|update[ds]?|bump(?:ed|s)?|downgrade[ds]?|raise[ds]?|lower(?:ed|s)?|"
    r"increase[ds]?|decrease[ds]?|reduced|moved|changed|switched|migrated|renamed|now)\b"
)


def _stem(word: str) -> str:
    """A crude stem, only for comparing two texts' words (tests/testing/tested → test)."""
    word = word.removesuffix("'s")
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _number(word: str) -> str | None:
    """The number a word states (``v1.27`` → 1.27, ``10mb`` → 10, ``two`` → 2), or None."""
    if word in _NUMBER_WORDS:
        return _NUMBER_WORDS[word]
    m = re.match(r"v?(\d+(?:\.\d+)*)(?:[a-z%]{0,3})$", word)
    if m is None:
        return None
    return ".".join(part.lstrip("0") or "0" for part in m.group(1).split("."))


@dataclass(frozen=True, slots=True)
class Claims:
    """What one fact's text says, in the terms the rules compare."""

    words: tuple[str, ...]  # content words, stemmed, in order (numbers excluded)
    raw: frozenset[str]  # every word as written (lower case), for opposites
    numbers: frozenset[str]  # values stated (references and a leading release label excluded)
    slots: frozenset[tuple[str, str]]  # (the word a number belongs to, the number)
    refs: frozenset[str]  # the records it cites (#123, gh-123): which change it is about
    reverts: frozenset[str]  # the records it says it reverts
    label: str | None  # its leading release label ("9.1.0 change"), if any
    negations: int  # outside contrast phrases
    rejected: frozenset[str]  # stems of what contrast or replacement phrases reject
    replaces: bool  # a replacement phrase names what it replaces
    no_longer: bool  # "no longer", "not … anymore", "stopped", "used to"
    stopped: frozenset[str]  # stems of what "no longer …" says has stopped
    stage: int | None  # the latest life stage it names (:data:`_STAGES`), if any
    updated: bool  # an update verb (upgraded, bumped, moved…)

    @property
    def asserted(self) -> frozenset[str]:
        """The words the text asserts (compounds also by their parts: server-side → server)."""
        parts = {p for w in self.words for p in re.split(r"[-/_.]", w) if len(p) > 1}
        return (frozenset(self.words) | parts) - self.rejected


@lru_cache(maxsize=4096)
def claims_of(text: str) -> Claims:
    low = " ".join(text.lower().replace("’", "'").replace("n't", " not").split())
    low = low.replace("cannot", "can not")
    label = _LABEL.match(low)
    body_from = label.end() if label else 0
    refs = frozenset(m.group(1) for m in _REF.finditer(low))
    ref_spans = [m.span(1) for m in _REF.finditer(low)]
    rejected: set[str] = set()
    replaces = False
    contrast_spans: list[tuple[int, int]] = []
    for pattern, is_replacement in _REJECTS:
        for m in pattern.finditer(low):
            rejected |= _content_stems(m.group(1))
            contrast_spans.append(m.span())
            replaces = replaces or is_replacement
    for m in _IN_FAVOUR.finditer(low):
        rejected |= _content_stems(m.group(1))
        replaces = True
    no_longer = bool(_NO_LONGER.search(low))
    stopped: set[str] = set()
    for m in _NO_LONGER_WHAT.finditer(low):
        stopped |= _content_stems(m.group(1) or m.group(2) or "")
    negations = 0
    words: list[str] = []
    numbers: set[str] = set()
    slots: set[tuple[str, str]] = set()
    last_word = ""  # the content word a following number belongs to
    for m in _TOKEN.finditer(low):
        tok = m.group(0)
        if m.start() < body_from or any(a <= m.start() < b for a, b in ref_spans):
            continue
        inside = any(a <= m.start() < b for a, b in contrast_spans)
        if tok in _NEGATORS:
            if not inside:
                negations += 1
            continue
        num = _number(tok)
        if num is not None:
            numbers.add(num)
            if last_word:
                slots.add((last_word, num))
            continue
        if tok not in _STOP:
            words.append(_stem(tok))
        if tok not in _STOP and tok not in _SLOT_SKIP:
            last_word = _stem(tok)
    return Claims(
        tuple(words),
        frozenset(_TOKEN.findall(low)),
        frozenset(numbers),
        frozenset(slots),
        refs,
        frozenset(m.group(1) for m in _REVERTS.finditer(low)),
        label.group(0).strip(" :") if label else None,
        negations,
        frozenset(rejected),
        replaces,
        no_longer,
        frozenset(stopped),
        max((_STAGES[w] for w in _TOKEN.findall(low[body_from:]) if w in _STAGES), default=None),
        bool(_UPDATED.search(low)),
    )


def _content_stems(span: str) -> set[str]:
    return {
        _stem(t)
        for t in _TOKEN.findall(span)
        if t not in _STOP and t not in _NEGATORS and _number(t) is None
    } | {n for t in _TOKEN.findall(span) if (n := _number(t)) is not None and t not in _STOP}


def _opposites(word: str) -> set[str]:
    """Words that say the opposite of ``word``: its antonyms, and the un-/non- forms."""
    out = set(_ANTONYM_OF.get(word, ()))
    for prefix in ("un", "non-", "non"):
        if word.startswith(prefix) and len(word) > len(prefix) + 3:
            out.add(word[len(prefix) :])
        else:
            out.add(prefix + word)
    return out


def _antonym_flips(a: Claims, b: Claims) -> int:
    """Opposite words split between the texts (one says enabled, the other disabled)."""
    wa, wb = a.raw, b.raw
    return sum(1 for w in wa - wb if any(o in wb and o not in wa for o in _opposites(w)))


@dataclass(frozen=True, slots=True)
class Swap:
    """The one short span two otherwise identical word sequences swap."""

    old: tuple[str, ...]
    new: tuple[str, ...]
    at_start: bool  # the subjects differ


def swapped_span(a: Claims, b: Claims) -> Swap | None:
    """The one short span swapped between two otherwise identical word sequences; None if the
    texts differ otherwise."""
    x, y = a.words, b.words
    pre = 0
    while pre < min(len(x), len(y)) and x[pre] == y[pre]:
        pre += 1
    suf = 0
    while suf < min(len(x), len(y)) - pre and x[-1 - suf] == y[-1 - suf]:
        suf += 1
    mx, my = x[pre : len(x) - suf], y[pre : len(y) - suf]
    if not mx or not my or len(mx) > SLOT_MAX or len(my) > SLOT_MAX:
        return None
    if set(mx) & set(my):
        return None  # a reordering, not a swap
    return Swap(mx, my, pre == 0)


@dataclass(frozen=True, slots=True)
class Verdict:
    """How a newer fact relates to an older one: duplicate, conflict, supersedes or None."""

    kind: str | None
    why: str


NONE = Verdict(None, "")


def judge(older: str, newer: str, similarity: float) -> Verdict:
    """How the fact ``newer`` (stored after ``older``) relates to ``older``, given the cosine
    similarity of their embeddings."""
    a, b = claims_of(older), claims_of(newer)
    # The newer says it reverts the change the older records (whatever their similarity).
    if b.reverts & a.refs and not b.reverts & a.reverts:
        return Verdict(SUPERSEDES, "reverts #" + ", #".join(sorted(b.reverts & a.refs)))
    if similarity < EXPLICIT_AT:
        return NONE
    # The newer fact names what it replaces, and that is what the older one says.
    if b.replaces and _names_older(b, a) and not a.rejected >= b.rejected:
        return Verdict(SUPERSEDES, "replaces " + ", ".join(sorted(b.rejected & a.asserted)))
    if similarity < REPLACES_AT:
        return NONE
    # Each cites its own record (#123, #456) or comes from its own release: two changes,
    # however alike their words — never
    # one fact twice, nor one value said two ways; only its words can make one an update.
    records = bool(a.refs and b.refs and not a.refs & b.refs)
    releases = bool(a.label and b.label and a.label.split()[0] != b.label.split()[0])
    changed = _changed_slots(a, b)
    if not changed and not records and a.numbers != b.numbers and _same_things(a, b):
        changed = _numbers(a, b)  # values not tied to one word ("Node.js version … 18" / "20")
    # One named value changed and the newer says it is an update ("upgraded … to 16"), or is a
    # later record of the same statement with the new value ("Drop support for Python 3.8"
    # → "… 3.9").
    restated = (records or releases) and a.stage == b.stage and _overlap(a, b) >= RESTATED
    if changed and (b.updated or restated):
        return Verdict(SUPERSEDES, "updated: " + changed)
    # The same subject at a later stage of its life (deprecated → removed).
    if a.stage is not None and b.stage is not None and b.stage > a.stage and _overlap(a, b) >= 0.5:
        names = {0: "added", 1: "deprecated", 2: "removed"}
        return Verdict(SUPERSEDES, f"{names[a.stage]} → {names[b.stage]}")
    swap = swapped_span(a, b)
    opposites = _antonym_flips(a, b)
    # One word swapped after the same subject, nothing else changed: two values of one slot,
    # however unrelated the embedding finds the words (Kafka / RabbitMQ: 0.66).
    one_word = swap is not None and not swap.at_start and len(swap.old) == len(swap.new) == 1
    if similarity < CONFLICT_AT:
        if one_word and not opposites and a.numbers == b.numbers and not records:
            assert swap is not None
            return Verdict(SUPERSEDES if _says_now(b, a) else CONFLICT, _swap_why(swap))
        return NONE
    # "no longer X" where the older says X.
    if b.no_longer and not a.no_longer and _stops(b, a):
        return Verdict(SUPERSEDES, "no longer")
    if records:
        return NONE
    if releases:  # notes of two releases: one only replaces the other in so many words
        return _duplicate(a, b, similarity)
    rejects = (a.rejected & b.asserted) | (b.rejected & a.asserted)
    if rejects:
        return Verdict(CONFLICT, "rejects " + ", ".join(sorted(rejects)))
    negation = (a.negations - b.negations) % 2
    if (negation + opposites) % 2 and _only_polarity(a, b):
        return Verdict(CONFLICT, "negation" if negation else "opposites")
    if changed:
        return Verdict(CONFLICT, "numbers differ: " + changed)
    if swap is not None and not opposites and not _same_word(swap):
        # The same sentence with one span swapped. Another subject (a swap at the start) is
        # another fact; the same subject with another value is a contradiction, or an update
        # when the newer says so. Very close, a swap after the subject may be a synonym (stay /
        # stored) or another value (Tuesday / Thursday): no rule tells which, so both stay,
        # unlinked — never merged.
        if not swap.at_start:
            if similarity >= SLOT_SAME_AT:
                return NONE
            return Verdict(SUPERSEDES if _says_now(b, a) else CONFLICT, _swap_why(swap))
        if similarity < SLOT_SAME_AT:
            return NONE
    return _duplicate(a, b, similarity)


def _duplicate(a: Claims, b: Claims, similarity: float) -> Verdict:
    """One fact twice: very close in meaning, and (below near-identical) in words too — two
    short notes of one project are often this close in meaning alone — with the same polarity,
    the same values and the same stage of life."""
    if similarity < DUPLICATE_AT or a.stage != b.stage:
        return NONE
    if ((a.negations - b.negations) % 2 + _antonym_flips(a, b)) % 2:
        return NONE
    if a.numbers and b.numbers and a.numbers != b.numbers:
        return NONE
    if similarity >= IDENTICAL_AT or _overlap(a, b) >= DUPLICATE_WORDS:
        return Verdict(DUPLICATE, "same claim")
    return NONE


def _changed_slots(a: Claims, b: Claims) -> str:
    """The named values the two texts give differently ("postgresql 15 → 16"), '' if none."""
    va: dict[str, set[str]] = {}
    vb: dict[str, set[str]] = {}
    for word, num in a.slots:
        va.setdefault(word, set()).add(num)
    for word, num in b.slots:
        vb.setdefault(word, set()).add(num)
    out = [
        f"{w} {', '.join(sorted(va[w]))} → {', '.join(sorted(vb[w]))}"
        for w in sorted(va.keys() & vb.keys())
        if va[w] != vb[w]
    ]
    return "; ".join(out)


def _names_older(b: Claims, a: Claims) -> bool:
    """Whether what ``b`` rejects ("instead of X", "replaced X with…") is what ``a`` is about:
    most of the rejected words are in ``a``, and they are a good part of ``a``'s words (not one
    word ``a`` mentions in passing)."""
    words = set(a.words)
    hits = b.rejected & a.asserted
    return bool(hits) and 2 * len(hits) >= len(b.rejected) and 4 * len(hits & words) >= len(words)


def _same_things(a: Claims, b: Claims) -> bool:
    """Whether both texts state numbers, and the words each attaches them to appear in the
    other ("The Node.js version in production is 18" / "Production runs Node.js 20"): their
    numbers are values of the same things."""
    if not (a.numbers and b.numbers):
        return False
    wa, wb = set(a.words), set(b.words)
    return all(w in wb for w, _ in a.slots) and all(w in wa for w, _ in b.slots)


def _overlap(a: Claims, b: Claims) -> float:
    """The share of the shorter text's content words the other has (life-stage words aside)."""
    x = {w for w in a.asserted | a.rejected if w not in _STAGES}
    y = {w for w in b.asserted | b.rejected if w not in _STAGES}
    return len(x & y) / max(1, min(len(x), len(y)))


def _stops(b: Claims, a: Claims) -> bool:
    """Whether what ``b`` says has stopped is what ``a`` asserts (most of its words)."""
    if not b.stopped:
        return False
    return len(b.stopped & a.asserted) * 2 >= len(b.stopped)


def _says_now(b: Claims, a: Claims) -> bool:
    """Whether the newer text words itself as a change ("… is main now", "switched to …")."""
    return b.updated and not a.updated


def _only_polarity(a: Claims, b: Claims) -> bool:
    """Whether the texts differ by little but their polarity: at most :data:`POLARITY_SLACK`
    content words besides opposite pairs ("runs automatically on / manually before deploy").
    A negation in a reworded rule ("keep secrets out of the repo" / "never commit secrets")
    says the same thing another way."""
    x = set(a.raw) - _STOP - _NEGATORS
    y = set(b.raw) - _STOP - _NEGATORS
    differ = x ^ y
    for w in x - y:
        flipped = {o for o in _opposites(w) if o in y}
        if flipped:
            differ -= flipped | {w}
    return len(differ) <= POLARITY_SLACK


def _same_word(swap: Swap) -> bool:
    """Whether the swapped spans name one thing: one an abbreviation or a shortening of the
    other (Postgres / PostgreSQL, k8s-style initials)."""
    old, new = " ".join(swap.old), " ".join(swap.new)
    short, long = sorted((old.replace(" ", ""), new.replace(" ", "")), key=len)
    if len(short) >= 4 and long.startswith(short):
        return True
    initials = "".join(w[0] for w in (swap.old if len(old) > len(new) else swap.new))
    return len(initials) > 1 and short == initials


def _swap_why(swap: Swap) -> str:
    return f"{' '.join(swap.old)} → {' '.join(swap.new)}"


def _numbers(a: Claims, b: Claims) -> str:
    return f"{', '.join(sorted(a.numbers))} → {', '.join(sorted(b.numbers))}"


def same_claims(a: str, b: str) -> bool:
    """Whether two texts agree on polarity, numbers and what they reject or replace (the
    similarity aside): the condition for two close facts to be one."""
    return judge(a, b, 1.0).kind == DUPLICATE
