"""The REST API as the HTTP gateway serves it, for tests: mounted at /api/v1 behind a stand-in
for the gateway's authentication (every request runs as one user), and a client that checks
every answer against the schema the OpenAPI document gives for it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import jsonschema
from starlette.applications import Starlette
from starlette.testclient import TestClient
from starlette.types import ASGIApp, Receive, Scope, Send

from bigmind import caller
from bigmind.runtime import Runtime
from bigmind.web import rest

BASE = "http://127.0.0.1:8700"


class ActingAs:
    """Stands in for the gateway: runs every request as ``user``, as its authentication does."""

    def __init__(self, app: ASGIApp, user: str) -> None:
        self.app = app
        self.user = user

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        with caller.acting_as(self.user):
            await self.app(scope, receive, send)


class Api:
    """A user's client of the API; :meth:`call` checks the answer against the document."""

    def __init__(self, client: TestClient, document: dict[str, Any]) -> None:
        self.client = client
        self.doc = document
        self.templates = sorted(
            document["paths"], key=lambda p: (p.count("{"), -len(p))
        )  # literal paths (/facts/search) before templated ones (/facts/{fact_id})

    def call(self, method: str, path: str, **kw: Any) -> Any:
        r = self.client.request(method, "/api/v1" + path, **kw)
        self.check(method, "/api/v1" + path.split("?")[0], r)
        return r

    def get(self, path: str, **kw: Any) -> Any:
        return self.call("GET", path, **kw)

    def post(self, path: str, body: Any = None, **kw: Any) -> Any:
        return self.call("POST", path, json=body, **kw)

    def patch(self, path: str, body: Any = None, **kw: Any) -> Any:
        return self.call("PATCH", path, json=body, **kw)

    def delete(self, path: str, **kw: Any) -> Any:
        return self.call("DELETE", path, **kw)

    def check(self, method: str, path: str, r: Any) -> None:
        """The answer is JSON, and what the document promises for this route and status."""
        body = r.json()
        op = self.operation(method, path)
        if op is None:  # no such route: the error shape
            schema: dict[str, Any] = {"$ref": "#/components/schemas/Error"}
        else:
            promised = op["responses"].get(str(r.status_code))
            assert promised is not None, f"{method} {path} answered {r.status_code}, undocumented"
            schema = promised["content"]["application/json"]["schema"]
        jsonschema.validate(
            body, {**schema, "components": self.doc["components"]}, jsonschema.Draft202012Validator
        )

    def operation(self, method: str, path: str) -> dict[str, Any] | None:
        for template in self.templates:
            pattern = re.sub(r"\{[^}]+\}", "[^/]+", template)
            if re.fullmatch(pattern, path):
                found: dict[str, Any] | None = self.doc["paths"][template].get(method.lower())
                return found
        return None


@contextmanager
def api_as(rt: Runtime, user: str, **settings: Any) -> Iterator[Api]:
    """``user``'s client of the API of ``rt``."""
    app = ActingAs(Starlette(routes=[rest.mount(rt)]), user)
    with TestClient(app, base_url=BASE, raise_server_exceptions=True) as c:
        doc = c.get("/api/v1/openapi.json").json()
        yield Api(c, doc)


class Users:
    """Stands in for the gateway over real HTTP: the user is the one the (test) bearer token
    names, as the gateway's authentication decides."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = dict(scope.get("headers", []))
        user = headers.get(b"authorization", b"").decode().removeprefix("Bearer ")
        with caller.acting_as(user):
            await self.app(scope, receive, send)


@contextmanager
def served(rt: Runtime) -> Iterator[str]:
    """The API on a real HTTP server on 127.0.0.1 (uvicorn, in a thread); yields its base URL.
    A request's bearer token is its user's name."""
    import socket
    import threading
    import time

    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    app = Users(Starlette(routes=[rest.mount(rt)]))
    server = uvicorn.Server(
        uvicorn.Config(app, host="127.0.0.1", port=port, log_config=None, lifespan="off")
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30  # bounded wait for the start; nothing timed is asserted
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}/api/v1"
    finally:
        server.should_exit = True
        thread.join(30)
