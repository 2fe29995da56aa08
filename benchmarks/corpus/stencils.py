"""PolyBench's stencils in NumPy: a loop over time steps of slice updates in place; Gauss-Seidel
and ADI add loops over rows, whose recurrences NumPy cannot vectorise."""

import numpy as np

from .kernel import Kernel, njit


def jacobi_1d(A, B, steps):
    for _ in range(steps):
        B[1:-1] = (A[:-2] + A[1:-1] + A[2:]) / 3.0
        A[1:-1] = (B[:-2] + B[1:-1] + B[2:]) / 3.0


@njit
def jacobi_1d_loops(A, B, steps):
    for _ in range(steps):
        for i in range(1, A.shape[0] - 1):
            B[i] = (A[i - 1] + A[i] + A[i + 1]) / 3.0
        for i in range(1, A.shape[0] - 1):
            A[i] = (B[i - 1] + B[i] + B[i + 1]) / 3.0


def make_jacobi_1d(rng, n, steps):
    return rng.random(n), rng.random(n), steps


def jacobi_2d(A, B, steps):
    for _ in range(steps):
        B[1:-1, 1:-1] = 0.2 * (A[1:-1, 1:-1] + A[1:-1, :-2] + A[1:-1, 2:] + A[2:, 1:-1] + A[:-2, 1:-1])
        A[1:-1, 1:-1] = 0.2 * (B[1:-1, 1:-1] + B[1:-1, :-2] + B[1:-1, 2:] + B[2:, 1:-1] + B[:-2, 1:-1])


@njit
def jacobi_2d_loops(A, B, steps):
    n, m = A.shape
    for _ in range(steps):
        for i in range(1, n - 1):
            for j in range(1, m - 1):
                B[i, j] = 0.2 * (A[i, j] + A[i, j - 1] + A[i, j + 1] + A[i + 1, j] + A[i - 1, j])
        for i in range(1, n - 1):
            for j in range(1, m - 1):
                A[i, j] = 0.2 * (B[i, j] + B[i, j - 1] + B[i, j + 1] + B[i + 1, j] + B[i - 1, j])


def make_grids(rng, n, steps):
    return rng.random((n, n)), rng.random((n, n)), steps


def heat_step(src, dst):
    """dst's interior from src: explicit Euler of the 3-d heat equation, 0.125 * each second difference."""
    c = src[1:-1, 1:-1, 1:-1]
    dst[1:-1, 1:-1, 1:-1] = (c + 0.125 * (src[2:, 1:-1, 1:-1] - 2.0 * c + src[:-2, 1:-1, 1:-1])
                             + 0.125 * (src[1:-1, 2:, 1:-1] - 2.0 * c + src[1:-1, :-2, 1:-1])
                             + 0.125 * (src[1:-1, 1:-1, 2:] - 2.0 * c + src[1:-1, 1:-1, :-2]))


def heat_3d(A, B, steps):
    for _ in range(steps):
        heat_step(A, B)
        heat_step(B, A)


@njit
def heat_step_loops(src, dst):
    n = src.shape[0]
    for i in range(1, n - 1):
        for j in range(1, n - 1):
            for k in range(1, n - 1):
                c = src[i, j, k]
                dst[i, j, k] = (c + 0.125 * (src[i + 1, j, k] - 2.0 * c + src[i - 1, j, k])
                                + 0.125 * (src[i, j + 1, k] - 2.0 * c + src[i, j - 1, k])
                                + 0.125 * (src[i, j, k + 1] - 2.0 * c + src[i, j, k - 1]))


@njit
def heat_3d_loops(A, B, steps):
    for _ in range(steps):
        heat_step_loops(A, B)
        heat_step_loops(B, A)


def make_cubes(rng, n, steps):
    return rng.random((n, n, n)), rng.random((n, n, n)), steps


def seidel_2d(A, steps):
    """Gauss-Seidel with the 9-point average, in place: each point sees its left neighbour's new
    value, so a row is a slice update for the rest and then a sweep along it."""
    for _ in range(steps):
        for i in range(1, A.shape[0] - 1):
            A[i, 1:-1] = (A[i - 1, :-2] + A[i - 1, 1:-1] + A[i - 1, 2:] + A[i, 1:-1] + A[i, 2:]
                          + A[i + 1, :-2] + A[i + 1, 1:-1] + A[i + 1, 2:])
            for j in range(1, A.shape[1] - 1):
                A[i, j] = (A[i, j] + A[i, j - 1]) / 9.0


@njit
def seidel_2d_loops(A, steps):
    n, m = A.shape
    for _ in range(steps):
        for i in range(1, n - 1):
            for j in range(1, m - 1):
                A[i, j] = (A[i - 1, j - 1] + A[i - 1, j] + A[i - 1, j + 1] + A[i, j - 1] + A[i, j]
                           + A[i, j + 1] + A[i + 1, j - 1] + A[i + 1, j] + A[i + 1, j + 1]) / 9.0


def make_seidel(rng, n, steps):
    return rng.random((n, n)), steps


def fdtd_2d(ex, ey, hz, source):
    """Yee's scheme for Maxwell's equations in 2-d (TE mode), driven along the first row of ey."""
    for t in range(source.shape[0]):
        ey[0, :] = source[t]
        ey[1:, :] -= 0.5 * (hz[1:, :] - hz[:-1, :])
        ex[:, 1:] -= 0.5 * (hz[:, 1:] - hz[:, :-1])
        hz[:-1, :-1] -= 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])


@njit
def fdtd_2d_loops(ex, ey, hz, source):
    nx, ny = hz.shape
    for t in range(source.shape[0]):
        for j in range(ny):
            ey[0, j] = source[t]
        for i in range(1, nx):
            for j in range(ny):
                ey[i, j] -= 0.5 * (hz[i, j] - hz[i - 1, j])
        for i in range(nx):
            for j in range(1, ny):
                ex[i, j] -= 0.5 * (hz[i, j] - hz[i, j - 1])
        for i in range(nx - 1):
            for j in range(ny - 1):
                hz[i, j] -= 0.7 * (ex[i, j + 1] - ex[i, j] + ey[i + 1, j] - ey[i, j])


def make_fdtd(rng, nx, ny, steps):
    return rng.random((nx, ny)), rng.random((nx, ny)), rng.random((nx, ny)), rng.random(steps)


def adi_coefficients(n, steps):
    """The tridiagonal systems' coefficients: (a, b, c) for columns, (d, e, f) for rows."""
    dt = 1.0 / steps
    mul1 = 2.0 * dt * n * n
    mul2 = 1.0 * dt * n * n
    return -mul1 / 2, 1 + mul1, -mul1 / 2, -mul2 / 2, 1 + mul2, -mul2 / 2


def adi(u, steps):
    """Alternating direction implicit steps of 2-d heat diffusion: tridiagonal solves along every
    column, then every row, each a forward and a backward recurrence vectorised across the others."""
    n = u.shape[0]
    a, b, c, d, e, f = adi_coefficients(n, steps)
    v = np.zeros_like(u)
    p = np.zeros_like(u)
    q = np.zeros_like(u)
    for _ in range(steps):
        v[0, 1:-1] = 1.0
        p[1:-1, 0] = 0.0
        q[1:-1, 0] = v[0, 1:-1]
        for j in range(1, n - 1):
            p[1:-1, j] = -c / (a * p[1:-1, j - 1] + b)
            q[1:-1, j] = ((-d * u[j, :-2] + (1 + 2 * d) * u[j, 1:-1] - f * u[j, 2:] - a * q[1:-1, j - 1])
                          / (a * p[1:-1, j - 1] + b))
        v[-1, 1:-1] = 1.0
        for j in range(n - 2, 0, -1):
            v[j, 1:-1] = p[1:-1, j] * v[j + 1, 1:-1] + q[1:-1, j]
        u[1:-1, 0] = 1.0
        p[1:-1, 0] = 0.0
        q[1:-1, 0] = u[1:-1, 0]
        for j in range(1, n - 1):
            p[1:-1, j] = -f / (d * p[1:-1, j - 1] + e)
            q[1:-1, j] = ((-a * v[:-2, j] + (1 + 2 * a) * v[1:-1, j] - c * v[2:, j] - d * q[1:-1, j - 1])
                          / (d * p[1:-1, j - 1] + e))
        u[1:-1, -1] = 1.0
        for j in range(n - 2, 0, -1):
            u[1:-1, j] = p[1:-1, j] * u[1:-1, j + 1] + q[1:-1, j]


coefficients_loops = njit(adi_coefficients)


@njit
def adi_loops(u, steps):
    n = u.shape[0]
    a, b, c, d, e, f = coefficients_loops(n, steps)
    v = np.zeros_like(u)
    p = np.zeros_like(u)
    q = np.zeros_like(u)
    for _ in range(steps):
        for i in range(1, n - 1):
            v[0, i] = 1.0
            p[i, 0] = 0.0
            q[i, 0] = v[0, i]
            for j in range(1, n - 1):
                p[i, j] = -c / (a * p[i, j - 1] + b)
                q[i, j] = ((-d * u[j, i - 1] + (1 + 2 * d) * u[j, i] - f * u[j, i + 1] - a * q[i, j - 1])
                           / (a * p[i, j - 1] + b))
            v[n - 1, i] = 1.0
            for j in range(n - 2, 0, -1):
                v[j, i] = p[i, j] * v[j + 1, i] + q[i, j]
        for i in range(1, n - 1):
            u[i, 0] = 1.0
            p[i, 0] = 0.0
            q[i, 0] = u[i, 0]
            for j in range(1, n - 1):
                p[i, j] = -f / (d * p[i, j - 1] + e)
                q[i, j] = ((-a * v[i - 1, j] + (1 + 2 * a) * v[i, j] - c * v[i + 1, j] - d * q[i, j - 1])
                           / (d * p[i, j - 1] + e))
            u[i, n - 1] = 1.0
            for j in range(n - 2, 0, -1):
                u[i, j] = p[i, j] * u[i, j + 1] + q[i, j]


def make_adi(rng, n, steps):
    return rng.random((n, n)), steps


KERNELS = [
    Kernel("adi", adi, adi_loops, make_adi, {"tiny": (6, 2), "small": (40, 10), "large": (200, 20)}),
    Kernel("fdtd-2d", fdtd_2d, fdtd_2d_loops, make_fdtd,
           {"tiny": (5, 6, 2), "small": (60, 80, 40), "large": (500, 600, 40)}),
    Kernel("heat-3d", heat_3d, heat_3d_loops, make_cubes, {"tiny": (5, 2), "small": (20, 40), "large": (80, 10)}),
    Kernel("jacobi-1d", jacobi_1d, jacobi_1d_loops, make_jacobi_1d,
           {"tiny": (6, 2), "small": (120, 40), "large": (4000, 1000)}),
    Kernel("jacobi-2d", jacobi_2d, jacobi_2d_loops, make_grids, {"tiny": (6, 2), "small": (90, 40), "large": (700, 30)}),
    Kernel("seidel-2d", seidel_2d, seidel_2d_loops, make_seidel, {"tiny": (6, 2), "small": (40, 4), "large": (100, 10)}),
]
