"""The tools' schemas say what the tools do (issue 16, "schemas that mean what they say").

- An argument a description calls optional ("Omit to …") is optional, and no argument is both
  required and nullable.
- List arguments take a JSON array, the text of one (as the MCP Inspector sends arrays), or a
  comma-separated string, and store clean items.
- A fact stored without a session_id belongs to the open session, as an exchange does.
- tools/list is pinned by a snapshot per profile (tests/fixtures/tools_list*.json): names, arguments and
  descriptions; any drift shows as a diff. After a deliberate change, rewrite it with
  ``UPDATE_SNAPSHOT=1 pytest tests/mcp/test_schemas.py``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from fastmcp import Client
from mcp_calls import Cli, call

from bigmind import limits
from bigmind.config import Settings
from bigmind.mcp.server import build_server
from bigmind.runtime import Runtime
from bigmind.storage.store import Store

pytestmark = pytest.mark.anyio
FIXTURES = Path(__file__).parents[1] / "fixtures"
SNAPSHOTS = {"full": FIXTURES / "tools_list.json", "compact": FIXTURES / "tools_list_compact.json"}


async def schemas(client: Cli) -> dict[str, dict[str, Any]]:
    tools = await client.list_tools()
    return {t.name: t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools}


async def test_what_a_description_calls_optional_is_optional(client: Cli) -> None:
    wrong = []
    for name, tool in (await schemas(client)).items():
        schema = tool["inputSchema"]
        required = set(schema.get("required", []))
        for arg, prop in schema["properties"].items():
            nullable = any(t.get("type") == "null" for t in prop.get("anyOf", []))
            omit = "omit" in prop.get("description", "").lower()
            if arg in required and (omit or (nullable and arg != "resolution")):
                wrong.append(f"{name}.{arg}")
    assert wrong == []


@pytest.mark.parametrize(
    "value",
    [["webhooks", "Retry"], '["webhooks", "Retry"]', "webhooks, Retry", ' [ "webhooks","retry" ] '],
)
def test_list_arguments_take_every_spelling_and_store_clean_items(value: object) -> None:
    assert limits.tags(value) == "webhooks,retry"  # type: ignore[arg-type]


def test_a_bracketed_text_that_is_not_a_json_array_stays_text() -> None:
    assert limits.items("[draft], final") == ["[draft]", " final"]
    assert limits.stored_lines("key_facts", '["Kept the queue", "Dropped Redis"]', 1_000) == (
        "- Kept the queue\n- Dropped Redis"
    )


async def test_lists_sent_as_text_reach_the_packet_clean(client: Cli) -> None:
    _, started = await call(client, "memory_start_session")
    await call(
        client,
        "memory_end_session",
        one_liner="Webhook retries",
        topics='["webhooks","retry"]',
        key_facts='["Retries back off exponentially"]',
    )
    text, _ = await call(client, "memory_get_context")
    assert "topics: webhooks,retry" in text and '["' not in text
    await call(
        client, "memory_announce_focus", description="files as text", files='["a.py", "b/c.py"]'
    )
    assert started["session_id"]
    _, active = await call(client, "memory_get_active_sessions")
    assert '"files": ["a.py", "b/c.py"]' in json.dumps(active)


async def test_a_fact_belongs_to_the_open_session_as_an_exchange_does(
    client: Cli, store: Store
) -> None:
    _, data = await call(client, "memory_store_fact", category="decision", fact="Alone")
    assert store.get_fact(data["fact_id"]).source_session is None  # no session: none opened
    _, started = await call(client, "memory_start_session")
    _, data = await call(client, "memory_store_fact", category="decision", fact="Keep the queue")
    assert store.get_fact(data["fact_id"]).source_session == started["session_id"]
    text, _ = await call(client, "memory_end_session", one_liner="Queue")  # session_id omitted
    assert started["session_id"] in text


@pytest.mark.parametrize("profile", ["full", "compact"])
async def test_tools_list_matches_its_snapshot(
    settings: Settings, runtime: Runtime, profile: str
) -> None:
    """One snapshot per tool profile (BIGMIND_TOOLS)."""
    snapshot = SNAPSHOTS[profile]
    server = build_server(settings.model_copy(update={"tools": profile}), runtime)
    async with Client(server) as client:
        listed = await schemas(client)
    current = {
        name: {
            "description": tool.get("description", ""),
            "arguments": {
                arg: {
                    "required": arg in tool["inputSchema"].get("required", []),
                    **{k: v for k, v in prop.items() if k in ("description", "default")},
                }
                for arg, prop in tool["inputSchema"]["properties"].items()
            },
            "annotations": tool.get("annotations", {}),
        }
        for name, tool in sorted(listed.items())
    }
    text = json.dumps(current, ensure_ascii=False, indent=1, sort_keys=True) + "\n"
    if os.environ.get("UPDATE_SNAPSHOT") == "1":
        snapshot.write_text(text, encoding="utf-8")
    assert text == snapshot.read_text(encoding="utf-8"), (
        "tools/list changed: review the diff, then rewrite the snapshot with "
        "UPDATE_SNAPSHOT=1 pytest tests/mcp/test_schemas.py"
    )
