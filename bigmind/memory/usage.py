"""How often a memory was of use: counted off the read path, written in one batch later.

A *use* is a memory an agent saw among the first :data:`USE_TOP` results of a search it
made itself (memory_recall and the memory_search_* tools). The same query returning the
same memory again is not a new use; facts shown in the bootstrap packet, the profile page,
the CLI and the hypothesis scan are not uses either. Ranking boosts memories by these
counts (``recalled N×``), so only what an agent was actually handed counts.

Searches only :meth:`UsageTally.record` in memory — no SQL, no lock, no transaction — and
:meth:`UsageTally.flush` writes what accumulated in one short transaction, from the
runtime's background flusher (or at close). A process that dies loses at most the uses of
its last :data:`FLUSH_AFTER_S` seconds: a soft ranking signal, never a memory.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable

from bigmind.models import now_ts
from bigmind.storage import usage_table as memory_usage
from bigmind.storage.db import Backend
from bigmind.storage.facts_table import Facts

USE_TOP = 3  # the first results of a search are what the agent reads
FLUSH_AFTER_S = 10.0  # the first unwritten use is written this long after it happened
_SEEN_MAX = 10_000  # (user, query, memory) triples remembered to count a repeat once

Key = tuple[str, str, str]  # (user_id, kind, item_id)


class UsageTally:
    """Uses not written yet, per (user, kind, item), shared by the threads of a process."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pending: dict[Key, int] = {}
        self._seen: OrderedDict[tuple[str, str, str, str], None] = OrderedDict()
        self.waiting = threading.Event()  # set while something waits to be written

    def record(self, user_id: str, query: str, hits: Iterable[tuple[str, object]]) -> None:
        """Count the (kind, id) ``hits`` an agent's ``query`` returned first."""
        q = " ".join(query.lower().split())
        with self._lock:
            for kind, item_id in hits:
                seen = (user_id, q, kind, str(item_id))
                if seen in self._seen:
                    self._seen.move_to_end(seen)
                    continue
                self._seen[seen] = None
                while len(self._seen) > _SEEN_MAX:
                    self._seen.popitem(last=False)
                key = (user_id, kind, str(item_id))
                self._pending[key] = self._pending.get(key, 0) + 1
            if self._pending:
                self.waiting.set()

    def __len__(self) -> int:
        with self._lock:
            return len(self._pending)

    def discard(self, items: Iterable[tuple[str, str]]) -> None:
        """Drop the uses not written yet of these (kind, item id) memories, which were
        forgotten, and the searches remembered with them (ids name one memory of any user)."""
        gone = set(items)
        with self._lock:
            for key in [k for k in self._pending if (k[1], k[2]) in gone]:
                del self._pending[key]
            for seen in [s for s in self._seen if (s[2], s[3]) in gone]:
                del self._seen[seen]
            if not self._pending:
                self.waiting.clear()

    def _take(self) -> dict[Key, int]:
        with self._lock:
            taken, self._pending = self._pending, {}
            self.waiting.clear()
            return taken

    def _give_back(self, taken: dict[Key, int]) -> None:
        with self._lock:
            for key, n in taken.items():
                self._pending[key] = self._pending.get(key, 0) + n
            if self._pending:
                self.waiting.set()

    def flush(self, db: Backend) -> int:
        """Write every pending use in one transaction; returns how many memories it touched.
        If the write fails the uses are kept for the next flush, and the error is raised."""
        taken = self._take()
        if not taken:
            return 0
        try:
            _write(db, taken)
        except BaseException:
            self._give_back(taken)
            raise
        return len(taken)


def _write(db: Backend, uses: dict[Key, int]) -> None:
    ts = now_ts()
    facts: dict[tuple[str, int], list[int]] = {}  # (user, increment) → fact ids
    others: list[tuple[str, str, str, int]] = []
    for (user_id, kind, item_id), n in sorted(uses.items()):
        if kind == "fact" and item_id.isdigit():
            facts.setdefault((user_id, n), []).append(int(item_id))
        elif kind != "fact":
            others.append((kind, item_id, user_id, n))
    with db.transaction() as tx:
        for (user_id, n), ids in facts.items():
            Facts(db, user_id).add_uses(tx, ids, n, ts)
        memory_usage.add_uses(tx, others, ts)
