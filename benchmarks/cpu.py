"""CPU benchmark: numpile against NumPy and its peers, side by side in one process.

    python benchmarks/cpu.py [--quick] [--only NAME ...] [--chart cpu.png]

Each workload is one NumPy function. It runs eagerly, compiled by numpile (backend "llvm"
when installed, else the default) specialised to its shapes and with `dynamic=True` (one
entry for every size: kernels take the sizes at run time), for a few (ONNXRT_WORKLOADS) by the
backend "onnxrt" (the graph exported to ONNX and run by onnxruntime), and by each installed peer:
numexpr (where the workload is one expression), Numba `@njit(parallel=True)` (a loop
version written for it), and torch.compile applied to the same NumPy function. Times are medians of repeated runs
after warm-up; the table gives each time and its ratio to NumPy, and for bandwidth-bound
workloads the memory floor: bytes each input read once and each output written once, over
the bandwidth of a large copy measured in the same run. First-call compile times are
reported separately. Peers that are not installed are skipped with a note. `--chart PATH` draws
the ratios to NumPy as a bar chart too (chart.py, with matplotlib).
"""

from __future__ import annotations

import argparse
import platform
import statistics
import tempfile
import time

import chart
import numpy as np
from host import cpu_name

import numpile


# -- workloads ---------------------------------------------------------------------------------
def chain(x):
    return np.sin(x) * np.cos(x) + np.exp(-x * x) * 0.5 + np.tanh(x)


def axpy(x, y):
    return 2 * x + y


def squared_distance(x, y):
    return ((x - y) ** 2).sum()


def softmax(x):
    m = x.max(axis=1, keepdims=True)
    e = np.exp(x - m)
    return e / e.sum(axis=1, keepdims=True)


def layer_norm(x, g, b):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * g + b


def mlp(x, w1, b1, w2, b2):
    h = np.maximum(x @ w1 + b1, 0)
    return h @ w2 + b2


def jacobi_2d(A, B):
    """One step of PolyBench's jacobi-2d: two slice updates, in place."""
    B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
    A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])


def gather(x, idx):
    return x[idx] * 2.0


def scatter_add(x, idx, v):
    """x[idx] += v with repeated indices: NumPy's buffered update (each index once)."""
    x[idx] += v


def cumsum_down(m):
    return np.cumsum(m, axis=0)


def cumsum_across(m):
    return np.cumsum(m, axis=1)


def einsum_contraction(a, b):
    return np.einsum("bij,bjk->bik", a, b)


def kmeans_assign(X, C):
    return ((X[:, None, :] - C[None]) ** 2).sum(-1).argmin(1)


def heat_3d(A, B):
    """One step of PolyBench's heat-3d."""
    B[1:-1, 1:-1, 1:-1] = (0.125 * (A[2:, 1:-1, 1:-1] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[:-2, 1:-1, 1:-1])
                           + 0.125 * (A[1:-1, 2:, 1:-1] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[1:-1, :-2, 1:-1])
                           + 0.125 * (A[1:-1, 1:-1, 2:] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[1:-1, 1:-1, :-2])
                           + A[1:-1, 1:-1, 1:-1])
    A[1:-1, 1:-1, 1:-1] = (0.125 * (B[2:, 1:-1, 1:-1] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[:-2, 1:-1, 1:-1])
                           + 0.125 * (B[1:-1, 2:, 1:-1] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[1:-1, :-2, 1:-1])
                           + 0.125 * (B[1:-1, 1:-1, 2:] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[1:-1, 1:-1, :-2])
                           + B[1:-1, 1:-1, 1:-1])


def _numba_versions():
    """Loop versions of the workloads for Numba; None when Numba is not installed."""
    try:
        import numba
    except ImportError:
        return None
    njit, prange = numba.njit(parallel=True, fastmath=False), numba.prange

    @njit
    def nb_chain(x):
        out = np.empty_like(x)
        for i in prange(x.size):
            v = x[i]
            out[i] = np.sin(v) * np.cos(v) + np.exp(-v * v) * np.float32(0.5) + np.tanh(v)
        return out

    @njit
    def nb_axpy(x, y):
        out = np.empty_like(x)
        for i in prange(x.size):
            out[i] = 2 * x[i] + y[i]
        return out

    @njit
    def nb_squared_distance(x, y):
        total = np.float32(0.0)
        for i in prange(x.size):
            d = x[i] - y[i]
            total += d * d
        return total

    @njit
    def nb_softmax(x):
        out = np.empty_like(x)
        for i in prange(x.shape[0]):
            m = x[i].max()
            e = np.exp(x[i] - m)
            out[i] = e / e.sum()
        return out

    @njit
    def nb_layer_norm(x, g, b):
        out = np.empty_like(x)
        for i in prange(x.shape[0]):
            mu = x[i].mean()
            var = ((x[i] - mu) ** 2).mean()
            out[i] = (x[i] - mu) / np.sqrt(var + np.float32(1e-5)) * g + b
        return out

    @njit
    def nb_jacobi_2d(A, B):
        n, m = A.shape
        for i in prange(1, n - 1):
            for j in range(1, m - 1):
                B[i, j] = 0.2 * (A[i, j] + A[i, j - 1] + A[i, j + 1] + A[i + 1, j] + A[i - 1, j])
        for i in prange(1, n - 1):
            for j in range(1, m - 1):
                A[i, j] = 0.2 * (B[i, j] + B[i, j - 1] + B[i, j + 1] + B[i + 1, j] + B[i - 1, j])

    def heat_sweep(src, dst):
        n = src.shape[0]
        for i in prange(1, n - 1):
            for j in range(1, n - 1):
                for k in range(1, n - 1):
                    c = src[i, j, k]
                    dst[i, j, k] = (0.125 * (src[i + 1, j, k] - 2.0 * c + src[i - 1, j, k])
                                    + 0.125 * (src[i, j + 1, k] - 2.0 * c + src[i, j - 1, k])
                                    + 0.125 * (src[i, j, k + 1] - 2.0 * c + src[i, j, k - 1]) + c)
    sweep = njit(heat_sweep)

    @njit
    def nb_heat_3d(A, B):
        sweep(A, B)
        sweep(B, A)

    return {"chain": nb_chain, "axpy": nb_axpy, "squared_distance": nb_squared_distance,
            "softmax": nb_softmax, "layer_norm": nb_layer_norm, "mlp": None,
            "jacobi_2d": nb_jacobi_2d, "heat_3d": nb_heat_3d, **_numba_indexing(numba)}


def _numba_indexing(numba):
    """Loop versions of the indexing, scan and contraction workloads."""
    njit, prange = numba.njit(parallel=True, fastmath=False), numba.prange
    @njit
    def nb_gather(x, idx):
        out = np.empty(idx.size, x.dtype)
        for i in prange(idx.size):
            out[i] = x[idx[i]] * 2.0
        return out

    @numba.njit
    def nb_scatter_add(x, idx, v):   # NumPy's buffered semantics: the last write of a repeated index wins
        new = x[idx] + v
        for i in range(idx.size):
            x[idx[i]] = new[i]

    @njit
    def nb_cumsum_down(m):
        down = np.empty_like(m)
        for j in prange(m.shape[1]):
            total = m.dtype.type(0)
            for i in range(m.shape[0]):
                total += m[i, j]
                down[i, j] = total
        return down

    @njit
    def nb_cumsum_across(m):
        across = np.empty_like(m)
        for i in prange(m.shape[0]):
            total = m.dtype.type(0)
            for j in range(m.shape[1]):
                total += m[i, j]
                across[i, j] = total
        return across

    @njit
    def nb_kmeans(X, C):
        out = np.empty(X.shape[0], np.int64)
        for i in prange(X.shape[0]):
            best, arg = np.inf, 0
            for k in range(C.shape[0]):
                d = 0.0
                for j in range(X.shape[1]):
                    t = X[i, j] - C[k, j]
                    d += t * t
                if d < best:
                    best, arg = d, k
            out[i] = arg
        return out

    return {"gather": nb_gather, "scatter_add": nb_scatter_add, "cumsum_down": nb_cumsum_down,
            "cumsum_across": nb_cumsum_across, "kmeans": nb_kmeans,
            "einsum": None}


NUMEXPR = {
    "chain": "sin(x) * cos(x) + exp(-x * x) * 0.5 + tanh(x)",
    "axpy": "2 * x + y",
    "squared_distance": "sum((x - y) ** 2)",
}


# workloads also run through numpile-onnx's backend "onnxrt" (the model is the exported graph)
ONNXRT_WORKLOADS = {"softmax", "mlp", "layer_norm", "chain"}


def workloads(quick: bool, rng):
    n = 2 ** (20 if quick else 24)
    rows = 1024 if quick else 4096
    f32 = np.float32
    x, y = rng.standard_normal(n, dtype=f32), rng.standard_normal(n, dtype=f32)
    m = rng.standard_normal((rows, rows), dtype=f32)
    g, b = rng.standard_normal(rows, dtype=f32), rng.standard_normal(rows, dtype=f32)
    small = rng.standard_normal(100, dtype=f32)
    w1, b1 = rng.standard_normal((256, 512), dtype=f32) * 0.05, rng.standard_normal(512, dtype=f32)
    w2, b2 = rng.standard_normal((512, 64), dtype=f32) * 0.05, rng.standard_normal(64, dtype=f32)
    batch = rng.standard_normal((64, 256), dtype=f32)
    side, cube = (512, 64) if quick else (2000, 200)
    perm = rng.permutation(2 ** (18 if quick else 22))
    values = rng.random(perm.size)
    dup = rng.integers(0, perm.size // 4, perm.size)   # repeated indices
    points, centres = rng.random((20_000 if quick else 200_000, 16)), rng.random((16, 16))
    batch_a, batch_b = rng.random((64, 64, 64)), rng.random((64, 64, 64))
    grid_a, grid_b = rng.random((side, side)), rng.random((side, side))
    cube_a, cube_b = rng.random((cube,) * 3), rng.random((cube,) * 3)
    # (name, function, args, bytes moved at the memory floor or None when compute-bound)
    return [
        ("chain", chain, (x,), None),
        ("axpy", axpy, (x, y), 3 * x.nbytes),
        ("squared_distance", squared_distance, (x, y), 2 * x.nbytes),
        ("softmax", softmax, (m,), 2 * m.nbytes),
        ("layer_norm", layer_norm, (m, g, b), 2 * m.nbytes),
        ("mlp", mlp, (batch, w1, b1, w2, b2), None),
        # in place: each array read once and its updated slice written once, per update
        ("jacobi_2d", jacobi_2d, (grid_a, grid_b), 4 * grid_a.nbytes),
        ("heat_3d", heat_3d, (cube_a, cube_b), 4 * cube_a.nbytes),
        ("gather", gather, (values, perm), values.nbytes + perm.nbytes + values.nbytes),
        ("scatter_add", scatter_add, (values.copy(), dup, values), None),
        ("cumsum_down", cumsum_down, (m,), 2 * m.nbytes),        # along axis 0: lanes of columns
        ("cumsum_across", cumsum_across, (m,), 2 * m.nbytes),    # along axis 1: along each row
        ("einsum", einsum_contraction, (batch_a, batch_b), None),
        ("kmeans", kmeans_assign, (points, centres), points.nbytes),
        ("chain_100", chain, (small,), None),
    ]


# -- timing --------------------------------------------------------------------------------------
def median_seconds(fn, args, budget: float = 1.0, min_runs: int = 5) -> float:
    fn(*args)  # warm-up
    times, start = [], time.perf_counter()
    while len(times) < min_runs or time.perf_counter() - start < budget:
        t0 = time.perf_counter()
        fn(*args)
        times.append(time.perf_counter() - t0)
        if len(times) >= 10_000:
            break
    return statistics.median(times)


def copy_bandwidth(nbytes: int = 1 << 28) -> float:
    """Bytes per second of a large copy (read + write), the machine's practical memory bandwidth."""
    src = np.ones(nbytes // 4, np.float32)
    dst = np.empty_like(src)
    t = median_seconds(lambda: np.copyto(dst, src), (), budget=0.5)
    return 2 * nbytes / t


def peers(name, fn, args, numba_fns):
    """(peer name, callable or reason it is missing)."""
    out = []
    backend = "llvm" if "llvm" in numpile.list_backends(available_only=True) else None
    out.append((f"numpile[{backend or 'default'}]", numpile.compile(fn, backend=backend)))
    out.append((f"numpile[{backend or 'default'}] dynamic", numpile.compile(fn, backend=backend, dynamic=True)))
    if name in ONNXRT_WORKLOADS:   # the graph exported to ONNX, run by onnxruntime (numpile-onnx)
        onnxrt = "onnxrt" in numpile.list_backends(available_only=True)
        out.append(("numpile[onnxrt]", numpile.compile(fn, backend="onnxrt") if onnxrt else "not installed"))
    try:
        import numexpr
        expr = NUMEXPR.get(name.removesuffix("_100"))
        names = ("x", "y")[:len(args)]
        out.append(("numexpr", (lambda *a, e=expr, n=names: numexpr.evaluate(e, local_dict=dict(zip(n, a))))
                    if expr else "no single expression"))
    except ImportError:
        out.append(("numexpr", "not installed"))
    nb = numba_fns.get(name.removesuffix("_100")) if numba_fns else None
    out.append(("numba", nb if nb is not None else ("not installed" if numba_fns is None else "no loop version")))
    try:
        import torch
        out.append(("torch.compile", torch.compile(fn)))
    except ImportError:
        out.append(("torch.compile", "not installed"))
    return out


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    parser.add_argument("--only", nargs="*", help="workload names to run")
    chart.add_option(parser)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    # an empty object-code cache, so "1st call" is a real compile
    numpile.config.cache_dir = tempfile.mkdtemp(prefix="numpile-bench-")
    bandwidth = copy_bandwidth()
    machine = (f"numpile {numpile.__version__}, NumPy {np.__version__}, Python {platform.python_version()}, "
               f"{cpu_name()}, copy bandwidth {bandwidth / 1e9:.1f} GB/s")
    print(machine)
    numba_fns = _numba_versions()
    print(f"{'workload':<18} {'runner':<22} {'median':>11} {'vs NumPy':>9} {'vs floor':>9} {'1st call':>10}")
    speedups: dict[str, dict[str, float]] = {}   # workload -> runner -> NumPy's time over its time
    for name, fn, fargs, floor_bytes in workloads(args.quick, rng):
        if args.only and name not in args.only:
            continue
        base = median_seconds(fn, fargs)
        floor = floor_bytes / bandwidth if floor_bytes else None
        _row(name, "numpy", base, base, floor, None)
        for peer, runner in peers(name, fn, fargs, numba_fns):
            if isinstance(runner, str):
                print(f"{name:<18} {peer:<22} {'(' + runner + ')':>11}")
                continue
            t0 = time.perf_counter()
            try:
                runner(*fargs)
            except Exception as e:   # a peer that cannot run this workload says why; the others go on
                print(f"{name:<18} {peer:<22} (failed: {type(e).__name__}: {str(e).splitlines()[0][:60]})")
                continue
            first = time.perf_counter() - t0
            t = median_seconds(runner, fargs)
            speedups.setdefault(name, {})[peer] = base / t
            _row(name, peer, t, base, floor, first)
    if args.chart:
        chart.write(args.chart, f"CPU benchmark: speed-up over NumPy\n{machine}", speedups)
        print(f"wrote {args.chart}")


def _row(name, runner, t, base, floor, first):
    vs_floor = f"{t / floor:8.2f}x" if floor else ""
    first_text = f"{first * 1e3:8.1f}ms" if first is not None else ""
    print(f"{name:<18} {runner:<22} {_fmt(t):>11} {base / t:8.2f}x {vs_floor:>9} {first_text:>10}")


def _fmt(seconds: float) -> str:
    return f"{seconds * 1e6:.1f}µs" if seconds < 1e-3 else f"{seconds * 1e3:.2f}ms"


if __name__ == "__main__":
    main()
