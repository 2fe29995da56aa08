"""Products: matmul (the @ operator), dot, np.outer and ufunc.outer, with NumPy's shape rules (the
functions of np.linalg are numpy_linalg.py's)."""

from __future__ import annotations

import operator

import numpy as np

from .meta import as_meta, broadcast_shapes, probe_call, shape_of
from .registry import MATMUL, POINTWISE, ArrayMeta, lookup_callable, reflected, register


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


# -- outer products ------------------------------------------------------------------------

def _outer_sig(a, b): ...


def _outer_meta(a, b):
    """np.outer flattens both operands: (a.size, b.size), in multiply's dtype."""
    a, b = as_meta(a), as_meta(b)
    return ArrayMeta((a.size, b.size), probe_call(np.outer, a, b).dtype)


register("outer", MATMUL, impl=np.outer, meta=_outer_meta, signature=_outer_sig, numpy=(np.outer,),
         doc="np.outer")


def _ufunc_outer_sig(ufunc, A, B, /): ...


def _binary_ufunc(ufunc) -> str:
    """The name of a two-operand ufunc with a registry row (np.add.outer reaches the row as
    np.ufunc.outer(np.add, ...)); a name keeps generated code and fingerprints readable."""
    op = lookup_callable(ufunc) if isinstance(ufunc, np.ufunc) else None
    if op is None or op.kind != POINTWISE or ufunc.nin != 2 or ufunc.nout != 1 or op.impl is not ufunc:
        raise TypeError(f"outer of {ufunc!r} is not captured (only NumPy's binary ufuncs with one output)")
    return ufunc.__name__


def _ufunc_outer_meta(ufunc, A, B):
    """ufunc.outer: every pair, A.shape + B.shape (no flattening); a NumPy scalar when 0-d."""
    shape = shape_of(A) + shape_of(B)
    return ArrayMeta(shape, probe_call(getattr(np, ufunc).outer, A, B).dtype, scalar=not shape)


def _ufunc_outer(ufunc, A, B):
    return getattr(np, ufunc).outer(A, B)


register("ufunc_outer", MATMUL, impl=_ufunc_outer, meta=_ufunc_outer_meta, signature=_ufunc_outer_sig,
         numpy=(np.ufunc.outer,), convert={"ufunc": _binary_ufunc}, doc="np.add.outer, np.multiply.outer, ...")
