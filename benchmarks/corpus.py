"""Every corpus function numpile captures whole, timed against NumPy: none may be slower.

The corpus (tests/corpus) holds real-looking NumPy functions with their argument factories and the
graph and break counts numpile gives them. For each case captured in one graph with no break (not
a model object), this runs the function uncompiled and compiled on the same arguments, medians in
one process, and reports the ratio per function; `slower` marks those numpile runs slower than
NumPy. Arguments are the corpus's own (small, as the tests use them) unless --scale multiplies
their sizes.

    python benchmarks/corpus.py [--backend llvm]
"""

from __future__ import annotations

import argparse
import copy
import importlib
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np
from host import cpu_name

import numpile

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "corpus"
MODULES = ["test_stencils", "test_numerics", "test_control", "test_interop", "test_objects"]


def whole_graph_cases():
    """(module, case) for every corpus case of one graph and no break that is a plain function."""
    sys.path[:0] = [str(CORPUS), str(CORPUS.parent)]
    for name in MODULES:
        module = importlib.import_module(name)
        for case in getattr(module, "CASES", []):
            if case.graphs == 1 and case.breaks == 0 and not case.obj and case.fn is not None and case.compare_result:
                yield name, case


def median_seconds(fn, make_args, budget: float = 0.3) -> float:
    """The median of calls on fresh copies of the arguments (functions may update them in place)."""
    times, start = [], time.perf_counter()
    while len(times) < 20 or time.perf_counter() - start < budget:
        args = make_args()
        t0 = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", default="llvm")
    args = parser.parse_args()
    print(f"# corpus functions captured whole, {args.backend} against NumPy; {cpu_name()}, "
          f"Python {platform.python_version()}, NumPy {np.__version__}")
    print("| module | function | NumPy µs | numpile µs | speed-up | |")
    print("|---|---|---:|---:|---:|---|")
    slower = 0
    for module, case in whole_graph_cases():
        rng = np.random.default_rng(0)
        template = case.make(rng, 0)
        fresh = lambda: copy.deepcopy(template)  # noqa: E731  (the same values each call)
        compiled = numpile.compile(case.fn, backend=args.backend)
        compiled(*fresh())
        base, ours = median_seconds(case.fn, fresh), median_seconds(compiled, fresh)
        slower += ours > base
        print(f"| {module.removeprefix('test_')} | {case.id or case.fn.__name__} | {base * 1e6:.1f} | "
              f"{ours * 1e6:.1f} | {base / ours:.2f}x | {'slower' if ours > base else ''} |", flush=True)
    print(f"\n{slower} slower than NumPy")


if __name__ == "__main__":
    main()
