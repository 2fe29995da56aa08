"""Statistics over observations: np.cov, np.corrcoef, np.average.

np.cov is a composite (centre the variables, one product of the matrix with its
transpose, scaled), captured at its own level; so is np.average (a mean, or a weighted one).
"""

from __future__ import annotations

import numpy as np

from . import params
from .meta import as_meta, probe_call
from .reductions import reduced_axes, reduced_shape
from .registry import MATMUL, REDUCTION, ArrayMeta, register


def _cov_sig(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None): ...


def _variables(x: ArrayMeta, rowvar: bool, what: str) -> tuple[int, int]:
    """(variables, observations) of one operand: a 1-D one is one variable; a 2-D one has a
    variable per row (per column when not rowvar)."""
    if x.ndim > 2:
        raise ValueError(f"{what} has more than 2 dimensions")
    if x.ndim < 2:
        return 1, x.size
    return x.shape if rowvar else x.shape[::-1]


def _cov_meta(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None):
    """(variables, variables), squeezed as NumPy does (one variable: a 0-d array)."""
    m = as_meta(m)
    n, observations = _variables(m, rowvar, "m")
    if y is not None:
        y = as_meta(y)
        k, others = _variables(y, rowvar or y.ndim < 2 or y.shape[0] == 1, "y")  # NumPy keeps a row as a row
        if n and others != observations:
            raise ValueError("all the input array dimensions except for the concatenation axis must match exactly")
        n += k if n else 0
    result = probe_call(np.cov, m, y, rowvar, bias, ddof, fweights, aweights, dtype=dtype)
    if n == 0:  # NumPy returns its empty 0x0 float64 array before anything else
        return ArrayMeta((0, 0), np.dtype(np.float64))
    for name, w in (("fweights", fweights), ("aweights", aweights)):
        if w is not None:
            w = as_meta(w)
            if w.ndim > 1:
                raise RuntimeError(f"cannot handle multidimensional {name}")
            if w.shape[0] != observations:
                raise RuntimeError(f"incompatible numbers of samples and {name}")
    return ArrayMeta(() if n == 1 else (n, n), result.dtype)


register("cov", MATMUL, impl=np.cov, meta=_cov_meta, signature=_cov_sig, numpy=(np.cov,),
         convert={"dtype": params.dtype}, doc="np.cov")


def _corrcoef_sig(x, y=None, rowvar=True, *, dtype=None): ...


def _corrcoef_meta(x, y=None, rowvar=True, *, dtype=None):
    """np.cov's shape (the correlations of the same variables); dtype from np.corrcoef's probe."""
    shape = _cov_meta(x, y, rowvar).shape
    result = probe_call(np.corrcoef, as_meta(x), None if y is None else as_meta(y), rowvar, dtype=dtype)
    return ArrayMeta(shape, result.dtype, scalar=not shape)


register("corrcoef", MATMUL, impl=np.corrcoef, meta=_corrcoef_meta, signature=_corrcoef_sig, numpy=(np.corrcoef,),
         convert={"dtype": params.dtype}, doc="np.corrcoef")


def _average_sig(a, axis=None, weights=None, returned=False, *, keepdims=False): ...


def _average_meta(a, axis=None, weights=None, returned=False, *, keepdims=False):
    """The mean's shape; with returned=True also the sum of the weights (the count without them),
    of the same shape. Dtypes and NumPy's refusals from np.average on probes."""
    a = as_meta(a)
    probes = probe_call(np.average, a, axis, weights, returned, keepdims=keepdims)
    axes = reduced_axes(axis, a.ndim)
    if weights is not None and as_meta(weights).shape not in (a.shape, tuple(a.shape[i] for i in axes)):
        raise ValueError("Shape of weights must be consistent with shape of a along specified axis.")
    shape = reduced_shape(a.shape, axes, keepdims)
    metas = tuple(ArrayMeta(shape, p.dtype, scalar=not shape) for p in (probes if returned else (probes,)))
    return metas if returned else metas[0]


# NumPy raises ZeroDivisionError where the weights sum to zero: a weighted average stays NumPy's call
register("average", REDUCTION, impl=np.average, meta=_average_meta, signature=_average_sig, numpy=(np.average,),
         convert={"axis": params.axis, "returned": bool}, doc="np.average (a weighted mean)")
