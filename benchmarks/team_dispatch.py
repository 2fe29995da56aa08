"""Kernel-share dispatch on "llvm": libgomp's team (one native call per kernel) against the
Python thread pool (a ctypes call and a future per share), and NumPy, interleaved in one process.

    python benchmarks/team_dispatch.py [NAME ...]     # names: substrings of the rows' labels

The pool versions are compiled with libgomp hidden from the backend (numpile_llvm.team), which is
how a process without libgomp runs; everything else is the same code. Rows are small enough
that dispatch matters: `2*x + y`, a pairwise sum, and a Jacobi-2d step (two in-place kernels).
Each runner is timed for 0.15 s in turn, eight rounds; the table gives medians.
"""

from __future__ import annotations

import platform
import statistics
import sys
import time

import numpy as np
from host import cpu_name

import numpile
from numpile_llvm import team


def axpy(x, y):
    return 2 * x + y


def squared_distance(x, y):
    return ((x - y) ** 2).sum()


def jacobi_2d(A, B):
    B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
    A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])


def compiled(fn, args, pool: bool):
    """fn compiled on "llvm" (on its first call), its split kernels on the pool or the team."""
    available = team.available
    if pool:
        team.available = lambda: False
    try:
        f = numpile.compile(fn, backend="llvm")
        f(*[a.copy() for a in args])
        return f
    finally:
        team.available = available


def main(names: list[str]) -> None:
    rng = np.random.default_rng(0)
    rows = [("2*x+y, 2**17 float64", axpy, (rng.random(1 << 17), rng.random(1 << 17))),
            ("2*x+y, 2**20 float64", axpy, (rng.random(1 << 20), rng.random(1 << 20))),
            ("sum((x-y)**2), 2**20 float64", squared_distance, (rng.random(1 << 20), rng.random(1 << 20))),
            ("jacobi-2d step, 512x512", jacobi_2d, (rng.random((512, 512)), rng.random((512, 512)))),
            ("jacobi-2d step, 2000x2000", jacobi_2d, (rng.random((2000, 2000)), rng.random((2000, 2000))))]
    rows = [r for r in rows if not names or any(n in r[0] for n in names)]
    print(f"numpile {numpile.__version__}, NumPy {np.__version__}, Python {platform.python_version()}, {cpu_name()}, "
          f"libgomp {'loaded' if team.available() else 'not found'}")
    print(f"{'workload':30s} {'NumPy':>10s} {'pool':>10s} {'team':>10s} {'pool/team':>10s}")
    for label, fn, args in rows:
        runners = {"numpy": fn, "pool": compiled(fn, args, True), "team": compiled(fn, args, False)}
        times = {k: [] for k in runners}
        for _ in range(8):
            for k, f in runners.items():
                start = time.perf_counter()
                while time.perf_counter() - start < 0.15:
                    t0 = time.perf_counter()
                    f(*args)
                    times[k].append(time.perf_counter() - t0)
        us = {k: statistics.median(v) * 1e6 for k, v in times.items()}
        print(f"{label:30s} {us['numpy']:8.1f}µs {us['pool']:8.1f}µs {us['team']:8.1f}µs {us['pool'] / us['team']:9.2f}x",
              flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
