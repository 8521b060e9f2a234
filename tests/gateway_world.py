"""The HTTP gateway in this process (uvicorn in a thread, on 127.0.0.1) and real clients for it."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from typing import Any

import httpx2
import uvicorn
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from bigmind.config import Settings
from bigmind.gateway.app import build_gateway
from bigmind.memory import api_tokens
from bigmind.runtime import Runtime
from bigmind.web.deadlines import uvicorn_options


@dataclass
class Running:
    url: str
    rt: Runtime

    def token(self, user: str, **kw: Any) -> str:
        return api_tokens.create(self.rt.store.db, user, **kw).secret


@contextlib.contextmanager
def running(settings: Settings, port: int) -> Iterator[Running]:
    """The gateway for ``settings`` on ``port`` until the block ends (bounded start and stop)."""
    rt = Runtime(settings, background=False, serves_many=True)
    rt.public_url = f"http://127.0.0.1:{port}"
    app = build_gateway(settings, rt)
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        log_level="warning",
        lifespan="on",
        **uvicorn_options(settings),  # the slow clients' deadlines, as `bigmind serve --http`
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="gateway", daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the gateway did not start")
        time.sleep(0.02)
    try:
        yield Running(rt.public_url, rt)
    finally:
        server.should_exit = True
        thread.join(15)
        rt.close()


@contextlib.asynccontextmanager
async def mcp_session(url: str, token: str | None, **headers: str) -> AsyncIterator[ClientSession]:
    """An initialised MCP session over streamable HTTP (the mcp SDK's client)."""
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    async with (
        httpx2.AsyncClient(headers=headers, timeout=30) as http,
        streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        yield session


def text(result: Any) -> str:
    return "\n".join(c.text for c in result.content if hasattr(c, "text"))
