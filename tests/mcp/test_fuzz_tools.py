"""Schema fuzzing: every tool called with arguments drawn from its own inputSchema (hypothesis,
hypothesis-jsonschema) never ends in an internal error — FastMCP's masked "Error calling tool",
which tells the agent nothing. A tool may refuse (one line saying what to change) or answer.

Bounded for CI (a fixed number of examples per tool, derandomised so a run is repeatable);
``BIGMIND_FUZZ_EXAMPLES`` raises it for a longer soak."""

from __future__ import annotations

import asyncio
import functools
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from anyio.from_thread import BlockingPortal, start_blocking_portal
from fastmcp import Client
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis_jsonschema import from_schema

from bigmind.config import Settings
from bigmind.mcp.server import build_server
from bigmind.runtime import Runtime

# Left out: they end the process (restart), open a desktop browser, or start a web server.
UNFUZZED = {"memory_restart_server", "memory_open_profile", "memory_get_profile_url"}
EXAMPLES = int(os.environ.get("BIGMIND_FUZZ_EXAMPLES", "25"))
MASKED = "Error calling tool"


def _schemas() -> dict[str, dict[str, Any]]:
    """Every tool's inputSchema, as tools/list gives it (read once, at collection)."""

    async def listed() -> dict[str, dict[str, Any]]:
        with tempfile.TemporaryDirectory() as d:
            s = Settings(db_path=Path(d) / "m.db", embed_model="off", web=False)
            rt = Runtime(s)
            try:
                async with Client(build_server(s, rt)) as c:
                    return {t.name: t.input_schema for t in await c.list_tools()}
            finally:
                rt.close()

    return asyncio.run(listed())


SCHEMAS = _schemas()


@pytest.fixture
def served(settings: Settings, runtime: Runtime) -> Iterator[tuple[BlockingPortal, Client]]:  # type: ignore[type-arg]
    """One client for all of a test's examples, driven from hypothesis' synchronous loop."""
    with start_blocking_portal() as portal:
        client = Client(build_server(settings, runtime))
        portal.call(client.__aenter__)
        try:
            portal.call(functools.partial(client.call_tool, "memory_start_session", {}))
            yield portal, client
        finally:
            portal.call(client.__aexit__, None, None, None)


@pytest.mark.slow
@pytest.mark.parametrize("tool", sorted(set(SCHEMAS) - UNFUZZED))
@settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_no_arguments_from_a_tools_schema_reach_an_internal_error(
    served: tuple[BlockingPortal, Client],  # type: ignore[type-arg]
    tool: str,
    data: st.DataObject,
) -> None:
    portal, client = served
    # The server's contract, which tools/list leaves out to save context: no other arguments.
    schema = {**SCHEMAS[tool], "additionalProperties": False}
    arguments = data.draw(from_schema(schema), label="arguments")
    call = functools.partial(client.call_tool, tool, arguments, raise_on_error=False)
    result = portal.call(call)
    text = " ".join(getattr(b, "text", "") for b in result.content)
    assert not text.startswith(MASKED), f"{tool}({arguments!r}) → {text}"
    if result.is_error:
        assert text.strip() and "\n" not in text.strip(), f"{tool}: a refusal is one line: {text}"


def test_every_tool_is_fuzzed_or_said_why_not() -> None:
    assert set(SCHEMAS) >= UNFUZZED and len(SCHEMAS) - len(UNFUZZED) >= 38
