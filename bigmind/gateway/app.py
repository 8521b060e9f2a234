"""The HTTP gateway: one BigMind for many users (``bigmind serve --http``).

One Starlette app: MCP's streamable HTTP transport at ``/mcp`` (the same tools as stdio), the
REST API at ``/api/v1`` (:mod:`bigmind.web.rest`), the profile pages at ``/`` (a login cookie,
or a bearer token), and the routes other modules add.
Every request but ``/login`` and the static files passes :class:`Guard` first: an ``/mcp``
request a browser sent from a foreign origin is refused (403, :mod:`bigmind.web.origins`),
its body is read up to ``BIGMIND_MAX_REQUEST_BYTES`` (more: 413), its credential checked (none
or a bad one: 401, with ``WWW-Authenticate``), its rate limited (429), an MCP message screened
as a stdio line is (:mod:`bigmind.mcp.wire`: 400 with the JSON-RPC error), and it runs as the
user the credential names (:func:`bigmind.caller.acting_as`), so ``Runtime.store`` is that user's.
A page login's token is looked up again at every request: revoked, expired or its user gone,
the login ends there.
An MCP session belongs to the user who opened it: another user's requests on it get 404.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import math
import secrets
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any
from urllib.parse import parse_qsl, quote

from fastmcp.server.dependencies import get_http_request
from fastmcp.server.http import create_streamable_http_app
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.middleware import Middleware as AsgiMiddleware
from starlette.requests import Request, cookie_parser
from starlette.responses import RedirectResponse, Response
from starlette.routing import BaseRoute, Mount, Route
from starlette.templating import Jinja2Templates
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from bigmind import caller
from bigmind.config import Settings
from bigmind.gateway.auth import (
    FAILURES_PER_MINUTE,
    LOGIN_IDLE_HOURS,
    Identity,
    Login,
    Logins,
    RateLimiter,
    Refused,
    Verifier,
)
from bigmind.mcp import wire
from bigmind.mcp.metrics import ToolMetrics
from bigmind.mcp.server import build_server
from bigmind.runtime import Runtime
from bigmind.web import ops, rest
from bigmind.web.ops import Metrics, MetricsMiddleware
from bigmind.web.origins import Origins
from bigmind.web.profile_app import SECURITY_HEADERS, create_app, local_path, page_environment

log = logging.getLogger(__name__)
USER = "bigmind.user"  # scope key: the authenticated username
LOGIN = "bigmind.login"  # scope key: the page login (cookie) in use, if any
COOKIE = "bigmind_login"
OPEN_PATHS = ("/login", "/static/", "/healthz", "/metrics")  # served without a credential
API_PREFIXES = ("/mcp", "/api/")  # answered with 401, never redirected to the login page
SESSIONS_MAX = 100_000  # MCP session ids remembered with their owner
FORM_BYTES = 8 * 1024


class CallerFromRequest(Middleware):
    """Runs each MCP request as the user the gateway authenticated for its HTTP request."""

    async def on_request(
        self, context: MiddlewareContext[Any], call_next: CallNext[Any, Any]
    ) -> Any:
        try:
            request = get_http_request()
        except RuntimeError:  # not over HTTP (in-memory or stdio): the configured user
            return await call_next(context)
        user = request.scope.get(USER)
        if not isinstance(user, str):  # fails closed: Guard lets no such request through
            raise PermissionError("an HTTP request reached BigMind's tools unauthenticated")
        with caller.acting_as(user):
            return await call_next(context)


class Guard:
    """The gateway's door (pure ASGI): body cap, credential, rate limit, the acting user."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        verifier: Verifier,
        logins: Logins,
        origins: Origins,
        limiter: RateLimiter,
        max_bytes: int,
        metrics: Metrics,
    ) -> None:
        self.app = app
        self.metrics = metrics
        self.verifier = verifier
        self.logins = logins
        self.origins = origins
        self.limiter = limiter
        self.failures = RateLimiter(FAILURES_PER_MINUTE)
        self.max_bytes = max_bytes
        self.owners: OrderedDict[str, str] = OrderedDict()  # MCP session id → username

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"].startswith(OPEN_PATHS):
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        path = scope["path"]
        if (path == "/mcp" or path.startswith("/mcp/")) and self.origins.foreign(headers):
            log.info("gateway: refused /mcp from the origin %r", headers.get("origin", "")[:200])
            self.metrics.refused(403, "origin")
            await _json(send, 403, "forbidden", "Requests from this origin are not allowed.")
            return
        declared = headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_bytes:
            await _json(send, 413, "request_too_large", self._too_large())
            return
        body = await _read_body(receive, self.max_bytes)
        if body is None:
            await _json(send, 413, "request_too_large", self._too_large())
            return
        who = await self._identify(scope, headers, send)
        if who is None:
            return
        wait = self.limiter.take(who.principal)
        if wait > 0:
            self.metrics.refused(429, "rate_limit")
            retry = {"retry-after": str(math.ceil(wait))}
            await _json(send, 429, "rate_limited", "Too many requests; retry later.", retry)
            return
        session = headers.get("mcp-session-id")
        if session and self.owners.get(session, who.username) != who.username:
            await _json(send, 404, "session_not_found", "No such MCP session.")
            return
        if scope["path"] == "/mcp" and scope["method"] == "POST":
            refusal = wire.screen(body)
            if refusal is not None:  # what the SDK would choke on: answered as on stdio
                log.info("gateway: %s from %s refused: %s", who.username, "/mcp", refusal.reason)
                await _raw(send, 400, refusal.reply or b"")
                return
        scope[USER] = who.username
        with caller.acting_as(who.username):
            await self.app(scope, _replay(body, receive), self._remember(send, who.username))

    async def _identify(self, scope: Scope, headers: Headers, send: Send) -> Identity | None:
        """The caller, or None once the refusal is sent."""
        authorization = headers.get("authorization")
        client = scope.get("client") or ("?", 0)
        if authorization is not None:
            scheme, _, credential = authorization.partition(" ")
            try:
                if scheme.lower() != "bearer" or not credential.strip():
                    raise Refused("use `Authorization: Bearer <token>`")
                return await self.verifier.bearer(credential.strip())
            except Refused as refused:
                log.info("gateway: refused %s from %s: %s", scope["path"], client[0], refused)
                await self._refuse(scope, send, refused, str(client[0]))
                return None
        api = scope["path"].startswith(API_PREFIXES)
        # /mcp and /api: bearer only
        cookie = None if api else cookie_parser(headers.get("cookie", "")).get(COOKIE)
        login = self.logins.get(cookie) if cookie else None
        if cookie and login is not None and not await self.verifier.holds(login.identity):
            log.info("gateway: a login of %s ended with its token", login.identity.username)
            self.logins.close(cookie)
            login = None
        if login is not None:
            scope[LOGIN] = login
            return login.identity
        if not api and scope["method"] == "GET":
            target = quote(scope["path"] + ("?" + scope["query_string"].decode("latin-1")))
            await RedirectResponse(f"/login?next={target}", status_code=303)(scope, _no, send)
            return None
        await self._refuse(scope, send, Refused("no credential", invalid=False), str(client[0]))
        return None

    async def _refuse(self, scope: Scope, send: Send, why: Refused, address: str) -> None:
        if why.invalid and self.failures.take(f"fail:{address}") > 0:
            self.metrics.refused(429, "failed_logins")
            await _json(send, 429, "rate_limited", "Too many failed logins; retry later.")
            return
        self.metrics.refused(401, "invalid_token" if why.invalid else "no_credential")
        challenge = 'Bearer realm="BigMind"'
        if why.invalid:
            challenge += f', error="invalid_token", error_description="{why.reason}"'
        message = (
            f"Not authenticated: {why.reason}."
            if why.invalid
            else "Not authenticated: send `Authorization: Bearer <token>` "
            "(`bigmind token create USER` makes one)."
        )
        await _json(send, 401, "unauthorized", message, {"www-authenticate": challenge})

    def _remember(self, send: Send, username: str) -> Send:
        """``send``, noting the owner of an MCP session the response opens."""

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                for key, value in message.get("headers", []):
                    if key.lower() == b"mcp-session-id":
                        self.owners[value.decode("latin-1")] = username
                        while len(self.owners) > SESSIONS_MAX:
                            self.owners.popitem(last=False)
            await send(message)

        return sending

    def _too_large(self) -> str:
        return f"The request is larger than {self.max_bytes:,} bytes (BIGMIND_MAX_REQUEST_BYTES)."


async def _read_body(receive: Receive, limit: int) -> bytes | None:
    """The whole request body, or None past ``limit`` bytes."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break
        piece = message.get("body", b"")
        size += len(piece)
        if size > limit:
            return None
        chunks.append(piece)
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that gives ``body`` once, then the client's own (its disconnect: a
    streamed answer stops when the client goes, not before)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


async def _no() -> Message:
    return {"type": "http.disconnect"}


async def _json(
    send: Send, status: int, kind: str, message: str, headers: dict[str, str] | None = None
) -> None:
    body = json.dumps({"error": {"type": kind, "message": message}}).encode()
    await _raw(send, status, body, headers)


async def _raw(send: Send, status: int, body: bytes, headers: dict[str, str] | None = None) -> None:
    kind = [(b"content-type", b"application/json")] if body else []
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                *kind,
                (b"content-length", str(len(body)).encode()),
                *((k.encode(), v.encode("latin-1")) for k, v in (headers or {}).items()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _small_form(request: Request) -> dict[str, str] | None:
    """A login or logout form, read only up to :data:`FORM_BYTES` (None beyond: /login is
    open to anyone, so nothing unbounded is held in memory)."""
    body = await _read_body(request.receive, FORM_BYTES)
    if body is None:
        return None
    try:
        return dict(parse_qsl(body.decode("utf-8", "replace"), max_num_fields=8))
    except ValueError:  # more fields than a login form has
        return None


def _next(path: str) -> str:
    """Where to go after logging in: a path on this site other than the login page."""
    return path if local_path(path) and not path.startswith("/login") else "/"


def build_gateway(
    settings: Settings, rt: Runtime, *, routes: Sequence[BaseRoute] = ()
) -> Starlette:
    """The gateway app over ``rt`` (made with ``serves_many=True``); ``routes`` go before the
    pages (the REST API, health and metrics)."""
    metrics = Metrics(rt)
    server = build_server(settings, rt, threads=True, middleware=[ToolMetrics(metrics)])
    server.add_middleware(CallerFromRequest())
    verifier = Verifier(settings, rt)
    logins = Logins(max_hours=settings.login_max_hours)
    origins = Origins(settings.origins, rt.public_url)
    secret = secrets.token_bytes(32)
    templates = Jinja2Templates(env=page_environment())

    def csrf_of(request: Request) -> str:
        login = request.scope.get(LOGIN)
        if isinstance(login, Login):
            return login.csrf
        who = str(request.scope.get(USER, ""))  # a bearer token's pages: no cookie to ride
        return hmac.new(secret, who.encode(), hashlib.sha256).hexdigest()

    def login_page(request: Request, message: str = "", status: int = 200) -> Response:
        context = {
            "message": message,
            "next": _next(request.query_params.get("next", "/")),
            "oidc": verifier.jwt is not None,
            "hours": min(LOGIN_IDLE_HOURS, settings.login_max_hours),
            "max_hours": settings.login_max_hours,
        }
        response = templates.TemplateResponse(request, "login.html", context, status_code=status)
        response.headers.update(SECURITY_HEADERS)
        return response

    async def login(request: Request) -> Response:
        if request.headers.get("sec-fetch-site") == "cross-site" or origins.foreign(
            request.headers
        ):
            return login_page(request, "A login from another site was refused.", 403)
        form = await _small_form(request)
        if form is None:
            return login_page(request, "That form is too large.", 400)
        try:
            who = await verifier.bearer(form.get("token", "").strip())
        except Refused as refused:
            log.info("gateway: page login refused: %s", refused)
            return login_page(request, f"Not logged in: {refused.reason}.", 401)
        cookie, seconds = logins.open(who)
        response = RedirectResponse(_next(form.get("next", "/")), status_code=303)
        response.set_cookie(
            COOKIE,
            cookie,
            max_age=seconds,
            httponly=True,
            samesite="strict",
            secure=request.url.scheme == "https",
        )
        return response

    async def logout(request: Request) -> Response:
        login = request.scope.get(LOGIN)
        form = await _small_form(request) or {}
        if isinstance(login, Login) and hmac.compare_digest(form.get("csrf", ""), login.csrf):
            logins.close(request.cookies.get(COOKIE, ""))
        response = RedirectResponse("/login", status_code=303)
        response.delete_cookie(COOKIE)
        return response

    pages = create_app(rt, csrf_of=csrf_of, hosts=["*"])
    app = create_streamable_http_app(
        server,
        "/mcp",
        # Answers as SSE streams, not plain JSON: ~20 % fewer calls a second under load, but a
        # call can then ask its client for its roots (the project) in the same exchange.
        json_response=False,
        routes=[
            Route("/login", login_page, methods=["GET"]),
            Route("/login", login, methods=["POST"]),
            Route("/logout", logout, methods=["POST"]),
            *ops.routes(rt, metrics),
            rest.mount(rt),  # the REST API at /api/v1 (docs/rest-api.md)
            *routes,
            Mount("/", pages),
        ],
        middleware=[
            AsgiMiddleware(MetricsMiddleware, metrics=metrics, user_key=USER),
            AsgiMiddleware(
                Guard,
                verifier=verifier,
                logins=logins,
                origins=origins,
                limiter=RateLimiter(settings.rate_limit),
                max_bytes=settings.max_request_bytes,
                metrics=metrics,
            ),
        ],
    )
    return app
