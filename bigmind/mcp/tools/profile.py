"""The profile page's address, for an IDE's built-in browser or the desktop's."""

from __future__ import annotations

from fastmcp.tools import ToolResult

from bigmind.errors import BackendUnavailable
from bigmind.mcp.tools.base import READ_ONLY, Catalog, edge, result
from bigmind.runtime import Runtime
from bigmind.web.server import (
    HEADLESS,
    open_browser,
    probe,
    profile_server,
    serves_this_memory,
    url_for,
)


def register(mcp: Catalog, rt: Runtime) -> None:
    def page_url() -> str:
        s = rt.settings
        if rt.public_url is not None:  # the HTTP gateway serves the pages itself
            return rt.public_url + "/"
        if s.web:
            return profile_server(rt).url()
        # BIGMIND_WEB=0: never start a page, but point at one `bigmind web` serves.
        url = url_for(s.web_host, s.port)
        if serves_this_memory(probe(url), s):
            return url
        raise BackendUnavailable(
            "The profile page is off (BIGMIND_WEB=0). Run `bigmind web` in a terminal to "
            "serve it, then ask again."
        )

    @mcp.tool(annotations=READ_ONLY)
    @edge
    def memory_get_profile_url() -> ToolResult:
        """URL of the user's BigMind profile page, for an IDE's built-in browser."""
        url = page_url()
        return result(f"BigMind profile page: {url}", url=url)

    @mcp.tool(annotations=READ_ONLY)
    @edge
    def memory_open_profile() -> ToolResult:
        """Open the user's BigMind profile page in their browser."""
        url = page_url()
        if open_browser(url):
            return result(f"Opened {url} in the browser.", url=url, opened=True)
        return result(HEADLESS.format(url=url), url=url, opened=False)
