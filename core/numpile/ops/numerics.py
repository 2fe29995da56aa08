"""Numerical helpers NumPy programs call beside the ufuncs: np.isclose, np.interp, np.convolve,
np.diag and np.trace.

Each is NumPy's own call on the op's buffers (an extern), captured at its own level so that the
function or loop using it stays one graph. Shapes follow from the operands; dtypes and NumPy's
refusals from probes.
"""

from __future__ import annotations

import numpy as np

from .meta import as_meta, broadcast_shapes, probe_call
from .registry import INDEXING, LINALG, REDUCTION, ArrayMeta, register


def _isclose_sig(a, b, rtol=1e-05, atol=1e-08, equal_nan=False): ...


def _isclose_meta(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """A bool per element of the broadcast of a and b."""
    shape = broadcast_shapes(as_meta(a).shape, as_meta(b).shape)
    probe_call(np.isclose, a, b, rtol, atol, equal_nan)
    return ArrayMeta(shape, np.dtype(bool), scalar=not shape)


register("isclose", LINALG, impl=np.isclose, meta=_isclose_meta, signature=_isclose_sig, numpy=(np.isclose,),
         convert={"equal_nan": bool}, doc="np.isclose")


def _interp_sig(x, xp, fp, left=None, right=None, period=None): ...


def _interp_meta(x, xp, fp, left=None, right=None, period=None):
    """fp's values at x: x's shape, float64 (complex128 for complex fp)."""
    x, xp, fp = as_meta(x), as_meta(xp), as_meta(fp)
    if xp.ndim != 1 or fp.ndim != 1:
        raise ValueError("object too deep for desired array" if max(xp.ndim, fp.ndim) > 1 else "object of too small depth for desired array")
    if xp.shape[0] != fp.shape[0]:
        raise ValueError("fp and xp are not of the same length.")
    result = probe_call(np.interp, x, xp, fp, left, right, period)
    return ArrayMeta(x.shape, result.dtype, scalar=not x.shape)


register("interp", LINALG, impl=np.interp, meta=_interp_meta, signature=_interp_sig, numpy=(np.interp,),
         doc="np.interp")


def _convolve_sig(a, v, mode="full"): ...


def _convolve_meta(a, v, mode="full"):
    """The 1-D convolution's length for `mode`; dtype as NumPy's (probes)."""
    a, v = as_meta(a), as_meta(v)
    if a.ndim != 1 or v.ndim != 1:
        raise ValueError("object too deep for desired array")
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})")
    n, m = a.shape[0], v.shape[0]
    if isinstance(n, int) and n == 0 or isinstance(m, int) and m == 0:
        raise ValueError(f"{'a' if n == 0 else 'v'} cannot be empty")
    result = probe_call(np.convolve, a, v, mode)
    if mode != "full" and not (isinstance(n, int) and isinstance(m, int)):
        raise NotImplementedError("np.convolve of symbolic lengths with mode='same' or 'valid'")
    length = {"full": lambda: n + m - 1, "same": lambda: max(n, m), "valid": lambda: abs(n - m) + 1}[mode]()
    return ArrayMeta((length,), result.dtype)


register("convolve", LINALG, impl=np.convolve, meta=_convolve_meta, signature=_convolve_sig, numpy=(np.convolve,),
         doc="np.convolve (1-D)")


def _diag_sig(v, k=0): ...


def _diag_meta(v, k=0):
    """A 1-D v on the k-th diagonal of a square matrix; a 2-D v's k-th diagonal."""
    v = as_meta(v)
    k = int(k)
    if v.ndim == 1:
        n = v.shape[0] + abs(k)
        return ArrayMeta((n, n), v.dtype)
    if v.ndim != 2:
        raise ValueError("Input must be 1- or 2-d.")
    rows, columns = v.shape
    if not (isinstance(rows, int) and isinstance(columns, int)):
        raise NotImplementedError("np.diag of a matrix of symbolic size")
    return ArrayMeta((max(0, min(rows + min(k, 0), columns - max(k, 0))),), v.dtype)


register("diag", INDEXING, impl=np.diag, meta=_diag_meta, signature=_diag_sig, numpy=(np.diag,), doc="np.diag")


def _trace_sig(a, offset=0, axis1=0, axis2=1, dtype=None, out=None): ...


def _trace_meta(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """The sums of the diagonals: a's shape without axis1 and axis2."""
    a = as_meta(a)
    if out is not None:
        raise NotImplementedError("np.trace with out= is not supported")
    result = probe_call(np.trace, a, offset, axis1, axis2, dtype)
    axes = {axis1 % a.ndim, axis2 % a.ndim}
    shape = tuple(d for i, d in enumerate(a.shape) if i not in axes)
    return ArrayMeta(shape, result.dtype, scalar=not shape)


register("trace", REDUCTION, impl=np.trace, meta=_trace_meta, signature=_trace_sig, numpy=(np.trace,),
         methods={"trace": None}, doc="np.trace, ndarray.trace")
