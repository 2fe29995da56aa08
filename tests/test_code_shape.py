"""The shape of the code (issue 15): modules small enough to read in one sitting, no import cycle
in the tracer, no module reaching into another's private names."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SIZE_BUDGET = 600   # lines: past it, a module is split by concern
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


def test_the_tracer_has_no_import_cycle():
    tracer = [p for p in SOURCES if "tracer" in p.parts]
    modules = {_module(p) for p in tracer}
    edges = {}
    for path in tracer:
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
            # a package's __init__ importing its own submodules is how a package is made, not a cycle
            if not (n.startswith(m + ".") and m in modules):
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
