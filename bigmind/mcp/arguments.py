"""Bad tool arguments, said in one line the agent can act on.

FastMCP validates a call's arguments with pydantic before the tool runs, and its error is a
multi-line dump with links to pydantic's documentation ("3 validation errors for
call[memory_store_fact] … For further information visit https://errors.pydantic.dev/…").
:class:`ReadableArguments` catches that one error for every tool and says instead what is
wrong with each argument, by its name and in the terms of the tool's own input schema:

    missing required argument fact; unknown argument content (this tool takes: category,
    fact, confidence, session_id, importance, scope); 'importance' must be an integer from 1
    to 10, got "high".

What the schema accepts is read from the schema itself (the bounds come from ``limits.py``
through it), so a message can never disagree with ``tools/list``.

Before any tool sees them, every call's arguments are held to what no tool can take
(:func:`bigmind.limits.unfit`): an integer beyond 64 bits (no id or count is that large, and the databases
cannot hold one), a NUL character (not text, and PostgreSQL cannot store it), a string longer
than the longest text any tool stores (``limits.CHUNK``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fastmcp.exceptions import ToolError, ValidationError
from fastmcp.server.middleware import CallNext, Middleware, MiddlewareContext
from pydantic import ValidationError as PydanticValidationError

# In limits: the REST API (bigmind.web.rest) explains its bad requests the same way.
from bigmind.limits import expected, explain, unfit

__all__ = ["ReadableArguments", "expected", "explain", "unfit"]


class ReadableArguments(Middleware):
    """Turns an argument-validation failure of any tool into a one-line ToolError."""

    async def on_call_tool(
        self, context: MiddlewareContext[Any], call_next: CallNext[Any, Any]
    ) -> Any:
        fault = unfit(context.message.arguments or {})
        if fault:
            raise ToolError(fault)
        try:
            return await call_next(context)
        except ValidationError as exc:
            cause = exc.__cause__
            if not isinstance(cause, PydanticValidationError):
                raise
            name = context.message.name
            schema: Mapping[str, Any] = {}
            if context.fastmcp_context is not None:
                tool = await context.fastmcp_context.fastmcp.get_tool(name)
                schema = tool.parameters if tool is not None else {}
            # Not logged: the line quotes the values sent (FastMCP logs the error's kinds).
            raise ToolError(explain(schema, cause.errors(include_url=False))) from exc
