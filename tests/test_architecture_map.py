"""docs/architecture.md is the map of the code, kept true: every module of core (core/numpile) and of
every plugin package (plugins/*/numpile_*) has a row in it, named by its path from its package root
(`tracer/control/loops.py`, `numpile_llvm/nests/nest.py`), every package by its folder (`tracer/variables/`,
`numpile_llvm/`, the core root as `numpile/`); and every module path the page names exists."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "core" / "numpile"
PAGE = ROOT / "docs" / "architecture.md"
SKIPPED = {"__init__.py", "__main__.py"}  # named by their package's folder


def package_roots() -> dict[str, Path]:
    """Each package root by the name its paths start with: "" for core (paths relative to
    core/numpile), "numpile_llvm" for plugins/cpu_llvm/numpile_llvm, and so on."""
    roots = {"": CORE}
    for package in sorted(ROOT.glob("plugins/*/numpile_*")):
        if (package / "__init__.py").is_file():
            roots[package.name] = package
    return roots


def module_names() -> set[str]:
    """What the page must name: every module and every package folder, in the page's form."""
    names = set()
    for prefix, root in package_roots().items():
        base = root if prefix == "" else root.parent
        names.add(f"{root.name}/")  # the package itself: `numpile/`, `numpile_llvm/`
        for path in root.rglob("*.py"):
            if "__pycache__" in path.parts:
                continue
            rel = path.relative_to(base).as_posix()
            if path.name in SKIPPED:
                folder = rel.rsplit("/", 1)[0] + "/" if "/" in rel else None
                if folder is not None and path.parent != root:
                    names.add(folder)  # a subpackage: `tracer/variables/`
                continue
            names.add(rel)
    return names


def backticked(text: str) -> set[str]:
    """The inline code spans of the page, fenced blocks left out."""
    text = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    return set(re.findall(r"`([^`\n]+)`", text))


def resolves(name: str) -> bool:
    """Whether a module path of the page is a file or package of the code."""
    head = name.split("/", 1)[0]
    roots = package_roots()
    if name == "numpile/":
        return True
    if head in roots:  # a plugin package's path: `numpile_llvm/nests/nest.py`
        path = roots[head].parent / name
    else:
        path = CORE / name
    if name.endswith("/"):
        return (path / "__init__.py").is_file()
    return path.is_file()


def looks_like_module(name: str) -> bool:
    """A span naming a module (`ops/control.py`, `cache.py`) or a package folder under a known
    package (`tracer/variables/`, `numpile_dask/`), not a command, a call or another file's path."""
    if not re.fullmatch(r"(\w+/)*(\w+\.py|\w+/)", name):  # `ops/control.py`, `tracer/`; not `//`
        return False
    if name.endswith(".py"):
        return not name.startswith(("tests/", "benchmarks/", "examples/", "docs/", "plugins/", "core/"))
    if name.endswith("/"):
        head = name.split("/", 1)[0]
        packages = {p.name for p in CORE.iterdir() if (p / "__init__.py").is_file()}
        return head in packages or head in package_roots() or head == "numpile"
    return False


def row_names(text: str) -> set[str]:
    """The names in the first cell of each table row: what has a row of its own."""
    firsts = [line.split("|")[1] for line in text.splitlines() if line.startswith("|") and line.count("|") >= 3]
    return {name for cell in firsts for name in re.findall(r"`([^`\n]+)`", cell)}


def test_every_module_has_a_row():
    named = row_names(PAGE.read_text())
    missing = sorted(module_names() - named)
    assert not missing, f"modules with no row in docs/architecture.md (add one, its one-line job): {missing}"


def test_every_named_module_exists():
    named = {name for name in backticked(PAGE.read_text()) if looks_like_module(name)}
    gone = sorted(name for name in named if not resolves(name))
    assert not gone, f"docs/architecture.md names modules that do not exist (rename or drop the row): {gone}"


def test_the_map_covers_core_and_every_plugin():
    """The walk itself sees what it should: core's subpackages and the five plugins."""
    names = module_names()
    assert {"numpile/", "ops/", "lowering/", "tracer/", "tracer/variables/", "testing/", "fuzz/",
            "backends/"} <= names
    assert {"numpile_llvm/", "numpile_triton/", "numpile_onnx/", "numpile_dask/", "numpile_debug/"} <= names
    assert "tracer/control/loops.py" in names and "numpile_llvm/nests/nest.py" in names
