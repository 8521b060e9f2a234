"""Facts, chunks search and the identity profile."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Annotated, Literal

from fastmcp.tools import ToolResult
from mcp.types import TextContent
from pydantic import Field

from bigmind import limits
from bigmind.mcp import render
from bigmind.mcp.tools.base import (
    DESTRUCTIVE,
    READ_ONLY,
    RUNTIME,
    WRITE,
    Catalog,
    Importance,
    result,
)
from bigmind.mcp.tools.sessions_tools import SessionId, session_note
from bigmind.runtime import Runtime
from bigmind.service import facts as service
from bigmind.service import forgetting
from bigmind.service import recall as recalling
from bigmind.service.display import attempt_warnings, gotcha_lines, quote, quoted, replace_call

Query = Annotated[
    str,
    Field(description="A question or keywords; natural language is fine.", max_length=limits.QUERY),
]
Question = Annotated[str, Field(max_length=limits.QUERY)]  # a search by meaning: a question
Limit = Annotated[int, Field(ge=1, le=limits.RESULTS, description="Maximum results.")]
SearchScope = Literal["all", "project"]  # the rules card explains it (## Projects)
Kinds = Annotated[
    list[str] | str | None,
    Field(description="Any of fact, chunk, summary, hypothesis, person, global (default all)."),
]
Files = Annotated[
    list[str] | str | None, Field(description="Files it is about: shown when they are touched.")
]


Replaces = Annotated[
    list[int] | str | None, Field(description="Facts it updates: retired, undoable.")
]


def stored_reply(s: service.StoredFact, call: Callable[[int, Sequence[int]], str]) -> ToolResult:
    """The reply to a stored fact: what was stored, what it replaced (and the call that undoes
    it), the close facts to judge and the one ``call`` that replaces them."""
    f = s.fact
    if s.created:
        text = f"Stored fact #{f.id} [{f.category}] ({render.fact_place(f)})."
    else:
        text = f"Already known as fact #{f.id} [{f.category}]; nothing added."
    if s.retired:
        named = ", ".join(f"#{i}" for i in s.retired)
        text += f"\nReplaced {named} (deprecated, linked). Undo: {call(f.id, [])}"
    if s.files:
        text += f"\nBound to {', '.join(s.files)}: shown when they are focused or recalled."
    if s.close:
        text += "\nClose facts (replace, correct or keep both):"
        for c in s.close:
            text += f"\n- #{c.id} ({c.date}) {quote(c.text)}"
        text += f"\nIf #{f.id} replaces any: {call(f.id, [c.id for c in s.close])}"
    if s.degraded:
        text += (
            f"\n(Only an exact-repeat check ran: semantic search {s.degraded}. The check for"
            " rewordings and rivals runs once the model is ready.)"
        )
    text += session_note(s.session) + render.notices(s.notices)
    return result(
        text,
        fact_id=f.id,
        created=s.created,
        category=f.category,
        scope=f.scope,
        project=f.project,
        files=s.files,
        retired=s.retired,
        close=[c.as_dict() for c in s.close],
    )


def replaced_reply(
    r: service.Replaced, call: Callable[[int, Sequence[int]], str], then: ToolResult | None = None
) -> ToolResult:
    """The reply to :func:`bigmind.service.facts.replace`, before ``then``'s (the rest of the
    call) when there is one."""
    n = r.fact_id
    if r.retired:
        named = ", ".join(f"#{i}" for i in r.retired)
        text = f"Fact #{n} replaces {named} (deprecated, linked). Undo: {call(n, [])}"
    elif r.restored:
        named = ", ".join(f"#{i}" for i in r.restored)
        text = f"Restored {named}: fact #{n} no longer replaces them."
    elif r.named:
        text = f"Fact #{n} already replaces those; nothing changed."
    else:
        text = f"Fact #{n} replaces no fact; nothing changed."
    data: dict[str, object] = {"fact_id": n}
    if then is not None:
        said = then.content[0] if then.content else None
        text += "\n" + (said.text if isinstance(said, TextContent) else "")
        data |= then.structured_content or {}
    return result(text, **data, retired=r.retired, restored=r.restored)


def corrected_reply(c: service.Changed) -> ToolResult:
    """The reply to a correction, or to a move alone."""
    f, r = c.fact, c.corrected
    if r is None:
        return result(
            f"Fact #{f.id} is now {render.fact_place(f)}.", fact=f.as_dict(), scope=f.scope
        )
    if not r.changed:
        text = f"Fact #{f.id} already says that; nothing changed."
    else:
        what = f"restored version {r.restored}" if r.restored else ", ".join(r.changed)
        text = (
            f"Updated fact #{f.id} ({what}); version {r.replaced} is kept in its history."
            f"\nNow [{quoted(f.category)}]: {quoted(f.fact)}"
        )
    return result(text, fact=f.as_dict(), changed=r.changed, replaced_version=r.replaced or None)


def ranked(
    rt: Runtime,
    query: str,
    limit: int,
    kinds: Kinds,
    what: str,
    mode: str = "hybrid",
    include_deprecated: bool = False,
    scope: str = "all",
    bound: bool = False,
) -> ToolResult:
    r = recalling.recall(
        rt,
        query,
        limit,
        kinds,
        mode=mode,
        include_deprecated=include_deprecated,
        scope=scope,
        files=bound,
        notices=True,
    )
    text = render.hits(r.hits, query, what)
    if r.note:
        text += "\n" + r.note
    text += attempt_warnings(r.failed_attempts) + render.notices(r.notices)
    more: dict[str, object] = {"failed_attempts": [e.as_dict() for e in r.failed_attempts]}
    if r.gotchas:  # facts bound to the files the question names lead the reply
        text = "\n".join(gotcha_lines(r.gotchas)) + "\n\n" + text
        more["gotchas"] = [b.as_dict() for b in r.gotchas]
    return result(
        text,
        results=[h.as_dict() for h in r.hits],
        note=r.note or None,
        nothing_relevant=r.nothing_relevant,
        **more,
    )


catalog = Catalog()


@catalog.tool(annotations=READ_ONLY, run_in_thread=False)
def memory_recall(
    query: Query,
    limit: Limit = 10,
    kinds: Kinds = None,
    scope: SearchScope = "all",
    rt: Runtime = RUNTIME,
) -> ToolResult:
    """Search all memory by keywords and meaning; each hit says why. The best first
    search."""
    return ranked(rt, query, limit, kinds, "memories", scope=scope, bound=True)


@catalog.tool(annotations=READ_ONLY, run_in_thread=False)
def memory_search_semantic(
    query: Question,
    limit: Limit = 10,
    kinds: Kinds = None,
    scope: SearchScope = "all",
    rt: Runtime = RUNTIME,
) -> ToolResult:
    """Search by meaning only, for paraphrases keywords miss."""
    return ranked(rt, query, limit, kinds, "memories", mode="semantic", scope=scope)


@catalog.tool(annotations=READ_ONLY, run_in_thread=False)
def memory_search_facts(
    query: Query,
    limit: Limit = 10,
    include_deprecated: bool = False,
    scope: SearchScope = "all",
    rt: Runtime = RUNTIME,
) -> ToolResult:
    """Search stored facts only."""
    return ranked(
        rt, query, limit, ["fact"], "facts", include_deprecated=include_deprecated, scope=scope
    )


@catalog.tool(annotations=READ_ONLY, run_in_thread=False)
def memory_search_chunks(
    query: Query, limit: Limit = 10, scope: SearchScope = "all", rt: Runtime = RUNTIME
) -> ToolResult:
    """Search saved exchanges for verbatim evidence ("do you remember…")."""
    return ranked(rt, query, limit, ["chunk"], "chunks", scope=scope)


@catalog.tool(annotations=WRITE, run_in_thread=False)
def memory_store_fact(
    category: Annotated[
        str,
        Field(description="preference, decision, codebase, constraint, bugfix, identity…"),
    ],
    fact: Annotated[str, Field(description="One atomic, self-contained truth.")],
    confidence: Annotated[
        float, Field(ge=0.0, le=1.0, description="1.0 = stated by the user.")
    ] = 1.0,
    session_id: SessionId = None,
    importance: Importance = 5,
    scope: Literal["project", "global"] | None = None,
    files: Files = None,
    replaces: Replaces = None,
    rt: Runtime = RUNTIME,
) -> ToolResult:
    """Store one durable fact unasked: a preference, constraint, decision, bug root
    cause, what a module does. Never secrets."""
    s = service.store_fact(
        rt,
        category,
        fact,
        confidence,
        session_id,
        importance,
        scope,
        files=files,
        replaces=replaces,
    )
    return stored_reply(s, replace_call)


@catalog.tool(annotations=WRITE, run_in_thread=False)
def memory_update_profile(
    role: Annotated[str | None, Field(description="The user's role or job title.")] = None,
    preferences: Annotated[
        str | None, Field(description="How the user likes to work (markdown).")
    ] = None,
    pinned_facts: Annotated[
        list[str] | str | None,
        Field(description="Always shown at session start; replaces the list."),
    ] = None,
    rt: Runtime = RUNTIME,
) -> ToolResult:
    """Update the user's profile, shown at every session start: only the fields that
    change; "" clears one."""
    p = service.update_profile(rt, role, preferences, pinned_facts)
    return result("Profile updated.", profile=p.as_dict())


@catalog.tool(annotations=WRITE, run_in_thread=False)
def memory_deprecate_fact(
    fact_id: Annotated[int, Field(ge=1, description="The fact's id (#N in results).")],
    reason: Annotated[str, Field(description="Why it is no longer true.")],
    rt: Runtime = RUNTIME,
) -> ToolResult:
    """Retire a fact no longer true (kept, but out of context and search)."""
    f = service.deprecate(rt, fact_id, reason)
    return result(
        f"Deprecated fact #{f.id}: {quoted(f.deprecation_reason)}",
        fact_id=f.id,
        deprecated=True,
    )


@catalog.tool(annotations=WRITE, run_in_thread=False)
def memory_update_fact(
    fact_id: Annotated[int, Field(ge=1)],
    fact: str | None = None,
    category: str | None = None,
    confidence: Annotated[float | None, Field(ge=0.0, le=1.0)] = None,
    importance: Annotated[
        int | None, Field(ge=limits.IMPORTANCE[0], le=limits.IMPORTANCE[1])
    ] = None,
    reason: str | None = None,
    restore_version: Annotated[int | None, Field(ge=1)] = None,
    scope: Literal["project", "global"] | None = None,
    replaces: Annotated[
        list[int] | str | None, Field(description="Facts it replaces; [] restores them.")
    ] = None,
    rt: Runtime = RUNTIME,
) -> ToolResult:
    """Correct a fact; its history keeps the old text. Only fact_id: list versions."""
    edited = any(v is not None for v in (fact, category, confidence, importance))
    if replaces is None and scope is None and restore_version is None and not edited:
        current, versions = service.history(rt, fact_id)
        return result(
            render.fact_versions(current, versions),
            fact=current.as_dict(),
            versions=[v.as_dict() for v in versions],
        )
    c = service.change(
        rt,
        fact_id,
        fact=fact,
        category=category,
        confidence=confidence,
        importance=importance,
        reason=reason,
        restore_version=restore_version,
        scope=scope,
        replaces=replaces,
    )
    if c.replaced is None:
        return corrected_reply(c)
    then = corrected_reply(c) if c.corrected is not None or c.scoped else None
    return replaced_reply(c.replaced, replace_call, then)


@catalog.tool(annotations=DESTRUCTIVE, run_in_thread=False)
def memory_forget(
    kind: Annotated[str, Field(description="|".join(forgetting.KINDS))],
    id: Annotated[int | str, Field(description="#N, a session id, or @username")],
    reason: str | None = None,
    rt: Runtime = RUNTIME,
) -> ToolResult:
    """Delete a memory for good with its history (a session: with its exchanges), e.g.
    a pasted secret; deprecate what is merely outdated."""
    target, done = forgetting.forget(rt, kind, id)
    text = done.summary() + (f"\nReason: {reason}" if reason else "")
    return result(
        text,
        kind=target.kind,
        id=target.id,
        removed=done.removed,
        kept={k: [int(i) for i in ids] for k, ids in done.kept.items()},
        scrub=done.scrub,
    )
