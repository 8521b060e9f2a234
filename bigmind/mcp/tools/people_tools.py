"""People: colleagues, owners and experts the agent should know about."""

from __future__ import annotations

from typing import Annotated

from fastmcp.tools import ToolResult
from pydantic import Field

from bigmind import limits
from bigmind.mcp.tools.base import READ_ONLY, RUNTIME, WRITE, Catalog, result
from bigmind.models import day_of
from bigmind.runtime import Runtime
from bigmind.service import colleagues
from bigmind.service.display import quoted


def _card(p: colleagues.Person) -> str:
    bits = [f"**{quoted(p.display_name or p.username)}** (`{quoted(p.username)}`)"]
    bits += [quoted(x) for x in (p.role, p.team and f"team {p.team}") if x]
    line = "- " + ", ".join(bits)
    if p.expertise:
        line += f" — expertise: {quoted(p.expertise)}"
    if p.notes:
        line += f"\n  > {quoted(p.notes)}"
    return line


def _expert(e: colleagues.Expert) -> str:
    """One line of a who-knows answer: the person, then the evidence (topics, entries)."""
    who = f"**{quoted(e.display_name or e.username)}** (`{quoted(e.username)}`)"
    who += "".join(f", {quoted(x)}" for x in (e.role, e.team and f"team {e.team}") if x)
    bits = [f"{quoted(t.topic)} ×{t.sessions}" for t in e.topics[:5]]
    bits += [f"promoted #{x.id} {quoted(x.title)}" for x in e.entries[:3]]
    last = f", last {day_of(e.last_at)}" if e.last_at else ""
    return f"- {who}{' (you)' if e.me else ''}: {'; '.join(bits)}{last}"


catalog = Catalog()


@catalog.tool(annotations=WRITE, run_in_thread=False)
def memory_remember_person(
    username: str,
    display_name: str | None = None,
    role: str | None = None,
    team: str | None = None,
    expertise: Annotated[list[str] | str | None, Field(description="Merged, not replaced.")] = None,
    notes: Annotated[str | None, Field(description="Appended, not replaced.")] = None,
    rt: Runtime = RUNTIME,
) -> ToolResult:
    """Store or update a colleague: who they are and what they know."""
    r = colleagues.remember_person(rt, username, display_name, role, team, expertise, notes)
    text = f"{'Remembered new person' if r.created else 'Updated'} {r.person.username}."
    if r.trimmed:
        text += f" Trimmed {' and '.join(r.trimmed)} to stay within the caps."
    return result(text, person=r.person.as_dict(), created=r.created, trimmed=r.trimmed)


@catalog.tool(annotations=READ_ONLY, run_in_thread=False)
def memory_recall_person(query: str, rt: Runtime = RUNTIME) -> ToolResult:
    """Find recorded colleagues by name, role, team or expertise."""
    found = colleagues.recall_person(rt, query)
    if not found:
        return result(f"Nobody matches {query!r}.", people=[])
    text = "\n".join(f"{_card(p)}\n  why: {quoted(why)}" for p, _score, why in found)
    return result(text, people=[p.as_dict() for p, _s, _w in found])


@catalog.tool(annotations=READ_ONLY, run_in_thread=False)
def memory_list_people(
    limit: Annotated[int, Field(ge=1, le=limits.RESULTS)] = 20,
    rt: Runtime = RUNTIME,
) -> ToolResult:
    """All known people, most recently seen first."""
    rows = colleagues.list_people(rt, limit)
    return result(
        "\n".join(map(_card, rows)) or "No people yet.", people=[p.as_dict() for p in rows]
    )


@catalog.tool(annotations=READ_ONLY, run_in_thread=False)
def memory_who_knows(
    topic: str,
    rt: Runtime = RUNTIME,
) -> ToolResult:
    """Who worked on a topic, from everyone's session topics and approved company
    knowledge."""
    found = colleagues.who_knows(rt, topic)
    if not found:
        return result(f"Nobody in the directory worked on {topic!r}.", people=[])
    text = "\n".join(map(_expert, found))
    return result(text, people=[e.as_dict() for e in found])
