"""Which browser pages may call the gateway: its own origin and ``BIGMIND_ALLOWED_ORIGINS``.

Browsers send ``Origin`` with their cross-origin requests and POSTs; MCP clients and scripts
send none, and are not affected. The gateway's own origin is the one its ``Host`` header names
(the scheme taken from the ``Origin``, as TLS usually ends at a proxy) or its public URL.
"""

from __future__ import annotations

from collections.abc import Iterable
from urllib.parse import urlsplit

from starlette.datastructures import Headers

DEFAULT_PORTS = {"http": 80, "https": 443}
Key = tuple[str, str, int]  # scheme, host (lower case), port


def origin_key(url: str) -> Key | None:
    """``url``'s origin, comparable (default ports made explicit), or None if it has none."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in DEFAULT_PORTS or not parts.hostname:
        return None
    return scheme, parts.hostname.lower(), port or DEFAULT_PORTS[scheme]


class Origins:
    """The origins a browser may call the gateway from."""

    def __init__(self, allowed: Iterable[str], public_url: str | None = None) -> None:
        urls = [*allowed, *([public_url] if public_url else [])]
        self.allowed = {key for key in map(origin_key, urls) if key is not None}

    def foreign(self, headers: Headers) -> bool:
        """Whether a browser sent this request from a page of another origin (no ``Origin``
        header: no)."""
        origin = headers.get("origin")
        if origin is None:
            return False
        if origin.strip() == "null":  # an opaque origin: ours only if the browser says so
            return headers.get("sec-fetch-site") != "same-origin"
        key = origin_key(origin)
        if key is None:
            return True
        if key in self.allowed:
            return False
        return origin_key(f"{key[0]}://{headers.get('host', '')}") != key
