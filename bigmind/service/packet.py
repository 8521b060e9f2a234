"""The bootstrap packet: the user's memory, budgeted, for the start of a conversation.

:func:`build` renders it (:func:`bigmind.memory.context.build_context`) within the configured
budget; with a ``focus``, the facts and sessions most relevant to it come first, ranked by the
ranker given (a one-shot command's, with the model loaded in its thread) or the runtime's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bigmind.memory.context import Packet, build_context

if TYPE_CHECKING:
    from bigmind.runtime import Runtime
    from bigmind.search.ranking import Recall

__all__ = ["Packet", "build"]


def build(
    rt: Runtime,
    focus: str | None = None,
    *,
    current_session: str | None = None,
    ranker: Recall | None = None,
) -> Packet:
    """The packet for the running call's user (no session is opened). ``current_session``:
    the session it opens, left out of the recent ones; ``ranker``: what ranks the memories
    relevant to ``focus`` (default: the runtime's recall, only when there is a focus)."""
    if ranker is None and focus:
        ranker = rt.recall()
    return build_context(
        rt.store,
        current_session=current_session,
        budget=rt.settings.context_budget,
        focus=focus,
        recall=ranker,
    )
