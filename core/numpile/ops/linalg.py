"""Matrix products: matmul (the @ operator) and dot, with NumPy's shape rules."""

from __future__ import annotations

import operator

import numpy as np

from .meta import as_meta, broadcast_shapes, probe_call
from .registry import MATMUL, ArrayMeta, reflected, register


def _matmul_sig(x1, x2): ...


def _matmul_meta(x1, x2):
    """(..., n, k) @ (..., k, m) -> (..., n, m) with the batch dims broadcast; a 1-D operand is
    a row (left) or a column (right) vector whose dim is dropped from the result."""
    x1, x2 = as_meta(x1), as_meta(x2)  # no weak scalars: matmul refuses them, dot converts them
    dtype = probe_call(np.matmul, x1, x2).dtype  # NumPy's refusals of 0-d operands and dtypes
    a, b = x1.shape, x2.shape
    k = b[-2] if len(b) > 1 else b[0]
    if a[-1] != k:
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0, with gufunc "
                         f"signature (n?,k),(k,m?)->(n?,m?) (size {k} is different from {a[-1]})")
    shape = broadcast_shapes(a[:-2], b[:-2]) + a[-2:-1] + (b[-1:] if len(b) > 1 else ())
    return ArrayMeta(shape, dtype, scalar=not shape)  # matmul is a ufunc: a 0-d result is a scalar


def _dot_sig(a, b): ...


def _dot_meta(a, b):
    """dot: a 0-d operand multiplies; 1-D . 1-D is the inner product; otherwise the last axis of
    `a` meets the second-to-last of `b` (its only one if 1-D): a[:-1] + b[:-2] + b[-1:]."""
    a, b = as_meta(a), as_meta(b)
    dtype = probe_call(np.dot, a, b).dtype
    x, y = a.shape, b.shape
    if not x or not y:
        return ArrayMeta(x or y, dtype, scalar=not (x or y))
    k = -2 if len(y) > 1 else -1
    if x[-1] != y[k]:
        raise ValueError(f"shapes {x} and {y} not aligned: {x[-1]} (dim {len(x) - 1}) != {y[k]} (dim {len(y) + k})")
    shape = x[:-1] + y[:-2] + (y[-1:] if len(y) > 1 else ())
    return ArrayMeta(shape, dtype, scalar=not shape)


register("matmul", MATMUL, impl=np.matmul, meta=_matmul_meta, signature=_matmul_sig,
         numpy=(np.matmul, operator.matmul), methods={"__matmul__": None, "__rmatmul__": reflected},
         doc="np.matmul, a @ b")
register("dot", MATMUL, impl=np.dot, meta=_dot_meta, signature=_dot_sig,
         numpy=(np.dot,), methods={"dot": None}, doc="np.dot, a.dot(b)")
