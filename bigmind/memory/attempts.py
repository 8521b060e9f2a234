"""Failed approaches: what an agent tried and why it failed, and a warning when it comes up again.

``memory_record_attempt`` keeps an approach with its outcome ("failed" or "worked") and why.
A later focus announcement or recall whose text is close to an approach that failed gets a
warning — "tried on <date>, failed because …" — so the agent does not walk into it twice.
Close means one of two things (docs/attempts.md has the figures that chose the thresholds):

- in wording: the text shows most of the approach's distinctive terms (:class:`TermMatcher`,
  the terms as recall reads them: stop words out, inflections matched);
- in meaning: the cosine similarity of the text's vector to the approach's (the background
  embedder embeds attempts as the vector kind ``attempt``) — only once the model is ready.

Only failed attempts seen from the current project warn (those made there, or in no project);
"worked" ones are kept for the record and never warn. A check reads and writes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from bigmind import limits
from bigmind.errors import NotFound
from bigmind.limits import check_choice, optional_stored, stored_text
from bigmind.memory.quoting import quoted
from bigmind.models import day_of, now_ts
from bigmind.search.semantic import Semantic
from bigmind.search.terms import TermMatcher, terms_of
from bigmind.storage.attempts_table import OUTCOMES, Attempt, Attempts
from bigmind.storage.store import SessionRef, Store

__all__ = ["OUTCOMES", "Attempt", "Echo", "block", "get", "list_", "record", "warnings"]

# Cosine similarity (all-MiniLM-L6-v2) at or above which a text means the same as an approach:
# 16 paraphrases of 8 approaches scored 0.46–0.91 (median 0.78), 24 unrelated tasks −0.10–0.21
# (docs/attempts.md, "Calibration"). Another approach to the same thing scores like a
# paraphrase (0.46–0.76) and warns too: what failed there is worth knowing.
MEANING_MIN = 0.45
# The share of the approach's terms the text must show (a term only through its stem counts
# half), and at least this many of them as written: one shared word is not the same approach.
WORDING_MIN = 0.5
WORDING_TERMS = 2
WARN_MAX = 3  # warnings one reply carries
CANDIDATES = 200  # the newest failed attempts a check looks at
EMBED_MISSING = 8  # attempts not embedded yet (just recorded) embedded on the spot, at most


@dataclass(frozen=True, slots=True)
class Echo:
    """A failed attempt a text comes close to, and how close: the share of its terms the text
    shows, and the similarity of meaning (None without the model)."""

    attempt: Attempt
    wording: float
    similarity: float | None

    def line(self) -> str:
        a = self.attempt
        why = f"failed because {quoted(a.why)}" if a.why else "failed"
        approach = quoted(a.approach)
        return f'⚠️ Tried on {day_of(a.created_at)}, {why} — "{approach}" (#{a.id})'

    def as_dict(self) -> dict[str, object]:
        a = self.attempt
        return {
            "attempt_id": a.id,
            "approach": a.approach,
            "why": a.why,
            "tried_on": day_of(a.created_at),
            "wording": round(self.wording, 2),
            "similarity": None if self.similarity is None else round(self.similarity, 3),
        }


def record(
    store: Store, approach: str, outcome: str, why: str | None, session_id: str | None = None
) -> tuple[Attempt, SessionRef]:
    """Keep an approach and how it went, in the session's project. Returns it and the session
    it was attached to."""
    text = stored_text("approach", approach, limits.OUTCOME)
    check_choice("outcome", outcome, OUTCOMES)
    # A failure without its reason warns of nothing useful; a success may go without one.
    if outcome == "failed":
        reason: str | None = stored_text("why", why, limits.OUTCOME)
    else:
        reason = optional_stored("why", why, limits.OUTCOME)
    with store.db.transaction() as tx:
        ref = store.resolve_session(session_id, tx)
        new = Attempts(store.db, store.uid).add(tx, ref.session.id, text, outcome, reason, now_ts())
    return get(store, new), ref


def get(store: Store, attempt_id: int) -> Attempt:
    found = Attempts(store.db, store.uid).get(attempt_id)
    if found is None:
        raise NotFound(f"No attempt #{attempt_id} in your memory.")
    return found


def list_(store: Store, outcome: str | None = "failed", limit: int = 20) -> list[Attempt]:
    """Attempts with ``outcome`` (None: any) seen from the store's project, newest first."""
    return Attempts(store.db, store.uid).newest(outcome, limit, store.project_key)


def warnings(store: Store, text: str, semantic: Semantic | None = None) -> list[Echo]:
    """The failed attempts seen from the store's project that ``text`` comes close to, in
    wording or (with the model ready) in meaning: the closest first, at most :data:`WARN_MAX`."""
    if not text.strip():
        return []
    failed = Attempts(store.db, store.uid).newest("failed", CANDIDATES, store.project_key)
    if not failed:
        return []
    sims = _similarities(failed, text, semantic)
    found = []
    for a in failed:
        wording = _wording(a.approach, text)
        sim = sims.get(a.id)
        if wording >= WORDING_MIN or (sim is not None and sim >= MEANING_MIN):
            found.append(Echo(a, wording, sim))
    found.sort(key=lambda e: (max(e.wording, e.similarity or 0.0), e.attempt.id), reverse=True)
    return found[:WARN_MAX]


def block(echoes: list[Echo]) -> str:
    """The warnings as lines to append to a reply ("" when there are none)."""
    return "".join("\n" + e.line() for e in echoes)


def _wording(approach: str, text: str) -> float:
    """The share of the approach's terms ``text`` shows (0 when fewer than
    :data:`WORDING_TERMS` of them are there as written, or as many as it has if fewer)."""
    terms = terms_of(approach)
    share, exact = TermMatcher(terms).credit(text)
    return share if exact >= min(WORDING_TERMS, len(terms)) else 0.0


def _similarities(failed: list[Attempt], text: str, semantic: Semantic | None) -> dict[int, float]:
    """Cosine similarity of ``text`` to each attempt's approach (none while the model is not
    ready); an attempt the background embedder has not reached yet is embedded here."""
    if semantic is None:
        return {}
    query = semantic.embed_query(text)
    if query is None:
        return {}
    stored = semantic.vectors.similarity("attempt", [str(a.id) for a in failed], query)
    sims = {int(k): v for k, v in stored.items()}
    for a in [a for a in failed if a.id not in sims][:EMBED_MISSING]:
        vec = semantic.embed_query(a.approach)
        if vec is not None:
            sims[a.id] = float(vec @ query)  # the model's vectors are unit length
    return sims
