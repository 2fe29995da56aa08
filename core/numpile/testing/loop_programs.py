"""Programs with loops as NumPy users write them, for backends' loop tests (`supports_loops`): each
is compiled and compared with NumPy on fresh inputs by the tests of numpile and of its plugins."""

from __future__ import annotations

import numpy as np


def jacobi(A, B, steps):
    """A time loop of two stencils, each updating an array in place."""
    for _ in range(steps):
        B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
        A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])
    return A, B


def sweep(A):
    """Rows updated in order, each from the one before: slices that move with the index."""
    for i in range(1, A.shape[0]):
        A[i, 1:-1] += A[i - 1, :-2] * 0.5 + A[i - 1, 2:] * 0.25
    return A


def sum_of_squares(x):
    """A Python float accumulated from elements (a NumPy float after the first iteration)."""
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i] * x[i]
    return s


def rebinding(x, steps):
    """A local rebound to a new array at each step."""
    for _ in range(steps):
        x = np.sin(x) * 0.5 + x
    return x


def triangular(A):
    """A triangular nest: the inner range and the slices' lengths follow the outer index."""
    for i in range(A.shape[0]):
        for j in range(i):
            A[i, j] -= A[i, :j] @ A[:j, j]
    return A


def sparse_rows(data, indices, indptr, x):
    """A product with a matrix in compressed sparse rows: each row's range read from the data."""
    y = np.zeros(indptr.shape[0] - 1)
    for i in range(indptr.shape[0] - 1):
        for k in range(indptr[i], indptr[i + 1]):
            y[i] += data[k] * x[indices[k]]
    return y


def sparse_rows_args(rng, n: int) -> tuple:
    """sparse_rows' arguments: an n x n matrix of 0 to 3 values a row (some rows empty) and x."""
    indptr = np.concatenate([[0], np.cumsum(rng.integers(0, 4, n))])
    return rng.standard_normal(indptr[-1]), rng.integers(0, n, indptr[-1]), indptr, rng.standard_normal(n)
