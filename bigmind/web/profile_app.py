"""The profile page: a small Starlette app over one Runtime's store (the configured user only).

Server-rendered Jinja2 pages (autoescaped: stored text is always text), inline SVG charts, one
small script. Safety: only Host headers naming this machine are served (no DNS rebinding);
every change is a POST carrying this server's CSRF token and, when the browser sends one, a
same-origin Origin header; a strict Content-Security-Policy forbids inline scripts.
"""

from __future__ import annotations

import hmac
import logging
import os
import secrets
from collections.abc import Callable, Sequence
from datetime import date
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode

import jinja2
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from bigmind import __version__, caller, limits
from bigmind.errors import BackendUnavailable, BigMindError, Forbidden, InvalidInput, NotFound
from bigmind.models import day_of
from bigmind.project import name_of
from bigmind.runtime import Runtime
from bigmind.service import colleagues, companykb, forgetting
from bigmind.service import facts as service
from bigmind.service import pages as webdata
from bigmind.web import charts
from bigmind.web.origins import Origins

log = logging.getLogger(__name__)
HERE = Path(__file__).parent
STATUS = {InvalidInput: 400, Forbidden: 403, NotFound: 404, BackendUnavailable: 503}
TITLES = {
    400: "Bad request",
    403: "Not allowed",
    404: "Not found",
    405: "Method not allowed",
    500: "Something went wrong",
    503: "Memory unavailable",
}
NAV = (
    ("/", "Profile"),
    ("/activity", "Activity"),
    ("/topics", "Topics"),
    ("/sessions", "Sessions"),
    ("/facts", "Facts"),
    ("/hypotheses", "Hypotheses"),
    ("/people", "People"),
    ("/directory", "Directory"),
    ("/global", "Company"),
)
NOTICES = {
    "deprecated": "Fact #{id} deprecated.",
    "restored": "Fact #{id} restored.",
    "approved": "Company entry #{id} approved.",
    "global-deprecated": "Company entry #{id} deprecated.",
    "version-restored": "Fact #{id} is back to an earlier version (the one it replaced is kept).",
    "forgotten": "Forgotten for good: it is gone from the database.",
    "card-hidden": "Your card is hidden: only you see it, and no answer names you.",
    "card-shown": "Your card is in the directory again.",
}
# Where a page goes after forgetting a kind of memory when the one it came from is gone.
AFTER_FORGET = {"session": "/sessions", "hypothesis": "/hypotheses", "person": "/people"}
SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self' "
    "'unsafe-inline'; img-src 'self' data:; form-action 'self'; frame-ancestors 'none'; "
    "base-uri 'none'",
    "X-Content-Type-Options": "nosniff",
    # same-origin, not no-referrer: under no-referrer Chromium sends `Origin: null` on our own
    # form POSTs, which the Origin check would refuse.
    "Referrer-Policy": "same-origin",
    "X-Frame-Options": "DENY",
    "Cache-Control": "no-store",
}


def page_environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(HERE / "templates"),
        autoescape=True,  # every {{ value }} is HTML-escaped; charts are marked safe explicitly
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.globals.update(
        charts=charts, day=day_of, nav=NAV, version=__version__, project_name=name_of
    )
    env.filters["compact"] = charts.compact
    env.filters["topics"] = lambda v: [t.strip() for t in (v or "").split(",") if t.strip()]
    return env


def identity(rt: Runtime) -> dict[str, Any]:
    """What ``/api/identity`` answers: enough to tell whether a page serves this memory."""
    return {
        "app": "bigmind",
        "version": __version__,
        "user": caller.current() or rt.settings.user,
        "database": rt.settings.database,
        "pid": os.getpid(),
    }


def create_app(
    rt: Runtime,
    *,
    csrf_of: Callable[[Request], str] | None = None,
    hosts: Sequence[str] | None = None,
) -> Starlette:
    """The profile app for ``rt``'s configured user, or, behind the HTTP gateway, for the
    user each request was authenticated as (``rt.store``), with ``csrf_of`` giving that
    login's CSRF token and ``hosts`` the Host headers served."""
    templates = Jinja2Templates(env=page_environment())
    shared = secrets.token_urlsafe(32)
    csrf_for = csrf_of or (lambda request: shared)
    s = rt.settings
    if hosts is None:
        hosts = ["127.0.0.1", "localhost", "[::1]", "::1"]
        if s.web_host not in ("127.0.0.1", "0.0.0.0", "::"):
            hosts.append(s.web_host)
        if s.web_host in ("0.0.0.0", "::"):  # deliberately exposed: any Host routed here
            hosts = ["*"]

    def page(request: Request, name: str, **ctx: Any) -> HTMLResponse:
        store = rt.store
        notice = NOTICES.get(request.query_params.get("notice", ""), "")
        base = {
            "me": companykb.caller(rt),  # the role as it is now (`bigmind user set-role`)
            "mode": store.mode,
            "csrf": csrf_for(request),
            "login": "bigmind.login" in request.scope,
            "path": request.url.path,
            "notice": notice.format(id=_int(request.query_params.get("id"), 0)) if notice else "",
            "database": s.database,
            "query": lambda **kw: _query(request, **kw),
        }
        response = templates.TemplateResponse(request, name, {**base, **ctx})
        response.headers.update(SECURITY_HEADERS)
        return response

    def error_page(request: Request, status: int, message: str) -> HTMLResponse:
        try:
            me = rt.store.user
        except BigMindError:  # the database itself is the error: render without it
            me = None
        response = templates.TemplateResponse(
            request,
            "error.html",
            {
                "status": status,
                "title": TITLES.get(status, "Error"),
                "message": message,
                "me": me,
                "mode": s.mode,
                "path": request.url.path,
                "notice": "",
                "database": s.database,
                "csrf": "",
                "login": False,
            },
            status_code=status,
        )
        response.headers.update(SECURITY_HEADERS)
        return response

    origins = Origins(s.origins, rt.public_url)

    async def checked_form(request: Request) -> dict[str, str]:
        if _foreign(request, origins):
            raise Forbidden("This change came from another site and was refused.")
        values = await _small_form(request)
        if not hmac.compare_digest(values.get("csrf", ""), csrf_for(request)):
            raise Forbidden(
                "The form's security token is missing or stale (the server restarted?). "
                "Reload the page and try again."
            )
        return values

    # -- pages ---------------------------------------------------------------------------
    def home(request: Request) -> Response:
        return page(request, "index.html", view=webdata.profile(rt.store))

    def activity(request: Request) -> Response:
        act = webdata.activity(rt.store)
        return page(
            request,
            "activity.html",
            act=act,
            weeks=[(_week(d), n) for d, n in act.weeks],
            savings=[(_week(d), n) for d, n in act.savings],
        )

    def topics(request: Request) -> Response:
        return page(request, "topics.html", view=webdata.topics(rt.store))

    def sessions(request: Request) -> Response:
        topic = _text(request, "topic")
        key = _text(request, "project", 1000) or None
        number = webdata.page_number(_text(request, "page"))
        rows = webdata.sessions(rt.store, number, topic, project_key=key)
        return page(request, "sessions.html", rows=rows, topic=topic, project=key)

    def session(request: Request) -> Response:
        detail = webdata.session_detail(rt.store, str(request.path_params["session_id"]))
        return page(request, "session.html", d=detail)

    def facts(request: Request) -> Response:
        view = webdata.facts(
            rt.store,
            rt.recall(),
            query=_text(request, "q", 500),
            category=_text(request, "category") or None,
            status=_text(request, "status") or "active",
            page=webdata.page_number(_text(request, "page")),
            project_key=_text(request, "project", 1000) or None,
        )
        return page(request, "facts.html", view=view, statuses=webdata.FACT_STATUSES)

    async def fact_action(request: Request) -> Response:
        form = await checked_form(request)
        fact_id = _int(request.path_params["fact_id"], -1)
        if request.url.path.endswith("/deprecate"):
            service.deprecate(rt, fact_id, form.get("reason", ""))
            notice = "deprecated"
        else:
            service.restore(rt, fact_id)
            notice = "restored"
        return _back(form.get("back"), "/facts", notice, fact_id)

    async def restore_version(request: Request) -> Response:
        form = await checked_form(request)
        fact_id = _int(request.path_params["fact_id"], -1)
        version = _int(form.get("version"), -1)
        service.correct(rt, fact_id, restore_version=max(version, 1))
        return _back(form.get("back"), "/facts", "version-restored", fact_id)

    def forget_confirm(request: Request) -> Response:
        kind, item = str(request.path_params["kind"]), str(request.path_params["item_id"])
        target = forgetting.resolve(rt, kind, item)
        back = _text(request, "back", 500)
        return page(
            request,
            "forget.html",
            target=target,
            details=forgetting.preview(rt, target),
            back=back if local_path(back) else "",
        )

    async def forget_now(request: Request) -> Response:
        form = await checked_form(request)
        if form.get("confirm") != "yes":
            raise InvalidInput("Tick the box to confirm: forgetting cannot be undone.")
        kind, item = str(request.path_params["kind"]), str(request.path_params["item_id"])
        target, _ = forgetting.forget(rt, kind, item)
        back = form.get("back") or ""
        if target.kind == "session" and back.startswith(f"/sessions/{target.id}"):
            back = ""  # its page is gone
        default = AFTER_FORGET.get(target.kind, "/facts")
        return _back(back, default, "forgotten", _int(target.id, 0))

    def hypotheses(request: Request) -> Response:
        return page(request, "hypotheses.html", view=webdata.hypotheses(rt.store))

    def people(request: Request) -> Response:
        return page(
            request,
            "people.html",
            people=webdata.people(rt.store),
            directory=webdata.directory(rt.store),
        )

    def directory(request: Request) -> Response:
        view = webdata.directory_view(rt.store, _text(request, "topic"))
        return page(request, "directory.html", view=view)

    async def hide_card(request: Request) -> Response:
        form = await checked_form(request)
        hidden = form.get("hidden") == "1"
        colleagues.hide_card(rt, hidden)
        return _back("/directory", "/directory", "card-hidden" if hidden else "card-shown", 0)

    def company(request: Request) -> Response:
        view = webdata.global_view(
            rt.store,
            webdata.page_number(_text(request, "page")),
            _text(request, "category") or None,
        )
        return page(request, "global.html", view=view)

    async def review(request: Request) -> Response:
        form = await checked_form(request)
        entry_id = _int(request.path_params["entry_id"], -1)
        action = form.get("action", "")
        companykb.review(rt, entry_id, action, form.get("notes") or None)
        notice = "approved" if action == "approve" else "global-deprecated"
        return _back(form.get("back"), "/global", notice, entry_id)

    def whoami(request: Request) -> Response:
        return JSONResponse(identity(rt))

    # -- errors ----------------------------------------------------------------------------
    def bigmind_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, BigMindError)
        status = next((code for cls, code in STATUS.items() if isinstance(exc, cls)), 400)
        log.info("profile page %s: %s", request.url.path, exc)
        return error_page(request, status, exc.message_for("web"))

    def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        message = {
            404: f"There is no page at {request.url.path}. The menu above leads to every page.",
            405: "This address does not take that kind of request.",
        }.get(exc.status_code, str(exc.detail))
        return error_page(request, exc.status_code, message)

    def client_gone(request: Request, exc: Exception) -> Response:
        # The client left (or was cut off: web/deadlines.py) before its form was whole.
        log.info("profile page %s: the client went before its request was whole", request.url.path)
        return Response(status_code=400)  # nobody reads it: the connection is closed

    def server_error(request: Request, exc: Exception) -> Response:
        log.error("profile page %s failed", request.url.path, exc_info=exc)
        return error_page(
            request, 500, "The page failed to render. The details are in BigMind's log (stderr)."
        )

    routes = [
        Route("/", home),
        Route("/activity", activity),
        Route("/topics", topics),
        Route("/sessions", sessions),
        Route("/sessions/{session_id}", session),
        Route("/facts", facts),
        Route("/facts/{fact_id:int}/deprecate", fact_action, methods=["POST"]),
        Route("/facts/{fact_id:int}/restore", fact_action, methods=["POST"]),
        Route("/facts/{fact_id:int}/restore-version", restore_version, methods=["POST"]),
        Route("/forget/{kind}/{item_id}", forget_confirm),
        Route("/forget/{kind}/{item_id}", forget_now, methods=["POST"]),
        Route("/hypotheses", hypotheses),
        Route("/people", people),
        Route("/directory", directory),
        Route("/directory/hide", hide_card, methods=["POST"]),
        Route("/global", company),
        Route("/global/{entry_id:int}/review", review, methods=["POST"]),
        Route("/api/identity", whoami),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    return Starlette(
        routes=routes,
        middleware=[Middleware(TrustedHostMiddleware, allowed_hosts=list(hosts))],
        exception_handlers={
            BigMindError: bigmind_error,
            HTTPException: http_error,
            ClientDisconnect: client_gone,
            500: server_error,
        },
    )


FORM_BYTES = 64 * 1024  # the largest form the page posts is a reason of 500 characters


async def _small_form(request: Request) -> dict[str, str]:
    """The posted form (URL-encoded, as every form of the page is), read only up to
    :data:`FORM_BYTES`: a larger body is refused before it is held in memory."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > FORM_BYTES:
        raise InvalidInput(f"This form is larger than {FORM_BYTES // 1024} KB and was refused.")
    body = b""
    async for piece in request.stream():
        body += piece
        if len(body) > FORM_BYTES:
            raise InvalidInput(f"This form is larger than {FORM_BYTES // 1024} KB and was refused.")
    try:
        pairs = parse_qsl(
            body.decode("utf-8", "replace"), keep_blank_values=True, max_num_fields=64
        )
    except ValueError as exc:  # more fields than any form of the page has
        raise InvalidInput("This form has too many fields and was refused.") from exc
    return dict(pairs)


def _foreign(request: Request, origins: Origins) -> bool:
    """Did the browser post this from another site? (The CSRF token is the real guard.)"""
    site = request.headers.get("sec-fetch-site")
    return site in ("cross-site", "same-site") or origins.foreign(request.headers)


def _week(monday: date) -> str:
    return f"{monday.day} {monday:%b}"


def _text(request: Request, name: str, limit: int = 200) -> str:
    return request.query_params.get(name, "").strip()[:limit]


def _int(value: object, default: int) -> int:
    """A number from a request, ``default`` if it is none or beyond 64 bits (no row has it)."""
    try:
        n = int(str(value))
    except ValueError:
        return default
    return n if abs(n) <= limits.ID_MAX else default


def _query(request: Request, **changes: object) -> str:
    """This page's query string with ``changes`` (None removes a key), for links."""
    params = dict(request.query_params)
    for k, v in changes.items():
        if v is None or v == "":
            params.pop(k, None)
        else:
            params[k] = str(v)
    params.pop("notice", None)
    params.pop("id", None)
    return "?" + urlencode(params) if params else "?"


def local_path(path: str | None) -> bool:
    """A path on this site (never another site's address)."""
    return bool(path) and str(path).startswith("/") and str(path)[1:2] not in ("/", "\\")


def _back(back: str | None, default: str, notice: str, item: int) -> RedirectResponse:
    """Redirect after a POST to a local page (never another site), with a notice."""
    target = back if back and local_path(back) else default
    path, _, qs = target.partition("?")
    kept = [p for p in qs.split("&") if p and not p.startswith(("notice=", "id="))]
    kept += [f"notice={notice}", f"id={item}"]
    return RedirectResponse(f"{path}?{'&'.join(kept)}", status_code=303)
