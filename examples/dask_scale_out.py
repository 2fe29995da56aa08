"""Scale a NumPy function out with Dask: the same function, compiled by numpile, on a Dask
array that no single NumPy call holds, computed by the workers of a cluster.

    python examples/dask_scale_out.py [--log2 28] [--workers 2]

The data (2**log2 float32 values, 1 GiB by default, in 64 MiB chunks) is generated chunk by
chunk on the workers and kept there: nothing the size of the array ever exists in this process. numpile
compiles `features` once for these chunks; every chunk task runs one fused kernel (compiled
by numpile's "llvm" backend on the worker that runs it) instead of one NumPy call per op.
The result is checked against NumPy on a slice small enough to compute here.
"""

from __future__ import annotations

import argparse
import time

import dask.array as da
import numpy as np
from distributed import Client, LocalCluster, wait

import numpile


def features(x):
    """Standardise the columns, a nonlinear feature chain, a softmax per row; then statistics."""
    z = (x - x.mean(axis=0)) / (x.std(axis=0) + 1e-6)
    f = np.tanh(z) * np.exp(-0.5 * z * z) + np.log1p(np.abs(z)) * 0.25
    e = np.exp(f - f.max(axis=1, keepdims=True))
    p = e / e.sum(axis=1, keepdims=True)
    return f.sum(axis=0), (f * f).mean(), p.max(axis=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--log2", type=int, default=28, help="elements: 2**LOG2 float32 (default 28: 1 GiB)")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    cols = 1 << 10
    rows = (1 << args.log2) // cols
    chunk_rows = (64 << 20) // (cols * 4)
    with LocalCluster(n_workers=args.workers, threads_per_worker=1, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        x = da.random.default_rng(42).standard_normal((rows, cols), dtype=np.float32, chunks=(chunk_rows, cols))
        x = x.persist()                                     # generated on the workers, kept there
        wait(x)
        print(f"x: {rows} x {cols} float32 ({x.nbytes / 2**30:.2f} GiB) in {x.npartitions} chunks, "
              f"{len(client.scheduler_info()['workers'])} workers")
        compiled = numpile.compile(features)

        def run(fn):
            col_sums, energy, row_peaks = fn(x)             # lazy Dask arrays: nothing computed yet
            return client.compute([col_sums, energy, row_peaks[:5]], sync=True)
        for label in ("numpile + dask, first call (kernels compiled on the workers)", "numpile + dask"):
            t0 = time.perf_counter()
            col_sums, energy, peaks_head = run(compiled)
            print(f"{label}: {time.perf_counter() - t0:.2f} s")
        print(f"  sum of column sums {col_sums.sum():.4f}, mean square {float(energy):.6f}, "
              f"first row peaks {peaks_head}")
        t0 = time.perf_counter()
        plain = run(features)
        print(f"dask.array alone: {time.perf_counter() - t0:.2f} s")
        for g, w in zip(plain, (col_sums, energy, peaks_head)):
            np.testing.assert_allclose(g, w, rtol=1e-3, atol=1e-2)

        # the same compiled function on a slice NumPy can hold, against NumPy itself
        part = x[: 4 * chunk_rows // 3]                     # an uneven last chunk, on purpose
        want = features(part.compute())
        got = client.compute(list(compiled(part)), sync=True)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4)
        print(f"matches NumPy on a {part.shape[0]} x {cols} slice")


if __name__ == "__main__":
    main()
