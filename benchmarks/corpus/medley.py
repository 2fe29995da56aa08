"""PolyBench's medley: Deriche's recursive edge filter, Floyd-Warshall shortest paths and
Nussinov's RNA folding, each a recurrence that NumPy users vectorise along one axis only."""

import numpy as np

from .kernel import Kernel, njit


def deriche_coefficients(alpha):
    """Deriche's smoothing filter of width 1/alpha as two second-order recursions per direction."""
    k = (1 - np.exp(-alpha)) ** 2 / (1 + 2 * alpha * np.exp(-alpha) - np.exp(-2 * alpha))
    a1 = k
    a2 = k * np.exp(-alpha) * (alpha - 1)
    a3 = k * np.exp(-alpha) * (alpha + 1)
    a4 = -k * np.exp(-2 * alpha)
    b1 = 2 * np.exp(-alpha)
    b2 = -np.exp(-2 * alpha)
    return a1, a2, a3, a4, b1, b2


def deriche(alpha, img):
    """The filter along rows (left to right plus right to left), then along columns of the result;
    each recursion runs over one axis with the other as a vector."""
    a1, a2, a3, a4, b1, b2 = deriche_coefficients(alpha)
    h, w = img.shape
    y1 = np.empty_like(img)
    y2 = np.empty_like(img)
    xm1 = ym1 = ym2 = np.zeros(h)
    for j in range(w):
        y1[:, j] = a1 * img[:, j] + a2 * xm1 + b1 * ym1 + b2 * ym2
        xm1, ym2, ym1 = img[:, j], ym1, y1[:, j]
    xp1 = xp2 = yp1 = yp2 = np.zeros(h)
    for j in range(w - 1, -1, -1):
        y2[:, j] = a3 * xp1 + a4 * xp2 + b1 * yp1 + b2 * yp2
        xp2, xp1, yp2, yp1 = xp1, img[:, j], yp1, y2[:, j]
    out = y1 + y2
    tm1 = ym1 = ym2 = np.zeros(w)
    for i in range(h):
        y1[i] = a1 * out[i] + a2 * tm1 + b1 * ym1 + b2 * ym2
        tm1, ym2, ym1 = out[i], ym1, y1[i]
    tp1 = tp2 = yp1 = yp2 = np.zeros(w)
    for i in range(h - 1, -1, -1):
        y2[i] = a3 * tp1 + a4 * tp2 + b1 * yp1 + b2 * yp2
        tp2, tp1, yp2, yp1 = tp1, out[i], yp1, y2[i]
    return y1 + y2


coefficients_loops = njit(deriche_coefficients)


@njit
def deriche_loops(alpha, img):
    a1, a2, a3, a4, b1, b2 = coefficients_loops(alpha)
    h, w = img.shape
    y1 = np.empty_like(img)
    y2 = np.empty_like(img)
    for i in range(h):
        xm1 = ym1 = ym2 = 0.0
        for j in range(w):
            y1[i, j] = a1 * img[i, j] + a2 * xm1 + b1 * ym1 + b2 * ym2
            xm1, ym2, ym1 = img[i, j], ym1, y1[i, j]
        xp1 = xp2 = yp1 = yp2 = 0.0
        for j in range(w - 1, -1, -1):
            y2[i, j] = a3 * xp1 + a4 * xp2 + b1 * yp1 + b2 * yp2
            xp2, xp1, yp2, yp1 = xp1, img[i, j], yp1, y2[i, j]
    out = y1 + y2
    for j in range(w):
        tm1 = ym1 = ym2 = 0.0
        for i in range(h):
            y1[i, j] = a1 * out[i, j] + a2 * tm1 + b1 * ym1 + b2 * ym2
            tm1, ym2, ym1 = out[i, j], ym1, y1[i, j]
        tp1 = tp2 = yp1 = yp2 = 0.0
        for i in range(h - 1, -1, -1):
            y2[i, j] = a3 * tp1 + a4 * tp2 + b1 * yp1 + b2 * yp2
            tp2, tp1, yp2, yp1 = tp1, out[i, j], yp1, y2[i, j]
    return y1 + y2


def make_deriche(rng, h, w):
    return 0.25, rng.random((h, w))


def floyd_warshall(path):
    """All-pairs shortest path lengths from the edge lengths (a large number where there is no edge)."""
    for k in range(path.shape[0]):
        path = np.minimum(path, path[:, k, None] + path[None, k, :])
    return path


@njit
def floyd_warshall_loops(path):
    path = path.copy()
    n = path.shape[0]
    for k in range(n):
        for i in range(n):
            for j in range(n):
                path[i, j] = min(path[i, j], path[i, k] + path[k, j])
    return path


def make_floyd_warshall(rng, n):
    path = rng.integers(1, 100, (n, n))
    path[rng.random((n, n)) < 0.7] = 999        # most pairs not joined by an edge
    np.fill_diagonal(path, 0)
    return (path,)


def nussinov(seq):
    """The most base pairs of an RNA sequence (bases 0-3, complementary when they sum to 3) that
    fold without crossing: table[i, j] for the stretch i..j, filled from the end."""
    n = seq.shape[0]
    table = np.zeros((n, n), dtype=np.int64)
    for i in range(n - 1, -1, -1):
        for j in range(i + 1, n):
            best = max(table[i, j - 1], table[i + 1, j])
            if i < j - 1:
                best = max(best, table[i + 1, j - 1] + (seq[i] + seq[j] == 3))
                best = max(best, (table[i, i + 1:j] + table[i + 2:j + 1, j]).max())
            table[i, j] = best
    return table


@njit
def nussinov_loops(seq):
    n = seq.shape[0]
    table = np.zeros((n, n), dtype=np.int64)
    for i in range(n - 1, -1, -1):
        for j in range(i + 1, n):
            best = max(table[i, j - 1], table[i + 1, j])
            if i < j - 1:
                best = max(best, table[i + 1, j - 1] + (1 if seq[i] + seq[j] == 3 else 0))
            for k in range(i + 1, j):
                best = max(best, table[i, k] + table[k + 1, j])
            table[i, j] = best
    return table


def make_nussinov(rng, n):
    return (rng.integers(0, 4, n),)


KERNELS = [
    Kernel("deriche", deriche, deriche_loops, make_deriche, {"tiny": (5, 6), "small": (128, 96), "large": (1200, 900)}),
    Kernel("floyd-warshall", floyd_warshall, floyd_warshall_loops, make_floyd_warshall,
           {"tiny": (6,), "small": (120,), "large": (500,)}),
    Kernel("nussinov", nussinov, nussinov_loops, make_nussinov, {"tiny": (6,), "small": (60,), "large": (180,)}),
]
