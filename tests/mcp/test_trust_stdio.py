"""Trustworthy memory through a real stdio server, as a client meets it (both backends): a
pasted secret is redacted and the reply says so; a fact is corrected with its history kept; a
forgotten memory is gone from search, the packet and, on SQLite, the file's bytes."""

from __future__ import annotations

from pathlib import Path

import pytest
from fastmcp import Client
from fastmcp.client.transports import StdioTransport
from mcp_calls import BIGMIND, Cli, call, serve_env
from secret_corpus import Fakes

from bigmind.config import Settings

pytestmark = [pytest.mark.anyio, pytest.mark.e2e, pytest.mark.timeout(120)]
MARKER = "quokka-7731-marker"


def stdio_client(settings: Settings, cwd: Path) -> Cli:
    env = serve_env(settings, **({"BIGMIND_MODE": "enterprise"} if settings.db_url else {}))
    return Client(StdioTransport(str(BIGMIND), ["serve"], env=env, cwd=str(cwd)))


def sqlite_bytes(settings: Settings) -> bytes:
    return b"".join(
        Path(str(settings.db_path) + s).read_bytes()
        for s in ("", "-wal")
        if Path(str(settings.db_path) + s).exists()
    )


async def test_redact_correct_and_forget_over_stdio(settings: Settings, tmp_path: Path) -> None:
    token, _ = Fakes(31).make("github-token")
    async with stdio_client(settings, tmp_path) as c:
        text, data = await call(
            c, "memory_store_fact", category="codebase", fact=f"CI pushes with {token}"
        )
        assert "Redacted before storing: 1 GitHub token" in text and token not in text
        fact_id = data["fact_id"]
        text, _ = await call(
            c, "memory_update_fact", fact_id=fact_id, fact="CI pushes with the deploy key"
        )
        assert "version 1 is kept in its history" in text
        versions, _ = await call(c, "memory_update_fact", fact_id=fact_id)
        assert "[REDACTED:github-token]" in versions and token not in versions

        _, kept = await call(c, "memory_store_fact", category="codebase", fact=f"Keep {MARKER}")
        _, gone = await call(c, "memory_store_fact", category="gotcha", fact=f"Drop {MARKER}x")
        if not settings.db_url:
            assert f"{MARKER}x".encode() in sqlite_bytes(settings)
        text, _ = await call(c, "memory_forget", kind="fact", id=gone["fact_id"])
        assert f"#{gone['fact_id']}" in text
        hits, _ = await call(c, "memory_search_facts", query=MARKER)
        assert f"#{kept['fact_id']}" in hits and f"#{gone['fact_id']}" not in hits
        packet, _ = await call(c, "memory_get_context")
        assert f"{MARKER}x" not in packet
    if not settings.db_url:  # the server has exited: what the disk holds
        raw = sqlite_bytes(settings)
        assert f"{MARKER}x".encode() not in raw and token.encode() not in raw
        assert MARKER.encode() in raw  # the kept fact: the check reads the right file
