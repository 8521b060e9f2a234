"""Who the running call acts for: the user an HTTP gateway authenticated, if any.

The stdio server, the CLI and the profile page act for the configured user
(``BIGMIND_USER``); the HTTP gateway authenticates each request and runs it with
:func:`acting_as`, so :attr:`bigmind.runtime.Runtime.store` is that user's store. Only the
gateway's authentication sets it: never a header, argument or setting the client sends.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from contextvars import ContextVar

_current: ContextVar[str | None] = ContextVar("bigmind_caller", default=None)


def current() -> str | None:
    """The username the running call was authenticated as, or None (the configured user)."""
    return _current.get()


@contextlib.contextmanager
def acting_as(username: str | None) -> Iterator[None]:
    """Run the enclosed calls for ``username`` (None: the configured user)."""
    token = _current.set(username)
    try:
        yield
    finally:
        _current.reset(token)
