"""A lived-in memory for the profile page's tests (tests/web/test_webdata.py and the web tests).

Everything is written through the real store, journal, people, globalkb and savings functions,
then moved back in time with a few UPDATE statements: ~120 sessions on 90 days over the last
~300 days (the last 8 days in a row, ending today), summaries, flagged exchanges, ~130 facts
in 5 categories, a journal with every status, people, tokens saved over 20 weeks, and company
knowledge promoted by a second user, bob. Deterministic (seeded random), and fast.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from bigmind.memory import globalkb, journal, people, savings
from bigmind.models import TS_FORMAT
from bigmind.storage.store import Store

WEB_BASE = "http://127.0.0.1:7700"


def csrf_of(html: str) -> str:
    """The CSRF token of a page's forms."""
    m = re.search(r'name="csrf" value="([^"]+)"', html)
    assert m, "page has no CSRF field"
    return m.group(1)


SCRIPT_FACT = 'Never render <script>alert("xss")</script> unescaped & keep "quotes"'
TOPICS = (
    "auth,postgres",
    "ci,pytest",
    "frontend,css",
    "postgres,migrations",
    "auth,security",
    "docs",
    "ci,docker",
    "frontend,accessibility",
)
CATEGORIES = ("preference", "decision", "codebase", "constraint", "bugfix")
COMPONENTS = (
    "auth service",
    "billing worker",
    "CI pipeline",
    "frontend build",
    "search index",
    "migration runner",
    "API gateway",
    "session cache",
    "webhook handler",
    "pytest suite",
    "docker image",
    "release script",
    "feature flags",
)
TEMPLATES = {
    "preference": (
        "Prefer small focused commits when touching the {c}",
        "Use type hints everywhere in the {c}",
    ),
    "decision": (
        "We decided to keep the {c} on PostgreSQL 16",
        "The {c} moved to async handlers this quarter",
    ),
    "codebase": (
        "The {c} lives under src/{slug}/ with its own README",
        "Configuration of the {c} is read from settings.toml",
    ),
    "constraint": (
        "The {c} must answer within 200 ms at p95",
        "Never log secrets from the {c}",
    ),
    "bugfix": (
        "Fixed a race in the {c} by taking the lock before reading",
        "The {c} crashed on empty input; a guard and a test were added",
    ),
}
RUN_DAYS = 8  # consecutive days with sessions, ending today
DAYS = 90
SESSIONS = 120


@dataclass
class WebWorld:
    user: str
    session_id: str  # closed, with a summary and at least two chunks
    fact_id: int  # active, safe to deprecate
    deprecated_fact_id: int  # restorable (no identical active fact)
    script_fact_id: int  # active; its text is SCRIPT_FACT
    pending_global_id: int  # promoted by bob, pending
    approved_global_id: int  # promoted by bob, approved
    topic: str  # a session topic that exists
    category: str  # a fact category that exists
    sessions: int
    facts: int  # active
    today: date


def _ts(moment: datetime) -> str:
    return moment.strftime(TS_FORMAT)


def _start_times(rng: random.Random, today: date, now: datetime) -> list[datetime]:
    """Session start times, oldest first: one per chosen day, the rest on random chosen days."""
    offsets = list(range(RUN_DAYS)) + rng.sample(range(RUN_DAYS + 1, 301), DAYS - RUN_DAYS)
    per_day = offsets + [rng.choice(offsets) for _ in range(SESSIONS - DAYS)]
    starts = []
    for off in per_day:
        day = today - timedelta(days=off)
        midnight = datetime.combine(day, time(0))
        if day == today:  # never in the future: somewhere between midnight and now
            starts.append(midnight + (now - midnight) * rng.uniform(0.05, 0.6))
        else:
            starts.append(midnight + timedelta(hours=rng.uniform(7, 21)))
    return sorted(starts)


def seed_world(store: Store, today: date | None = None) -> WebWorld:
    """Fill ``store``'s user's memory (and bob's company entries) and return the ids to use."""
    rng = random.Random(7)
    real_now = datetime.now(UTC).replace(tzinfo=None)
    today = today or real_now.date()
    now = real_now if today == real_now.date() else datetime.combine(today, time(12))
    starts = _start_times(rng, today, now)

    store.update_profile(
        role="Backend engineer on the payments team",
        preferences="Short answers; show the diff first; pytest over unittest.",
        pinned_facts=[
            "Production runs PostgreSQL 16 with pgvector",
            "Releases go out on Tuesdays",
            "Ask before touching the billing schema",
        ],
    )

    # Sessions: all but the newest are closed; every third has a summary.
    ids: list[str] = []
    times: dict[str, tuple[datetime, datetime | None]] = {}
    for i, start in enumerate(starts):
        sid = store.start_session(ide_hint="vscode" if i % 2 else "claude-code").session.id
        ids.append(sid)
        last = i == len(starts) - 1
        end = None if last else min(start + timedelta(minutes=rng.randint(15, 150)), now)
        times[sid] = (start, end)
        if last:
            continue
        topics = TOPICS[i % len(TOPICS)]
        summary = None
        if i % 3 == 0:
            summary = (
                f"Worked on {topics.replace(',', ' and ')}: traced the problem, changed the code, "
                f"ran the tests. Session {i + 1}."
            )
        store.end_session(
            sid,
            f"Session {i + 1}: {topics.replace(',', ' + ')} work",
            topics,
            "done" if i % 4 else "partly done",
            summary,
            key_facts=["Tests pass locally"] if summary else None,
            code_refs=["src/app.py"] if summary else None,
            importance=rng.randint(3, 9),
        )
    closed_summarised = [sid for i, sid in enumerate(ids[:-1]) if i % 3 == 0]
    detail_session = closed_summarised[-1]

    # Exchanges in some sessions, a few flagged.
    for k, sid in enumerate([*closed_summarised[-4:], *ids[10:40:6]]):
        for j in range(3 if sid == detail_session else 2):
            store.append_chunk(
                f"Exchange {j + 1} of session {ids.index(sid) + 1}: why the build broke, "
                "and the fix we agreed on.",
                sid,
                role="user" if j % 2 == 0 else "assistant",
                flag_reason="decision worth keeping" if (k + j) % 4 == 0 else None,
            )

    # Facts: 13 components × 5 categories × 2 templates, most tied to a session.
    fact_ids: list[int] = []
    for c_i, comp in enumerate(COMPONENTS):
        for cat in CATEGORIES:
            for template in TEMPLATES[cat]:
                n = len(fact_ids)
                text = template.format(c=comp, slug=comp.split()[0].lower())
                sid = ids[(n * 7) % (len(ids) - 1)] if n % 5 else None
                f, _, _ = store.store_fact(
                    cat,
                    text,
                    confidence=(1.0, 0.9, 0.8, 0.6, 0.95)[n % 5],
                    session_id=sid,
                    importance=1 + (n + c_i) % 10,
                )
                fact_ids.append(f.id)
    script, _, _ = store.store_fact("constraint", SCRIPT_FACT, 0.9, detail_session, 8)
    deprecated = fact_ids[3:130:26]
    for fid in deprecated:
        store.deprecate_fact(fid, "Superseded by a newer decision")

    # The journal: open, confirmed (12), refuted, abandoned; confidences across the bands.
    plan = (
        [("open", c) for c in (0.6, 0.75, 0.9, 0.5, 0.8, 0.65)]
        + [
            ("confirmed", c)
            for c in (0.95, 0.9, 0.92, 0.85, 0.8, 0.75, 0.7, 0.6, 0.55, 0.4, 0.97, 0.88)
        ]
        + [("refuted", c) for c in (0.9, 0.7, 0.45, 0.3, 0.6)]
        + [("abandoned", c) for c in (0.5, 0.8)]
    )
    for n, (status, conf) in enumerate(plan):
        h, _ = journal.add(
            store,
            f"I predict the {COMPONENTS[n % len(COMPONENTS)]} slowdown comes from cause #{n + 1}",
            conf,
            ids[(n * 5 + 3) % (len(ids) - 1)],
        )
        if status != "open":
            journal.resolve(store, h.id, status, f"Checked the logs: {status}.")

    for name, role, team, skills in (
        ("maria", "Tech lead", "payments", "postgres, billing"),
        ("kenji", "SRE", "platform", "kubernetes, ci"),
        ("lena", "Frontend engineer", "web", "css, accessibility"),
        ("omar", "Security engineer", "security", "auth, secrets"),
        ("priya", "Product manager", "payments", "roadmap"),
    ):
        people.remember(store, name, name.title(), role, team, skills, f"Works with {team}.")

    # Tokens saved: about one entry a week in the last 20 weeks.
    recent = [sid for sid in ids[:-1] if times[sid][0] >= now - timedelta(weeks=20)]
    for n, sid in enumerate(recent[::2]):
        savings.log(store, sid, f"Recalled decision {n + 1}", 400 + (n * 977) % 3_000, "recall")

    # Tier G: bob, a member, promotes five entries; three approved, two pending, whatever the
    # mode (alice's transaction below sets them: PostgreSQL lets only a curator approve).
    bob = Store(store.db, "bob", mode="team")
    entries = [
        globalkb.promote(bob, cat, title, body, imp).entry.id
        for cat, title, body, imp in (
            ("standard", "Type hints", "All Python code is type-checked with mypy --strict.", 8),
            ("architecture", "One database", "Every service reads PostgreSQL 16.", 9),
            ("glossary", "Tier G", "Company knowledge every agent sees.", 5),
            ("decision", "Release day", "Releases go out on Tuesdays.", 6),
            ("pattern", "Retries", "Retry webhooks three times with backoff.", 7),
        )
    ]

    # Back in time: sessions one by one, everything else from its session's times.
    with store.db.transaction() as tx:
        for sid, (start, end) in times.items():
            tx.execute(
                "UPDATE sessions SET started_at = ?, ended_at = ?, last_activity_at = ?"
                " WHERE id = ?",
                (_ts(start), end and _ts(end), _ts(end or start), sid),
            )
    with store.db.transaction() as tx:
        of = "(SELECT {} FROM sessions s WHERE s.id = {}.{})"
        u = (store.uid,)
        tx.execute(
            f"UPDATE session_summaries SET created_at = {of.format('ended_at', 'session_summaries', 'id')}"
            " WHERE id IN (SELECT id FROM sessions WHERE user_id = ?)",
            u,
        )
        for table in ("conversation_chunks", "token_saves"):
            tx.execute(
                f"UPDATE {table} SET created_at = {of.format('started_at', table, 'session_id')}"
                " WHERE user_id = ?",
                u,
            )
        tx.execute(
            f"UPDATE hypotheses SET created_at = {of.format('started_at', 'hypotheses', 'session_id')},"
            " resolved_at = CASE WHEN resolved_at IS NULL THEN NULL"
            f" ELSE {of.format('last_activity_at', 'hypotheses', 'session_id')} END"
            " WHERE user_id = ?",
            u,
        )
        stamp = of.format("started_at", "facts", "source_session")
        tx.execute(
            f"UPDATE facts SET created_at = {stamp}, updated_at = {stamp}"
            " WHERE user_id = ? AND source_session IS NOT NULL",
            u,
        )
        for n, fid in enumerate(fact_ids):  # facts without a session: spread over the year
            if n % 5 == 0:
                ts = _ts(starts[0] + (now - starts[0]) * (n / len(fact_ids)))
                tx.execute(
                    "UPDATE facts SET created_at = ?, updated_at = ? WHERE id = ? AND source_session IS NULL",
                    (ts, ts, fid),
                )
        for fid in deprecated:
            tx.execute("UPDATE facts SET deprecated_at = updated_at WHERE id = ?", (fid,))
        for gid in entries[:3]:
            tx.execute(
                "UPDATE global_knowledge SET status = 'approved', approved_by = ?, reviewed_by = ?,"
                " reviewed_at = updated_at WHERE id = ?",
                (bob.uid, bob.uid, gid),
            )
        for gid in entries[3:]:
            tx.execute(
                "UPDATE global_knowledge SET status = 'pending', approved_by = NULL,"
                " reviewed_by = NULL, reviewed_at = NULL WHERE id = ?",
                (gid,),
            )

    active = [fid for fid in fact_ids if fid not in deprecated]
    return WebWorld(
        user=store.user.username,
        session_id=detail_session,
        fact_id=active[0],
        deprecated_fact_id=deprecated[0],
        script_fact_id=script.id,
        pending_global_id=entries[3],
        approved_global_id=entries[0],
        topic="postgres",
        category="decision",
        sessions=len(ids),
        facts=len(active) + 1,
        today=today,
    )
