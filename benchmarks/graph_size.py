"""Compile time against graph size: it must grow linearly, never worse.

Two programs whose graphs grow with n: a chain of array ops (`x = x * 1.0001 + 0.5`, with a
`sin(x) + x[::-1]` every third step, so values are used twice) and a scalar sum over a diagonal
(`t += a[i, i]`, a chain of dependent 0-d ops). Each is compiled fresh per size (first call, trace
included) on every backend named; the table shows milliseconds and microseconds per graph op.

    python benchmarks/graph_size.py [--backends eager llvm] [--sizes 625 1250 2500 5000]
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np
from host import cpu_name

import numpile


def chain(x, n):
    for i in range(n):
        x = x * 1.0001 + 0.5 if i % 3 else np.sin(x) + x[::-1]
    return x


def diagonal_sum(a, n):
    t = 0.0
    for i in range(n):
        t += a[i, i]
    return t


PROGRAMS = {  # name -> (function, arguments for a graph of about `ops` ops)
    "array chain": (chain, lambda ops: (np.random.rand(64), ops * 3 // 7)),
    "diagonal sum": (diagonal_sum, lambda ops: (np.random.rand(ops // 2, ops // 2), ops // 2)),
}


def compile_time(fn, args, backend: str) -> tuple[float, int]:
    """Seconds of the first call (trace and compile) and the ops of its graph."""
    numpile.reset()
    compiled = numpile.compile(fn, backend=backend)
    start = time.perf_counter()
    compiled(*args)
    seconds = time.perf_counter() - start
    ops = sum(len(e.graph.calls) for e in compiled.all_entries() if e.graph is not None)
    return seconds, ops


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backends", nargs="+", default=["eager", "llvm"])
    parser.add_argument("--sizes", nargs="+", type=int, default=[625, 1250, 2500, 5000])
    args = parser.parse_args()
    numpile.config.unroll_limit = 10 * max(args.sizes)   # the loops unroll into one graph
    print(f"# compile time by graph size; {cpu_name()}, Python {platform.python_version()}")
    print("| program | backend | graph ops | compile ms | µs per op |")
    print("|---|---|---:|---:|---:|")
    for name, (fn, make_args) in PROGRAMS.items():
        for backend in args.backends:
            for size in args.sizes:
                seconds, ops = compile_time(fn, make_args(size), backend)
                print(f"| {name} | {backend} | {ops} | {seconds * 1e3:.0f} | {seconds * 1e6 / ops:.0f} |", flush=True)


if __name__ == "__main__":
    main()
