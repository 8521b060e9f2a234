"""Operations: Prometheus metrics, /healthz and /metrics (bigmind/web/ops.py), tool metrics
through a real MCP client (bigmind/mcp/metrics.py).

A tiny Starlette app stands in for the gateway: the routes and middleware are the ones the
gateway mounts.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from conftest import free_port
from fastmcp import Client
from fastmcp.exceptions import ToolError
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.testclient import TestClient

from bigmind import __version__
from bigmind.config import Settings
from bigmind.errors import BigMindError
from bigmind.mcp.metrics import ToolMetrics
from bigmind.mcp.server import build_server
from bigmind.runtime import Runtime
from bigmind.search.embedder import Embedder
from bigmind.web import ops
from bigmind.web.ops import Metrics, MetricsMiddleware


def item(request: Request) -> Response:
    return JSONResponse(request.path_params)


def boom(request: Request) -> Response:
    raise RuntimeError("a bug")


def tiny_app(rt: Runtime, metrics: Metrics) -> Starlette:
    return Starlette(
        routes=[
            Route("/items/{item_id}", item),
            Route("/boom", boom),
            Mount("/api", routes=[Route("/things/{thing_id:int}", item)]),
            *ops.routes(rt, metrics),
        ],
        middleware=[Middleware(MetricsMiddleware, metrics=metrics)],
    )


@pytest.fixture
def served(runtime: Runtime) -> Iterator[tuple[TestClient, Metrics]]:
    metrics = Metrics(runtime)
    with TestClient(tiny_app(runtime, metrics), raise_server_exceptions=False) as c:
        yield c, metrics


def requests_of(m: Metrics, method: str, route: str, status: int) -> float:
    labels = {"method": method, "route": route, "status": str(status)}
    return m.registry.get_sample_value("bigmind_http_requests_total", labels) or 0.0


# -- HTTP metrics -----------------------------------------------------------------------------
def test_requests_are_counted_by_route_template_not_by_path(
    served: tuple[TestClient, Metrics],
) -> None:
    c, m = served
    for n in (1, 2, 3):
        assert c.get(f"/items/{n}").status_code == 200
    assert c.get("/api/things/7").status_code == 200
    assert requests_of(m, "GET", "/items/{item_id}", 200) == 3
    assert requests_of(m, "GET", "/api/things/{thing_id}", 200) == 1
    text = m.exposition().decode()
    assert "/items/1" not in text and "/api/things/7" not in text
    count = m.registry.get_sample_value(
        "bigmind_http_request_duration_seconds_count",
        {"method": "GET", "route": "/items/{item_id}"},
    )
    assert count == 3


def test_unmatched_paths_share_one_label_and_failures_count_as_500(
    served: tuple[TestClient, Metrics],
) -> None:
    c, m = served
    for n in range(5):
        assert c.get(f"/no/such/{n}").status_code == 404
    assert c.get("/boom").status_code == 500
    assert c.request("BREW", "/items/1").status_code == 405
    assert requests_of(m, "GET", ops.UNMATCHED, 404) == 5
    assert requests_of(m, "GET", "/boom", 500) == 1
    assert requests_of(m, "OTHER", "/items/{item_id}", 405) == 1  # any method: one label


def test_the_access_log_carries_the_request_but_no_header_or_query(
    served: tuple[TestClient, Metrics], caplog: pytest.LogCaptureFixture
) -> None:
    c, _ = served
    with caplog.at_level(logging.INFO, logger="bigmind.http"):
        c.get("/items/9?q=hush", headers={"Authorization": "Bearer sekrit-token"})
    (record,) = [r for r in caplog.records if r.name == "bigmind.http"]
    assert (record.method, record.path, record.status) == ("GET", "/items/9", 200)  # type: ignore[attr-defined]
    assert record.duration_ms >= 0  # type: ignore[attr-defined]
    assert "sekrit" not in caplog.text and "hush" not in caplog.text


def test_the_access_log_names_the_user_the_authentication_inside_set(
    runtime: Runtime, caplog: pytest.LogCaptureFixture
) -> None:
    def who(request: Request) -> Response:
        request.scope["bigmind.user"] = "alice"  # as the gateway's Guard does
        return JSONResponse({})

    m = Metrics(runtime)
    app = Starlette(
        routes=[Route("/who", who)],
        middleware=[Middleware(MetricsMiddleware, metrics=m, user_key="bigmind.user")],
    )
    with caplog.at_level(logging.INFO, logger="bigmind.http"), TestClient(app) as c:
        c.get("/who")
    assert [r.user for r in caplog.records if r.name == "bigmind.http"] == ["alice"]  # type: ignore[attr-defined]


def test_refusals_are_counted_by_status_and_a_short_reason() -> None:
    m = Metrics()
    m.refused(401, "bad_token")
    m.refused(401, "bad_token")
    m.refused(429, "Bearer abc.def")  # never a token (or anything else) as a label
    m.refused(403, "origin")
    value = m.registry.get_sample_value
    assert value("bigmind_http_refused_total", {"status": "401", "reason": "bad_token"}) == 2
    assert value("bigmind_http_refused_total", {"status": "429", "reason": "other"}) == 1
    assert value("bigmind_http_refused_total", {"status": "403", "reason": "origin"}) == 1
    with pytest.raises(ValueError, match="401"):
        m.refused(500, "broken")


def test_two_apps_in_one_process_count_apart(runtime: Runtime) -> None:
    a, b = Metrics(runtime), Metrics(runtime)
    a.observe_request("GET", "/x", 200, 0.01)
    assert requests_of(a, "GET", "/x", 200) == 1 and requests_of(b, "GET", "/x", 200) == 0


# -- /metrics ---------------------------------------------------------------------------------
def test_metrics_is_prometheus_text_with_the_runtime_gauges(
    served: tuple[TestClient, Metrics], runtime: Runtime
) -> None:
    c, _ = served
    runtime.store.store_fact("project", "The broker is RabbitMQ")
    r = c.get("/metrics")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/plain; version=0.0.4")
    lines = r.text.splitlines()
    assert "bigmind_database_up 1.0" in lines
    assert f'bigmind_build_info{{version="{__version__}"}} 1.0' in lines
    assert 'bigmind_semantic_state{state="not-started"} 1.0' in lines  # no index in the CLI
    assert "RabbitMQ" not in r.text and "alice" not in r.text  # nothing of anyone's memory


def test_metrics_of_an_unreachable_database_say_so(tmp_path: Path) -> None:
    url = f"postgresql://bigmind:hush-hush@127.0.0.1:{free_port()}/bigmind"
    rt = Runtime(Settings(db_path=tmp_path / "unused.db", db_url=url, user="alice"))
    assert "bigmind_database_up 0.0" in Metrics(rt).exposition().decode().splitlines()


# -- /healthz ---------------------------------------------------------------------------------
def test_healthz_of_an_open_database_is_ok_and_writes_nothing(
    served: tuple[TestClient, Metrics], runtime: Runtime
) -> None:
    c, _ = served
    db = runtime.store.db
    before = db.transactions
    r = c.get("/healthz")
    assert r.status_code == 200
    assert r.json() == {
        "status": "ok",
        "database": "ok",
        "semantic": "not-started",
        "version": __version__,
    }
    c.get("/metrics")
    assert db.transactions == before  # a health check or a scrape commits nothing


def test_healthz_makes_no_database_where_there_is_none(tmp_path: Path) -> None:
    where = tmp_path / "nothing-yet" / "memory.db"
    rt = Runtime(Settings(db_path=where, user="alice"))
    with TestClient(tiny_app(rt, Metrics(rt))) as c:
        r = c.get("/healthz")
        c.get("/metrics")
    assert r.status_code == 200
    assert r.json()["database"] == "absent"  # made by the server's first call, not by this
    assert not where.parent.exists()


def test_healthz_reads_an_unopened_sqlite_file_without_writing_it(tmp_path: Path) -> None:
    where = tmp_path / "memory.db"
    first = Runtime(Settings(db_path=where, user="alice"))
    first.store.store_fact("project", "kept")
    first.close()
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    rt = Runtime(Settings(db_path=where, user="alice"))
    with TestClient(tiny_app(rt, Metrics(rt))) as c:
        r = c.get("/healthz")
    assert (r.status_code, r.json()["database"]) == (200, "ok")
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    assert rt.opened() == (None, None)  # still not opened by the check


def test_healthz_fails_with_503_when_the_file_is_no_database(tmp_path: Path) -> None:
    where = tmp_path / "memory.db"
    where.write_bytes(b"not a database " * 100)
    rt = Runtime(Settings(db_path=where, user="alice"))
    with TestClient(tiny_app(rt, Metrics(rt))) as c:
        r = c.get("/healthz")
    assert r.status_code == 503
    assert r.json()["status"] == "fail" and r.json()["database"] == "unreachable"
    assert where.read_bytes() == b"not a database " * 100


def test_healthz_fails_with_503_when_postgresql_does_not_answer(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    url = f"postgresql://bigmind:hush-hush@127.0.0.1:{free_port()}/bigmind"
    rt = Runtime(Settings(db_path=tmp_path / "unused.db", db_url=url, user="alice"))
    with caplog.at_level(logging.WARNING), TestClient(tiny_app(rt, Metrics(rt))) as c:
        r = c.get("/healthz")
    assert (r.status_code, r.json()["database"]) == (503, "unreachable")
    assert "127.0.0.1" in caplog.text and "hush-hush" not in caplog.text + r.text


def test_healthz_answers_before_and_after_the_server_opens_its_database(
    db_kind: str, settings: Settings
) -> None:
    """Both backends: before the server opened its database (a probe), and after."""
    if db_kind == "sqlite":  # the file exists, as on a server that ran before
        ran = Runtime(settings)
        ran.store.store_fact("project", "before")
        ran.close()
    rt = Runtime(settings)
    try:
        with TestClient(tiny_app(rt, Metrics(rt))) as c:
            assert c.get("/healthz").json()["database"] == "ok"
            rt.store.store_fact("project", "opened")
            before = rt.store.db.transactions
            assert c.get("/healthz").json()["status"] == "ok"
            assert rt.store.db.transactions == before
    finally:
        rt.close()


def test_healthz_is_degraded_when_semantic_search_is_broken(settings: Settings) -> None:
    def broken(_: Settings) -> Embedder | None:
        raise BigMindError("the model file is damaged")

    rt = Runtime(settings.model_copy(update={"embed_model": "any"}), background=True, loader=broken)
    try:
        sem = rt.semantic
        assert sem is not None and sem.wait_idle(60)
        with TestClient(tiny_app(rt, Metrics(rt))) as c:
            r = c.get("/healthz")
            text = c.get("/metrics").text
        assert r.status_code == 200  # recall still answers, keyword-only
        assert r.json()["status"] == "degraded" and r.json()["semantic"] == "error"
        assert 'bigmind_semantic_state{state="error"} 1.0' in text
    finally:
        rt.close()


def test_the_backlog_is_counted_at_most_once_per_interval(settings: Settings) -> None:
    gate = threading.Event()

    def loading(_: Settings) -> Embedder | None:
        gate.wait(60)  # the model "loads" for the whole test: nothing gets embedded
        return None

    now = [1000.0]
    rt = Runtime(
        settings.model_copy(update={"embed_model": "any"}), background=True, loader=loading
    )
    try:
        m = Metrics(rt, backlog_every_s=30, clock=lambda: now[0])
        backlog: Callable[[], float | None] = lambda: m.registry.get_sample_value(  # noqa: E731
            "bigmind_semantic_backlog"
        )
        rt.store.store_fact("project", "one")
        assert backlog() == 1
        rt.store.store_fact("project", "two")
        now[0] += 10
        assert backlog() == 1  # counted 10 s ago: not again
        now[0] += 30
        assert backlog() == 2
    finally:
        gate.set()
        rt.close()


# -- tool metrics -----------------------------------------------------------------------------
def tool_calls(m: Metrics, tool: str, outcome: str) -> float:
    labels = {"tool": tool, "outcome": outcome}
    return m.registry.get_sample_value("bigmind_tool_calls_total", labels) or 0.0


@pytest.mark.anyio
async def test_tool_calls_are_counted_by_tool_and_outcome(
    settings: Settings, runtime: Runtime
) -> None:
    m = Metrics(runtime)
    server = build_server(settings, runtime, middleware=[ToolMetrics(m)])
    async with Client(server) as c:
        await c.call_tool("memory_store_fact", {"category": "project", "fact": "Uses Postgres"})
        await c.call_tool("memory_store_fact", {"category": "project", "fact": "Uses Redis"})
        with pytest.raises(ToolError):  # BigMind refused it: the agent was told why
            await c.call_tool("memory_deprecate_fact", {"fact_id": 99999, "reason": "gone"})
        with pytest.raises(ToolError):  # bad arguments, refused by the middleware inside
            await c.call_tool("memory_store_fact", {"category": "project", "fact": 1, "x": 2})
        with pytest.raises(ToolError):
            await c.call_tool("no_such_tool_" + "x" * 50, {})
    assert tool_calls(m, "memory_store_fact", "ok") == 2
    assert tool_calls(m, "memory_deprecate_fact", "tool_error") == 1
    assert tool_calls(m, "memory_store_fact", "tool_error") == 1
    assert tool_calls(m, "unknown", "tool_error") == 1  # a client cannot invent labels
    seconds = m.registry.get_sample_value(
        "bigmind_tool_call_duration_seconds_count", {"tool": "memory_store_fact"}
    )
    assert seconds == 3


@pytest.mark.anyio
async def test_a_tool_that_crashes_is_an_internal_error(
    settings: Settings, runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    m = Metrics(runtime)
    server = build_server(settings, runtime, middleware=[ToolMetrics(m)])

    def crash(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug, not the agent's fault")

    monkeypatch.setattr(type(runtime.store), "store_fact", crash)
    async with Client(server) as c:
        with pytest.raises(ToolError):
            await c.call_tool("memory_store_fact", {"category": "project", "fact": "x"})
    assert tool_calls(m, "memory_store_fact", "internal_error") == 1
    assert tool_calls(m, "memory_store_fact", "tool_error") == 0
