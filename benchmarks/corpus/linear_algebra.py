"""PolyBench's linear-algebra kernels and BLAS routines, in NumPy: products, and the triangular
updates that NumPy users write as a loop over rows (symm, syr2k, syrk, trmm, doitgen)."""

import numpy as np

from .kernel import Kernel, njit

ALPHA, BETA = 1.5, 1.2


def gemm(alpha, beta, C, A, B):
    C *= beta
    C += alpha * A @ B


@njit
def gemm_loops(alpha, beta, C, A, B):
    for i in range(C.shape[0]):
        for j in range(C.shape[1]):
            C[i, j] *= beta
        for k in range(A.shape[1]):
            for j in range(C.shape[1]):
                C[i, j] += alpha * A[i, k] * B[k, j]


def make_gemm(rng, ni, nj, nk):
    return ALPHA, BETA, rng.random((ni, nj)), rng.random((ni, nk)), rng.random((nk, nj))


def two_mm(alpha, beta, A, B, C, D):
    """D = alpha*A@B@C + beta*D."""
    tmp = alpha * A @ B
    D *= beta
    D += tmp @ C


@njit
def two_mm_loops(alpha, beta, A, B, C, D):
    tmp = np.zeros((A.shape[0], B.shape[1]))
    for i in range(A.shape[0]):
        for k in range(A.shape[1]):
            for j in range(B.shape[1]):
                tmp[i, j] += alpha * A[i, k] * B[k, j]
    for i in range(D.shape[0]):
        for j in range(D.shape[1]):
            D[i, j] *= beta
        for k in range(C.shape[0]):
            for j in range(D.shape[1]):
                D[i, j] += tmp[i, k] * C[k, j]


def make_two_mm(rng, ni, nj, nk, nl):
    return ALPHA, BETA, rng.random((ni, nk)), rng.random((nk, nj)), rng.random((nj, nl)), rng.random((ni, nl))


def three_mm(A, B, C, D):
    """G = (A@B) @ (C@D)."""
    E = A @ B
    F = C @ D
    return E @ F


@njit
def matmul_loops(A, B):
    out = np.zeros((A.shape[0], B.shape[1]))
    for i in range(A.shape[0]):
        for k in range(A.shape[1]):
            for j in range(B.shape[1]):
                out[i, j] += A[i, k] * B[k, j]
    return out


@njit
def three_mm_loops(A, B, C, D):
    return matmul_loops(matmul_loops(A, B), matmul_loops(C, D))


def make_three_mm(rng, ni, nj, nk, nl, nm):
    return rng.random((ni, nk)), rng.random((nk, nj)), rng.random((nj, nm)), rng.random((nm, nl))


def atax(A, x):
    """y = A.T @ (A @ x)."""
    return A.T @ (A @ x)


@njit
def atax_loops(A, x):
    y = np.zeros(A.shape[1])
    for i in range(A.shape[0]):
        tmp = 0.0
        for j in range(A.shape[1]):
            tmp += A[i, j] * x[j]
        for j in range(A.shape[1]):
            y[j] += A[i, j] * tmp
    return y


def make_atax(rng, m, n):
    return rng.random((m, n)), rng.random(n)


def bicg(A, p, r):
    """The two products of BiCG's step: s = A.T @ r and q = A @ p."""
    return r @ A, A @ p


@njit
def bicg_loops(A, p, r):
    s = np.zeros(A.shape[1])
    q = np.zeros(A.shape[0])
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            s[j] += r[i] * A[i, j]
            q[i] += A[i, j] * p[j]
    return s, q


def make_bicg(rng, n, m):
    return rng.random((n, m)), rng.random(m), rng.random(n)


def doitgen(A, C4):
    """Multiresolution analysis: every row A[r, q, :] replaced by A[r, q, :] @ C4."""
    for r in range(A.shape[0]):
        A[r] = A[r] @ C4


@njit
def doitgen_loops(A, C4):
    tmp = np.empty(A.shape[2])
    for r in range(A.shape[0]):
        for q in range(A.shape[1]):
            for p in range(A.shape[2]):
                s = 0.0
                for k in range(A.shape[2]):
                    s += A[r, q, k] * C4[k, p]
                tmp[p] = s
            A[r, q, :] = tmp


def make_doitgen(rng, nr, nq, np_):
    return rng.random((nr, nq, np_)), rng.random((np_, np_))


def mvt(x1, x2, y1, y2, A):
    x1 += A @ y1
    x2 += A.T @ y2


@njit
def mvt_loops(x1, x2, y1, y2, A):
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            x1[i] += A[i, j] * y1[j]
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            x2[j] += A[i, j] * y2[i]


def make_mvt(rng, n):
    return rng.random(n), rng.random(n), rng.random(n), rng.random(n), rng.random((n, n))


def gemver(alpha, beta, A, u1, v1, u2, v2, w, x, y, z):
    A += np.outer(u1, v1) + np.outer(u2, v2)
    x += beta * y @ A + z
    w += alpha * A @ x


@njit
def gemver_loops(alpha, beta, A, u1, v1, u2, v2, w, x, y, z):
    n = A.shape[0]
    for i in range(n):
        for j in range(n):
            A[i, j] += u1[i] * v1[j] + u2[i] * v2[j]
    for i in range(n):
        for j in range(n):
            x[j] += beta * y[i] * A[i, j]
    for i in range(n):
        x[i] += z[i]
    for i in range(n):
        for j in range(n):
            w[i] += alpha * A[i, j] * x[j]


def make_gemver(rng, n):
    return (ALPHA, BETA, rng.random((n, n)), *(rng.random(n) for _ in range(8)))


def gesummv(alpha, beta, A, B, x):
    return alpha * A @ x + beta * B @ x


@njit
def gesummv_loops(alpha, beta, A, B, x):
    y = np.empty(A.shape[0])
    for i in range(A.shape[0]):
        a = 0.0
        b = 0.0
        for j in range(A.shape[1]):
            a += A[i, j] * x[j]
            b += B[i, j] * x[j]
        y[i] = alpha * a + beta * b
    return y


def make_gesummv(rng, n):
    return ALPHA, BETA, rng.random((n, n)), rng.random((n, n)), rng.random(n)


def symm(alpha, beta, C, A, B):
    """C = alpha*A@B + beta*C for a symmetric A of which only the lower triangle is read."""
    for i in range(C.shape[0]):
        C[:i] += alpha * np.outer(A[i, :i], B[i])
        C[i] = beta * C[i] + alpha * A[i, i] * B[i] + alpha * (A[i, :i] @ B[:i])


@njit
def symm_loops(alpha, beta, C, A, B):
    for i in range(C.shape[0]):
        for j in range(C.shape[1]):
            temp = 0.0
            for k in range(i):
                C[k, j] += alpha * B[i, j] * A[i, k]
                temp += B[k, j] * A[i, k]
            C[i, j] = beta * C[i, j] + alpha * B[i, j] * A[i, i] + alpha * temp


def make_symm(rng, m, n):
    return ALPHA, BETA, rng.random((m, n)), rng.random((m, m)), rng.random((m, n))


def syr2k(alpha, beta, C, A, B):
    """The lower triangle of C = alpha*A@B.T + alpha*B@A.T + beta*C."""
    for i in range(C.shape[0]):
        C[i, :i + 1] *= beta
        C[i, :i + 1] += alpha * (A[:i + 1] @ B[i] + B[:i + 1] @ A[i])


@njit
def syr2k_loops(alpha, beta, C, A, B):
    for i in range(C.shape[0]):
        for j in range(i + 1):
            C[i, j] *= beta
        for k in range(A.shape[1]):
            for j in range(i + 1):
                C[i, j] += A[j, k] * alpha * B[i, k] + B[j, k] * alpha * A[i, k]


def make_syr2k(rng, n, m):
    return ALPHA, BETA, rng.random((n, n)), rng.random((n, m)), rng.random((n, m))


def syrk(alpha, beta, C, A):
    """The lower triangle of C = alpha*A@A.T + beta*C."""
    for i in range(C.shape[0]):
        C[i, :i + 1] *= beta
        C[i, :i + 1] += alpha * A[:i + 1] @ A[i]


@njit
def syrk_loops(alpha, beta, C, A):
    for i in range(C.shape[0]):
        for j in range(i + 1):
            C[i, j] *= beta
        for k in range(A.shape[1]):
            for j in range(i + 1):
                C[i, j] += alpha * A[i, k] * A[j, k]


def make_syrk(rng, n, m):
    return ALPHA, BETA, rng.random((n, n)), rng.random((n, m))


def trmm(alpha, A, B):
    """B = alpha * A.T @ B for A unit lower triangular (its diagonal and upper part unread)."""
    for i in range(B.shape[0]):
        B[i] = alpha * (B[i] + A[i + 1:, i] @ B[i + 1:])


@njit
def trmm_loops(alpha, A, B):
    for i in range(B.shape[0]):
        for j in range(B.shape[1]):
            for k in range(i + 1, B.shape[0]):
                B[i, j] += A[k, i] * B[k, j]
            B[i, j] = alpha * B[i, j]


def make_trmm(rng, m, n):
    return ALPHA, rng.random((m, m)), rng.random((m, n))


KERNELS = [
    Kernel("2mm", two_mm, two_mm_loops, make_two_mm,
           {"tiny": (4, 5, 6, 7), "small": (40, 50, 70, 80), "large": (180, 190, 210, 220)}),
    Kernel("3mm", three_mm, three_mm_loops, make_three_mm,
           {"tiny": (4, 5, 6, 7, 8), "small": (40, 50, 60, 70, 80), "large": (180, 190, 200, 210, 220)}),
    Kernel("atax", atax, atax_loops, make_atax, {"tiny": (5, 6), "small": (116, 124), "large": (1900, 2100)}),
    Kernel("bicg", bicg, bicg_loops, make_bicg, {"tiny": (5, 6), "small": (124, 116), "large": (2100, 1900)}),
    Kernel("doitgen", doitgen, doitgen_loops, make_doitgen,
           {"tiny": (3, 4, 5), "small": (25, 20, 30), "large": (150, 140, 160)}),
    Kernel("gemm", gemm, gemm_loops, make_gemm, {"tiny": (4, 5, 6), "small": (60, 70, 80), "large": (200, 220, 240)}),
    Kernel("gemver", gemver, gemver_loops, make_gemver, {"tiny": (6,), "small": (120,), "large": (2000,)}),
    Kernel("gesummv", gesummv, gesummv_loops, make_gesummv, {"tiny": (6,), "small": (90,), "large": (1300,)}),
    Kernel("mvt", mvt, mvt_loops, make_mvt, {"tiny": (6,), "small": (120,), "large": (2000,)}),
    Kernel("symm", symm, symm_loops, make_symm, {"tiny": (5, 6), "small": (60, 80), "large": (300, 340)}),
    Kernel("syr2k", syr2k, syr2k_loops, make_syr2k, {"tiny": (6, 5), "small": (80, 60), "large": (340, 300)}),
    Kernel("syrk", syrk, syrk_loops, make_syrk, {"tiny": (6, 5), "small": (80, 60), "large": (340, 300)}),
    Kernel("trmm", trmm, trmm_loops, make_trmm, {"tiny": (5, 6), "small": (60, 80), "large": (300, 340)}),
]
