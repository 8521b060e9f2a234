"""A session's life, for every surface: started with the memory context, written to, ended
with its summary, and what parallel sessions work on.

:func:`start_session` opens (or resumes) a session and builds the context packet, with the
focus first when one is given; :func:`end_session` closes it, retires stale low-value facts
from the packet (the light consolidation) and, when asked, writes the project's Markdown mirror
again. Each write wakes the background embedder; a call made for an agent also collects the
user's notices (what the server did in the background) once. The MCP tools, their resources
and prompt, and REST's ``/sessions`` endpoints are adapters over these functions.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bigmind.memory import attempts, diff, focus, mirror, savings, tidy
from bigmind.memory.attempts import Echo
from bigmind.memory.diff import Diff
from bigmind.memory.focus import Active, Conflict
from bigmind.memory.gotchas import Bound, for_files
from bigmind.models import Chunk, Session, Summary
from bigmind.runtime import Runtime
from bigmind.service.packet import Packet, build
from bigmind.storage.focus_table import Focus
from bigmind.storage.store import SessionRef

__all__ = [
    "Active",
    "Announced",
    "Conflict",
    "Context",
    "Diff",
    "Echo",
    "Ended",
    "Mirrored",
    "Packet",
    "SessionRef",
    "Started",
    "active_sessions",
    "announce_focus",
    "bootstrap",
    "close_stale",
    "context",
    "diff_since",
    "end_session",
    "list_sessions",
    "log_saving",
    "save_chunk",
    "session_detail",
    "start_session",
]


@dataclass(frozen=True, slots=True)
class Started:
    """A session opened or resumed (``resumed``), with its context packet. ``session``: as
    the database holds it after the start; ``auto_closed``: sessions open for over 24 h
    closed by it; ``warnings``: failed approaches close to the focus; ``notices``: the
    user's background news (both for an agent's call only)."""

    session: Session
    resumed: bool
    auto_closed: list[str]
    packet: Packet
    warnings: list[Echo] = field(default_factory=list)
    notices: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Mirrored:
    """The project's Markdown mirror at a session's end: ``facts`` written, or None when it
    has edits waiting for a pull (not rewritten); ``error`` when it could not be written."""

    path: Path
    facts: int | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Ended:
    """A session closed (``was_open``) or its summary updated; ``retired``: (id, text) of
    the stale low-importance facts that left the packet."""

    session: Session
    was_open: bool
    retired: list[tuple[int, str]]
    mirrored: Mirrored | None = None


@dataclass(frozen=True, slots=True)
class Context:
    """The packet as the latest open session sees it, and the user's notices when asked."""

    packet: Packet
    notices: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Announced:
    """A focus recorded: the files it shares with other open sessions (``conflicts``, each
    naming the sessions), the facts bound to its files and the failed approaches close to
    its description."""

    focus: Focus
    session: SessionRef
    conflicts: list[Conflict]
    gotchas: list[Bound]
    warnings: list[Echo]


def start_session(
    rt: Runtime,
    ide_hint: str | None = None,
    session_id: str | None = None,
    focus: str | None = None,
    *,
    user_id: str | None = None,
    agent: bool = True,
) -> Started:
    """Open a session (or resume ``session_id``) and build its context packet, relevant
    memory first when ``focus`` is given. ``user_id``: only the configured user's name or id
    is accepted; ``agent``: also warn of failed approaches close to the focus and collect the
    user's notices.

    Raises:
        Forbidden: another user's ``user_id``.
        NotFound: no such session to resume.
    """
    store = rt.store
    store.check_user(user_id)
    started = store.start_session(ide_hint, session_id)
    sid = started.session.id
    packet = build(rt, focus, current_session=sid)
    warned = attempts.warnings(store, focus or "", rt.semantic) if agent else []
    return Started(
        store.get_session(sid),
        started.reused,
        started.auto_closed,
        packet,
        warned,
        rt.notices() if agent else [],
    )


def end_session(
    rt: Runtime,
    session_id: str | None,
    one_liner: str,
    topics: str | Sequence[str] | None = None,
    outcome: str | None = None,
    summary: str | None = None,
    key_facts: str | Sequence[str] | None = None,
    code_refs: str | Sequence[str] | None = None,
    importance: int = 5,
    *,
    mirror_too: bool = False,
) -> Ended:
    """Close the session (or the open one) with its summary — again: update it — then retire
    stale low-importance facts from the packet and wake the background embedder (facts
    stored before the model was ready are checked then). ``mirror_too``: write the project's
    Markdown mirror again (``BIGMIND_MIRROR=1``).

    Raises:
        NotFound: no such session of the user's.
        InvalidInput: a bad argument (nothing written).
    """
    s, was_open = rt.store.end_session(
        session_id, one_liner, topics, outcome, summary, key_facts, code_refs, importance
    )
    retired = tidy.retire_stale(rt.store)
    rt.wrote()
    return Ended(s, was_open, retired, _mirror(rt) if mirror_too else None)


def _mirror(rt: Runtime) -> Mirrored:
    path = mirror.default_path(rt.settings.data_dir, rt.store.project)
    try:
        written = mirror.refresh(rt.store, path)
    except OSError as exc:  # the session is closed either way
        return Mirrored(path, error=str(exc))
    return Mirrored(path, None if written is None else written.facts)


def save_chunk(
    rt: Runtime,
    content: str,
    session_id: str | None = None,
    role: str = "assistant",
    flag_reason: str | None = None,
) -> tuple[Chunk, SessionRef]:
    """Keep one exchange verbatim in the session (opened if none is); wakes the embedder."""
    chunk, ref = rt.store.append_chunk(content, session_id, role, flag_reason)
    rt.wrote()
    return chunk, ref


def context(rt: Runtime, *, notices: bool = False) -> Context:
    """The packet as the latest open session sees it; opens nothing, writes nothing.
    ``notices``: also collect the user's notices (told once)."""
    open_now = rt.store.open_sessions()
    current = open_now[0].id if open_now else None
    packet = build(rt, current_session=current)
    return Context(packet, rt.notices() if notices else [])


def bootstrap(rt: Runtime) -> Packet:
    """The packet before any session is opened (the MCP prompt ``bigmind_init``)."""
    return build(rt)


def session_detail(rt: Runtime, session_id: str) -> tuple[Session, Summary | None, list[Chunk]]:
    """One of the user's sessions with its summary and flagged exchanges.

    Raises:
        NotFound: no such session of the user's.
    """
    return rt.store.session_detail(session_id)


def list_sessions(
    rt: Runtime, limit: int = 10, topic: str | None = None, offset: int = 0
) -> list[Session]:
    """The user's sessions, newest first; ``topic``: only those tagged with it."""
    return rt.store.list_sessions(limit, topic, offset)


def announce_focus(
    rt: Runtime,
    description: str,
    session_id: str | None = None,
    files: str | Sequence[str] | None = None,
    ide_hint: str | None = None,
) -> Announced:
    """Record what the session works on and its files; say which of them other open sessions
    touch, which facts are bound to them, and which failed approaches it comes close to."""
    store = rt.store
    f, ref = focus.announce(store, session_id, description, files, ide_hint)
    _, conflicts = focus.active(store)
    mine = [c for c in conflicts if f.session_id in c.session_ids]
    bound = for_files(store, f.files)
    tried = attempts.warnings(store, description, rt.semantic)
    return Announced(f, ref, mine, bound, tried)


def active_sessions(rt: Runtime) -> tuple[list[Active], list[Conflict]]:
    """The user's open sessions with their latest focus, and the files two of them touch."""
    return focus.active(rt.store)


def close_stale(
    rt: Runtime, session_id: str, idle_minutes: int = 30, force: bool = False
) -> list[Session]:
    """Close the user's other open sessions idle over ``idle_minutes`` (all, with ``force``);
    ``session_id`` (the caller's own) is never closed."""
    return focus.close_stale(rt.store, session_id, idle_minutes, force)


def log_saving(
    rt: Runtime, session_id: str | None, description: str, tokens_saved: int, method_used: str
) -> tuple[int, SessionRef]:
    """Log tokens saved by recalling memory instead of re-reading files: the entry's id."""
    return savings.log(rt.store, session_id, description, tokens_saved, method_used)


def diff_since(rt: Runtime, session_id: str) -> Diff:
    """Everything that changed in the user's memory since that session started."""
    return diff.since_session(rt.store, session_id)
