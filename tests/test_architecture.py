"""The structure holds: SQL naming a memory table lives in the data layer, imports point one way
with no cycles, modules stay small, and the command line starts without the server."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from pathlib import Path

from bigmind.storage import schema
from bigmind.storage.migrations import FTS_TABLES

PACKAGE = Path(__file__).resolve().parent.parent / "bigmind"
DATA_LAYER = PACKAGE / "storage"
# The schema's history and the PostgreSQL copier handle every table by design.
ALLOWED = {"migrations.py", "migratedb.py"}
# Every table of the schema (the registry, storage/schema.py, which tests/storage/test_schema.py holds
# to both backends' schemas), its full-text indexes and the vector tables: a table a migration
# adds is covered here by itself.
TABLES = (
    "|".join(
        sorted(
            {
                *(t.name for t in schema.TABLES if t.name != schema.VECTORS),
                *(fts for fts, _base, _cols in FTS_TABLES),
            },
            key=lambda t: (-len(t), t),
        )
    )
    + r"|vec_\w+"
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
    # Tables the hand-written list of before missed: every table of the schema now.
    assert SQL.search("DELETE FROM reminders WHERE id = ?")
    assert SQL.search("INSERT INTO api_tokens(id) VALUES (?)")
    assert SQL.search("SELECT approach FROM attempts")
    assert SQL.search("UPDATE directory_cards SET top_topics = ?")
    assert not SQL.search("facts from the session")  # prose
    assert not SQL.search("Select the facts you want")
    assert SQL.search("SELECT rowid FROM {} WHERE {} MATCH ? LIMIT ?")


# -- imports -------------------------------------------------------------------------------
def _module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports() -> dict[str, set[str]]:
    """Each bigmind module's imports of other bigmind modules, those inside functions too."""
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                if node.module in modules:
                    graph[name].add(node.module)
                graph[name] |= {f"{node.module}.{a.name}" for a in node.names} & modules.keys()
            elif isinstance(node, ast.Import):
                graph[name] |= {a.name for a in node.names} & modules.keys()
        graph[name].discard(name)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_import_cycles_counting_imports_inside_functions() -> None:
    assert _cycles(_imports()) == []


def test_the_cycle_check_sees_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_modules_stay_small() -> None:
    files = [*PACKAGE.rglob("*.py"), *(PACKAGE.parent / "bench").glob("*.py")]
    sizes = {str(p.relative_to(PACKAGE.parent)): len(p.read_text().splitlines()) for p in files}
    assert {m: n for m, n in sizes.items() if n > 800} == {}


def test_subpackage_inits_are_thin() -> None:
    """A docstring only (the service floor also names its modules: ``__all__``)."""
    for init in PACKAGE.rglob("__init__.py"):
        if init.parent == PACKAGE:
            continue
        code = [n for n in ast.parse(init.read_text()).body if not isinstance(n, ast.Expr)]
        if init.parent.name == "service":
            code = [n for n in code if not _names_all(n)]
        assert code == [], f"{init.relative_to(PACKAGE)} should hold a docstring only"


def _names_all(node: ast.stmt) -> bool:
    return isinstance(node, ast.Assign) and [ast.unparse(t) for t in node.targets] == ["__all__"]


SURFACES = ("bigmind.cli.", "bigmind.gateway.", "bigmind.mcp.", "bigmind.web.")


def test_the_service_floor_names_every_module_it_offers() -> None:
    """``bigmind.service.__all__`` lists the use-case modules: one added is one declared."""
    import bigmind.service

    offered = {p.stem for p in (PACKAGE / "service").glob("*.py")} - {"__init__"}
    assert sorted(bigmind.service.__all__) == sorted(offered)


def test_surfaces_enter_the_service_floor_by_its_declared_modules_only() -> None:
    """What a surface takes from ``bigmind.service`` is one of ``__all__``'s modules, and from
    such a module only public names (the floor's door; memory, search and storage stay shut:
    lint-imports)."""
    import bigmind.service

    doors = {f"bigmind.service.{m}" for m in bigmind.service.__all__}
    taken: set[str] = set()
    for path in PACKAGE.rglob("*.py"):
        if not _module_name(path).startswith(SURFACES):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith(
                "bigmind.service"
            ):
                for a in node.names:
                    whole = f"{node.module}.{a.name}"
                    taken.add(whole if whole in doors else f"{node.module}:{a.name}")
    entered = {t.split(":")[0] for t in taken}
    assert entered <= doors, entered - doors
    assert not [t for t in taken if t.split(":")[-1].startswith("_")]


def test_bigmind_help_imports_only_the_command_line() -> None:
    """`bigmind --help` and `bigmind version` stay fast: no server, database, model or web
    module is imported for them."""
    probe = (
        "import sys, contextlib, io\n"
        "from bigmind.cli.main import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    for argv in (['--help'], ['version']):\n"
        "        try:\n"
        "            main(argv)\n"
        "        except SystemExit:\n"
        "            pass\n"
        "print('\\n'.join(sorted(sys.modules)))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60
    ).stdout.split()
    ours = {m for m in out if m == "bigmind" or m.startswith("bigmind.")}
    assert ours <= {"bigmind", "bigmind.cli", "bigmind.cli.main", "bigmind.errors"}, ours
    heavy = {"fastmcp", "numpy", "apsw", "onnxruntime", "starlette", "psycopg", "pydantic"}
    assert heavy.isdisjoint(out), heavy & set(out)


def test_no_two_modules_share_a_name() -> None:
    """A module's name says one thing: no two modules of the package (across floors) share a
    base name, so ``facts_table`` is the table, ``service.facts`` the use case."""
    names: dict[str, list[str]] = {}
    for path in PACKAGE.rglob("*.py"):
        if path.name != "__init__.py":
            names.setdefault(path.stem, []).append(str(path.relative_to(PACKAGE)))
    assert {n: paths for n, paths in names.items() if len(paths) > 1} == {}
