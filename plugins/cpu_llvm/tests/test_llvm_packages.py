"""The layout numpile_llvm's package docstrings promise, kept true: its two compilers (kernels/,
nests/) never import each other, and the modules both share (the op table, the IR builder, the
JIT, ...) import neither compiler nor the driver (program.py, runner.py) nor the plugin class."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "numpile_llvm"
DRIVER = {"backend", "plugin", "program", "runner"}   # top-level modules that may import everything

# each part of the package, by what it may not import (dotted names under numpile_llvm)
FORBIDDEN = {
    "kernels": ("nests", *DRIVER),
    "nests": ("kernels", *DRIVER),
    "shared": ("kernels", "nests", *DRIVER),
}


def _part(path: Path) -> str | None:
    """kernels, nests or shared for a module of the package; None for the driver's."""
    rel = path.relative_to(PACKAGE)
    if len(rel.parts) > 1:
        return rel.parts[0]
    return None if rel.stem in DRIVER else "shared"


def imported(path: Path) -> set[str]:
    """The numpile_llvm modules a file imports, as dotted names under numpile_llvm (`nests.nest`)."""
    package = list(path.relative_to(PACKAGE).parent.parts)
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package[:len(package) - node.level + 1]
            stem = base + (node.module.split(".") if node.module else [])
            found |= {".".join(stem + [alias.name]) for alias in node.names} | ({".".join(stem)} if stem else set())
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module]
            found |= {n.removeprefix("numpile_llvm.") for n in names if n.startswith("numpile_llvm.")}
    return found


MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts and _part(p))


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_a_module_imports_only_what_its_part_may(path):
    forbidden = FORBIDDEN[_part(path)]
    wrong = sorted(n for n in imported(path) if n.split(".")[0] in forbidden)
    assert not wrong, f"{path.relative_to(PACKAGE)} ({_part(path)}) imports {wrong}: see the package docstrings"


def test_the_walk_sees_both_compilers_and_their_imports():
    """The check itself can fail: it sees the parts, and the imports a nest and the driver make."""
    assert {_part(p) for p in MODULES} == set(FORBIDDEN)
    assert {"scalar", "nests.nestcall", "nests.slices"} <= imported(PACKAGE / "nests" / "nest.py")
    assert {"kernels.step", "nests.nest"} <= imported(PACKAGE / "program.py")
    assert "nests" in FORBIDDEN["kernels"] and "kernels" in FORBIDDEN["nests"]
