"""The REST API under ``/api/v1``: BigMind's memory for tools that are not MCP clients.

Each endpoint is a thin adapter over the service function the matching MCP tool calls
(:mod:`bigmind.service`: recall, facts, sessions, company knowledge), JSON in and out, for
the user the running call acts for: the HTTP gateway authenticates every request before
these routes run and runs it under :func:`bigmind.caller.acting_as`, so ``rt.store`` is that
user's store. Nothing here reads a user from a header, a parameter or a body.

What a client sends is held to the models of :mod:`bigmind.web.restschema` (unknown fields
refused, as the tools refuse unknown arguments) and to what no call takes
(:func:`bigmind.limits.unfit`); a body is read up to ``BIGMIND_MAX_REQUEST_BYTES``. Every
error has one shape, ``{"error": {"type": ..., "message": ...}}``: a request that cannot be
read is a 400, a :class:`~bigmind.errors.BigMindError` the status of its class
(:data:`STATUS`). Writes store text through the same validators as the tools, so secrets
are redacted, and the answer counts what was (``redacted``). GET endpoints write nothing.

Adding an endpoint is one :class:`~bigmind.web.restschema.Endpoint` in :func:`endpoints` (or
passed to :func:`app` as ``extra``): the route and its OpenAPI entry come from it.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

from pydantic import BaseModel, ValidationError
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Mount, Route

from bigmind import limits, project, redact
from bigmind.errors import BackendUnavailable, BigMindError, Forbidden, InvalidInput, NotFound
from bigmind.runtime import Runtime
from bigmind.service import colleagues, companykb, forgetting, sessionlife
from bigmind.service import facts as service
from bigmind.service import pages as webdata
from bigmind.service import recall as recalling
from bigmind.web import restschema as rs
from bigmind.web.restschema import PREFIX, Args, Endpoint, Reply

log = logging.getLogger(__name__)
STATUS: dict[type[BigMindError], int] = {
    InvalidInput: 422,
    Forbidden: 403,
    NotFound: 404,
    BackendUnavailable: 503,
}
_WORD = re.compile(r"(?<!^)(?=[A-Z])")


class Refused(Exception):
    """A request this API cannot read (bad JSON, an unknown field, too long…): answered with
    ``status`` before any feature runs."""

    def __init__(self, status: int, kind: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.message = message


def error(status: int, kind: str, message: str) -> JSONResponse:
    """The one error shape."""
    body = rs.Error(error=rs.ErrorBody(type=kind, message=message))
    return JSONResponse(body.model_dump(mode="json"), status_code=status)


def status_of(exc: BigMindError) -> int:
    """The HTTP status of a BigMind error: its class's, or the nearest base class's."""
    for cls in type(exc).__mro__:
        if cls in STATUS:
            return STATUS[cls]
    return 500


def kind_of(exc: BigMindError) -> str:
    """``NotFound`` → ``not_found``."""
    return _WORD.sub("_", type(exc).__name__).lower()


# -- reading a request ---------------------------------------------------------------------------
def validated(model: type[rs.M], data: Mapping[str, Any], what: str) -> rs.M:
    """``data`` as ``model``, or a 400 saying in one line what is wrong with which field."""
    fault = limits.unfit(data)
    if fault:
        raise Refused(400, "bad_request", fault)
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        schema = model.model_json_schema()
        line = limits.explain(schema, exc.errors(include_url=False), what, "this endpoint")
        raise Refused(400, "bad_request", line) from exc


def query_of(request: Request, model: type[BaseModel] | None) -> BaseModel | None:
    items = request.query_params.multi_items()
    if model is None:
        if items:
            names = ", ".join(sorted({k for k, _ in items}))
            raise Refused(400, "bad_request", f"This endpoint takes no query parameters: {names}.")
        return None
    values: dict[str, str] = {}
    for key, value in items:
        if key in values:
            raise Refused(400, "bad_request", f"Give the query parameter {key!r} once.")
        values[key] = value
    return validated(model, values, "query parameter")


async def body_of(request: Request, model: type[BaseModel] | None, cap: int) -> BaseModel | None:
    """The JSON object the request carries, read up to ``cap`` bytes, as ``model``."""
    if model is None:
        return None
    declared = request.headers.get("content-length", "")
    too_long = f"The body is longer than this server accepts ({cap:,} bytes); send less text."
    if declared.isdigit() and int(declared) > cap:
        raise Refused(413, "request_too_large", too_long)
    raw = bytearray()
    async for piece in request.stream():
        raw += piece
        if len(raw) > cap:
            raise Refused(413, "request_too_large", too_long)
    media = request.headers.get("content-type", "").split(";")[0].strip().lower()
    # JSON only, declared (a browser's cross-site form can send no such request unasked).
    if raw.strip() and media != "application/json" and not media.endswith("+json"):
        raise Refused(415, "unsupported_media_type", "Send the body as application/json.")
    try:
        data = json.loads(bytes(raw)) if raw.strip() else {}  # no body: no fields
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, bad UTF-8, deep nesting
        said = exc.msg if isinstance(exc, json.JSONDecodeError) else "not UTF-8 JSON"
        raise Refused(400, "bad_request", f"The body is not valid JSON ({said}).") from exc
    if not isinstance(data, dict):
        raise Refused(400, "bad_request", "The body must be a JSON object of fields.")
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError as exc:  # a lone surrogate ("\ud800"): no text can hold it
        raise Refused(400, "bad_request", "A string holds a lone UTF-16 surrogate.") from exc
    return validated(model, data, "field")


def project_named(value: str) -> project.Project | None:
    """The project a request names (:data:`~bigmind.web.restschema.PROJECT_HEADER`): a key as
    BigMind stores it (``github.com/acme/payments``, ``name:payments``, ``path:/srv/x``), a git
    remote URL, or a bare name (``payments``, as ``BIGMIND_PROJECT=payments``). Never looked up
    as a folder: a client's path means nothing on the server. None when empty."""
    text = limits.optional_text("project", value, limits.PATH)
    if text is None:
        return None
    if text.startswith(("path:", "name:")):
        key = text
    else:
        key = project.normalise_remote(text) or (text if "/" in text else f"name:{text}")
    return project.Project(key, project.name_of(key))


def _run(e: Endpoint, args: Args, where: project.Project | None) -> Reply:
    """Run one endpoint in the project named (None: the server's), counting what its writes
    redacted."""
    with project.using(where), redact.collecting() as found:
        reply = e.run(args)
    if found and isinstance(reply.model, rs.Written):
        reply = replace(reply, model=reply.model.model_copy(update={"redacted": dict(found)}))
    return reply


def handler(e: Endpoint, cap: int) -> Any:
    async def endpoint(request: Request) -> Response:
        try:
            where = project_named(request.headers.get(rs.PROJECT_HEADER, ""))
            args = Args(
                path=dict(request.path_params),
                query=query_of(request, e.query),
                body=await body_of(request, e.body, cap),
            )
            # In a worker thread, as the profile pages run: the caller (a context variable)
            # goes with it.
            reply = await run_in_threadpool(_run, e, args, where)
        except Refused as exc:
            return error(exc.status, exc.kind, exc.message)
        except BigMindError as exc:
            status = status_of(exc)
            (log.warning if status >= 500 else log.info)("%s %s: %s", e.method, e.path, exc)
            return error(status, kind_of(exc), exc.message_for("api"))
        headers = {"Location": PREFIX + reply.location} if reply.location else None
        body = reply.model.model_dump(mode="json")
        return JSONResponse(body, status_code=reply.status, headers=headers)

    endpoint.__name__ = e.run.__name__
    return endpoint


def _id(args: Args, name: str, what: str) -> int:
    """A numeric id from the path: anything else names nothing (404)."""
    n = limits.parse_id(args.path[name]) if not args.path[name].startswith("#") else None
    if n is None:
        raise NotFound(f"No {what} #{args.path[name][:40]}: ids are numbers.")
    return n


# -- the endpoints -------------------------------------------------------------------------------
def endpoints(rt: Runtime) -> list[Endpoint]:
    """Every endpoint of the API, bound to ``rt``."""

    def recall(a: Args) -> Reply:
        p = a.query_as(rs.RecallQuery)
        r = recalling.recall(rt, p.q, p.limit, p.kinds, mode=p.mode, scope=p.scope)
        return Reply(
            rs.Recalled(
                results=r.hits,
                note=r.note or None,
                nothing_relevant=r.nothing_relevant,
                failed_attempts=[e.as_dict() for e in r.failed_attempts],
                gotchas=[b.as_dict() for b in r.gotchas],
            )
        )

    def search_facts(a: Args) -> Reply:
        p = a.query_as(rs.FactSearchQuery)
        r = recalling.recall(
            rt,
            p.q,
            p.limit,
            ["fact"],
            include_deprecated=p.include_deprecated,
            scope=p.scope,
            extras=False,
        )
        return Reply(
            rs.Found(results=r.hits, note=r.note or None, nothing_relevant=r.nothing_relevant)
        )

    def list_facts(a: Args) -> Reply:
        p = a.query_as(rs.FactListQuery)
        view = webdata.facts(rt.store, None, "", p.category, p.status, p.page, p.per_page)
        rows = view.rows
        listed = [
            rs.ListedFact(
                fact=r.fact,
                session_one_liner=r.session_one_liner,
                versions=r.versions,
                rivals=list(r.rivals),
            )
            for r in rows.items
        ]
        return Reply(
            rs.FactPage(
                facts=listed,
                page=rows.page,
                per_page=rows.per_page,
                total=rows.total,
                pages=rows.pages,
            )
        )

    def get_fact(a: Args) -> Reply:
        fact, versions = service.history(rt, _id(a, "fact_id", "fact"))
        return Reply(rs.FactDetail(fact=fact, versions=versions))

    def store_fact(a: Args) -> Reply:
        b = a.body_as(rs.NewFact)
        s = service.store_fact(
            rt,
            b.category,
            b.fact,
            b.confidence,
            b.session_id,
            b.importance,
            b.scope,
            files=b.files,
            replaces=b.replaces,
        )
        fact = s.fact
        stored = rs.FactStored(
            fact=fact,
            created=s.created,
            files=s.files,
            session_id=s.session.session.id if s.session else fact.source_session,
            retired=s.retired,
            close=s.close,
        )
        return Reply(stored, 201 if s.created else 200, f"/facts/{fact.id}")

    def update_fact(a: Args) -> Reply:
        fact_id = _id(a, "fact_id", "fact")
        b = a.body_as(rs.FactChange)
        edited = any(v is not None for v in (b.fact, b.category, b.confidence, b.importance))
        if not edited and b.restore_version is None and b.scope is None and b.replaces is None:
            raise InvalidInput(
                "Nothing to change: send fact, category, confidence, importance, "
                "restore_version, scope or replaces.",
                api="GET /api/v1/facts/{id} shows the fact and its versions.",
            )
        c = service.change(
            rt,
            fact_id,
            fact=b.fact,
            category=b.category,
            confidence=b.confidence,
            importance=b.importance,
            reason=b.reason,
            restore_version=b.restore_version,
            scope=b.scope,
            replaces=b.replaces,
        )
        more: dict[str, Any] = {}
        if c.replaced is not None:
            more = {"retired": c.replaced.retired, "restored": c.replaced.restored}
        r = c.corrected
        if r is None:
            if c.scoped:
                changed = ["scope"]
            else:
                changed = ["replaces"] if more["retired"] or more["restored"] else []
            return Reply(
                rs.FactUpdated(
                    fact=c.fact,
                    changed=changed,
                    replaced_version=None,
                    restored_version=None,
                    **more,
                )
            )
        return Reply(
            rs.FactUpdated(
                fact=c.fact,
                changed=[*r.changed, *(["scope"] if c.scoped else [])],
                replaced_version=r.replaced or None,
                restored_version=r.restored,
                **more,
            )
        )

    def deprecate_fact(a: Args) -> Reply:
        b = a.body_as(rs.Deprecation)
        fact = service.deprecate(rt, _id(a, "fact_id", "fact"), b.reason)
        return Reply(rs.FactDeprecated(fact=fact))

    def forget_fact(a: Args) -> Reply:
        target, done = forgetting.forget(rt, "fact", _id(a, "fact_id", "fact"))
        return Reply(
            rs.Forgotten(
                kind=target.kind,
                id=target.id,
                removed=done.removed,
                kept=done.kept,
                scrub=done.scrub,
            )
        )

    def list_sessions(a: Args) -> Reply:
        p = a.query_as(rs.SessionListQuery)
        return Reply(
            rs.SessionPage(sessions=sessionlife.list_sessions(rt, p.limit, p.topic, p.offset))
        )

    def get_session(a: Args) -> Reply:
        s, summary, chunks = sessionlife.session_detail(rt, a.path["session_id"])
        return Reply(rs.SessionDetail(session=s, summary=summary, chunk_ids=[c.id for c in chunks]))

    def start_session(a: Args) -> Reply:
        b = a.body_as(rs.NewSession)
        started = sessionlife.start_session(rt, b.ide_hint, b.session_id, b.focus, agent=False)
        s = started.session
        out = rs.SessionStarted(
            session=s,
            resumed=started.resumed,
            auto_closed=started.auto_closed,
            context=started.packet.text,
            context_tokens=started.packet.tokens,
        )
        return Reply(out, 200 if started.resumed else 201, f"/sessions/{s.id}")

    def end_session(a: Args) -> Reply:
        b = a.body_as(rs.SessionEnd)
        e = sessionlife.end_session(
            rt,
            a.path["session_id"],
            b.one_liner,
            b.topics,
            b.outcome,
            b.summary,
            b.key_facts,
            b.code_refs,
            b.importance,
        )
        retired = [i for i, _ in e.retired]
        return Reply(rs.SessionEnded(session=e.session, was_open=e.was_open, retired_facts=retired))

    def list_global(a: Args) -> Reply:
        p = a.query_as(rs.GlobalListQuery)
        entries, own_only = companykb.entries(rt, p.category, p.limit, p.status)
        shown = [companykb.shown(rt, e) for e in entries]
        return Reply(rs.EntryPage(entries=shown, own_only=own_only))

    def search_global(a: Args) -> Reply:
        p = a.query_as(rs.GlobalSearchQuery)
        r = companykb.search(rt, p.q, p.limit)
        return Reply(
            rs.Found(results=r.hits, note=r.note or None, nothing_relevant=r.nothing_relevant)
        )

    def get_global(a: Args) -> Reply:
        entry = companykb.get(rt, _id(a, "entry_id", "company knowledge entry"))
        return Reply(rs.EntryOut(entry=companykb.shown(rt, entry)))

    def propose_global(a: Args) -> Reply:
        b = a.body_as(rs.NewEntry)
        r = companykb.promote(rt, b.category, b.title, b.content, b.importance, b.source_session)
        out = rs.EntryProposed(entry=companykb.shown(rt, r.entry), created=r.created)
        return Reply(out, 201 if r.created else 200, f"/global/{r.entry.id}")

    def review_global(a: Args) -> Reply:
        b = a.body_as(rs.Review)
        entry_id = _id(a, "entry_id", "company knowledge entry")
        if b.action == "reject":  # a pending proposal turned down: deprecated, as the tools do
            entry = companykb.reject(rt, entry_id, b.notes)
        else:
            entry = companykb.review(rt, entry_id, b.action, b.notes)
        return Reply(rs.EntryOut(entry=companykb.shown(rt, entry)))

    def directory_(a: Args) -> Reply:
        p = a.query_as(rs.DirectoryQuery)
        if p.topic:
            return Reply(rs.Directory(experts=colleagues.who_knows(rt, p.topic, p.limit)))
        return Reply(rs.Directory(cards=colleagues.cards(rt, p.limit)))

    E = Endpoint
    return [
        E("GET", "/recall", "Search all memory by keywords and meaning", recall,
          rs.Recalled, query=rs.RecallQuery, tag="recall"),
        E("GET", "/facts/search", "Search facts", search_facts, rs.Found,
          query=rs.FactSearchQuery, tag="facts"),
        E("GET", "/facts", "List facts, newest first, a page at a time", list_facts,
          rs.FactPage, query=rs.FactListQuery, tag="facts"),
        E("POST", "/facts", "Store a fact (a repeat returns the known one)", store_fact,
          rs.FactStored, body=rs.NewFact, status=201, errors=(404, 422), tag="facts"),
        E("GET", "/facts/{fact_id}", "A fact and its earlier versions", get_fact,
          rs.FactDetail, errors=(404,), tag="facts"),
        E("PATCH", "/facts/{fact_id}", "Correct a fact (its history keeps the old text)",
          update_fact, rs.FactUpdated, body=rs.FactChange, errors=(404, 422), tag="facts"),
        E("POST", "/facts/{fact_id}/deprecate", "Retire a fact no longer true (kept)",
          deprecate_fact, rs.FactDeprecated, body=rs.Deprecation, errors=(404, 422),
          tag="facts"),
        E("DELETE", "/facts/{fact_id}", "Forget a fact for good, with its history",
          forget_fact, rs.Forgotten, errors=(404,), tag="facts"),
        E("GET", "/sessions", "List sessions, newest first", list_sessions, rs.SessionPage,
          query=rs.SessionListQuery, tag="sessions"),
        E("POST", "/sessions", "Start (or resume) a session; answers the memory context",
          start_session, rs.SessionStarted, body=rs.NewSession, status=201,
          errors=(404, 422), tag="sessions"),
        E("GET", "/sessions/{session_id}", "A session with its summary", get_session,
          rs.SessionDetail, errors=(404,), tag="sessions"),
        E("POST", "/sessions/{session_id}/end", "End a session (again: update it)",
          end_session, rs.SessionEnded, body=rs.SessionEnd, errors=(404, 422),
          tag="sessions"),
        E("GET", "/global", "List company knowledge, most important first", list_global,
          rs.EntryPage, query=rs.GlobalListQuery, errors=(422,), tag="company"),
        E("GET", "/global/search", "Search approved company knowledge", search_global,
          rs.Found, query=rs.GlobalSearchQuery, tag="company"),
        E("POST", "/global", "Propose company knowledge (pending until a curator approves)",
          propose_global, rs.EntryProposed, body=rs.NewEntry, status=201, errors=(404, 422),
          tag="company"),
        E("GET", "/global/{entry_id}", "A company knowledge entry", get_global, rs.EntryOut,
          errors=(404,), tag="company"),
        E("POST", "/global/{entry_id}/review", "Curators: approve, reject or deprecate",
          review_global, rs.EntryOut, body=rs.Review, errors=(403, 404, 422), tag="company"),
        E("GET", "/directory", "Who worked on a topic, or every visible card (never content)",
          directory_, rs.Directory, query=rs.DirectoryQuery, errors=(422,), tag="directory"),
    ]  # fmt: skip


# -- the app -------------------------------------------------------------------------------------
def routes(rt: Runtime, extra: Sequence[Endpoint] = ()) -> list[BaseRoute]:
    """The API's routes, relative to :data:`PREFIX` (mount them there), the OpenAPI
    document's included."""
    every = [*endpoints(rt), *extra]
    cap = rt.settings.max_request_bytes
    out: list[BaseRoute] = [
        Route(e.path, handler(e, cap), methods=[e.method], name=e.run.__name__) for e in every
    ]
    document = rs.openapi(every)

    def openapi(request: Request) -> Response:
        return JSONResponse(document)

    out.append(Route("/openapi.json", openapi, methods=["GET"], name="openapi"))
    return out


async def _http_error(request: Request, exc: Exception) -> Response:
    """Starlette's own refusals (no such route, a method a route does not take) in the
    API's error shape."""
    assert isinstance(exc, HTTPException)
    kinds = {404: "not_found", 405: "method_not_allowed"}
    said = {404: f"No endpoint {request.url.path}; see {PREFIX}/openapi.json."}
    message = said.get(exc.status_code, str(exc.detail))
    return error(exc.status_code, kinds.get(exc.status_code, "bad_request"), message)


async def _crashed(request: Request, exc: Exception) -> Response:
    """A bug (not a BigMindError): Starlette's outermost handler answers in the API's error
    shape, then re-raises it for the server to log. Its text may quote stored data: not sent."""
    return error(500, "internal_error", "BigMind failed on this request; the server log says why.")


def app(rt: Runtime, extra: Sequence[Endpoint] = ()) -> Starlette:
    """The API as one app, to mount at :data:`PREFIX` (:func:`mount`)."""
    handlers = {HTTPException: _http_error, 500: _crashed}
    return Starlette(routes=routes(rt, extra), exception_handlers=handlers)


def mount(rt: Runtime, extra: Sequence[Endpoint] = ()) -> Mount:
    """The API mounted at :data:`PREFIX`, for the gateway's routes."""
    return Mount(PREFIX, app=app(rt, extra))
