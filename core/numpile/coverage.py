"""`python -m numpile.coverage [--check]`: docs/coverage.md, generated from the op registry.

The page lists every captured op with its NumPy spellings and whether numpile.lowering puts
it in kernels (what "llvm" compiles) or leaves it a NumPy call (an extern), then the NumPy
functions and ndarray methods that no row captures: calling one is a graph break. `--check`
exits 1 when the checked-in page differs from what this NumPy would generate.
"""

from __future__ import annotations

import argparse
import builtins
import operator
import sys
import types
from pathlib import Path

import numpy as np

from . import lowering, ops
from .lowering.products import SMALL_MATMUL
from .testing import conformance_cases, one_op_graph
from .tracer.variables.arrays import SPELLED_METHODS
from .tracer.variables.spellings import SPELLINGS

DEFAULT_OUTPUT = Path("docs/coverage.md")



SUBMODULES = (("numpy.linalg", "np.linalg."), ("numpy.fft", "np.fft."))   # __module__ -> how users spell it


def spelling(fn) -> str:
    """How a user writes a callable that maps to an op."""
    if fn is np.ufunc.outer:
        return "`ufunc.outer` (`np.add.outer`, ...)"
    if getattr(fn, "__self__", None) is np.mgrid:
        return "`np.mgrid[...]`"
    if getattr(operator, getattr(fn, "__name__", ""), None) is fn:
        return f"`operator.{fn.__name__}`"
    if getattr(builtins, getattr(fn, "__name__", ""), None) is fn:
        return f"`{fn.__name__}()`"
    module = getattr(fn, "__module__", None) or "numpy"
    prefix = next((p for m, p in SUBMODULES if module.startswith(m)), "np.")
    return f"`{prefix}{fn.__name__}`"


def _spellings(op: ops.OpDef) -> str:
    names = [spelling(fn) for fn in op.numpy]
    names += [f"`x.{m}()`" for m in op.methods if not m.startswith("__")]
    names += [f"`x.{p}`" for p in op.properties]
    dunders = [m for m in op.methods if m.startswith("__")]
    if dunders:
        names.append("dunders " + ", ".join(f"`{m}`" for m in dunders))
    return ", ".join(names) or "(emitted by the tracer)"


# ops whose lowering depends on their operands' size (lowering/decompose.py), and loops
_BY_SIZE = {name: f"kernel up to {SMALL_MATMUL} multiply-adds (float32/64, integers), else NumPy call (BLAS)"
            for name in ("matmul", "dot")}
_BY_SIZE["loop"] = ("body compiled once; a nest of element code one native function; else all iterations in one "
                    "native call where its kernels are small and of sizes the index does not change")
_BY_SIZE["python_int"] = "in a loop nest of element code, native (its range checked); else a call into Python"
_BY_SIZE["python_math"] = "in a loop nest of element code, native (its domain checked); else a call into Python"
_BY_SIZE["while_loop"] = "body compiled once; in a loop nest of element code, a native loop of its native code"
_BY_SIZE["check"] = "a call (its value tested where it is known); in a loop nest of element code, a native branch out"
_BY_SIZE["cond"] = "each side compiled the first time it is taken; in a loop nest of element code, a branch of its native code"


def on_llvm(name: str) -> str:
    """Whether the scheduler places the op (its first conformance case, decomposed if composite,
    read by a pointwise op as a view would be) in kernels, or leaves it a call into NumPy (other
    than views, which move no data)."""
    if name in _BY_SIZE:
        return _BY_SIZE[name]
    case = conformance_cases([name])[0]
    op, astype = ops.get(name), ops.get("astype")
    graph, results, meta = one_op_graph(op, case, case.inputs())
    value, meta = results[0], (meta[0] if isinstance(meta, tuple) else meta)  # several results: the first
    graph.output([graph.call("astype", (value, meta.dtype), {}, astype.meta(meta, meta.dtype))])
    program = lowering.schedule(graph)
    calls = [step for step in program.steps if isinstance(step, lowering.Extern)]
    # a view NumPy makes of a kernel's new array (np.tile's reshape of its copies) moves no data
    return "NumPy call" if any(step.op == name or ops.get(step.op).kind != ops.VIEW for step in calls) else "kernel"


def _uncaptured_functions() -> list[str]:
    names = []
    for prefix, module in (("np.", np), ("np.linalg.", np.linalg), ("np.fft.", np.fft)):
        for name in sorted(dir(module)):
            value = getattr(module, name)
            if name.startswith("_") or isinstance(value, (type, types.ModuleType)) or not callable(value):
                continue
            if ops.lookup_callable(value) is None and value not in SPELLINGS:   # spelled with other ops' rows
                names.append(f"{prefix}{name}")
    return names


def _uncaptured_ufunc_methods() -> list[str]:
    return [f"ufunc.{name}" for name in sorted(dir(np.ufunc))
            if not name.startswith("_") and name != "resolve_dtypes" and callable(getattr(np.ufunc, name))
            and ops.lookup_callable(getattr(np.ufunc, name)) is None]


def _uncaptured_methods() -> list[str]:
    return [f"x.{name}" for name in sorted(dir(np.ndarray))
            if not name.startswith("_") and name not in SPELLED_METHODS and callable(getattr(np.ndarray, name))
            and ops.lookup_method(name) is None]


def render() -> str:
    lines = [
        "# NumPy coverage",
        "",
        f"Generated from the op registry by `python -m numpile.coverage` with NumPy {np.__version__}; "
        "a test fails when this page is stale. Do not edit it by hand.",
        "",
        "## Captured",
        "",
        "Each op is a registry row (`numpile/ops`): its spellings become one graph node. *On llvm*: "
        "\"kernel\" when `numpile.lowering` schedules it into the loops that llvm compiles (a dtype "
        "llvm has no lowering for still runs that kernel with NumPy, logged under `perf`), \"NumPy "
        "call\" when llvm calls NumPy's implementation for it (an extern). Forms a row does not take "
        "break the graph with the row's reason (`numpile.explain` shows it).",
        "",
        "| op | kind | NumPy spellings | on llvm |",
        "|---|---|---|---|",
    ]
    ufuncs = [op for op in ops.REGISTRY.values()
              if op.kind == ops.POINTWISE and isinstance(op.impl, np.ufunc) and op.impl.nout == 1]
    for op in sorted(ops.REGISTRY.values(), key=lambda op: (op.kind, op.name)):
        if op in ufuncs or op.name in ("setitem", ops.TUPLE_GETITEM):
            continue
        lines.append(f"| {op.name} | {op.kind} | {_spellings(op)} | {on_llvm(op.name)} |")
    kernels = [op for op in ufuncs if on_llvm(op.name) == "kernel"]
    lines += [
        "",
        f"The {len(ufuncs)} single-output ufuncs, each its own pointwise row (`np.<name>`, with the "
        f"operators and dunders that mean it); {len(kernels)} of them lower to kernels:",
        "",
        ", ".join(f"`{op.name}`" for op in ufuncs),
        "",
        "In-place updates (`x[i] = v`, `x += y`, `out=`) are captured as the functional `setitem` "
        "and ops plus a write-back. An op with several results (`np.divmod`, `np.histogram`) is one "
        "node, read by a `tuple_getitem` node per result.",
        "",
        "## Not captured: graph breaks",
        "",
        "Calling one of these runs it as Python between graphs (`fullgraph=True` raises instead).",
        "",
        "### NumPy functions",
        "",
        ", ".join(f"`{name}`" for name in _uncaptured_functions()),
        "",
        "### ufunc methods",
        "",
        ", ".join(f"`{name}`" for name in _uncaptured_ufunc_methods()),
        "",
        "### ndarray methods",
        "",
        ", ".join(f"`{name}()`" for name in _uncaptured_methods()),
        "",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m numpile.coverage", description=(
        "Write the NumPy coverage page (captured ops, their lowering on llvm, what breaks) from the registry."))
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help=f"default: {DEFAULT_OUTPUT}")
    parser.add_argument("--check", action="store_true", help="exit 1 if the page differs instead of writing it")
    args = parser.parse_args(argv)
    text = render()
    if args.check:
        if not args.output.exists() or args.output.read_text() != text:
            print(f"{args.output} is stale: run `python -m numpile.coverage`", file=sys.stderr)
            return 1
        return 0
    args.output.write_text(text)
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
