"""What changed in a user's memory since a given session started."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from bigmind.memory.quoting import quoted as q
from bigmind.memory.rivals import settle_call
from bigmind.models import day_of
from bigmind.storage.db import Row
from bigmind.storage.fact_history_table import FactHistory
from bigmind.storage.hypotheses_table import Hypotheses
from bigmind.storage.knowledge_table import Knowledge
from bigmind.storage.people_table import People
from bigmind.storage.store import Store

MAX_ITEMS = 20


@dataclass(slots=True)
class Diff:
    since_session: str
    since: str
    sections: dict[str, list[str]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)

    def render(self) -> str:
        head = (
            f"Changes since session `{self.since_session}` started ({self.since[:16]} UTC; "
            "recalled data)"
        )
        if not any(self.counts.values()):
            return head + ": nothing."
        lines = [head + ":"]
        for name, items in self.sections.items():
            n = self.counts[name]
            if not n:
                continue
            lines.append(f"\n### {name} ({n})")
            lines += items
            if n > len(items):
                lines.append(f"- … and {n - len(items)} more")
        return "\n".join(lines)


def _section(
    diff: Diff, name: str, found: tuple[int, list[Row]], fmt: Callable[[Row], str]
) -> None:
    diff.counts[name], rows = found
    diff.sections[name] = [fmt(r) for r in rows]


def _link_line(r: Row) -> str:
    """A conflict (⚠️, with the call that settles it while both are active) or a fact that
    superseded another."""
    fact, other = f"#{r['fact_id']} {q(r['fact_text'])}", f"#{r['other_id']} {q(r['other_text'])}"
    if r["kind"] == "supersedes":
        return f"- {fact} supersedes {other}"
    line = f"- ⚠️ {fact} conflicts with {other}"
    if r["fact_deprecated"] or r["other_deprecated"]:
        return line + " (settled)"
    return line + f" — settle: {settle_call(int(r['other_id']), int(r['fact_id']))}"


def since_session(store: Store, session_id: str) -> Diff:
    s = store.get_session(session_id)
    t = s.started_at
    d = Diff(s.id, t)
    db, uid = store.db, store.uid
    _section(
        d,
        "New facts",
        store.facts.created_since(t, MAX_ITEMS),
        lambda r: f"- #{r['id']} [{q(r['category'])}] {q(r['fact'])}",
    )
    _section(
        d,
        "Deprecated facts",
        store.facts.deprecated_since(t, MAX_ITEMS),
        lambda r: f"- #{r['id']} {q(r['fact'])} — {q(r['deprecation_reason'])}",
    )
    _section(
        d,
        "Corrected facts",
        FactHistory(db, uid).edited_since(t, MAX_ITEMS),
        lambda r: (
            f"- #{r['fact_id']} now: {q(r['fact'])}"
            + (f" — {q(r['reason'])}" if r["reason"] else "")
        ),
    )
    _section(
        d,
        "Duplicates merged",
        store.links.since(t, ("merged",), MAX_ITEMS),
        lambda r: (
            f"- #{r['other_id']} {q(r['other_text'])} → merged into #{r['fact_id']} "
            f"{q(r['fact_text'])}"
        ),
    )
    _section(
        d,
        "Conflicts found",
        store.links.since(t, ("conflict", "supersedes"), MAX_ITEMS),
        _link_line,
    )
    _section(
        d,
        "Sessions opened",
        store.sessions.opened_since(t, MAX_ITEMS),
        lambda r: (
            f"- {day_of(r['started_at'])} `{q(r['id'])}` "
            + ("🟡 in progress" if r["ended_at"] is None else (q(r["one_liner"]) or "(closed)"))
        ),
    )
    _section(
        d,
        "Sessions closed",
        store.sessions.closed_since(t, MAX_ITEMS),
        lambda r: (
            f"- {day_of(r['ended_at'])} `{q(r['id'])}` {q(r['one_liner'])}"
            + (f" — {q(r['outcome'])}" if r["outcome"] else "")
        ),
    )
    _section(
        d,
        "Hypotheses added",
        Hypotheses(db, uid).added_since(t, MAX_ITEMS),
        lambda r: f"- #{r['id']} ({float(r['confidence'] or 0):.2f}) {q(r['hypothesis'])}",
    )
    _section(
        d,
        "Hypotheses resolved",
        Hypotheses(db, uid).resolved_since(t, MAX_ITEMS),
        lambda r: f"- #{r['id']} {r['status']}: {q(r['hypothesis'])} — {q(r['resolution'])}",
    )
    changed = store.profiles.changed_since(t)
    _section(
        d,
        "Profile changed",
        (len(changed), changed),
        lambda r: f"- now: role {q(r['role']) or '—'}; preferences {q(r['preferences']) or '—'}",
    )
    _section(
        d,
        "People added or updated",
        People(db, uid).changed_since(t, MAX_ITEMS),
        lambda r: (
            f"- {q(r['username'])}"
            + (f" ({q(r['display_name'])})" if r["display_name"] else "")
            + (f", {q(r['role'])}" if r["role"] else "")
            + (" — new" if r["created_at"] >= t else "")
        ),
    )
    _section(
        d,
        "Company knowledge",
        Knowledge(db, uid).reviewed_since(t, MAX_ITEMS),
        lambda r: f"- #{r['id']} [{q(r['category'])}] {q(r['title'])} ({r['status']})",
    )
    return d
