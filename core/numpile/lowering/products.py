"""Products as kernels (decompositions of decompose.py's table): a small matmul or dot of static
shape, and one of symbolic sizes that is a dot or a matrix-vector product, as the sum over K of
broadcast products, fused with its neighbours; np.outer as a column times a row. Larger products
stay BLAS's. Each takes decompose.py's emitter (`emit`) as einsum.py's does.
"""

from __future__ import annotations

import math

import numpy as np

from ..graph import Node
from ..shapes import hint


# up to this many multiply-adds a matmul is a fused kernel: a call into BLAS costs more than the loop
SMALL_MATMUL = 1 << 11
# a vector-matrix product of symbolic sizes of at least this many matrix elements goes to BLAS
VECTOR_MATRIX_BLAS = 1 << 14


def matmul(emit, x1, x2):
    """A small matmul of static shape as the sum over k of broadcast products (one kernel, fused
    with its neighbours): (..., M, K, 1) * (..., 1, K, N) summed along K in the result's dtype,
    which wraps integers as NumPy's matmul loop does (a vector operand has no M or N). Floats add
    in the kernel's order, not BLAS's: equal within rounding. Larger products, booleans, float16
    and complex stay BLAS's."""
    if not all(isinstance(x, Node) and x.shape for x in (x1, x2)):
        return None
    dtype = np.result_type(x1.dtype, x2.dtype)
    if dtype.kind not in "iu" and dtype not in (np.float32, np.float64):
        return None
    a, b = x1.shape, x2.shape
    if not all(type(d) is int for d in (*a, *b)):
        # symbolic sizes: a dot or a matrix-vector product is memory-bound, as fast as a kernel as in
        # BLAS, and fuses (a loop body's `A[i, :j] @ A[:j, j]`); a product of matrices stays BLAS's,
        # and so does a large vector-matrix one, whose kernel sums down the matrix's columns (a
        # covariance's `data[:, i] @ data[:, i:M]`: 10x slower than BLAS's row order)
        if min(len(a), len(b)) != 1 or max(len(a), len(b)) > 2 or len(b) == 2 and _at_least(b, VECTOR_MATRIX_BLAS):
            return None
        return _matmul_summed(emit, x1, x2, dtype)
    rows, columns = a[-2] if len(a) > 1 else 1, b[-1] if len(b) > 1 else 1
    if math.prod(np.broadcast_shapes(a[:-2], b[:-2])) * rows * a[-1] * columns > SMALL_MATMUL:
        return None
    return _matmul_summed(emit, x1, x2, dtype)


def _at_least(shape: tuple, elements: int) -> bool:
    """Whether a shape of symbolic sizes has at least this many elements in the call being traced
    (a choice of speed, not of result: taken on the hints)."""
    hints = [hint(d) for d in shape]
    return None not in hints and math.prod(hints) >= elements


def _matmul_summed(emit, x1, x2, dtype):
    """x1 @ x2 as the sum along K of broadcast products (see matmul)."""
    a, b = x1.shape, x2.shape
    if len(b) == 1:             # (..., M, K) * (K,), summed along K (a dot where x1 is a vector too)
        spread, axis = (None, None), -1 if len(a) > 1 else None
    else:                       # (..., M, K, 1) * (..., 1, K, N), summed along K
        spread, axis = (-1, -3 if len(a) > 1 else None), -2
    left, right = (x if at is None else emit("expand_dims", x, at) for x, at in zip((x1, x2), spread))
    return emit("sum", emit("multiply", left, right), axis=axis, dtype=dtype)


def dot(emit, a, b):
    """np.dot of vectors and matrices is their matmul."""
    vectors_or_matrices = all(isinstance(x, Node) and 1 <= len(x.shape) <= 2 for x in (a, b))
    return matmul(emit, a, b) if vectors_or_matrices else None


def outer(emit, a, b):
    """np.outer: the flattened operands as a column and a row, multiplied (a kernel, fused with
    what reads it, not a call that makes the whole product)."""
    if not all(isinstance(x, Node) for x in (a, b)):
        return None
    column, row = (x if len(x.shape) == 1 else emit("ravel", x) for x in (a, b))
    return emit("multiply", emit("getitem", column, (slice(None), None)), emit("getitem", row, (None, slice(None))))
