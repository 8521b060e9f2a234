"""Operations for the HTTP gateway: Prometheus metrics, ``/healthz`` and ``/metrics``.

:class:`Metrics` holds one app's metrics in its own ``CollectorRegistry`` (never the
process-wide one: two apps, or two tests, in one process count apart). What it counts:

- HTTP requests by method, route *template* (``/api/v1/facts/{fact_id}``, never the raw path:
  ids would make a new series each) and status, and their duration
  (:class:`MetricsMiddleware`, an ASGI middleware around the whole app);
- MCP tool calls by tool and outcome — ``ok``, ``tool_error`` (the agent was told what to
  fix), ``internal_error`` (a bug, masked) — and their duration (``bigmind.mcp.metrics``);
- requests refused before they ran, by status (401, 429) and reason (:meth:`Metrics.refused`,
  for the gateway's authentication and rate limits);
- at scrape time, from the runtime: whether the database answers, the semantic index's state
  and backlog, the version. Nothing per user: the series say how the service is, not who
  uses it for what.

``/healthz`` answers 200 while the database answers (status ``ok``, or ``degraded`` when
semantic search is broken and recall is keyword-only) and 503 when it does not (``fail``).
Neither endpoint opens a database the server has not opened, or writes anything
(:func:`bigmind.service.housekeeping.database_state`).
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.core import GaugeMetricFamily, InfoMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4, generate_latest
from prometheus_client.registry import Collector
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from bigmind import __version__
from bigmind.errors import BigMindError
from bigmind.service.housekeeping import database_state, semantic_state

if TYPE_CHECKING:
    from bigmind.runtime import Runtime

log = logging.getLogger(__name__)
access_log = logging.getLogger("bigmind.http")

UNMATCHED = "unmatched"  # the route label of a request no route took (404s: any path)
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
OUTCOMES = ("ok", "tool_error", "internal_error")
REFUSALS = (401, 403, 429)
SEMANTIC_STATES = (
    "off",
    "unavailable",
    "downloading",
    "loading",
    "ready",
    "stale-model",
    "error",
    "not-started",  # the store (and with it the index) is not open yet
)
BROKEN_SEMANTIC = frozenset({"unavailable", "stale-model", "error"})  # degraded: keywords only
BACKLOG_EVERY_S = 30.0  # the backlog is one count per kind of memory: not on every scrape
_LABEL = re.compile(r"[a-z0-9_]{1,40}")
ROUTE_MAX = 120  # characters of a route template kept as a label


class Metrics:
    """One app's Prometheus metrics; the runtime's gauges are read at each scrape."""

    def __init__(
        self,
        runtime: Runtime | None = None,
        *,
        backlog_every_s: float = BACKLOG_EVERY_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        r = self.registry
        self.requests = Counter(
            "bigmind_http_requests",
            "HTTP requests answered, by method, route template and status.",
            ["method", "route", "status"],
            registry=r,
        )
        self.request_seconds = Histogram(
            "bigmind_http_request_duration_seconds",
            "Time to answer an HTTP request (to the end of its body), by method and route.",
            ["method", "route"],
            registry=r,
        )
        self.tool_calls = Counter(
            "bigmind_tool_calls",
            "MCP tool calls by tool and outcome (ok, tool_error, internal_error).",
            ["tool", "outcome"],
            registry=r,
        )
        self.tool_seconds = Histogram(
            "bigmind_tool_call_duration_seconds",
            "Time a tool call took, by tool.",
            ["tool"],
            registry=r,
        )
        self.refusals = Counter(
            "bigmind_http_refused",
            "Requests refused before they ran: 401 (no valid token) and 429 (rate limit), by "
            "reason.",
            ["status", "reason"],
            registry=r,
        )
        if runtime is not None:
            r.register(RuntimeCollector(runtime, backlog_every_s=backlog_every_s, clock=clock))

    def observe_request(self, method: str, route: str, status: int, seconds: float) -> None:
        method = method.upper() if method.upper() in METHODS else "OTHER"
        self.requests.labels(method, route, str(status)).inc()
        self.request_seconds.labels(method, route).observe(seconds)

    def observe_tool(self, tool: str, outcome: str, seconds: float) -> None:
        """A tool call ended; ``tool`` must be a tool's name (the caller maps unknown names
        to ``unknown``: a client may send any)."""
        if outcome not in OUTCOMES:
            raise ValueError(f"outcome must be one of {OUTCOMES}, got {outcome!r}")
        self.tool_calls.labels(tool, outcome).inc()
        self.tool_seconds.labels(tool).observe(seconds)

    def refused(self, status: int, reason: str) -> None:
        """The gateway refused a request: ``status`` 401, 403 or 429, ``reason`` a short slug
        (``missing_token``, ``bad_token``, ``expired``, ``revoked``, ``rate_limit``…)."""
        if status not in REFUSALS:
            raise ValueError(f"status must be one of {REFUSALS}, got {status}")
        self.refusals.labels(str(status), reason if _LABEL.fullmatch(reason) else "other").inc()

    def exposition(self) -> bytes:
        """Every metric in Prometheus' text format (version 0.0.4)."""
        return generate_latest(self.registry)


# -- health -----------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Health:
    """What ``/healthz`` answers: one word per part, no detail (the endpoint is public; the
    details are logged)."""

    status: str  # ok | degraded | fail
    database: str  # ok | absent (SQLite file made on the first call) | unreachable
    semantic: str  # one of SEMANTIC_STATES
    version: str

    @property
    def code(self) -> int:
        return 503 if self.status == "fail" else 200


def check(rt: Runtime) -> Health:
    """The service's health now (one read of the database at most)."""
    database = database_state(rt)
    semantic = semantic_state(rt)
    if database == "unreachable":
        status = "fail"
    elif semantic in BROKEN_SEMANTIC:
        status = "degraded"
    else:
        status = "ok"
    return Health(status, database, semantic, __version__)


class RuntimeCollector(Collector):
    """Gauges read from the runtime when Prometheus scrapes: database up, semantic state,
    backlog (counted at most every ``backlog_every_s``), version."""

    def __init__(
        self,
        runtime: Runtime,
        *,
        backlog_every_s: float = BACKLOG_EVERY_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.runtime = runtime
        self._every = backlog_every_s
        self._clock = clock
        self._lock = threading.Lock()
        self._backlog: tuple[float, int] | None = None  # (counted at, memories without vector)

    def describe(self) -> Iterator[Metric]:
        return iter(())  # collected at scrape time only (never at registration)

    def collect(self) -> Iterator[Metric]:
        health = check(self.runtime)
        up = GaugeMetricFamily("bigmind_database_up", "1 when the database answers a read, else 0.")
        up.add_metric([], 1.0 if health.database != "unreachable" else 0.0)
        yield up
        state = GaugeMetricFamily(
            "bigmind_semantic_state",
            "The semantic index's state: 1 for the current one.",
            labels=["state"],
        )
        for s in SEMANTIC_STATES:
            state.add_metric([s], 1.0 if s == health.semantic else 0.0)
        yield state
        backlog = self._count_backlog() if health.database == "ok" else None
        if backlog is not None:
            gauge = GaugeMetricFamily(
                "bigmind_semantic_backlog", "Memories waiting for their embedding."
            )
            gauge.add_metric([], float(backlog))
            yield gauge
        info = InfoMetricFamily("bigmind_build", "The running BigMind.")
        info.add_metric([], {"version": __version__})
        yield info

    def _count_backlog(self) -> int | None:
        _, sem = self.runtime.opened()
        if sem is None or sem.status().state in ("off", "unavailable"):
            return None
        now = self._clock()
        with self._lock:
            if self._backlog is not None and now - self._backlog[0] < self._every:
                return self._backlog[1]
            try:
                n = sum(sem.vectors.backlog().values())
            except (BigMindError, sem.vectors.db.Error) as exc:
                log.warning("metrics: the backlog could not be counted: %s", exc)
                return None
            self._backlog = (now, n)
            return n


# -- the endpoints ----------------------------------------------------------------------------
def routes(rt: Runtime, metrics: Metrics) -> list[Route]:
    """``/healthz`` and ``/metrics``, for the gateway's Starlette app (sync endpoints: they
    run in the thread pool, so a slow database never blocks the event loop)."""

    def healthz(request: Request) -> Response:
        health = check(rt)
        return JSONResponse(asdict(health), status_code=health.code)

    def prometheus(request: Request) -> Response:
        return Response(metrics.exposition(), media_type=CONTENT_TYPE_PLAIN_0_0_4)

    return [
        Route("/healthz", healthz, methods=["GET"], name="healthz"),
        Route("/metrics", prometheus, methods=["GET"], name="metrics"),
    ]


# -- HTTP metrics -----------------------------------------------------------------------------
def route_of(scope: Scope) -> str:
    """The template of the route that took the request (``/facts/{fact_id}``), with the
    prefixes of the mounts it went through; ``unmatched`` when none did."""
    route = scope.get("route")
    root = str(scope.get("root_path", "")).rstrip("/")
    if isinstance(route, Mount):  # an app mounted whole (no routes of its own to name)
        template = root or "/"
    else:
        path_format = getattr(route, "path_format", None)
        if not isinstance(path_format, str):
            return UNMATCHED
        template = (root + path_format) or "/"
    return template[:ROUTE_MAX]


class MetricsMiddleware:
    """Counts and times every HTTP request by method, route template and status, and writes
    one access-log line per request (``bigmind.http``, INFO: the path without its query,
    never a header). The user is the username at ``scope[user_key]`` when given (set by the
    authentication inside), else Starlette's authenticated ``scope["user"]``."""

    def __init__(self, app: ASGIApp, metrics: Metrics, *, user_key: str | None = None) -> None:
        self.app = app
        self.metrics = metrics
        self.user_key = user_key

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start = time.perf_counter()
        status = 500  # what the server answers if the app raises before its response

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            seconds = time.perf_counter() - start
            method = str(scope.get("method", ""))
            self.metrics.observe_request(method, route_of(scope), status, seconds)
            extra: dict[str, Any] = {
                "method": method,
                "path": scope.get("path", ""),
                "status": status,
                "duration_ms": round(seconds * 1000, 1),
            }
            user = scope.get(self.user_key) if self.user_key else _user_of(scope)
            if user:
                extra["user"] = str(user)
            access_log.info("%s %s %s", method, extra["path"], status, extra=extra)


def _user_of(scope: Scope) -> str | None:
    """Who the request was authenticated as (Starlette's ``scope["user"]``), if anyone."""
    user = scope.get("user")
    if user is None or not getattr(user, "is_authenticated", False):
        return None
    name = getattr(user, "display_name", "") or getattr(user, "identity", "")
    return str(name) or None
