"""The memory_usage table: how often each memory other than a fact was of use, per user.

Facts keep their count in their own row (:meth:`bigmind.storage.facts_table.Facts.add_uses`).
"""

from __future__ import annotations

from collections.abc import Sequence

from bigmind.storage.db import Tx
from bigmind.storage.table import marks

BLOCK = 200  # rows per INSERT


def add_uses(tx: Tx, uses: Sequence[tuple[str, str, str, int]], ts: str) -> None:
    """Add (kind, item id, user id, uses) to the counts, creating rows as needed."""
    for start in range(0, len(uses), BLOCK):
        part = uses[start : start + BLOCK]
        tx.execute(
            "INSERT INTO memory_usage(kind, item_id, user_id, access_count,"
            f" last_accessed_at) VALUES {', '.join(['(?, ?, ?, ?, ?)'] * len(part))}"
            " ON CONFLICT(kind, item_id, user_id) DO UPDATE SET"
            " access_count = memory_usage.access_count + excluded.access_count,"
            " last_accessed_at = excluded.last_accessed_at",
            [v for kind, item_id, user_id, n in part for v in (kind, item_id, user_id, n, ts)],
        )


def forget(tx: Tx, kind: str, item_ids: Sequence[object], user_id: str | None) -> int:
    """Delete the use counts of these memories (``user_id`` None: every user's, for shared
    kinds); how many rows went."""
    gone = 0
    for start in range(0, len(item_ids), BLOCK):
        part = [str(i) for i in item_ids[start : start + BLOCK]]
        owner, params = ("", ()) if user_id is None else (" AND user_id = ?", (user_id,))
        rows = tx.execute(
            f"DELETE FROM memory_usage WHERE kind = ? AND item_id IN ({marks(part)}){owner}"
            " RETURNING kind",
            (kind, *part, *params),
        )
        gone += len(rows)
    return gone
