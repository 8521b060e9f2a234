"""What changed in a user's memory since a given session started."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from bigmind.models import day_of
from bigmind.store import Store

MAX_ITEMS = 20


@dataclass(slots=True)
class Diff:
    since_session: str
    since: str
    sections: dict[str, list[str]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)

    def render(self) -> str:
        head = f"Changes since session `{self.since_session}` started ({self.since[:16]} UTC)"
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
    diff: Diff, name: str, store: Store, sql: str, params: tuple[Any, ...], fmt: Any
) -> None:
    count_sql = f"SELECT count(*) AS n FROM ({sql}) AS q"
    diff.counts[name] = int(store.db.query(count_sql, params)[0]["n"])
    rows = store.db.query(f"{sql} LIMIT {MAX_ITEMS}", params)
    diff.sections[name] = [fmt(r) for r in rows]


def since_session(store: Store, session_id: str) -> Diff:
    s = store.get_session(session_id)
    t = s.started_at
    u = store.uid
    d = Diff(s.id, t)
    _section(
        d,
        "New facts",
        store,
        "SELECT id, category, fact, created_at FROM facts WHERE user_id = ? AND created_at >= ?"
        " AND deprecated = 0 ORDER BY created_at",
        (u, t),
        lambda r: f"- #{r['id']} [{r['category']}] {r['fact']}",
    )
    _section(
        d,
        "Deprecated facts",
        store,
        "SELECT id, fact, deprecation_reason FROM facts WHERE user_id = ? AND deprecated = 1"
        " AND deprecated_at >= ? ORDER BY deprecated_at",
        (u, t),
        lambda r: f"- #{r['id']} {r['fact']} — {r['deprecation_reason']}",
    )
    _section(
        d,
        "Sessions opened",
        store,
        "SELECT id, started_at, ended_at, one_liner FROM sessions WHERE user_id = ?"
        " AND started_at > ? ORDER BY started_at",
        (u, t),
        lambda r: (
            f"- {day_of(r['started_at'])} `{r['id']}` "
            + ("🟡 in progress" if r["ended_at"] is None else (r["one_liner"] or "(closed)"))
        ),
    )
    _section(
        d,
        "Sessions closed",
        store,
        "SELECT id, ended_at, one_liner, outcome FROM sessions WHERE user_id = ?"
        " AND ended_at >= ? ORDER BY ended_at",
        (u, t),
        lambda r: (
            f"- {day_of(r['ended_at'])} `{r['id']}` {r['one_liner']}"
            + (f" — {r['outcome']}" if r["outcome"] else "")
        ),
    )
    _section(
        d,
        "Hypotheses added",
        store,
        "SELECT id, hypothesis, confidence FROM hypotheses WHERE user_id = ? AND created_at >= ?"
        " ORDER BY created_at",
        (u, t),
        lambda r: f"- #{r['id']} ({float(r['confidence'] or 0):.2f}) {r['hypothesis']}",
    )
    _section(
        d,
        "Hypotheses resolved",
        store,
        "SELECT id, hypothesis, status, resolution FROM hypotheses WHERE user_id = ?"
        " AND resolved_at >= ? ORDER BY resolved_at",
        (u, t),
        lambda r: f"- #{r['id']} {r['status']}: {r['hypothesis']} — {r['resolution']}",
    )
    _section(
        d,
        "Profile changed",
        store,
        "SELECT role, preferences, updated_at FROM identity_profile WHERE user_id = ?"
        " AND updated_at >= ?",
        (u, t),
        lambda r: f"- now: role {r['role'] or '—'}; preferences {r['preferences'] or '—'}",
    )
    _section(
        d,
        "People added or updated",
        store,
        "SELECT username, display_name, role, created_at FROM people WHERE updated_at >= ?"
        " ORDER BY updated_at",
        (t,),
        lambda r: (
            f"- {r['username']}"
            + (f" ({r['display_name']})" if r["display_name"] else "")
            + (f", {r['role']}" if r["role"] else "")
            + (" — new" if r["created_at"] >= t else "")
        ),
    )
    _section(
        d,
        "Company knowledge",
        store,
        "SELECT id, category, title, status FROM global_knowledge WHERE updated_at >= ?"
        " AND status IN ('approved', 'deprecated') ORDER BY updated_at",
        (t,),
        lambda r: f"- #{r['id']} [{r['category']}] {r['title']} ({r['status']})",
    )
    return d
