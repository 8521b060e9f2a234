"""The profile page's address, for an IDE's built-in browser or the desktop's."""

from __future__ import annotations

from fastmcp.tools import ToolResult

from bigmind.errors import BackendUnavailable
from bigmind.mcp.tools.base import READ_ONLY, RUNTIME, Catalog, result
from bigmind.runtime import Runtime
from bigmind.web.profile_server import (
    HEADLESS,
    open_browser,
    probe,
    profile_server,
    serves_this_memory,
    url_for,
)


def page_url(rt: Runtime) -> str:
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


catalog = Catalog()


@catalog.tool(annotations=READ_ONLY)
def memory_get_profile_url(rt: Runtime = RUNTIME) -> ToolResult:
    """URL of the user's BigMind profile page, for an IDE's built-in browser."""
    url = page_url(rt)
    return result(f"BigMind profile page: {url}", url=url)


@catalog.tool(annotations=READ_ONLY)
def memory_open_profile(rt: Runtime = RUNTIME) -> ToolResult:
    """Open the user's BigMind profile page in their browser."""
    url = page_url(rt)
    if open_browser(url):
        return result(f"Opened {url} in the browser.", url=url, opened=True)
    return result(HEADLESS.format(url=url), url=url, opened=False)
