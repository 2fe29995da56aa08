"""Numerical helpers NumPy programs call beside the ufuncs: np.isclose, np.interp, np.convolve, np.correlate,
np.diag, np.trace, np.count_nonzero, np.ptp, np.trapezoid, np.polyval, np.digitize, np.isin,
np.cross, np.kron, np.nan_to_num, np.select and np.gradient.

Each is NumPy's own call on the op's buffers (an extern), captured at its own level so that the
function or loop using it stays one graph. Shapes follow from the operands; dtypes and NumPy's
refusals from probes.
"""

from __future__ import annotations

import numpy as np

from . import params
from ..shapes import sym_max
from .meta import as_meta, broadcast_shapes, normalize_axis_index, probe, probe_call
from .reductions import reduced_axes, reduction_meta
from .registry import INDEXING, LINALG, MATMUL, REDUCTION, ArrayMeta, register


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
def _correlate_sig(a, v, mode="valid"): ...


def _lengths_meta(fn):
    """np.convolve's or np.correlate's meta: the 1-D result's length for `mode`; dtype as NumPy's (probes)."""
    def meta(a, v, mode):
        return _convolve_meta(fn, a, v, mode)
    return meta


def _convolve_meta(fn, a, v, mode):
    a, v = as_meta(a), as_meta(v)
    if a.ndim != 1 or v.ndim != 1:
        raise ValueError("object too deep for desired array")
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})")
    n, m = a.shape[0], v.shape[0]
    if isinstance(n, int) and n == 0 or isinstance(m, int) and m == 0:
        raise ValueError(f"{'a' if n == 0 else 'v'} cannot be empty")
    result = probe_call(fn, a, v, mode)
    length = {"full": lambda: n + m - 1, "same": lambda: sym_max(n, m),
              "valid": lambda: sym_max(n, m) - sym_max(n, m, min) + 1}[mode]()
    return ArrayMeta((length,), result.dtype)


register("convolve", LINALG, impl=np.convolve, meta=_lengths_meta(np.convolve), signature=_convolve_sig,
         numpy=(np.convolve,), doc="np.convolve (1-D)")
register("correlate", LINALG, impl=np.correlate, meta=_lengths_meta(np.correlate), signature=_correlate_sig,
         numpy=(np.correlate,), doc="np.correlate (1-D)")


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
    return ArrayMeta((sym_max(0, sym_max(rows + min(k, 0), columns - max(k, 0), min)),), v.dtype)


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


# -- reductions: count_nonzero, ptp, trapezoid -------------------------------------------------

def _count_nonzero_sig(a, axis=None, *, keepdims=False): ...
def _ptp_sig(a, axis=None, out=None, keepdims=False): ...


register("count_nonzero", REDUCTION, impl=np.count_nonzero, meta=reduction_meta(np.count_nonzero, None),
         signature=_count_nonzero_sig, numpy=(np.count_nonzero,), convert={"axis": params.axis, "keepdims": bool},
         doc="np.count_nonzero")
register("ptp", REDUCTION, impl=np.ptp, meta=reduction_meta(np.ptp, None), signature=_ptp_sig, numpy=(np.ptp,),
         convert={"axis": params.axis, "keepdims": bool}, doc="np.ptp")


def _trapezoid_sig(y, x=None, dx=1.0, axis=-1): ...


def _trapezoid_meta(y, x=None, dx=1.0, axis=-1):
    """y integrated along `axis`: y's shape without it."""
    y = as_meta(y)
    result = probe_call(np.trapezoid, y, None if x is None else as_meta(x), dx, axis)
    axis = normalize_axis_index(axis, y.ndim)
    shape = tuple(d for i, d in enumerate(y.shape) if i != axis)
    return ArrayMeta(shape, np.asarray(result).dtype, scalar=not shape)


register("trapezoid", REDUCTION, impl=np.trapezoid, meta=_trapezoid_meta, signature=_trapezoid_sig,
         numpy=(np.trapezoid,), doc="np.trapezoid")


# -- polyval, digitize, isin: a value per element of the operand --------------------------------

def _polyval_sig(p, x): ...


def _polyval_meta(p, x):
    if as_meta(p).ndim != 1:
        raise NotImplementedError("np.polyval of other than a 1-D array of coefficients")
    x = as_meta(x)
    return ArrayMeta(x.shape, np.asarray(probe_call(np.polyval, as_meta(p), x)).dtype, scalar=not x.shape)


register("polyval", LINALG, impl=np.polyval, meta=_polyval_meta, signature=_polyval_sig, numpy=(np.polyval,),
         doc="np.polyval (coefficients an array)")


def _digitize_sig(x, bins, right=False): ...


def _digitize_meta(x, bins, right=False):
    x, bins = as_meta(x), as_meta(bins)
    if bins.ndim != 1:
        raise ValueError("object too deep for desired array" if bins.ndim > 1 else "object of too small depth for desired array")
    result = probe_call(np.digitize, x, bins, right)
    return ArrayMeta(x.shape, np.asarray(result).dtype, scalar=not x.shape)


register("digitize", LINALG, impl=np.digitize, meta=_digitize_meta, signature=_digitize_sig, numpy=(np.digitize,),
         convert={"right": bool}, doc="np.digitize")


def _isin_sig(element, test_elements, assume_unique=False, invert=False, *, kind=None): ...


def _isin_meta(element, test_elements, assume_unique=False, invert=False, *, kind=None):
    element = as_meta(element)
    probe_call(np.isin, element, as_meta(test_elements), assume_unique, invert, kind=kind)
    return ArrayMeta(element.shape, np.dtype(bool), scalar=not element.shape)


register("isin", LINALG, impl=np.isin, meta=_isin_meta, signature=_isin_sig, numpy=(np.isin,),
         convert={"assume_unique": bool, "invert": bool}, doc="np.isin")


# -- cross, kron -----------------------------------------------------------------------------

def _cross_sig(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None): ...


def _cross_meta(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Vectors of 2 or 3 along the last axes: the broadcast of the rest, then 3 (none for two
    2-vectors, whose cross product is a number)."""
    a, b = as_meta(a), as_meta(b)
    if (axisa, axisb, axisc, axis) != (-1, -1, -1, None):
        raise NotImplementedError("np.cross along other than the last axes")
    if not a.ndim or not b.ndim or a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError("incompatible dimensions for cross product\n(dimension must be 2 or 3)")
    result = probe_call(np.cross, np.ones((*(1,) * (a.ndim - 1), a.shape[-1]), a.dtype),
                        np.ones((*(1,) * (b.ndim - 1), b.shape[-1]), b.dtype))
    rest = broadcast_shapes(a.shape[:-1], b.shape[:-1])
    shape = rest if a.shape[-1] == b.shape[-1] == 2 else rest + (3,)
    return ArrayMeta(shape, result.dtype, scalar=not shape)


register("cross", LINALG, impl=np.cross, meta=_cross_meta, signature=_cross_sig, numpy=(np.cross,),
         doc="np.cross (vectors along the last axes)")


def _kron_sig(a, b): ...


def _kron_meta(a, b):
    a, b = as_meta(a), as_meta(b)
    ndim = max(a.ndim, b.ndim)
    sa, sb = (1,) * (ndim - a.ndim) + tuple(a.shape), (1,) * (ndim - b.ndim) + tuple(b.shape)
    return ArrayMeta(tuple(x * y for x, y in zip(sa, sb)), probe_call(np.kron, a, b).dtype)


register("kron", MATMUL, impl=np.kron, meta=_kron_meta, signature=_kron_sig, numpy=(np.kron,), doc="np.kron")


# -- nan_to_num ------------------------------------------------------------------------------

def _nan_to_num_sig(x, copy=True, nan=0.0, posinf=None, neginf=None): ...


def _nan_to_num_meta(x, copy=True, nan=0.0, posinf=None, neginf=None):
    x = as_meta(x)
    if not copy:
        raise NotImplementedError("np.nan_to_num with copy=False (an update in place) is not supported")
    return ArrayMeta(x.shape, probe_call(np.nan_to_num, x, True, nan, posinf, neginf).dtype, scalar=not x.shape)


register("nan_to_num", LINALG, impl=np.nan_to_num, meta=_nan_to_num_meta, signature=_nan_to_num_sig,
         numpy=(np.nan_to_num,), convert={"copy": bool}, doc="np.nan_to_num")


# -- select ----------------------------------------------------------------------------------

def _select_sig(condlist, choicelist, default=0): ...


def _select_meta(condlist, choicelist, default=0):
    """The broadcast of every condition, choice and the default; NumPy's dtype and refusals
    (lists of other lengths, conditions not bool) from the probes."""
    if not (isinstance(condlist, tuple) and isinstance(choicelist, tuple)):
        raise NotImplementedError("np.select of other than lists of arrays")
    conds, choices = [as_meta(c) for c in condlist], [as_meta(c) for c in choicelist]
    result = probe_call(np.select, [probe(c) for c in conds], [probe(c) for c in choices], default)
    shape = broadcast_shapes(*(m.shape for m in conds + choices), as_meta(default).shape)
    return ArrayMeta(shape, result.dtype, scalar=not shape)


register("select", LINALG, impl=np.select, meta=_select_meta, signature=_select_sig, numpy=(np.select,),
         convert={"condlist": params.sequence, "choicelist": params.sequence}, doc="np.select")


# -- gradient --------------------------------------------------------------------------------

def _gradient_sig(f, *varargs, axis=None, edge_order=1): ...


def _gradient_meta(f, *varargs, axis=None, edge_order=1):
    """f's shape per axis differentiated (one array for one axis, else a tuple of them); dtype
    from NumPy's call on probes long enough for `edge_order`, spacings of the same kinds."""
    f = as_meta(f)
    axes = reduced_axes(axis, f.ndim)
    if len(varargs) not in (0, 1, len(axes)):
        raise TypeError("invalid number of arguments")
    if edge_order not in (1, 2):
        raise ValueError("'edge_order' greater than 2 not supported")
    for ax in axes:
        if isinstance(f.shape[ax], int) and f.shape[ax] < edge_order + 1:
            raise ValueError("Shape of array too small to calculate a numerical gradient, at least (edge_order + 1) "
                             "elements are required.")
    spacings = [as_meta(v) for v in varargs]
    if len(spacings) == len(axes):
        for ax, v in zip(axes, spacings):
            if v.ndim > 1 or v.ndim == 1 and v.shape[0] != f.shape[ax]:
                raise ValueError("when 1d, distances must match the length of the corresponding dimension"
                                 if v.ndim == 1 else "distances must be either scalars or 1d")
    length = edge_order + 1
    probes = [np.arange(length, dtype=v.dtype) + 1 if v.ndim else probe(v) for v in spacings]
    probed = probe_call(np.gradient, np.ones((length,) * f.ndim, f.dtype), *probes, axis=axis, edge_order=edge_order)
    dtype = (probed[0] if isinstance(probed, tuple) else probed).dtype
    metas = tuple(ArrayMeta(f.shape, dtype) for _ in axes)
    return metas[0] if len(metas) == 1 else metas


register("gradient", LINALG, impl=np.gradient, meta=_gradient_meta, signature=_gradient_sig, numpy=(np.gradient,),
         convert={"axis": params.axis}, doc="np.gradient")
