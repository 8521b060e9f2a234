"""Tier G — company knowledge shared by every user of a database.

Anyone may promote an entry; in personal mode it is approved at once (you are your own
curator), otherwise it waits as ``pending`` until a curator or admin approves it. Only
approved entries are searched and shown at session start. Roles are read from the database
at each check, so a role given or taken with ``bigmind user set-role`` applies to running
servers at once.

Plain SQL with ``?`` placeholders only; keyword search goes through ``store.text`` (or
:class:`~bigmind.recall.Recall`), so another backend swaps the text-search class alone.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from bigmind import limits, users
from bigmind.db import Row
from bigmind.errors import InvalidInput, NotFound
from bigmind.limits import check_importance, check_limit, check_text, optional_text
from bigmind.models import Record, User, normalise_text, now_ts
from bigmind.store import Store

CATEGORIES = ("architecture", "standard", "decision", "pattern", "glossary")
STATUSES = ("approved", "pending", "deprecated")
ACTIONS = ("approve", "deprecate")
TOP_POOL = 50  # approved entries considered for the packet besides the focus matches
FOCUS_LIFT = 1.5  # importance steps the best focus match gains (relevance scaled 0…1)

_SELECT = (
    "SELECT g.id, g.category, g.title, g.content, g.importance, g.status, g.promoted_by,"
    " g.source_session, g.approved_by, g.created_at, g.updated_at, g.review_notes,"
    " g.reviewed_by, g.reviewed_at, u.username AS promoter"
    " FROM global_knowledge g LEFT JOIN users u ON u.id = g.promoted_by"
)


@dataclass(frozen=True, slots=True)
class GlobalEntry(Record):
    id: int
    category: str
    title: str
    content: str
    importance: int
    status: str
    promoted_by: str | None
    source_session: str | None
    approved_by: str | None
    created_at: str | None
    updated_at: str | None
    review_notes: str | None
    reviewed_by: str | None
    reviewed_at: str | None
    promoter: str | None  # the promoting user's name


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


def _entry(row: Row) -> GlobalEntry:
    r = dict(row)
    r["importance"] = int(r.get("importance") or 5)
    r["status"] = r.get("status") or "pending"
    return GlobalEntry(**r)


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
    head = check_text("title", title, limits.TITLE)
    body = check_text("content", content, limits.GLOBAL_CONTENT)
    imp = check_importance(importance)
    sid = store.get_session(source_session).id if source_session else None
    # Another member's pending proposal is theirs and the curators' to see: matching it would
    # tell the caller it exists (and its id), so only approved or the caller's own count.
    pending_of = "" if may_curate(store) else " AND g.promoted_by = ?"
    with store.db.transaction() as tx:
        same = tx.execute(
            f"{_SELECT} WHERE g.category = ? AND lower(g.title) = lower(?)"
            f" AND (g.status = 'approved' OR (g.status = 'pending'{pending_of})) ORDER BY g.id",
            (cat, head, *(() if not pending_of else (store.uid,))),
        )
        for row in same:
            if normalise_text(row["content"]) == normalise_text(body):
                return Promoted(_entry(row), False)
        ts = now_ts()
        personal = store.mode == "personal"
        rows = tx.execute(
            "INSERT INTO global_knowledge(category, title, content, importance, status,"
            " promoted_by, source_session, approved_by, reviewed_by, reviewed_at, created_at,"
            " updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id",
            (
                cat,
                head,
                body,
                imp,
                "approved" if personal else "pending",
                store.uid,
                sid,
                store.uid if personal else None,
                store.uid if personal else None,
                ts if personal else None,
                ts,
                ts,
            ),
        )
        entry = _entry(tx.execute(f"{_SELECT} WHERE g.id = ?", (rows[0]["id"],))[0])
    return Promoted(entry, True)


def get(store: Store, entry_id: int) -> GlobalEntry:
    """An entry the caller may see: approved ones, their own, or any for a curator.

    Raises:
        NotFound: no such entry (or one this user may not see).
    """
    rows = store.db.query(f"{_SELECT} WHERE g.id = ?", (int(entry_id),))
    if rows:
        e = _entry(rows[0])
        if e.status == "approved" or e.promoted_by == store.uid or may_curate(store):
            return e
    raise NotFound(
        f"No company knowledge entry #{entry_id}. memory_list_global(status=…) lists the ids."
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
    where = ["g.status = ?"]
    args: list[object] = [st]
    if category is not None and category.strip():
        where.append("g.category = ?")
        args.append(check_category(category))
    own_only = st != "approved" and not may_curate(store)
    if own_only:
        where.append("g.promoted_by = ?")
        args.append(store.uid)
    order = "g.importance DESC, g.updated_at DESC" if st == "approved" else "g.updated_at DESC"
    rows = store.db.query(
        f"{_SELECT} WHERE {' AND '.join(where)} ORDER BY {order}, g.id DESC LIMIT ? OFFSET ?",
        (*args, n, max(0, int(offset))),
    )
    return [_entry(r) for r in rows], own_only


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
    note = optional_text("notes", notes, limits.REVIEW_NOTES)
    if store.mode != "personal":
        users.require_curator(caller(store), "approve or deprecate company knowledge")
    current = get(store, entry_id)
    target = "approved" if act == "approve" else "deprecated"
    if current.status == target:
        raise InvalidInput(f"Entry #{current.id} is already {target}. Nothing changed.")
    ts = now_ts()
    with store.db.transaction() as tx:
        if act == "approve":
            tx.execute(
                "UPDATE global_knowledge SET status = 'approved', approved_by = ?, reviewed_by = ?,"
                " reviewed_at = ?, review_notes = ?, updated_at = ? WHERE id = ?",
                (store.uid, store.uid, ts, note, ts, current.id),
            )
        else:
            tx.execute(
                "UPDATE global_knowledge SET status = 'deprecated', reviewed_by = ?,"
                " reviewed_at = ?, review_notes = ?, updated_at = ? WHERE id = ?",
                (store.uid, ts, note, ts, current.id),
            )
    return get(store, current.id)


def count_approved(store: Store) -> int:
    return int(
        store.db.query("SELECT count(*) AS n FROM global_knowledge WHERE status = 'approved'")[0][
            "n"
        ]
    )


def top(
    store: Store, limit: int = 5, relevance: Mapping[int, float] | None = None
) -> list[GlobalEntry]:
    """The approved entries for the bootstrap packet: importance first.

    With ``relevance`` (entry id → 0…1, e.g. focus-match scores over the best one), an entry
    ranks by importance + :data:`FOCUS_LIFT` × relevance: of two entries of equal importance
    the relevant one comes first, and a strong match may pass an entry one importance step
    above it, never two. Ties go to the most recently updated.
    """
    rows = store.db.query(
        f"{_SELECT} WHERE g.status = 'approved'"
        " ORDER BY g.importance DESC, g.updated_at DESC, g.id DESC LIMIT ?",
        (max(limit, TOP_POOL) if relevance else limit,),
    )
    entries = {int(r["id"]): _entry(r) for r in rows}
    rel = {int(k): max(0.0, min(1.0, float(v))) for k, v in (relevance or {}).items()}
    missing = [i for i in rel if i not in entries]
    if missing:
        marks = ",".join("?" * len(missing))
        for r in store.db.query(
            f"{_SELECT} WHERE g.status = 'approved' AND g.id IN ({marks})", missing
        ):
            entries[int(r["id"])] = _entry(r)
    ranked = sorted(entries.values(), key=lambda e: (e.updated_at or "", e.id), reverse=True)
    ranked.sort(key=lambda e: -(e.importance + FOCUS_LIFT * rel.get(e.id, 0.0)))  # stable
    return ranked[:limit]
