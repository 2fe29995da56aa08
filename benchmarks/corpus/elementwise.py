"""Element-wise programs: loops that read and write single elements and branch on their values
(issue 17), written in Python over NumPy arrays as scientists write them, each copied for Numba."""

import numpy as np

from .kernel import Kernel, njit


def crc16(data):
    """CRC-16/MODBUS of a byte array, bit by bit (reflected polynomial 0xA001, initial value 0xFFFF),
    as the Modbus over serial line specification's reference algorithm computes it."""
    crc = 0xFFFF
    for b in data:
        crc ^= int(b)
        for _ in range(8):
            if crc & 1:
                crc = (crc >> 1) ^ 0xA001
            else:
                crc >>= 1
    return crc


@njit
def crc16_loops(data):
    crc = 0xFFFF
    for b in data:
        crc ^= int(b)
        for _ in range(8):
            if crc & 1:
                crc = (crc >> 1) ^ 0xA001
            else:
                crc >>= 1
    return crc


def make_crc16(rng, n):
    return (rng.integers(0, 256, n, dtype=np.uint8),)


def gauss_seidel_2d(A, steps):
    """Gauss-Seidel sweeps of the 5-point average over the interior, in place (the textbook
    iteration for Laplace's equation; PolyBench's seidel-2d is the 9-point one)."""
    n, m = A.shape
    for _ in range(steps):
        for i in range(1, n - 1):
            for j in range(1, m - 1):
                A[i, j] = (A[i - 1, j] + A[i + 1, j] + A[i, j - 1] + A[i, j + 1] + A[i, j]) / 5.0


@njit
def gauss_seidel_2d_loops(A, steps):
    n, m = A.shape
    for _ in range(steps):
        for i in range(1, n - 1):
            for j in range(1, m - 1):
                A[i, j] = (A[i - 1, j] + A[i + 1, j] + A[i, j - 1] + A[i, j + 1] + A[i, j]) / 5.0


def make_gauss_seidel(rng, n, steps):
    return rng.random((n, n)), steps


def match(b1, b2):
    """1 where two bases (0-3) pair, as A-U and C-G do: they sum to 3."""
    if b1 + b2 == 3:
        return 1
    return 0


def nussinov_elementwise(seq):
    """Nussinov's RNA folding (PolyBench's nussinov) element by element: the most non-crossing base
    pairs of the stretch i..j, with the split point k as an inner loop."""
    n = seq.shape[0]
    table = np.zeros((n, n), dtype=np.int64)
    for i in range(n - 1, -1, -1):
        for j in range(i + 1, n):
            best = max(table[i, j - 1], table[i + 1, j])
            if i < j - 1:
                best = max(best, table[i + 1, j - 1] + match(seq[i], seq[j]))
            for k in range(i + 1, j):
                best = max(best, table[i, k] + table[k + 1, j])
            table[i, j] = best
    return table


match_loops = njit(match)


@njit
def nussinov_elementwise_loops(seq):
    n = seq.shape[0]
    table = np.zeros((n, n), dtype=np.int64)
    for i in range(n - 1, -1, -1):
        for j in range(i + 1, n):
            best = max(table[i, j - 1], table[i + 1, j])
            if i < j - 1:
                best = max(best, table[i + 1, j - 1] + match_loops(seq[i], seq[j]))
            for k in range(i + 1, j):
                best = max(best, table[i, k] + table[k + 1, j])
            table[i, j] = best
    return table


def make_nussinov(rng, n):
    return (rng.integers(0, 4, n),)


def floyd_warshall_elementwise(D):
    """Floyd-Warshall all-pairs shortest paths in place (PolyBench's floyd-warshall), a path through
    k replacing the known one only where it is shorter."""
    n = D.shape[0]
    for k in range(n):
        for i in range(n):
            for j in range(n):
                if D[i, k] + D[k, j] < D[i, j]:
                    D[i, j] = D[i, k] + D[k, j]


@njit
def floyd_warshall_elementwise_loops(D):
    n = D.shape[0]
    for k in range(n):
        for i in range(n):
            for j in range(n):
                if D[i, k] + D[k, j] < D[i, j]:
                    D[i, j] = D[i, k] + D[k, j]


def make_floyd_warshall(rng, n):
    D = rng.integers(1, 100, (n, n))
    D[rng.random((n, n)) < 0.7] = 10**6     # most pairs not joined by an edge
    np.fill_diagonal(D, 0)
    return (D,)


def mandelbrot(xs, ys, maxiter):
    """Escape-time counts of the Mandelbrot set at the points (xs[j], ys[i]): iterations of
    z = z * z + c, in real and imaginary parts, until |z| > 2 or maxiter."""
    counts = np.zeros((ys.shape[0], xs.shape[0]), dtype=np.int64)
    for i in range(ys.shape[0]):
        for j in range(xs.shape[0]):
            cx = xs[j]
            cy = ys[i]
            x = 0.0
            y = 0.0
            k = 0
            while x * x + y * y <= 4.0 and k < maxiter:
                x, y = x * x - y * y + cx, 2.0 * x * y + cy
                k += 1
            counts[i, j] = k
    return counts


@njit
def mandelbrot_loops(xs, ys, maxiter):
    counts = np.zeros((ys.shape[0], xs.shape[0]), dtype=np.int64)
    for i in range(ys.shape[0]):
        for j in range(xs.shape[0]):
            cx = xs[j]
            cy = ys[i]
            x = 0.0
            y = 0.0
            k = 0
            while x * x + y * y <= 4.0 and k < maxiter:
                x, y = x * x - y * y + cx, 2.0 * x * y + cy
                k += 1
            counts[i, j] = k
    return counts


def make_mandelbrot(rng, h, w, maxiter):
    return np.sort(rng.uniform(-2.0, 0.5, w)), np.sort(rng.uniform(-1.25, 1.25, h)), maxiter


def csr_spmv(data, indices, indptr, x):
    """y = A @ x for A in compressed sparse rows (SciPy's csr_matrix layout: row i's values are
    data[indptr[i]:indptr[i + 1]], in the columns indices[...])."""
    n = indptr.shape[0] - 1
    y = np.zeros(n)
    for i in range(n):
        s = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            s += data[k] * x[indices[k]]
        y[i] = s
    return y


@njit
def csr_spmv_loops(data, indices, indptr, x):
    n = indptr.shape[0] - 1
    y = np.zeros(n)
    for i in range(n):
        s = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            s += data[k] * x[indices[k]]
        y[i] = s
    return y


def make_csr(rng, n, per_row):
    """An n x n matrix with 0 to 2 * per_row values a row (some rows empty), columns sorted."""
    counts = rng.integers(0, 2 * per_row + 1, n)
    indptr = np.concatenate([[0], np.cumsum(counts)])
    indices = np.concatenate([np.sort(rng.choice(n, c, replace=False)) for c in counts])
    return rng.standard_normal(indptr[-1]), indices.astype(np.int64), indptr, rng.standard_normal(n)


def histogram_loop(values, lo, hi, bins):
    """Counts of values in `bins` equal bins over [lo, hi], as np.histogram counts them (the last
    bin closed, values outside left out), one value at a time."""
    hist = np.zeros(bins, dtype=np.int64)
    width = (hi - lo) / bins
    for v in values:
        if v < lo or v > hi:
            continue
        k = int((v - lo) / width)
        if k >= bins:
            k = bins - 1
        hist[k] += 1
    return hist


@njit
def histogram_loop_loops(values, lo, hi, bins):
    hist = np.zeros(bins, dtype=np.int64)
    width = (hi - lo) / bins
    for v in values:
        if v < lo or v > hi:
            continue
        k = int((v - lo) / width)
        if k >= bins:
            k = bins - 1
        hist[k] += 1
    return hist


def make_histogram(rng, n, bins):
    values = rng.standard_normal(n)
    values[-1] = 3.0                         # on the top edge
    return values, -3.0, 3.0, bins


def insertion_sort(values):
    """A sorted copy, by insertion sort (Knuth, TAOCP vol. 3, 5.2.1): each element moved left past
    the larger ones before it."""
    a = values.copy()
    for i in range(1, a.shape[0]):
        key = a[i]
        j = i - 1
        while j >= 0 and a[j] > key:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = key
    return a


@njit
def insertion_sort_loops(values):
    a = values.copy()
    for i in range(1, a.shape[0]):
        key = a[i]
        j = i - 1
        while j >= 0 and a[j] > key:
            a[j + 1] = a[j]
            j -= 1
        a[j + 1] = key
    return a


def make_sort(rng, n):
    return (rng.standard_normal(n),)


KERNELS = [
    Kernel("crc16", crc16, crc16_loops, make_crc16, {"tiny": (16,), "small": (2000,), "large": (200_000,)}),
    Kernel("gauss-seidel-2d", gauss_seidel_2d, gauss_seidel_2d_loops, make_gauss_seidel,
           {"tiny": (6, 2), "small": (40, 4), "large": (200, 10)}),
    Kernel("nussinov-elementwise", nussinov_elementwise, nussinov_elementwise_loops, make_nussinov,
           {"tiny": (6,), "small": (40,), "large": (180,)}),
    Kernel("floyd-warshall-elementwise", floyd_warshall_elementwise, floyd_warshall_elementwise_loops,
           make_floyd_warshall, {"tiny": (6,), "small": (30,), "large": (150,)}),
    Kernel("mandelbrot", mandelbrot, mandelbrot_loops, make_mandelbrot,
           {"tiny": (4, 5, 20), "small": (30, 40, 50), "large": (300, 400, 100)}),
    Kernel("csr-spmv", csr_spmv, csr_spmv_loops, make_csr, {"tiny": (6, 2), "small": (1000, 5), "large": (100_000, 10)}),
    Kernel("histogram-loop", histogram_loop, histogram_loop_loops, make_histogram,
           {"tiny": (20, 4), "small": (20_000, 50), "large": (2_000_000, 100)}),
    Kernel("insertion-sort", insertion_sort, insertion_sort_loops, make_sort,
           {"tiny": (10,), "small": (300,), "large": (3000,)}),
]
