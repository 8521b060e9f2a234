"""Parallel sessions: what each open session is working on, file conflicts, stale clean-up."""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass, field

from bigmind import limits, redact
from bigmind.errors import InvalidInput
from bigmind.limits import check_text, optional_text, stored_text
from bigmind.models import Session, now_ts, ts_ago
from bigmind.storage.focus_table import Focus as Focus
from bigmind.storage.focus_table import FocusAnnouncements
from bigmind.storage.store import SessionRef, Store

STALE_ONE_LINER = "[closed as stale by session {by}]"


@dataclass(frozen=True, slots=True)
class Active:
    session: Session
    focus: Focus | None


@dataclass(frozen=True, slots=True)
class Conflict:
    path: str
    session_ids: list[str] = field(default_factory=list)


def normalise_path(path: str) -> str:
    """One spelling per file: forward slashes, no ./ or .., no trailing slash."""
    p = path.strip().strip("'\"").replace("\\", "/")
    if not p:
        return ""
    p = posixpath.normpath(p)
    return p[2:] if p.startswith("./") else p


def same_file(a: str, b: str) -> bool:
    """Equal paths, or one is a path suffix of the other (absolute vs repo-relative)."""
    if a == b:
        return True
    short, long_ = sorted((a, b), key=len)
    return long_.endswith("/" + short.lstrip("/")) and not short.startswith("/")


def file_list(files: str | Sequence[str] | None, per: str = "announcement") -> list[str]:
    """Normalised, distinct paths from a list or comma-separated text (at most
    :data:`limits.FILES` of at most :data:`limits.PATH` characters each), their secrets
    redacted: a file list is stored like any text."""
    if files is None:
        return []
    items = limits.items(files)
    out: list[str] = []
    for f in items:
        p = normalise_path(redact.scrub(str(f)))  # before normpath folds a URL's "//"
        if len(p) > limits.PATH:
            raise InvalidInput(f"file path {p[:40]}… is longer than {limits.PATH:,} characters.")
        if p and p not in out:
            out.append(p)
    if len(out) > limits.FILES:
        raise InvalidInput(f"at most {limits.FILES} files per {per}; name the main ones.")
    return out


def announce(
    store: Store,
    session_id: str | None,
    description: str,
    files: str | Sequence[str] | None = None,
    ide_hint: str | None = None,
) -> tuple[Focus, SessionRef]:
    text = stored_text("description", description, limits.OUTCOME)
    paths = file_list(files)
    hint = optional_text("ide_hint", ide_hint, limits.NAME)
    ts = now_ts()
    with store.db.transaction() as tx:
        ref = store.resolve_session(session_id, tx)
        table = FocusAnnouncements(store.db, store.uid)
        focus_id = table.add(tx, ref.session.id, text, paths, hint, ts)
        if hint:
            store.sessions.hint(tx, ref.session.id, hint)
    return Focus(ref.session.id, text, paths, hint, ts, focus_id), ref


def latest_focus(store: Store, session_ids: Sequence[str]) -> dict[str, Focus]:
    """The newest announcement of each given session."""
    return FocusAnnouncements(store.db, store.uid).latest(session_ids)


def active(store: Store) -> tuple[list[Active], list[Conflict]]:
    """Open sessions with their latest focus, and files touched by more than one of them."""
    sessions = store.open_sessions()
    focus = latest_focus(store, [s.id for s in sessions])
    items = [Active(s, focus.get(s.id)) for s in sessions]
    conflicts: list[Conflict] = []
    for i, a in enumerate(items):
        for b in items[i + 1 :]:
            for fa in a.focus.files if a.focus else []:
                for fb in b.focus.files if b.focus else []:
                    if same_file(fa, fb):
                        path = max(fa, fb, key=len)
                        c = next((c for c in conflicts if c.path == path), None)
                        if c is None:
                            c = Conflict(path)
                            conflicts.append(c)
                        for sid in (a.session.id, b.session.id):
                            if sid not in c.session_ids:
                                c.session_ids.append(sid)
    return items, conflicts


def close_stale(
    store: Store, session_id: str, idle_minutes: int = 30, force: bool = False
) -> list[Session]:
    """Close the user's other open sessions idle longer than ``idle_minutes`` (all, with force)."""
    if not 1 <= idle_minutes <= 60 * 24 * 365:
        raise InvalidInput(f"'idle_minutes' must be at least 1, got {idle_minutes}.")
    keep = store.get_session(check_text("session_id", session_id, limits.NAME))
    cutoff = ts_ago(minutes=idle_minutes)
    ts = now_ts()
    closed: list[Session] = []
    with store.db.transaction() as tx:
        for s in store.sessions.all_open(tx):
            if s.id == keep.id:
                continue
            last = s.last_activity_at or s.started_at
            if not force and last >= cutoff:
                continue
            closed.append(s)
        store.close_auto_in(tx, [s.id for s in closed], STALE_ONE_LINER.format(by=keep.id[:8]), ts)
    return closed
