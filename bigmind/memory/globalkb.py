"""Tier G — company knowledge shared by every user of a database.

Anyone may promote an entry; in personal mode it is approved at once (you are your own
curator), otherwise it waits as ``pending`` until a curator or admin approves it. Only
approved entries are searched and shown at session start. Roles are read from the database
at each check, so a role given or taken with ``bigmind user set-role`` applies to running
servers at once.

The SQL lives in :class:`~bigmind.storage.knowledge_table.Knowledge`; searches go through
:class:`~bigmind.search.ranking.Recall`, like every other kind of memory.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from bigmind import limits
from bigmind.errors import InvalidInput, NotFound
from bigmind.limits import check_importance, check_limit, optional_stored, stored_text
from bigmind.memory import users
from bigmind.models import User, normalise_text, now_ts
from bigmind.storage.knowledge_table import GlobalEntry as GlobalEntry
from bigmind.storage.knowledge_table import Knowledge
from bigmind.storage.store import Store

CATEGORIES = ("architecture", "standard", "decision", "pattern", "glossary")
STATUSES = ("approved", "pending", "deprecated")
ACTIONS = ("approve", "deprecate")
TOP_POOL = 50  # approved entries considered for the packet besides the focus matches
FOCUS_LIFT = 1.5  # importance steps the best focus match gains (relevance scaled 0…1)


@dataclass(frozen=True, slots=True)
class Promoted:
    entry: GlobalEntry
    created: bool  # False: an identical entry was already approved or pending


def visible(store: Store, e: GlobalEntry) -> dict[str, object]:
    """An entry as another user may see it: the session it came from is the promoter's
    private memory, so only the promoter gets its id."""
    shown = e.as_dict()
    if e.promoted_by != store.uid:
        shown["source_session"] = None
    return shown


def check_category(value: str) -> str:
    cat = (value or "").strip().lower()
    if cat not in CATEGORIES:
        raise InvalidInput(
            f"Unknown company knowledge category {value!r}; use one of: {', '.join(CATEGORIES)}."
        )
    return cat


def _check_status(value: str) -> str:
    st = (value or "").strip().lower()
    if st not in STATUSES:
        raise InvalidInput(f"'status' must be one of {', '.join(STATUSES)}; got {value!r}.")
    return st


def caller(store: Store) -> User:
    """The configured user with the role the database holds now (not when the store opened)."""
    try:
        return users.get_user(store.db, store.user.username)
    except NotFound:  # cannot happen once the store exists; keep the opening state
        return store.user


def may_curate(store: Store) -> bool:
    """Personal mode: you are your own curator. Otherwise a curator or admin role."""
    return store.mode == "personal" or users.is_curator(caller(store))


def promote(
    store: Store,
    category: str,
    title: str,
    content: str,
    importance: int = 5,
    source_session: str | None = None,
) -> Promoted:
    """Propose an entry: approved at once in personal mode, ``pending`` otherwise.

    An identical entry (same category, title and content, ignoring case and spacing) already
    approved or pending is returned instead of a second copy.

    Raises:
        InvalidInput: bad category, importance, or empty / too long text.
        NotFound: ``source_session`` is not one of the caller's sessions.
    """
    cat = check_category(category)
    head = stored_text("title", title, limits.TITLE)
    body = stored_text("content", content, limits.GLOBAL_CONTENT)
    imp = check_importance(importance)
    sid = store.get_session(source_session).id if source_session else None
    # Another member's pending proposal is theirs and the curators' to see: matching it would
    # tell the caller it exists (and its id), so only approved or the caller's own count.
    table = Knowledge(store.db, store.uid)
    any_pending = may_curate(store)
    with store.db.transaction() as tx:
        tx.lock_shared()  # shared rows: one writer of them at a time
        for same in table.same_title(tx, cat, head, any_pending=any_pending):
            if normalise_text(same.content) == normalise_text(body):
                return Promoted(same, False)
        personal = store.mode == "personal"
        new = table.add(tx, cat, head, body, imp, sid, now_ts(), approved=personal)
        entry = table.get(new, tx)
        assert entry is not None
    return Promoted(entry, True)


def get(store: Store, entry_id: int) -> GlobalEntry:
    """An entry the caller may see: approved ones, their own, or any for a curator.

    Raises:
        NotFound: no such entry (or one this user may not see).
    """
    e = Knowledge(store.db, store.uid).get(int(entry_id))
    if e is not None and (
        e.status == "approved" or e.promoted_by == store.uid or may_curate(store)
    ):
        return e
    raise NotFound(
        f"No company knowledge entry #{entry_id}.",
        tool="memory_list_global(status=…) lists the ids.",
        web="The Company page lists the entries.",
    )


def list_entries(
    store: Store,
    category: str | None = None,
    limit: int = 20,
    status: str = "approved",
    offset: int = 0,
) -> tuple[list[GlobalEntry], bool]:
    """Entries with ``status``, most important then newest first, skipping ``offset``.
    Returns (entries, own_only): pending and deprecated entries are listed in full for
    curators and admins; members see only the ones they promoted themselves."""
    st = _check_status(status)
    n = check_limit(limit)
    cat = check_category(category) if category is not None and category.strip() else None
    own_only = st != "approved" and not may_curate(store)
    entries = Knowledge(store.db, store.uid).page(
        st, cat, n, max(0, int(offset)), own_only=own_only
    )
    return entries, own_only


def review(store: Store, entry_id: int, action: str, notes: str | None = None) -> GlobalEntry:
    """Approve or deprecate an entry (curators and admins; anyone in personal mode).

    Approving a deprecated entry restores it. Records who reviewed it, when, and the notes.

    Raises:
        Forbidden: the caller is neither curator nor admin (team and enterprise modes).
        InvalidInput: unknown action, or the entry already has that status.
        NotFound: no such entry.
    """
    act = (action or "").strip().lower()
    if act not in ACTIONS:
        raise InvalidInput(f"'action' must be 'approve' or 'deprecate'; got {action!r}.")
    note = optional_stored("notes", notes, limits.REVIEW_NOTES)
    if store.mode != "personal":
        users.require_curator(caller(store), "approve or deprecate company knowledge")
    current = get(store, entry_id)
    target = "approved" if act == "approve" else "deprecated"
    if current.status == target:
        raise InvalidInput(f"Entry #{current.id} is already {target}. Nothing changed.")
    table = Knowledge(store.db, store.uid)
    with store.db.transaction() as tx:
        tx.lock_shared()  # shared rows: one writer of them at a time
        if act == "approve":
            table.approve(tx, current.id, note, now_ts())
        else:
            table.deprecate(tx, current.id, note, now_ts())
    return get(store, current.id)


def count_approved(store: Store) -> int:
    return Knowledge(store.db, store.uid).count()


def top(
    store: Store, limit: int = 5, relevance: Mapping[int, float] | None = None
) -> list[GlobalEntry]:
    """The approved entries for the bootstrap packet: importance first.

    With ``relevance`` (entry id → 0…1, e.g. focus-match scores over the best one), an entry
    ranks by importance + :data:`FOCUS_LIFT` × relevance: of two entries of equal importance
    the relevant one comes first, and a strong match may pass an entry one importance step
    above it, never two. Ties go to the most recently updated.
    """
    table = Knowledge(store.db, store.uid)
    entries = {e.id: e for e in table.top(max(limit, TOP_POOL) if relevance else limit)}
    rel = {int(k): max(0.0, min(1.0, float(v))) for k, v in (relevance or {}).items()}
    missing = [i for i in rel if i not in entries]
    for e in table.approved_among(missing):
        entries[e.id] = e
    ranked = sorted(entries.values(), key=lambda e: (e.updated_at or "", e.id), reverse=True)
    ranked.sort(key=lambda e: -(e.importance + FOCUS_LIFT * rel.get(e.id, 0.0)))  # stable
    return ranked[:limit]
