"""The project of each call, from the client's MCP roots (its open workspace folders).

A client that declares the roots capability is asked ``roots/list`` once per connection
(again after it sends ``notifications/roots/list_changed``); the first ``file://`` root names
the project (:func:`bigmind.project.of_folder`), and every tool call and prompt of that
connection (tool calls, prompts, resource reads) runs in it (:func:`bigmind.project.using`). A client without roots, one that does
not answer within :data:`ROOTS_TIMEOUT_S`, or a connection with no back-channel (MCP
2026-07-28 requests) leaves the process's own project: its working directory's repository,
else ``BIGMIND_PROJECT``.
"""

from __future__ import annotations

import logging
import warnings
import weakref
from typing import Any
from urllib.parse import unquote, urlsplit

import anyio
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from mcp import types
from mcp.shared.exceptions import MCPDeprecationWarning, MCPError

from bigmind import project
from bigmind.project import Project

log = logging.getLogger(__name__)
ROOTS_TIMEOUT_S = 2.0
_ROOTS = types.ClientCapabilities(roots=types.RootsCapability())


def folder_of(uri: str) -> str | None:
    """The local path of a ``file://`` root, or None for any other URI."""
    parts = urlsplit(uri)
    if parts.scheme != "file":
        return None
    path = unquote(parts.path)
    return path or None


def project_of(roots: list[types.Root]) -> Project | None:
    """The project of a client's roots: the first local folder's."""
    for root in roots:
        folder = folder_of(str(root.uri))
        if folder:
            return project.of_folder(folder)
    return None


class ProjectFromRoots(Middleware):
    """Runs each tool call, prompt and resource read in the project of the calling client's roots."""

    def __init__(self) -> None:
        # Per connection (weakly held: a closed connection's entry goes with it).
        self._known: weakref.WeakKeyDictionary[Any, Project | None] = weakref.WeakKeyDictionary()

    async def on_call_tool(
        self, context: MiddlewareContext[Any], call_next: CallNext[Any, Any]
    ) -> Any:
        with project.using(await self._project(context)):
            return await call_next(context)

    async def on_get_prompt(
        self, context: MiddlewareContext[Any], call_next: CallNext[Any, Any]
    ) -> Any:
        with project.using(await self._project(context)):
            return await call_next(context)

    async def on_read_resource(
        self, context: MiddlewareContext[Any], call_next: CallNext[Any, Any]
    ) -> Any:
        with project.using(await self._project(context)):
            return await call_next(context)

    async def on_notification(
        self, context: MiddlewareContext[Any], call_next: CallNext[Any, Any]
    ) -> Any:
        if context.method == "notifications/roots/list_changed":
            connection = _connection(context)
            if connection is not None:
                self._known.pop(connection, None)
        return await call_next(context)

    async def _project(self, context: MiddlewareContext[Any]) -> Project | None:
        connection = _connection(context)
        if connection is None:
            return None
        if connection in self._known:
            return self._known[connection]
        found = await _ask_roots(context)
        self._known[connection] = found
        if found is not None:
            log.info("project from the client's roots: %s", found.key)
        return found


def _connection(context: MiddlewareContext[Any]) -> Any | None:
    ctx = context.fastmcp_context
    if ctx is None or ctx.request_context is None:
        return None
    return getattr(ctx.session, "_connection", None)


async def _ask_roots(context: MiddlewareContext[Any]) -> Project | None:
    ctx = context.fastmcp_context
    assert ctx is not None
    session = ctx.session
    if not session.check_client_capability(_ROOTS) or not session.can_send_request:
        return None
    try:
        with anyio.fail_after(ROOTS_TIMEOUT_S), warnings.catch_warnings():
            # Roots are deprecated by MCP 2026-07-28, but today's clients speak the earlier
            # protocol and it is how they say which folder is open.
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            result = await session.list_roots()
    except (MCPError, TimeoutError) as exc:
        log.info("no project from the client's roots: %s", exc)
        return None
    return project_of(list(result.roots))
