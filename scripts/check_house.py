#!/usr/bin/env python3
"""The rules of the house, checked on a source tree (tests/test_house.py runs it).

- no Python file of pybrain/ over MOST_LINES lines;
- no function of pybrain/api/transport.py over MOST_TRANSPORT_LINES lines;
- the faces stay faces: pybrain/hooks/__init__.py and pybrain/client.py at most
  MOST_FACE_LINES lines each (the rooms behind them hold the code);
- a Brain built in one place: `Brain(...)` is called in pybrain/api/brain.py only;
- the typed methods (pybrain/api/memories.py, sessions.py, embedding.py) hold no
  transport code: no transaction, cursor, connector or connection of their own;
- no import circle among the modules of pybrain/: the graph of every `import` and
  `from ... import` statement, at module level and inside functions alike (those
  under `if TYPE_CHECKING:` too), each edge to the module named (a name imported
  from a package, not a module, is an edge to the package; the parent packages
  Python runs first are not edges);
- docs/house.md names every package of pybrain/ (`pybrain/api/`), every module of
  pybrain/'s top level (`db.py`) and every file of sql/functions (`004a-write-core.sql`);
- SQL duplicate pairs (check_sql_pairs): scripts/sql_pairs.py counts them in the
  tree's sql/functions, each function's header collapsed to one line: at most 12.

Usage: scripts/check_house.py [ROOT]   (ROOT: the repository, by default this one).
Prints each broken rule, one line each, and exits 1 when any is broken.
"""

from __future__ import annotations

import ast
import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path

MOST_LINES = 900
MOST_TRANSPORT_LINES = 40
MOST_FACE_LINES = 300
FACES = ("pybrain/hooks/__init__.py", "pybrain/client.py")
TRANSPORT = "pybrain/api/transport.py"
BRAIN_BUILT_IN = "pybrain/api/brain.py"
TYPED_METHODS = ("pybrain/api/memories.py", "pybrain/api/sessions.py", "pybrain/api/embedding.py")
# What only the transport (and the Brain's core) touches.
TRANSPORT_NAMES = frozenset({"transaction", "_run", "execute", "connector", "connection", "cursor"})
HOUSE_MAP = "docs/house.md"
SQL_PAIRS = "scripts/sql_pairs.py"
SQL_PAIRS_MAX = 12


def python_files(root: Path) -> list[Path]:
    return sorted(p for p in (root / "pybrain").rglob("*.py") if "__pycache__" not in p.parts)


def _rel(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix()


def check_file_sizes(root: Path) -> list[str]:
    """No Python file of pybrain/ over MOST_LINES lines."""
    out = []
    for path in python_files(root):
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if lines > MOST_LINES:
            out.append(f"{_rel(root, path)} has {lines} lines (at most {MOST_LINES}): split it by role")
    return out


def check_faces(root: Path) -> list[str]:
    """The faces (FACES) at most MOST_FACE_LINES lines each."""
    out = []
    for name in FACES:
        path = root / name
        lines = len(path.read_text(encoding="utf-8").splitlines()) if path.exists() else 0
        if lines > MOST_FACE_LINES:
            out.append(
                f"{name} has {lines} lines (a face: at most {MOST_FACE_LINES}): move code to its rooms"
            )
    return out


def check_transport_functions(root: Path) -> list[str]:
    """No function of the transport over MOST_TRANSPORT_LINES lines (its docstring included)."""
    path = root / TRANSPORT
    if not path.exists():
        return [f"{TRANSPORT} is missing"]
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            lines = (node.end_lineno or node.lineno) - node.lineno + 1
            if lines > MOST_TRANSPORT_LINES:
                most = MOST_TRANSPORT_LINES
                out.append(f"{TRANSPORT}:{node.lineno} {node.name} has {lines} lines (at most {most})")
    return out


def check_brain_built_once(root: Path) -> list[str]:
    """`Brain(...)` is called in BRAIN_BUILT_IN only (each face opens its Brain there)."""
    out = []
    for path in python_files(root):
        if _rel(root, path) == BRAIN_BUILT_IN:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and _called(node) == "Brain":
                where = f"{_rel(root, path)}:{node.lineno}"
                out.append(f"{where} builds a Brain: open it with pybrain.api.brain.open_brain")
    return out


def check_typed_methods(root: Path) -> list[str]:
    """The typed methods call through BrainCore.call and value: they name no transaction,
    cursor, connector or connection (TRANSPORT_NAMES)."""
    out = []
    for name in TYPED_METHODS:
        path = root / name
        if not path.exists():
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and node.attr in TRANSPORT_NAMES:
                out.append(f"{name}:{node.lineno} uses .{node.attr}: leave it to pybrain/api/transport.py")
    return out


def _called(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None


def module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imported(
    module: str, is_package: bool, node: ast.Import | ast.ImportFrom, modules: set[str]
) -> Iterator[str]:
    """The modules of pybrain an import statement names."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield _nearest(alias.name, modules)
        return
    base = node.module or ""
    if node.level:
        package = module.split(".") if is_package else module.split(".")[:-1]
        package = package[: len(package) - (node.level - 1)]
        base = ".".join([*package, *([base] if base else [])])
    for alias in node.names:
        full = f"{base}.{alias.name}"
        yield full if full in modules else _nearest(base, modules)


def _nearest(name: str, modules: set[str]) -> str:
    """The module itself, else the longest prefix of it that is a module."""
    parts = name.split(".")
    while parts and ".".join(parts) not in modules:
        parts.pop()
    return ".".join(parts)


def import_graph(root: Path) -> dict[str, set[str]]:
    """Each module of pybrain and the modules of pybrain it imports (see the module's text)."""
    files = {module_name(root, p): p for p in python_files(root)}
    modules = set(files)
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for module, path in files.items():
        is_package = path.name == "__init__.py"
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import | ast.ImportFrom):
                graph[module].update(
                    m for m in _imported(module, is_package, node, modules) if m in modules and m != module
                )
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def check_import_circles(root: Path) -> list[str]:
    return [f"import circle of {len(c)} modules: {' <-> '.join(c)}" for c in circles(import_graph(root))]


def house_names(root: Path) -> list[str]:
    """What docs/house.md must name: pybrain's packages, its top-level modules, the SQL function files."""
    pybrain = root / "pybrain"
    packages = sorted(
        f"{_rel(root, p.parent)}/" for p in pybrain.rglob("__init__.py") if "__pycache__" not in p.parts
    )
    modules = sorted(p.name for p in pybrain.glob("*.py") if p.name != "__init__.py")
    functions = sorted(p.name for p in (root / "sql" / "functions").glob("*.sql"))
    return [*packages, *modules, *functions]


def check_house_map(root: Path) -> list[str]:
    """docs/house.md names every package, top-level module and SQL function file."""
    path = root / HOUSE_MAP
    if not path.exists():
        return [f"{HOUSE_MAP} is missing"]
    text = path.read_text(encoding="utf-8")
    return [f"{HOUSE_MAP} does not name {name}" for name in house_names(root) if f"`{name}`" not in text]


def check_sql_pairs(root: Path) -> list[str]:
    """The duplicate pairs in the tree's sql/functions (scripts/sql_pairs.py, each function's
    header collapsed to one line): at most SQL_PAIRS_MAX."""
    script = root / SQL_PAIRS
    if not script.exists():
        return [f"{SQL_PAIRS}: missing"]
    spec = importlib.util.spec_from_file_location("sql_pairs", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    found = module.pairs(module.read(root / "sql" / "functions"))
    if len(found) <= SQL_PAIRS_MAX:
        return []
    return [f"sql/functions: {len(found)} duplicate pairs (at most {SQL_PAIRS_MAX}; {SQL_PAIRS} --list)"]


CHECKS = (
    check_file_sizes,
    check_faces,
    check_transport_functions,
    check_brain_built_once,
    check_typed_methods,
    check_import_circles,
    check_house_map,
    check_sql_pairs,
)


def check(root: Path) -> list[str]:
    """Every broken rule of the house in the tree at root."""
    return [problem for rule in CHECKS for problem in rule(root)]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    root = Path(args[0]) if args else Path(__file__).resolve().parent.parent
    problems = check(root)
    for problem in problems:
        print(problem)
    if not problems:
        print(f"the house keeps its rules ({len(python_files(root))} Python files)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
