"""The structure holds: SQL that names a memory table lives in the data layer only."""

from __future__ import annotations

import ast
import re
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "bigmind"
DATA_LAYER = PACKAGE / "storage"
# The schema's history and the PostgreSQL copier handle every table by design.
ALLOWED = {"migrations.py", "migratedb.py"}
TABLES = (
    r"users|identity_profile|sessions|session_summaries|conversation_chunks|facts|hypotheses"
    r"|people|global_knowledge|focus_announcements|token_saves|memory_usage|embeddings"
    r"|embedding_state|vec_\w+|facts_fts|conversation_chunks_fts|session_summaries_fts"
    r"|global_knowledge_fts"
)
SQL = re.compile(
    rf"\b(?:FROM|JOIN|INTO|UPDATE|TABLE)\s+(?:{TABLES})\b"
    # Full-text and vector SQL names its tables through variables: its operators give it away.
    r"|\bMATCH \?|\bbm25\(|\btsv @@|\bvec_distance_cosine\(|<=> \?"
)


def _strings(path: Path) -> list[tuple[int, str]]:
    """Every string literal of a module (f-strings' literal parts joined), with its line."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.append((node.lineno, node.value))
        elif isinstance(node, ast.JoinedStr):
            text = "".join(v.value if isinstance(v, ast.Constant) else "{}" for v in node.values)
            out.append((node.lineno, text))
    return out


def _offenders() -> dict[str, list[int]]:
    found: dict[str, list[int]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.is_relative_to(DATA_LAYER) or path.name in ALLOWED:
            continue
        lines = [n for n, text in _strings(path) if SQL.search(" ".join(text.split()))]
        if lines:
            found[str(path.relative_to(PACKAGE))] = sorted(set(lines))
    return found


def test_sql_naming_a_memory_table_lives_in_the_data_layer() -> None:
    assert _offenders() == {}, "SQL naming a memory table outside bigmind/storage/ (module: lines)"


def test_the_check_sees_sql() -> None:
    assert SQL.search("SELECT id FROM facts f WHERE f.user_id = ?")
    assert SQL.search("INSERT INTO memory_usage(kind) VALUES (?)")
    assert SQL.search("UPDATE facts SET x = 1")
    assert not SQL.search("facts from the session")  # prose
    assert not SQL.search("Select the facts you want")
    assert SQL.search("SELECT rowid FROM {} WHERE {} MATCH ? LIMIT ?")
