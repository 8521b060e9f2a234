"""A deterministic token estimator for context budgets.

Budgets must hold for whatever model reads the packet, and a real tokenizer
(tiktoken) would add start-up time and a download. This estimator is meant to
err high compared with BPE tokenizers such as cl100k/o200k on English prose,
code and markdown:

* a run of ASCII letters/digits costs one token per started 4 characters;
* each ASCII punctuation or symbol character costs one token;
* each non-ASCII character (accents, CJK, emoji) costs one token per started
  2 bytes of UTF-8, so an emoji (4 bytes) counts 2;
* whitespace is free (BPE merges it into the following token).

So "memory_start_session()" counts 2+1+2+1+2+1+1 = 10 and "🧠 BigMind" counts 2+2 = 4.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[A-Za-z0-9]+")
_PUNCT = re.compile(r"[\x21-\x2f\x3a-\x40\x5b-\x60\x7b-\x7e]")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")


def count_tokens(text: str) -> int:
    """Estimated token count of ``text`` (see the module docstring for the rule)."""
    total = sum((len(w) + 3) // 4 for w in _WORD.findall(text))
    total += len(_PUNCT.findall(text))
    if not text.isascii():
        total += sum((len(c.encode("utf-8")) + 1) // 2 for c in _NON_ASCII.findall(text))
    return total


def truncate_to_tokens(text: str, budget: int, marker: str = "…") -> str:
    """Longest prefix of ``text`` (cut at a word boundary when possible) within ``budget``."""
    if count_tokens(text) <= budget:
        return text
    lo, hi = 0, len(text)
    while lo < hi:  # binary search on the character length
        mid = (lo + hi + 1) // 2
        if count_tokens(text[:mid] + marker) <= budget:
            lo = mid
        else:
            hi = mid - 1
    cut = text[:lo]
    space = cut.rfind(" ")
    if space > 0:
        cut = cut[:space]
    return cut.rstrip() + marker if cut else ""
