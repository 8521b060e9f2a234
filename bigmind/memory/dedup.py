"""Write hygiene for facts: one fact per claim, and contradictions linked, whenever they are found.

Every fact is checked once against its nearest active facts (:func:`candidates`); the
relation of each pair comes from :func:`bigmind.memory.claims.judge` (the embedding's cosine
similarity read together with the words it blurs: negations, numbers, replacements):

- **duplicate** — the same claim in other words: the two are merged, keeping the newer
  wording unless the older says strictly more (:func:`_keeper`); the merged-away fact stays,
  deprecated ("merged into #N"), restorable in one call.
- **supersedes** — the newer fact says it replaces the older ("we upgraded it to PostgreSQL
  16", "instead of Jenkins", "no longer"): linked, never hidden — a guess from the words. The
  older is marked "updated by #N" wherever it is shown and comes after the newer; the packet
  shows the newer alone (:mod:`bigmind.memory.rivals`). The agent retires it for good with
  one call (or says so at once: ``memory_store_fact(replaces=…)``).
- **conflict** — the two contradict each other and neither says it is the newer truth: both
  stay, linked; wherever one is shown its rival is shown with it (:mod:`bigmind.memory.rivals`).

A fact is stored with ``checked_at`` NULL (an exact repeat is found by the store itself) and
checked by :func:`check_pending`, which the background embedder runs after each batch it
embeds (``Runtime`` hooks it in): moments after the write in a server whose model is ready,
later for facts written before it was (the first second of a process, a process that never
loads the model, the CLI, an import). Embedding the fact is most of what the check costs, so
the write answers without it. The outcomes are reported in the user's next replies and in
memory_diff_sessions. A merge keeps the newer
wording (unless the older says more), and the provenance and usage of both: uses added up, the higher importance and
confidence, the merged-away fact kept as deprecated ("merged into #N") with its session.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from bigmind.memory.claims import CONFLICT, DUPLICATE, SUPERSEDES, Verdict, claims_of, judge
from bigmind.memory.rivals import quote, replace_call, settle_call
from bigmind.models import Fact, content_hash, now_ts
from bigmind.search.semantic import Semantic
from bigmind.search.vectors import Pending, fact_embedding_text
from bigmind.storage.db import Tx
from bigmind.storage.store import Store

NEIGHBOURS = 5  # nearest active facts each fact is checked against
NEAREST = 20  # vectors looked at to find them (deprecated facts keep theirs)
CHECK_BATCH = 32  # unchecked facts per background pass (the next pass takes the rest)
# A stored fact's reply lists its active neighbours at or above this similarity, for the agent
# to judge (replace, correct or keep both). The neighbourhood the background check reads
# (claims.REPLACES_AT, 0.60): below it no relation is ever found; real updates reworded in
# natural words score 0.45-0.75 (issue 28), so a list that starts any higher misses them.
# Listed as close to a new fact from this cosine: 80 % of the real updates of curation-dev are
# this close (0.60: 92 %, but a list on 74 % of codemem-dev's stores; 0.70: 43 %).
CLOSE_AT = 0.70
CLOSE = 3  # neighbours listed at most


@dataclass(frozen=True, slots=True)
class Outcome:
    """What the check did about one pair: ``kind`` is merged, supersedes or conflict, read
    "``fact`` <kind> ``other``" (merged: ``other`` was merged into ``fact``)."""

    kind: str
    fact: Fact
    other: Fact
    similarity: float
    why: str

    def describe(self) -> str:
        a, b, sim = self.fact, self.other, f"similarity {self.similarity:.2f}"
        if self.kind == "merged":
            return (
                f"🔀 Merged duplicate fact #{b.id} into #{a.id} (the same claim in other words, "
                f"{sim}; uses and provenance kept): {quote(a.fact)} — #{b.id} read "
                f"{quote(b.fact)} and is deprecated (if wrong: {replace_call(a.id, [])} restores"
                " it)."
            )
        if self.kind == SUPERSEDES:
            return (
                f"↪️ Fact #{a.id} looks like an update of #{b.id} ({self.why}): {quote(a.fact)} —"
                f" #{b.id} {quote(b.fact)} is kept, marked and shown after it. Retire it:"
                f" {replace_call(a.id, [b.id])}; not an update: {replace_call(a.id, [])}."
            )
        older, newer = sorted((a, b), key=lambda f: f.id)
        return (
            f"⚠️ Fact #{newer.id} {quote(newer.fact)} conflicts with #{older.id} "
            f"{quote(older.fact)} ({self.why}, {sim}). Settle it: "
            f"{settle_call(older.id, newer.id)}."
        )


@dataclass(frozen=True, slots=True)
class Near:
    """A fact near the one being checked, and how the two relate."""

    fact: Fact
    similarity: float
    verdict: Verdict


def candidates(
    store: Store,
    semantic: Semantic,
    vector: Any,
    exclude: int | None = None,
    project: str | Literal[False] | None = False,
    at_least: float = 0.0,
) -> list[tuple[Fact, float]]:
    """The facts a fact is checked against: the user's active facts nearest in meaning that
    are seen from its project (``project``; by default the current one), most similar first;
    none below ``at_least`` (and then no statement when none is that close).
    (The one place that says which facts may be duplicates or rivals.)"""
    found = semantic.vectors.knn("fact", store.uid, vector, NEAREST)
    sims = {
        int(n.item_id): n.similarity
        for n in found
        if int(n.item_id) != exclude and n.similarity >= at_least
    }
    if not sims:
        return []
    ranked = sorted(sims, key=lambda i: -sims[i])
    where = store.project_key if project is False else project
    return [(f, sims[f.id]) for f in store.facts.by_ids(ranked, where)][:NEIGHBOURS]


def close_to(store: Store, semantic: Semantic, fact: Fact, vector: Any) -> list[tuple[Fact, float]]:
    """The active facts close in meaning to ``fact`` (its ``vector``) seen from its project:
    at most :data:`CLOSE`, at or above :data:`CLOSE_AT`, most similar first."""
    near = candidates(store, semantic, vector, fact.id, fact.project, CLOSE_AT)
    return [(f, sim) for f, sim in near if sim >= CLOSE_AT][:CLOSE]


def keep_vector(
    store: Store, semantic: Semantic, fact_id: int, category: str, text: str, vec: Any
) -> None:
    """Write the vector just computed for a fact's text, so the background embedder need not
    embed it again (when the model is ready)."""
    if semantic.ready:
        body = fact_embedding_text(category, text)
        item = Pending("fact", str(fact_id), store.uid, body, content_hash(body))
        semantic.vectors.write([item], vec.reshape(1, -1), semantic.status().model or "")


# -- many at once (imports, CLI) ---------------------------------------------------------------
@dataclass(slots=True)
class Batch:
    """Facts stored by :func:`store_many`: ``added`` new ids; ``known`` the facts that already
    said the same thing (word for word, or in other words once the model checked them)."""

    added: list[int] = field(default_factory=list)
    known: list[int] = field(default_factory=list)
    outcomes: list[Outcome] = field(default_factory=list)


def store_many(
    store: Store,
    semantic: Semantic | None,
    facts: Iterable[tuple[str, str]],
    scope: str | None = None,
) -> Batch:
    """Store (category, text) facts, then, when the model is loaded here (``semantic``
    ready), check every unchecked fact now instead of leaving it to a server: a new fact
    merged into one memory already held counts as known."""
    out = Batch()
    for category, text in facts:
        fact, created, _ = store.store_fact(category, text, scope=scope)
        (out.added if created else out.known).append(fact.id)
    if semantic is None or not semantic.ready:
        return out
    while True:
        done = check_pending(store, semantic)
        out.outcomes += done.outcomes
        if not done.more:
            break
    for o in out.outcomes:
        # A new fact merged with one already held (either way round: the newer wording is
        # kept): the memory knew it; the surviving fact is the known one.
        new = [f.id for f in (o.fact, o.other) if f.id in out.added]
        if o.kind == "merged" and len(new) == 1:
            out.added.remove(new[0])
            out.known.append(o.fact.id)
    return out


# -- later: facts stored before the model was ready ---------------------------------------------
@dataclass(slots=True)
class CheckPass:
    checked: int
    outcomes: list[Outcome]
    more: bool  # the batch was full: run again


def check_pending(store: Store, semantic: Semantic, limit: int = CHECK_BATCH) -> CheckPass:
    """Check up to ``limit`` facts that were stored unchecked, oldest first: merge duplicates,
    link conflicts, retire superseded facts. Idempotent (each fact is claimed once, in the
    transaction that records its outcome); does nothing while the model is not ready."""
    if not semantic.ready:
        return CheckPass(0, [], False)
    todo = store.facts.unchecked(limit)
    # Every fact written so far gets its vector first, so the facts of this batch see each
    # other (and the ones written after it see them all).
    while todo and semantic.embed_batch(kinds=("fact",)):
        pass
    outcomes: list[Outcome] = []
    checked = seen = 0
    for listed in todo:
        # As it is now: an earlier fact of this batch may have merged or superseded it.
        fact = store.facts.get(listed.id) or listed
        vec = None
        if not fact.deprecated:
            vec = semantic.embed_query(fact_embedding_text(fact.category, fact.fact))
            if vec is None:
                break  # the model went away: the rest waits for the next pass
        near = []
        if vec is not None:
            for other, sim in candidates(store, semantic, vec, fact.id, fact.project):
                older, newer = sorted((fact, other), key=lambda f: f.id)
                near.append(Near(other, sim, judge(older.fact, newer.fact, sim)))
        seen += 1
        with store.db.transaction() as tx:
            ts = now_ts()
            if not store.facts.claim_check(tx, fact.id, ts):
                continue  # another process checked it meanwhile
            checked += 1
            outcomes += _act(store, tx, fact, near, ts)
    return CheckPass(checked, outcomes, seen == len(todo) == limit)


# -- what a check does ---------------------------------------------------------------------------
def _act(store: Store, tx: Tx, fact: Fact, near: Sequence[Near], ts: str) -> list[Outcome]:
    """Record what ``fact``'s neighbours are to it (verdicts judged older → newer by id)."""
    out: list[Outcome] = []
    for n in near:
        kind, other = n.verdict.kind, n.fact
        older, newer = (other, fact) if other.id < fact.id else (fact, other)
        if kind == DUPLICATE:
            keep, lose = _keeper(fact, other)
            _merge(store, tx, keep, lose, n.similarity, ts)
            out.append(Outcome("merged", keep, lose, n.similarity, n.verdict.why))
            if lose.id == fact.id:
                break  # this fact is gone: its other neighbours are the keeper's
        elif kind == SUPERSEDES and store.links.add(
            tx, newer.id, older.id, SUPERSEDES, n.verdict.why, n.similarity, ts
        ):
            # A guess from the words: linked and marked, the older never hidden (the agent
            # retires it with one call, or memory_store_fact(replaces=…) says so at once).
            out.append(Outcome(SUPERSEDES, newer, older, n.similarity, n.verdict.why))
        elif kind == CONFLICT and store.links.add(
            tx, newer.id, older.id, CONFLICT, n.verdict.why, n.similarity, ts
        ):
            out.append(Outcome(CONFLICT, fact, other, n.similarity, n.verdict.why))
    return out


def _keeper(a: Fact, b: Fact) -> tuple[Fact, Fact]:
    """(the fact to keep, the one merged into it): the newer wording, unless the older says
    strictly more (every content word and number of the newer, and more) or is held with more
    confidence."""
    older, newer = (a, b) if a.id < b.id else (b, a)
    if older.confidence > newer.confidence or _says_more(older.fact, newer.fact):
        return older, newer
    return newer, older


def _says_more(text: str, than: str) -> bool:
    """Whether ``text`` states everything ``than`` does, and more."""
    a, b = claims_of(text), claims_of(than)
    wa, wb = set(a.words) | a.numbers, set(b.words) | b.numbers
    return wa > wb


def _merge(store: Store, tx: Tx, keep: Fact, lose: Fact, similarity: float, ts: str) -> None:
    """``lose`` becomes part of ``keep``: its uses and standing move over, its conflicts become
    ``keep``'s, and it stays as a deprecated fact ("merged into #N") with its provenance."""
    store.facts.absorb(tx, keep.id, lose.id, ts)
    store.fact_files.move(tx, lose.id, keep.id, ts)
    for linked in store.links.of_facts([lose.id], tx):
        if linked.kind == CONFLICT and linked.fact.id != keep.id:
            o = linked.fact
            pair = (keep.id, o.id) if keep.id > o.id else (o.id, keep.id)
            store.links.add(tx, *pair, CONFLICT, linked.why, linked.similarity, ts)
    store.deprecate_in(tx, lose.id, f"merged into #{keep.id}", ts)
    store.links.add(tx, keep.id, lose.id, "merged", "same claim", similarity, ts)
