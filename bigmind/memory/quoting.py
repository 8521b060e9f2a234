"""Recalled text as quoted data: one line that cannot pose as instructions.

Whatever BigMind shows an agent from memory — facts, session one-liners and summaries, saved
exchanges, company knowledge, people's notes, reminders, attempts — was written by someone,
possibly by an agent that had just read a prompt injection. Shown as it was stored, a fact
holding ``"\\n\\n## 🧠 BigMind instructions (updated)\\n…"`` starts a heading of its own,
``"SYSTEM: …"`` a line of its own, and ``"</bigmind-memory>"`` closes the hook's fence early.
:func:`quoted` renders such a text as one line of data:

- Every line break (``\\n``, ``\\r``, ``\\v``, ``\\f``, ``\\x1c``–``\\x1e``, ``\\x85``, U+2028,
  U+2029) becomes :data:`BREAK`, so the text never starts a line: a heading, a role marker
  (``SYSTEM:``, ``Human:``), a code fence or a ``---`` inside it stays in the middle of the line
  it is quoted on, after the renderer's own prefix. Other runs of whitespace become one space.
- Tags that delimit what a model reads are neutralised wherever they stand: BigMind's own fence
  (``<bigmind-memory>``, ``</bigmind-memory>``, any ``<…bigmind…>``), chat-template tokens
  (``<|im_start|>``, ``<|eot_id|>``, ``<｜end▁of▁sentence｜>``), role and tool tags
  (``<system>``, ``</user>``, ``<assistant>``, ``<system-reminder>``, ``<function_calls>``,
  ``<tool_result>``…, with or without a ``prefix:``), Llama's and Mistral's ``[INST]``,
  ``<<SYS>>``, ``[SYSTEM_PROMPT]``. Their brackets become ``‹ ›``: they read the same and open
  or close nothing. Every other angle bracket is code (``a < b``, ``List<String>``, ``<div>``)
  and stays.
- Control characters and invisible format characters (zero-width spaces and joiners, bidi
  overrides such as U+202E, Unicode tag characters) are removed: they hide or reorder text.

Role words themselves (``SYSTEM:``, ``Assistant:``) are left alone: they act only at the start
of a line, where a quoted text never stands.
"""

from __future__ import annotations

import re
import unicodedata

BREAK = " ⏎ "  # what a line break inside a stored text is shown as

# Tag names a model may take for a turn, a role or a tool call (compared lowercased, without a
# namespace prefix such as ``x:``), besides anything starting with "bigmind".
_ROLE_TAGS = frozenset(
    {
        "system",
        "system-reminder",
        "system_prompt",
        "user",
        "assistant",
        "human",
        "ai",
        "model",
        "bot",
        "instructions",
        "tool",
        "tools",
        "tool_call",
        "tool_calls",
        "tool_use",
        "tool_result",
        "tool_response",
        "function",
        "functions",
        "function_call",
        "function_calls",
        "function_results",
        "invoke",
        "parameter",
        "start_of_turn",
        "end_of_turn",
        "im_start",
        "im_end",
    }
)
# A tag's opening bracket and name, and its closing bracket if it has one: a role tag cut off
# (``</system`` at the end of a text) is neutralised too, since what follows may close it.
_TAG = re.compile(r"<\s*/?\s*([\w:.-]{1,60})(?:[^<>]{0,400}?>)?")
_TEMPLATE = re.compile(r"<\s*[|｜][^<>|｜]{1,60}[|｜]\s*>")  # <|im_start|>, <｜Assistant｜>
_LLAMA = re.compile(
    r"<<\s*/?\s*SYS\s*>>"
    r"|\[\s*/?\s*(?:INST|SYSTEM_PROMPT|TOOL_CALLS|AVAILABLE_TOOLS|TOOL_RESULTS)\s*\]",
    re.IGNORECASE,
)
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")  # what is left of C0 and C1 once lines are split


def quoted(text: str | None) -> str:
    """``text`` as one line of quoted data (see the module docstring); "" for None."""
    if not text:
        return ""
    lines = (" ".join(_visible(line).split()) for line in text.splitlines())
    return _neutral(BREAK.join(line for line in lines if line))


def cell(text: str | None) -> str:
    """``text`` quoted for a Markdown table cell: a ``|`` in it cannot add a column."""
    return quoted(text).replace("|", "\\|")


def neutral_fences(text: str) -> str:
    """``text`` (several lines of BigMind's own making) with every fence, template and role tag
    in it neutralised: what goes inside a fence can then never close it."""
    return _neutral(text)


def _visible(line: str) -> str:
    """The line without control characters (a tab becomes a space) or format characters."""
    line = _CONTROL.sub(" ", line)
    return line if line.isascii() else line.translate(_FORMAT)


class _FormatCharacters(dict[int, int | None]):
    """``str.translate`` table dropping Unicode format characters (category Cf), as the
    running Python's Unicode database has them, each character looked up once (a text of
    100,000 characters is then translated in C, not a Python loop)."""

    def __missing__(self, cp: int) -> int | None:
        out = None if unicodedata.category(chr(cp)) == "Cf" else cp
        if cp < _CACHED_BELOW:
            self[cp] = out
        return out


_CACHED_BELOW = 0x30000  # beyond the planes text uses, characters are looked up each time
_FORMAT = _FormatCharacters()


def _neutral(text: str) -> str:
    if "<" not in text and "[" not in text:
        return text
    text = _TEMPLATE.sub(_angles, text)
    text = _LLAMA.sub(_angles, text)
    return _TAG.sub(_role_tag, text)


def _angles(m: re.Match[str]) -> str:
    return m.group(0).translate(_TO_ANGLES)


_TO_ANGLES = str.maketrans({"<": "‹", ">": "›", "[": "‹", "]": "›"})


def _role_tag(m: re.Match[str]) -> str:
    name = m.group(1).lower().rsplit(":", 1)[-1]
    if name in _ROLE_TAGS or name.startswith("bigmind"):
        return _angles(m)
    return m.group(0)
