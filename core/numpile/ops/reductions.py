"""Reductions over axes: sum, prod, max, min, mean, var, std, argmax, argmin, any, all.

mean, var and std are composites, captured at their own level (lowering decomposes them
for backends that want primitives). Canonical signatures stop before NumPy's `out`
parameter: what follows it is keyword-only, so a positional `out` is refused rather than
bound to the wrong parameter. `initial=` and `where=` are not captured.
"""

from __future__ import annotations

import numpy as np

from . import params
from .meta import as_meta, normalize_axis_index, normalize_axis_tuple, probe_call
from .registry import REDUCTION, ArrayMeta, register


def _with_dtype(a, axis=None, dtype=None, *, keepdims=False): ...
def _plain(a, axis=None, *, keepdims=False): ...
def _with_ddof(a, axis=None, dtype=None, *, ddof=0, keepdims=False): ...


_EMPTY_MAX = "zero-size array to reduction operation {} which has no identity"
_EMPTY_ARG = "attempt to get {} of an empty sequence"
_AXIS = {"axis": params.axis}
_AXIS_DTYPE = {"axis": params.axis, "dtype": params.dtype}
_AXIS_INDEX = {"axis": params.axis_index}

# name: (NumPy functions, ndarray method, signature, parameter spellings,
#        NumPy's message for reducing zero elements where the op has no identity)
REDUCTIONS = {
    "sum": ((np.sum,), "sum", _with_dtype, _AXIS_DTYPE, None),
    "prod": ((np.prod,), "prod", _with_dtype, _AXIS_DTYPE, None),
    "max": ((np.max, np.amax), "max", _plain, _AXIS, _EMPTY_MAX.format("maximum")),
    "min": ((np.min, np.amin), "min", _plain, _AXIS, _EMPTY_MAX.format("minimum")),
    "mean": ((np.mean,), "mean", _with_dtype, _AXIS_DTYPE, None),
    "var": ((np.var,), "var", _with_ddof, _AXIS_DTYPE, None),
    "std": ((np.std,), "std", _with_ddof, _AXIS_DTYPE, None),
    "argmax": ((np.argmax,), "argmax", _plain, _AXIS_INDEX, _EMPTY_ARG.format("argmax")),
    "argmin": ((np.argmin,), "argmin", _plain, _AXIS_INDEX, _EMPTY_ARG.format("argmin")),
    "any": ((np.any,), "any", _plain, _AXIS, None),
    "all": ((np.all,), "all", _plain, _AXIS, None),
}


def reduced_axes(axis, ndim: int) -> tuple[int, ...]:
    """The non-negative axes an `axis=` names (None: all); AxisError/ValueError as NumPy.
    A 0-d array has none, though NumPy's reductions take an int axis 0 or -1 for it (the
    probe has already raised where NumPy would: mean/var/std, axis tuples)."""
    if axis is None or ndim == 0:
        return tuple(range(ndim))
    if isinstance(axis, tuple):
        return normalize_axis_tuple(axis, ndim)
    return (normalize_axis_index(axis, ndim),)


def reduction_meta(fn, empty_error: str | None):
    """Meta of np.<reduction>: the shape from the axes and keepdims, the dtype as NumPy picks
    it for this input (the same reduction of a probe, which also raises NumPy's errors for
    a bad axis or dtype). A 0-d result is a NumPy scalar, with keepdims too. An `out=` array or
    `overwrite_input=True` (NumPy's leave to scribble on the input) is refused: a break."""
    def meta(a, axis=None, *, keepdims=False, **params):
        a = as_meta(a)
        if params.get("out") is not None or params.get("overwrite_input"):
            raise NotImplementedError(f"np.{fn.__name__} with out= or overwrite_input=True is not supported")
        dtype = np.asarray(probe_call(fn, a, axis=axis, keepdims=keepdims, **params)).dtype
        axes = reduced_axes(axis, a.ndim)
        if empty_error and 0 in (a.shape[i] for i in axes):
            raise ValueError(empty_error)
        shape = reduced_shape(a.shape, axes, keepdims)
        return ArrayMeta(shape, dtype, scalar=not shape)
    return meta


def reduced_shape(shape: tuple, axes: tuple, keepdims: bool) -> tuple:
    """The shape of a reduction over `axes`: each reduced dim 1 with keepdims, else gone."""
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


for _name, (_fns, _method, _sig, _convert, _empty) in REDUCTIONS.items():
    register(_name, REDUCTION, impl=_fns[0], meta=reduction_meta(_fns[0], _empty), signature=_sig,
             numpy=_fns, methods={_method: None}, convert=_convert, doc=f"np.{_name}")
