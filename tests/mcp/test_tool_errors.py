"""The tools' edge, once for every tool (:class:`bigmind.mcp.tools.base.LeanTool`): a BigMind
error reaches the agent as a ToolError saying what to do next, logged as a refusal; a call that
redacted a secret says so, in its text and its structured content; the runtime is injected
and in no schema. In both modes: tools on the event loop, and in worker threads (the gateway)."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from fastmcp import Client
from fastmcp.exceptions import ToolError
from mcp_calls import call, refused

from bigmind.config import Settings
from bigmind.mcp.metrics import ToolMetrics
from bigmind.mcp.server import build_server
from bigmind.runtime import Runtime
from bigmind.web.ops import Metrics

pytestmark = pytest.mark.anyio

AWS_KEY = "AKIA" + "IOSFODNN7EXAMPLE"  # AWS's documented example key, split so no scanner trips
REDACTED = "Redacted before storing: 1 AWS access key."


@pytest.fixture(params=[False, True], ids=["loop", "threads"])
def threads(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


async def test_a_refusal_says_what_to_do_and_is_logged_as_one(
    settings: Settings, runtime: Runtime, threads: bool, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="bigmind.mcp.tools")
    async with Client(build_server(settings, runtime, threads=threads)) as c:
        said = await refused(c, "memory_deprecate_fact", fact_id=99999, reason="gone")
    assert said.startswith("No fact #99999") and "memory_search_facts" in said
    assert "Error calling tool" not in said  # not FastMCP's masked message
    (line,) = [r.getMessage() for r in caplog.records if r.name == "bigmind.mcp.tools"]
    assert line.startswith("memory_deprecate_fact refused: No fact #99999")


async def test_a_redaction_is_reported_in_text_and_structured_content(
    settings: Settings, runtime: Runtime, threads: bool
) -> None:
    async with Client(build_server(settings, runtime, threads=threads)) as c:
        text, data = await call(
            c, "memory_store_fact", category="constraint", fact=f"The deploy key is {AWS_KEY}"
        )
    assert text.endswith("\n" + REDACTED) and AWS_KEY not in text
    assert data["redacted"] == {"aws-access-key": 1}
    assert data["created"] is True and isinstance(data["fact_id"], int)


async def test_a_call_with_nothing_redacted_says_nothing_of_it(
    settings: Settings, runtime: Runtime, threads: bool
) -> None:
    async with Client(build_server(settings, runtime, threads=threads)) as c:
        text, data = await call(c, "memory_store_fact", category="decision", fact="Uses SQLite")
    assert "Redacted" not in text and "redacted" not in data


async def test_the_compact_tools_report_once_what_the_full_tool_they_call_redacted(
    settings: Settings, runtime: Runtime, threads: bool
) -> None:
    compact = settings.model_copy(update={"tools": "compact"})
    async with Client(build_server(compact, runtime, threads=threads)) as c:
        _, stored = await call(c, "memory_store_fact", category="decision", fact="Uses SQLite")
        text, data = await call(
            c,
            "memory_fix_fact",
            action="update",
            fact_id=stored["fact_id"],
            reason="the key",
            fact=f"Uses SQLite; key {AWS_KEY}",
        )
        said = await refused(c, "memory_fix_fact", action="deprecate", fact_id=99999, reason="x")
    assert text.count(REDACTED) == 1 and text.endswith("\n" + REDACTED)
    assert data["redacted"] == {"aws-access-key": 1}
    assert said.startswith("No fact #99999")


async def test_the_runtime_is_in_no_schema(settings: Settings, runtime: Runtime) -> None:
    for profile in ("full", "compact"):
        served = settings.model_copy(update={"tools": profile})
        async with Client(build_server(served, runtime, threads=True)) as c:
            tools = await c.list_tools()
        params = {p for t in tools for p in t.input_schema.get("properties", {})}
        assert tools and not params & {"rt", "server"}, profile


async def test_refusals_and_crashes_are_counted_apart_in_worker_threads(
    settings: Settings, runtime: Runtime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The gateway's metrics (outermost middleware, every tool in a worker thread)."""
    m = Metrics(runtime)
    server = build_server(settings, runtime, threads=True, middleware=[ToolMetrics(m)])

    def count(tool: str, outcome: str) -> float:
        labels = {"tool": tool, "outcome": outcome}
        return m.registry.get_sample_value("bigmind_tool_calls_total", labels) or 0.0

    def crash(*args: Any, **kwargs: Any) -> None:
        raise RuntimeError("a bug, not the agent's fault")

    async with Client(server) as c:
        await call(c, "memory_store_fact", category="decision", fact=f"key {AWS_KEY}")
        await refused(c, "memory_deprecate_fact", fact_id=99999, reason="gone")
        monkeypatch.setattr(type(runtime.store), "store_fact", crash)
        with pytest.raises(ToolError, match="Error calling tool"):
            await c.call_tool("memory_store_fact", {"category": "decision", "fact": "x"})
    assert count("memory_store_fact", "ok") == 1
    assert count("memory_deprecate_fact", "tool_error") == 1
    assert count("memory_store_fact", "internal_error") == 1
