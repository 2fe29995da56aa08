"""PolyBench's solvers in NumPy: factorizations and substitutions, a loop over pivots or rows whose
body is slices and dot products."""

import numpy as np

from .kernel import Kernel, njit


def cholesky(A):
    """In place: the lower triangle of A becomes L with L @ L.T == A (the upper part is left alone)."""
    for j in range(A.shape[0]):
        A[j, j] = np.sqrt(A[j, j] - A[j, :j] @ A[j, :j])
        A[j + 1:, j] = (A[j + 1:, j] - A[j + 1:, :j] @ A[j, :j]) / A[j, j]


@njit
def cholesky_loops(A):
    for i in range(A.shape[0]):
        for j in range(i):
            for k in range(j):
                A[i, j] -= A[i, k] * A[j, k]
            A[i, j] /= A[j, j]
        for k in range(i):
            A[i, i] -= A[i, k] * A[i, k]
        A[i, i] = np.sqrt(A[i, i])


def make_spd(rng, n):
    B = rng.random((n, n))
    return (B @ B.T / n + np.eye(n),)


def durbin(r):
    """Levinson-Durbin: y solving the Toeplitz system of the autocorrelations (1, r[0], r[1], ...) = -r."""
    y = np.empty_like(r)
    y[0] = -r[0]
    beta, alpha = 1.0, -r[0]
    for k in range(1, r.shape[0]):
        beta = (1 - alpha * alpha) * beta
        alpha = -(r[k] + r[k - 1::-1] @ y[:k]) / beta
        y[:k] += alpha * y[k - 1::-1]
        y[k] = alpha
    return y


@njit
def durbin_loops(r):
    n = r.shape[0]
    y = np.empty(n)
    z = np.empty(n)
    y[0] = -r[0]
    beta, alpha = 1.0, -r[0]
    for k in range(1, n):
        beta = (1 - alpha * alpha) * beta
        s = 0.0
        for i in range(k):
            s += r[k - i - 1] * y[i]
        alpha = -(r[k] + s) / beta
        for i in range(k):
            z[i] = y[i] + alpha * y[k - i - 1]
        for i in range(k):
            y[i] = z[i]
        y[k] = alpha
    return y


def make_durbin(rng, n):
    """Autocorrelations that decay fast enough for a positive definite Toeplitz matrix."""
    return (rng.uniform(-1, 1, n) * 0.25 / np.arange(1, n + 1) ** 2,)


def gramschmidt(A):
    """Modified Gram-Schmidt: A = Q @ R, A overwritten by what is left of it."""
    n = A.shape[1]
    Q = np.zeros_like(A)
    R = np.zeros((n, n))
    for k in range(n):
        R[k, k] = np.sqrt(A[:, k] @ A[:, k])
        Q[:, k] = A[:, k] / R[k, k]
        R[k, k + 1:] = Q[:, k] @ A[:, k + 1:]
        A[:, k + 1:] -= np.outer(Q[:, k], R[k, k + 1:])
    return Q, R


@njit
def gramschmidt_loops(A):
    m, n = A.shape
    Q = np.zeros((m, n))
    R = np.zeros((n, n))
    for k in range(n):
        nrm = 0.0
        for i in range(m):
            nrm += A[i, k] * A[i, k]
        R[k, k] = np.sqrt(nrm)
        for i in range(m):
            Q[i, k] = A[i, k] / R[k, k]
        for j in range(k + 1, n):
            s = 0.0
            for i in range(m):
                s += Q[i, k] * A[i, j]
            R[k, j] = s
            for i in range(m):
                A[i, j] -= Q[i, k] * s
    return Q, R


def make_gramschmidt(rng, m, n):
    return (rng.standard_normal((m, n)),)


def lu(A):
    """In place and without pivoting (A is diagonally dominant): U on and above the diagonal, L's
    multipliers below it (its unit diagonal implied)."""
    for k in range(A.shape[0]):
        A[k + 1:, k] /= A[k, k]
        A[k + 1:, k + 1:] -= np.outer(A[k + 1:, k], A[k, k + 1:])


@njit
def lu_loops(A):
    n = A.shape[0]
    for i in range(n):
        for j in range(i):
            for k in range(j):
                A[i, j] -= A[i, k] * A[k, j]
            A[i, j] /= A[j, j]
        for j in range(i, n):
            for k in range(i):
                A[i, j] -= A[i, k] * A[k, j]


def make_dominant(rng, n):
    return (rng.random((n, n)) + n * np.eye(n),)


def ludcmp(A, b):
    """x solving A @ x == b: LU in place, then forward and back substitution."""
    lu(A)
    n = b.shape[0]
    y = np.empty(n)
    for i in range(n):
        y[i] = b[i] - A[i, :i] @ y[:i]
    x = np.empty(n)
    for i in range(n - 1, -1, -1):
        x[i] = (y[i] - A[i, i + 1:] @ x[i + 1:]) / A[i, i]
    return x


@njit
def ludcmp_loops(A, b):
    lu_loops(A)
    n = b.shape[0]
    y = np.empty(n)
    for i in range(n):
        s = b[i]
        for j in range(i):
            s -= A[i, j] * y[j]
        y[i] = s
    x = np.empty(n)
    for i in range(n - 1, -1, -1):
        s = y[i]
        for j in range(i + 1, n):
            s -= A[i, j] * x[j]
        x[i] = s / A[i, i]
    return x


def make_ludcmp(rng, n):
    return make_dominant(rng, n) + (rng.random(n),)


def trisolv(L, b):
    """x solving L @ x == b by forward substitution (only the lower triangle of L is read)."""
    x = np.empty_like(b)
    for i in range(b.shape[0]):
        x[i] = (b[i] - L[i, :i] @ x[:i]) / L[i, i]
    return x


@njit
def trisolv_loops(L, b):
    x = np.empty_like(b)
    for i in range(b.shape[0]):
        s = b[i]
        for j in range(i):
            s -= L[i, j] * x[j]
        x[i] = s / L[i, i]
    return x


def make_trisolv(rng, n):
    return make_dominant(rng, n) + (rng.random(n),)


KERNELS = [
    Kernel("cholesky", cholesky, cholesky_loops, make_spd, {"tiny": (6,), "small": (120,), "large": (500,)}),
    Kernel("durbin", durbin, durbin_loops, make_durbin, {"tiny": (6,), "small": (120,), "large": (2000,)}),
    Kernel("gramschmidt", gramschmidt, gramschmidt_loops, make_gramschmidt,
           {"tiny": (6, 5), "small": (80, 60), "large": (400, 300)}),
    Kernel("lu", lu, lu_loops, make_dominant, {"tiny": (6,), "small": (120,), "large": (500,)}),
    Kernel("ludcmp", ludcmp, ludcmp_loops, make_ludcmp, {"tiny": (6,), "small": (120,), "large": (500,)}),
    Kernel("trisolv", trisolv, trisolv_loops, make_trisolv, {"tiny": (6,), "small": (120,), "large": (2000,)}),
]
