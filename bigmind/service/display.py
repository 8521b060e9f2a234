"""How stored memory is shown, for every surface: the renderers the features own, offered here
so that a surface needs no door but the service floor.

Every stored text reaches an agent as quoted data (:mod:`bigmind.memory.quoting`): one line,
no fence, role tag or invisible character; ``neutral_fences`` disarms every fence and role
tag left in a whole text (a hook's packet). The other helpers write the lines the tools add
to a reply: a fact in quotes and the call that makes it replace others
(:mod:`bigmind.memory.rivals`), the warnings of failed approaches
(:mod:`bigmind.memory.attempts`) and of facts bound to files (:mod:`bigmind.memory.gotchas`),
and when a reminder is due (:mod:`bigmind.memory.reminders`).
"""

from __future__ import annotations

from bigmind.memory.attempts import block as attempt_warnings
from bigmind.memory.gotchas import lines as gotcha_lines
from bigmind.memory.quoting import cell, neutral_fences, quoted
from bigmind.memory.reminders import NEXT_SESSION, when_text
from bigmind.memory.rivals import quote, replace_call

__all__ = [
    "NEXT_SESSION",
    "attempt_warnings",
    "cell",
    "gotcha_lines",
    "neutral_fences",
    "quote",
    "quoted",
    "replace_call",
    "when_text",
]
