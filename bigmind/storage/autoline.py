"""The one-liner and topics of an implicit session closed without memory_end_session.

No LLM: the line quotes the session's most important facts (else its flagged, then first
exchanges) after an ``[auto]`` mark; the topics are the facts' categories, then the longer
words that recur across what was stored. Deterministic and cheap: two small queries.
"""

from __future__ import annotations

import re
from collections import Counter

from bigmind import limits
from bigmind.storage.db import Row

AUTO_MARK = "[auto]"
EMPTY_ONE_LINER = f"{AUTO_MARK} no memories stored"
QUOTED = 3  # facts (or exchanges) quoted in the line
READ = 50  # facts read for the topics
TOPICS = 5
_WORD = re.compile(r"[^\W\d_][\w\-]{4,}", re.UNICODE)  # five characters or more: few stop words


def auto_line(facts: list[Row], chunks: list[Row]) -> tuple[str, str | None]:
    """(one-liner, comma-separated topics or None) of a session holding ``facts`` (``category``
    and ``fact``, most important first) and ``chunks`` (``content``, flagged first)."""
    texts = [str(r["fact"]) for r in facts] or [str(r["content"]) for r in chunks]
    if not texts:
        return EMPTY_ONE_LINER, None
    quoted = "; ".join(" ".join(t.split()).rstrip(".;") for t in texts[:QUOTED])
    return _shorten(f"{AUTO_MARK} {quoted}"), _topics(facts, texts)


def _shorten(line: str) -> str:
    if len(line) <= limits.ONE_LINER:
        return line
    return line[: limits.ONE_LINER - 1].rstrip(" ;,") + "…"


def _topics(facts: list[Row], texts: list[str]) -> str | None:
    out = [cat for cat, _ in Counter(str(r["category"]) for r in facts).most_common()]
    seen = Counter(
        w for t in texts for w in dict.fromkeys(m.group(0).lower() for m in _WORD.finditer(t))
    )
    out += [w for w, n in seen.most_common() if n > 1 and len(w) <= limits.TOPIC]
    return limits.tags(list(dict.fromkeys(out))[:TOPICS])
