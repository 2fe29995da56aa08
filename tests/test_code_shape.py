"""The shape of the code (issue 15): modules small enough to read in one sitting, no import cycle,
no module reaching into another's private names (imported, or read as attributes)."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SIZE_BUDGET = 500   # lines: past it, a module is split by concern (by responsibility, with headroom: issue 31)
SOURCES = sorted(p for p in [*ROOT.glob("core/numpile/**/*.py"), *ROOT.glob("plugins/*/numpile_*/**/*.py")]
                 if "tests" not in p.parts)


def _module(path: Path) -> str:
    """The dotted name of a source file: numpile.tracer.loops, numpile_llvm.backend."""
    top = next(p for p in path.parents if p.name == "numpile" or p.name.startswith("numpile_"))
    parts = path.relative_to(top.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path):
    """(module imported, names taken from it) for every import in the file, at any depth, with
    relative imports resolved."""
    name = _module(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[:len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module
            yield target, [a.name for a in node.names]
        elif isinstance(node, ast.Import):
            for a in node.names:
                yield a.name, []


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_a_module_fits_its_budget(path):
    lines = len(path.read_text().splitlines())
    assert lines <= SIZE_BUDGET, f"{path.relative_to(ROOT)} has {lines} lines: split it by concern"


def test_no_import_cycle():
    """No import cycle in core or a plugin, imports inside functions counted (they are cycles put
    off), and a package's `__init__.py` importing its modules counted too (a module importing its
    own package then closes a cycle)."""
    modules = {_module(p) for p in SOURCES}
    edges = {}
    for path in SOURCES:
        found = set()
        for target, names in _imports(path):
            for candidate in [f"{target}.{n}" for n in names] + [target]:
                if candidate in modules and candidate != _module(path):
                    found.add(candidate)
                    break
        edges[_module(path)] = found
    state: dict[str, int] = {}

    def visit(m, trail):
        if state.get(m) == 1:
            raise AssertionError("import cycle: " + " -> ".join(trail[trail.index(m):] + [m]))
        if state.get(m) == 2:
            return
        state[m] = 1
        for n in sorted(edges[m]):
            visit(n, trail + [m])
        state[m] = 2
    for m in sorted(edges):
        visit(m, [])


def test_no_module_imports_another_modules_private_names():
    found = []
    for path in SOURCES:
        for target, names in _imports(path):
            found += [f"{path.relative_to(ROOT)}: {n} from {target}" for n in names
                      if n.startswith("_") and not n.startswith("__")]
    assert not found, "private names used across modules:\n" + "\n".join(found)


# Private attributes of other libraries' objects that numpile reads, each with why: not numpile's own.
FOREIGN_PRIVATE = {
    ("numpile_llvm/mathlib.py", "_name"): "ctypes.CDLL's path of the library, which llvmlite loads by name",
    ("numpile_dask/backend.py", "_meta"): "a Dask array's meta: an empty array of its chunks' kind",
}


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def _owned(tree: ast.Module) -> tuple[set, set]:
    """The private names a module defines: (on objects: methods, class attributes, attributes it
    stores; at module level: its functions, classes and variables)."""
    on_objects, top = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ClassDef):
            for item in node.body:
                targets = item.targets if isinstance(item, ast.Assign) else [getattr(item, "target", None)]
                on_objects |= {t.id for t in targets if isinstance(t, ast.Name)}
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    on_objects.add(item.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            on_objects.add(node.attr)
    for item in tree.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            top.add(item.name)
        for target in item.targets if isinstance(item, ast.Assign) else [getattr(item, "target", None)]:
            if isinstance(target, ast.Name):
                top.add(target.id)
    return {n for n in on_objects if _private(n)}, {n for n in top if _private(n)}


def test_no_module_reads_another_modules_private_attributes():
    """`x._name` where `_name` belongs to another module of numpile: an attribute or method another
    module's class defines, or (x an imported module) another module's private global."""
    trees = {p: ast.parse(p.read_text()) for p in SOURCES}
    owned = {p: _owned(tree) for p, tree in trees.items()}
    found = []
    for path, tree in trees.items():
        mine = owned[path][0] | owned[path][1]
        others = [owned[q] for q in trees if q != path]
        theirs_on_objects = set().union(*(o for o, _ in others))
        theirs_top = set().union(*(t for _, t in others))
        modules = {(a.asname or a.name).split(".")[0] for node in ast.walk(tree)
                   if isinstance(node, (ast.Import, ast.ImportFrom)) for a in node.names}
        where = str(path.relative_to(next(p for p in path.parents if p.name == "numpile" or
                                          p.name.startswith("numpile_")).parent).as_posix())
        where = where.removeprefix("numpile/")
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Attribute) and _private(node.attr)) or node.attr in mine \
                    or isinstance(node.value, ast.Name) and node.value.id in ("self", "cls") \
                    or (where, node.attr) in FOREIGN_PRIVATE:
                continue
            module_global = isinstance(node.value, ast.Name) and node.value.id in modules and node.attr in theirs_top
            if node.attr in theirs_on_objects or module_global:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
    assert not found, "private attributes read across modules (give the owner a public name for it):\n" + \
        "\n".join(found)


def test_imports_come_first():
    """A module's imports stand at its top, after its docstring (pycodestyle's E402): a module that
    must run code before an import says why in a module of its own instead (`version.py`)."""
    late = []
    for path in SOURCES:
        body = ast.parse(path.read_text()).body
        docstring = body[:1] if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) else []
        statements = body[len(docstring):]
        first_other = next((k for k, st in enumerate(statements) if not isinstance(st, (ast.Import, ast.ImportFrom))),
                           len(statements))
        late += [f"{path.relative_to(ROOT)}:{st.lineno}" for st in statements[first_other:]
                 if isinstance(st, (ast.Import, ast.ImportFrom))]
    assert not late, "imports after other statements:\n" + "\n".join(late)
