"""The memory store: users, sessions, facts, chunks and the profile, for one configured user.

Every read and write is scoped to that user; an id that belongs to someone else
is reported exactly like an unknown id, so ids leak nothing. Validation lives
here, so the MCP tools and the CLI reject the same inputs with the same words.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from bigmind import limits
from bigmind import project as projects
from bigmind.errors import Forbidden, InvalidInput, NotFound
from bigmind.limits import (
    check_category,
    check_choice,
    check_importance,
    check_limit,
    check_text,
    check_unit,
    optional_stored,
    optional_text,
    stored_text,
)
from bigmind.models import (
    AUTO_CLOSE_HOURS,
    AUTO_CLOSED_ONE_LINER,
    CHUNK_ROLES,
    SESSION_GAP_MINUTES,
    Chunk,
    Fact,
    Profile,
    Session,
    Summary,
    User,
    content_hash,
    new_id,
    now_ts,
    ts_ago,
)
from bigmind.storage import autoline
from bigmind.storage.attempts_table import Attempts
from bigmind.storage.chunks_table import Chunks
from bigmind.storage.db import Backend, Tx
from bigmind.storage.directory_table import Directory
from bigmind.storage.fact_files_table import FactFiles
from bigmind.storage.facts_table import Facts, fact_from_row
from bigmind.storage.hypotheses_table import Hypotheses
from bigmind.storage.knowledge_table import Knowledge
from bigmind.storage.links_table import FactLinks
from bigmind.storage.profile_table import Profiles
from bigmind.storage.reminders_table import Reminders
from bigmind.storage.sessions_table import TOPIC_MATCH, Sessions, session_from_row, topic_pattern
from bigmind.storage.users_table import Users

# Re-exported for the modules that read them from here.
__all__ = [
    "TOPIC_MATCH",
    "SessionRef",
    "SessionStart",
    "Store",
    "fact_from_row",
    "session_from_row",
    "topic_pattern",
]

TOUCH_SECONDS = 30
STATED = "stated by the agent"  # why a fact replaces those named in ``replaces``


@dataclass(frozen=True, slots=True)
class SessionStart:
    session: Session
    reused: bool
    auto_closed: list[str]


@dataclass(frozen=True, slots=True)
class SessionRef:
    """The session a write was attached to, and whether it had to be opened for it."""

    session: Session
    opened: bool
    split: Session | None = None  # the implicit session this write closed after a silence


class Store:
    """CRUD and search for one user's memory over a :class:`Backend`."""

    def __init__(
        self,
        backend: Backend,
        username: str,
        *,
        mode: str = "personal",
        project: projects.Project | None = None,
        session_gap_minutes: int = SESSION_GAP_MINUTES,
    ) -> None:
        self.session_gap_minutes = session_gap_minutes
        self.mode = mode
        self.home_project = project  # the process's own (working directory, setting)
        self.user = self._ensure_user(backend, username)
        # Every read and write from here on acts for this user (PostgreSQL's row-level
        # security sees the setting; SQLite's backend is itself).
        self.db = backend.for_user(self.uid)
        self.sessions = Sessions(self.db, self.uid)
        self.facts = Facts(self.db, self.uid)
        self.links = FactLinks(self.db, self.uid)
        self.fact_files = FactFiles(self.db, self.uid)
        self.chunks = Chunks(self.db, self.uid)
        self.profiles = Profiles(self.db, self.uid)
        self.directory = Directory(self.db, self.uid)  # the user's card: kept with each session

    # -- users -------------------------------------------------------------------------------
    def _ensure_user(self, backend: Backend, username: str) -> User:
        username = check_text("username", username, limits.NAME)
        # The personal-mode owner administers their memory; in team and enterprise modes a
        # new user is a member until `bigmind user set-role` says otherwise. A known user
        # is seen as itself (PostgreSQL lets a user touch only its own rows).
        known = Users(backend, "").by_name(username)
        db = backend if known is None else backend.for_user(known.id)
        ts = now_ts()
        with db.transaction() as tx:
            table = Users(db, "")
            role = "member"
            if known is None and self.mode == "personal" and not table.count_admins(tx):
                role = "admin"  # the owner; a second user of the file joins as a member
            user = table.ensure(tx, username, role, ts)
            if known is not None:
                Directory(db, user.id).ensure(tx, ts)
        if known is None:  # the new user's card, written as that user
            mine = backend.for_user(user.id)
            with mine.transaction() as tx:
                Directory(mine, user.id).ensure(tx, ts)
        return user

    @property
    def uid(self) -> str:
        return self.user.id

    @property
    def project(self) -> projects.Project | None:
        """The project of the running call: the client's (its roots), else the process's."""
        return projects.current() or self.home_project

    @property
    def project_key(self) -> str | None:
        p = self.project
        return p.key if p is not None else None

    def check_user(self, user_id: str | None) -> None:
        """Accept the configured user's name or id; refuse anyone else's."""
        if user_id and user_id not in (self.user.id, self.user.username):
            raise Forbidden(
                f"This BigMind server acts as user '{self.user.username}'. "
                "Omit user_id, or start the server with BIGMIND_USER set to that user."
            )

    def known_projects(self) -> dict[str, int]:
        """Every project this user has memories of: key → sessions and facts made there."""
        out = self.sessions.projects()
        for key, n in self.facts.projects().items():
            out[key] = out.get(key, 0) + n
        return dict(sorted(out.items(), key=lambda kv: (-kv[1], kv[0])))

    def find_project(self, value: str) -> projects.Project:
        """A project named by a user: a folder, a project key, or a known project's short name."""
        text = check_text("project", value, limits.NAME * 10)
        known = self.known_projects()
        if text in known:
            return projects.Project(text, projects.name_of(text))
        by_name = [k for k in known if projects.name_of(k) == text]
        if len(by_name) == 1:
            return projects.Project(by_name[0], text)
        found = projects.from_setting(text)
        if found is not None and (found.root is not None or found.key in known):
            return found
        listed = ", ".join(f"{projects.name_of(k)} ({k})" for k in list(known)[:10]) or "none yet"
        what = "several projects" if by_name else "no project"
        raise InvalidInput(f"{text!r} names {what} in your memory. Known projects: {listed}.")

    # -- sessions ----------------------------------------------------------------------------
    def get_session(self, session_id: str) -> Session:
        sid = check_text("session_id", session_id, limits.NAME)
        s = self.sessions.get(sid)
        if s is None:
            raise NotFound(
                f"No session '{sid}' in your memory.",
                tool="Use memory_list_sessions to find ids, or omit session_id to use the "
                "open session.",
                web="The Sessions page lists yours.",
            )
        return s

    def start_session(
        self, ide_hint: str | None = None, session_id: str | None = None
    ) -> SessionStart:
        """Open a session (auto-closing ones open > 24 h), or reuse ``session_id`` if given."""
        hint = optional_text("ide_hint", ide_hint, limits.NAME)
        ts = now_ts()
        with self.db.transaction() as tx:
            if session_id:
                existing = self.sessions.get(session_id.strip(), tx)
                if existing is None:
                    raise NotFound(
                        f"No session '{session_id}' in your memory to resume.",
                        tool="Call memory_start_session() without session_id to open a new one.",
                    )
                self.sessions.touch(tx, existing.id, ts)
                self.directory.seen(tx, ts)
                return SessionStart(existing, True, [])
            closed = self.sessions.open_before(tx, ts_ago(hours=AUTO_CLOSE_HOURS))
            self.close_auto_in(tx, closed, AUTO_CLOSED_ONE_LINER, ts)
            sid = new_id()
            self.sessions.insert(tx, sid, ts, hint, self.project_key)
            self.directory.opened(tx, ts)
            session = self.sessions.get(sid, tx)
        assert session is not None
        return SessionStart(session, False, closed)

    def auto_close(self, session_ids: Sequence[str], one_liner: str) -> list[str]:
        """Close those of ``session_ids`` that are this user's and still open, marked as closed
        automatically; a one-liner the agent already wrote is kept. Returns the ids closed."""
        line = stored_text("one_liner", one_liner, limits.ONE_LINER)
        ts = now_ts()
        with self.db.transaction() as tx:
            open_ids = self.sessions.open_ids(tx, session_ids)
            self.sessions.close_auto(tx, open_ids, line, ts)
        return open_ids

    def close_auto_in(self, tx: Tx, ids: Sequence[str], one_liner: str, ts: str) -> None:
        """Close sessions without memory_end_session: an implicit one with a one-liner and
        topics made from what it holds (:mod:`autoline`), any other with ``one_liner``."""
        for sid in ids:
            s = self.sessions.get(sid, tx)
            if s is None or not s.implicit:
                self.sessions.close_auto(tx, [sid], one_liner, ts)
                continue
            line, topics = autoline.auto_line(
                self.facts.headlines_of_session(tx, sid, autoline.READ),
                self.chunks.headlines_of_session(tx, sid, autoline.QUOTED),
            )
            self.sessions.close_auto(tx, [sid], line, ts, topics)
            if s.topics is None and topics:
                self.directory.ended(tx, ts, None, topics, seen=False)

    def resolve_session(self, session_id: str | None, tx: Tx, *, split: bool = True) -> SessionRef:
        """The session a write belongs to: the given one, else the latest open one, else a new one.

        Agents forget memory_start_session; a write must never fail for that reason. With
        ``split``, an implicit session silent for longer than the session gap is closed and a
        new one opened (ending a session never splits: it ends the one that was open).
        """
        ts = now_ts()
        if session_id and session_id.strip():
            s = self.sessions.get(session_id.strip(), tx)
            if s is None:
                raise NotFound(
                    f"No session '{session_id}' in your memory.",
                    tool="Omit session_id to use the open session, or call memory_start_session().",
                )
            self._touch(tx, s, ts)
            return SessionRef(s, False)
        ref = self._open_ref(tx, split=split)
        if ref is not None:
            return ref
        return SessionRef(self._open_implicit(tx, ts), True)

    def _open_implicit(self, tx: Tx, ts: str) -> Session:
        """Open a session for a write made with none open (an implicit session)."""
        sid = new_id()
        self.sessions.insert(tx, sid, ts, project=self.project_key, implicit=True)
        self.directory.opened(tx, ts)
        s = self.sessions.get(sid, tx)
        assert s is not None
        return s

    def _open_ref(self, tx: Tx, *, split: bool = True) -> SessionRef | None:
        """The latest open session of this project, touched, or None. An implicit one silent
        for longer than the session gap is closed instead, and a new one opened."""
        latest = self.sessions.latest_open(tx, self.project_key)
        if latest is None:
            return None
        ts = now_ts()
        gap = self.session_gap_minutes
        last = latest.last_activity_at or latest.started_at
        if split and latest.implicit and gap > 0 and last < ts_ago(minutes=gap):
            self.close_auto_in(tx, [latest.id], "", ts)
            return SessionRef(self._open_implicit(tx, ts), True, self.sessions.get(latest.id, tx))
        self._touch(tx, latest, ts)
        return SessionRef(latest, False)

    def _touch(self, tx: Tx, s: Session, ts: str) -> None:
        """Record activity, at most once per TOUCH_SECONDS: a write saved on most calls."""
        if (s.last_activity_at or "") < ts_ago(seconds=TOUCH_SECONDS):
            self.sessions.touch(tx, s.id, ts)
            self.directory.seen(tx, ts)

    def end_session(
        self,
        session_id: str | None,
        one_liner: str,
        topics: str | Sequence[str] | None,
        outcome: str | None,
        summary: str | None,
        key_facts: str | Sequence[str] | None = None,
        code_refs: str | Sequence[str] | None = None,
        importance: int = 5,
    ) -> tuple[Session, bool]:
        """Close a session with its Tier-1 line and Tier-2 summary. Returns (session, was_open)."""
        line = stored_text("one_liner", one_liner, limits.ONE_LINER)
        tags = limits.tags(topics)
        out = optional_stored("outcome", outcome, limits.OUTCOME)
        body = optional_stored("summary", summary, limits.SUMMARY)
        facts = limits.stored_lines("key_facts", key_facts, limits.SUMMARY)
        refs = limits.stored_lines("code_refs", code_refs, limits.SUMMARY)
        imp = check_importance(importance)
        ts = now_ts()
        tier2 = bool(body or facts or refs)
        with self.db.transaction() as tx:
            ref = self.resolve_session(session_id, tx, split=False)
            was_open = ref.session.is_open
            self.sessions.end(
                tx,
                ref.session.id,
                ts,
                one_liner=line,
                topics=tags,
                outcome=out,
                importance=imp,
                has_tier2=tier2,
            )
            if tier2:
                self.sessions.save_summary(tx, ref.session.id, body or "", facts, refs, ts)
            self.directory.ended(tx, ts, ref.session.topics, tags)
            s = self.sessions.get(ref.session.id, tx)
        assert s is not None
        return s, was_open

    def session_detail(self, session_id: str) -> tuple[Session, Summary | None, list[Chunk]]:
        s = self.get_session(session_id)
        return s, self.sessions.summary(s.id), self.chunks.of_session(s.id)

    def list_sessions(
        self, limit: int = 10, topic: str | None = None, offset: int = 0
    ) -> list[Session]:
        """This project's sessions (and those made in none), newest first; with ``topic``,
        those tagged with it (a tag is at most limits.TOPIC characters: a longer one is no tag)."""
        tag = optional_text("topic", topic, limits.TOPIC)
        return self.sessions.page(check_limit(limit), offset, tag, self.project_key)

    def important_sessions(self, limit: int = 3, min_importance: int = 8) -> list[Session]:
        return self.sessions.important(limit, min_importance, self.project_key)

    def count_sessions(self) -> int:
        return self.sessions.count(project=self.project_key)

    def open_sessions(self) -> list[Session]:
        return self.sessions.open(20)

    # -- facts -------------------------------------------------------------------------------
    def store_fact(
        self,
        category: str,
        fact: str,
        confidence: float = 1.0,
        session_id: str | None = None,
        importance: int = 5,
        scope: str | None = None,
        *,
        files: Sequence[str] = (),
        replaces: Sequence[int] = (),
    ) -> tuple[Fact, bool, SessionRef | None]:
        """Store a fact in the current project (see :meth:`fact_scope`). Returns (fact,
        created, session); an identical active fact seen from this project is reused (the
        check by meaning runs later: ``memory/dedup.py``). ``files`` (normalised paths) are
        bound to the fact, new or reused. ``replaces``: the user's active facts this one
        replaces, retired in the same transaction (:meth:`replace_in`); one that is not
        refuses the whole call, and nothing is stored."""
        cat = check_category(category)
        text = stored_text("fact", fact, limits.FACT)
        conf = check_unit("confidence", confidence)
        imp = check_importance(importance)
        where = self.fact_scope(cat, scope)
        digest = content_hash(text)
        ts = now_ts()
        key = self.project_key
        with self.db.transaction() as tx:
            dup = self.facts.active_with_hash(digest, tx, key)
            if dup is not None:
                self.fact_files.add(tx, dup.id, files, ts)
                self.replace_in(tx, dup, replaces, ts, "Nothing stored")
                return dup, False, None
            # Omitted: the fact belongs to the open session of this project, if there is one
            # (a fact alone never opens a session).
            ref = self.resolve_session(session_id, tx) if session_id else self._open_ref(tx)
            created = self.facts.insert(
                tx,
                category=cat,
                fact=text,
                source_session=ref.session.id if ref else None,
                confidence=conf,
                importance=imp,
                digest=digest,
                ts=ts,
                project=key,
                scope=where,
            )
            self.fact_files.add(tx, created.id, files, ts)
            self.directory.count_facts(tx, 1)
            self.replace_in(tx, created, replaces, ts, "Nothing stored")
        return created, True, ref

    def replace_in(
        self, tx: Tx, fact: Fact, ids: Sequence[int], ts: str, nothing: str = "Nothing changed"
    ) -> list[int]:
        """Inside a write: ``fact`` replaces the facts ``ids`` (the user's active facts, in any
        project): each is deprecated ("replaced by #N") and linked (``supersedes``, "stated by
        the agent"). A fact ``fact`` already replaces is left as it is. Returns the ids retired
        now. Raises InvalidInput, ending ``nothing``, for an id that is unknown (or another
        user's: reported alike), deprecated for another reason, or ``fact`` itself."""
        if not ids:
            return []
        done = {
            x.fact.id
            for x in self.links.of_facts([fact.id], tx)
            if x.outgoing and x.kind == "supersedes"
        }
        todo: list[int] = []
        for i in ids:
            other = self.facts.get(i, tx)
            if i == fact.id:
                raise InvalidInput(
                    f"Fact #{i} is the replacing fact: it cannot replace itself. {nothing}."
                )
            if other is None:
                raise InvalidInput(f"No fact #{i} in your memory to replace. {nothing}.")
            if other.deprecated and i not in done:
                raise InvalidInput(
                    f"Fact #{i} is already deprecated ({other.deprecation_reason}). {nothing}."
                )
            if i not in done:
                todo.append(i)
        for i in todo:
            self.deprecate_in(tx, i, f"replaced by #{fact.id}", ts)
            self.links.add(tx, fact.id, i, "supersedes", STATED, None, ts)
        return todo

    def replace(self, fact_id: int, ids: Sequence[int]) -> tuple[list[int], list[int]]:
        """Fact ``fact_id`` replaces the facts ``ids`` too (:meth:`replace_in`); with no ids,
        it replaces none any more: every fact it replaced or absorbed (by the agent's word or
        the background check's: retired, merged into it, or marked as updated by it) is
        restored and unlinked. One transaction. Returns (retired, restored)."""
        current = self.get_fact(fact_id)
        with self.db.transaction() as tx:
            ts = now_ts()
            if ids:
                if current.deprecated:
                    raise InvalidInput(
                        f"Fact #{fact_id} is deprecated: it cannot replace other facts. "
                        "Nothing changed."
                    )
                return self.replace_in(tx, current, ids, ts), []
            restored = []
            for x in self.links.of_facts([fact_id], tx):
                if not x.outgoing or x.kind not in ("supersedes", "merged"):
                    continue
                if x.fact.deprecated:  # retired or merged away: back, unlinked
                    self._restore_in(tx, x.fact.id, ts)
                else:  # only marked as updated (the background check's guess): unmarked
                    self.links.undo_replacement(tx, x.fact.id)
                restored.append(x.fact.id)
        return [], restored

    def fact_scope(self, category: str, scope: str | None) -> str:
        """The scope a fact gets: the one asked for, else by category (preferences, identity,
        people: global; the rest: the project's). Outside any project every fact is global."""
        if scope is not None:
            check_choice("scope", scope, projects.SCOPES)
        if self.project is None:
            return "global"
        if scope is None:
            return "global" if category in projects.GLOBAL_CATEGORIES else "project"
        return scope

    def set_fact_scope(self, fact_id: int, scope: str) -> Fact:
        """Make a fact global, or this project's (it moves to the current project)."""
        current = self.get_fact(fact_id)
        check_choice("scope", scope, projects.SCOPES)
        key = self.project_key
        if scope == "project" and key is None:
            raise InvalidInput(
                "No project here (no client roots, the working directory is in no git "
                "repository, BIGMIND_PROJECT is unset), so the fact stays global."
            )
        if current.scope != scope or (scope == "project" and current.project != key):
            with self.db.transaction() as tx:
                self.facts.set_scope(
                    tx, fact_id, scope, key if scope == "project" else None, now_ts()
                )
        return self.get_fact(fact_id)

    def get_fact(self, fact_id: int) -> Fact:
        f = self.facts.get(fact_id)
        if f is None:
            raise NotFound(
                f"No fact #{fact_id} in your memory.",
                tool="Use memory_search_facts to find fact ids.",
                cli="`bigmind search --kind facts WORDS` finds fact ids.",
                web="The Facts page lists yours.",
            )
        return f

    def deprecate_fact(self, fact_id: int, reason: str) -> Fact:
        why = stored_text("reason", reason, limits.SHORT)
        current = self.get_fact(fact_id)
        if current.deprecated:
            raise InvalidInput(
                f"Fact #{fact_id} is already deprecated ({current.deprecation_reason}). "
                "Nothing changed."
            )
        with self.db.transaction() as tx:
            self.deprecate_in(tx, fact_id, why, now_ts())
        return self.get_fact(fact_id)

    def deprecate_in(self, tx: Tx, fact_id: int, reason: str, ts: str) -> None:
        """Deprecate a fact inside a write: a retired fact has no conflicts left to settle."""
        self.facts.deprecate(tx, fact_id, reason, ts)
        self.directory.count_facts(tx, -1)
        self.links.settle(tx, fact_id)

    def restore_fact(self, fact_id: int) -> Fact:
        """Undo :meth:`deprecate_fact`, unless an identical fact is active again meanwhile."""
        current = self.get_fact(fact_id)
        if not current.deprecated:
            raise InvalidInput(f"Fact #{fact_id} is not deprecated. Nothing changed.")
        with self.db.transaction() as tx:
            self._restore_in(tx, fact_id, now_ts())
        return self.get_fact(fact_id)

    def _restore_in(self, tx: Tx, fact_id: int, ts: str) -> None:
        same = self.facts.active_twin(tx, fact_id)
        if same is not None:
            raise InvalidInput(
                f"An identical active fact #{same} exists; restoring #{fact_id}"
                " would duplicate it. Nothing changed."
            )
        self.facts.restore(tx, fact_id, ts)
        self.directory.count_facts(tx, 1)
        self.links.undo_replacement(tx, fact_id)

    def facts_by_ids(self, ids: Sequence[int]) -> list[Fact]:
        """The user's active facts seen from this project with these ids, in the order given."""
        return self.facts.by_ids(ids, self.project_key)

    def top_facts(self, limit: int) -> list[Fact]:
        """Active facts seen from this project, most important, most confident, most recently
        updated first."""
        return self.facts.top(limit, self.project_key)

    def count_active_facts(self, cap: int | None = None) -> int:
        """Active facts seen from this project; with ``cap``, counting stops there."""
        return self.facts.count("active", cap=cap, project=self.project_key)

    # -- chunks ------------------------------------------------------------------------------
    def append_chunk(
        self,
        content: str,
        session_id: str | None = None,
        role: str = "assistant",
        flag_reason: str | None = None,
    ) -> tuple[Chunk, SessionRef]:
        body = stored_text("content", content, limits.CHUNK)
        check_choice("role", role, CHUNK_ROLES)
        reason = optional_stored("flag_reason", flag_reason, limits.SHORT)
        with self.db.transaction() as tx:
            ref = self.resolve_session(session_id, tx)
            chunk = self.chunks.append(tx, ref.session.id, role, body, reason, now_ts())
        return chunk, ref

    # -- profile -----------------------------------------------------------------------------
    def get_profile(self) -> Profile:
        return self.profiles.get()

    def update_profile(
        self,
        role: str | None = None,
        preferences: str | None = None,
        pinned_facts: str | Sequence[str] | None = None,
    ) -> Profile:
        """Upsert the Tier-0 profile; a field left as None keeps its value, "" clears it."""
        if role is None and preferences is None and pinned_facts is None:
            raise InvalidInput("Give at least one of role, preferences or pinned_facts.")
        fields: dict[str, str | None] = {}
        if role is not None:
            fields["role"] = optional_stored("role", role, limits.SHORT)
        if preferences is not None:
            fields["preferences"] = optional_stored("preferences", preferences, limits.PROFILE_TEXT)
        if pinned_facts is not None:
            fields["pinned_facts"] = limits.stored_lines(
                "pinned_facts", pinned_facts, limits.PROFILE_TEXT
            )
        with self.db.transaction() as tx:
            self.profiles.update(tx, fields, now_ts())
        return self.get_profile()

    def counts(self) -> dict[str, int]:
        """Row counts of this user's memory per kind."""
        return {
            **self.sessions.counts(),
            "facts": self.facts.count("active"),
            "deprecated_facts": self.facts.count("deprecated"),
            "chunks": self.chunks.count(),
            "hypotheses": Hypotheses(self.db, self.uid).count(),
            "reminders_open": Reminders(self.db, self.uid).count_open(),
            "attempts": Attempts(self.db, self.uid).count(),
            "bound_files": self.fact_files.count(),
            "global_approved": Knowledge(self.db, self.uid).count("approved"),
        }
