"""Every corpus function numpile captures whole, timed against NumPy: none may be slower.

The corpus (tests/corpus) holds real-looking NumPy functions with their argument factories and the
graph and break counts numpile gives them. For each case captured in one graph with no break (not
a model object), this runs the function uncompiled and compiled on the same arguments, in
alternating rounds in one process, and reports the ratio of medians per function; a function
whose numpile time is over NumPy's by more than --tolerance is measured again (rounds of both,
alternating) before it is marked `slower`. The exit status is the number of functions marked
(0: none slower). Arguments are the corpus's own, small (most arrays of 10-15 elements), as the
tests use them: the per-call cost of numpile (guards, the runner, one native call per kernel)
against NumPy's few microseconds is what this measures.

    python benchmarks/tests_corpus.py [--backend llvm] [--tolerance 0.05] [--chart corpus.png]

`--chart PATH` draws the speed-ups as a bar chart too (chart.py, with matplotlib).
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

import chart
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


def median_seconds(fn, make_args, budget: float = 0.1) -> float:
    """The median of calls on fresh copies of the arguments (functions may update them in place)."""
    times, start = [], time.perf_counter()
    while len(times) < 20 or time.perf_counter() - start < budget:
        args = make_args()
        t0 = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def compare(fn, compiled, fresh, rounds: int) -> tuple[float, float]:
    """Medians over alternating rounds of NumPy and numpile: (NumPy seconds, numpile seconds)."""
    base, ours = [], []
    for _ in range(rounds):
        base.append(median_seconds(fn, fresh))
        ours.append(median_seconds(compiled, fresh))
    return statistics.median(base), statistics.median(ours)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backend", default="llvm")
    parser.add_argument("--tolerance", type=float, default=0.05,
                        help="how much slower than NumPy is within noise (default 0.05: 5%%)")
    chart.add_option(parser)
    args = parser.parse_args()
    machine = f"{cpu_name()}, Python {platform.python_version()}, NumPy {np.__version__}"
    print(f"# corpus functions captured whole, {args.backend} against NumPy; {machine}")
    print("| module | function | NumPy µs | numpile µs | speed-up | |")
    print("|---|---|---:|---:|---:|---|")
    slower = 0
    speedups: dict[str, dict[str, float]] = {}   # function -> {runner: NumPy's time over numpile's}
    for module, case in whole_graph_cases():
        rng = np.random.default_rng(0)
        template = case.make(rng, 0)
        fresh = lambda: copy.deepcopy(template)  # noqa: E731  (the same values each call)
        compiled = numpile.compile(case.fn, backend=args.backend)
        compiled(*fresh())
        base, ours = compare(case.fn, compiled, fresh, 3)
        if ours > base * (1 + args.tolerance):   # measured again before it is called slower
            base, ours = compare(case.fn, compiled, fresh, 9)
        marked = ours > base * (1 + args.tolerance)
        slower += marked
        name = f"{module.removeprefix('test_')}.{case.id or case.fn.__name__}"
        speedups[name] = {f"numpile[{args.backend}]": base / ours}
        print(f"| {module.removeprefix('test_')} | {case.id or case.fn.__name__} | {base * 1e6:.1f} | "
              f"{ours * 1e6:.1f} | {base / ours:.2f}x | {'slower' if marked else ''} |", flush=True)
    print(f"\n{slower} slower than NumPy (by more than {args.tolerance:.0%})")
    if args.chart:
        chart.write(args.chart, f"Corpus functions captured whole: speed-up over NumPy\n{machine}", speedups)
        print(f"wrote {args.chart}")
    return slower


if __name__ == "__main__":
    sys.exit(main())
