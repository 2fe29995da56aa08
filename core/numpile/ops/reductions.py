"""Reductions over axes: sum, prod, max, min, mean, var, std, argmax, argmin, any, all."""

from __future__ import annotations

import numpy as np

from .registry import REDUCTION, ArrayMeta, register


def normalize_axis(axis, ndim: int) -> tuple[int, ...]:
    """The axes an `axis=` argument names, as non-negative ints; raises like NumPy on a bad axis."""
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, tuple) else (axis,)
    out = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise np.exceptions.AxisError(a, ndim)
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ValueError("duplicate value in 'axis'")
    return tuple(out)


def reduced_shape(shape: tuple, axis, keepdims: bool) -> tuple:
    axes = normalize_axis(axis, len(shape))
    if keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def reduction_meta(fn):
    """Meta of np.<reduction>: the shape from the axes; the dtype as NumPy picks it for
    this input dtype, read off the same reduction of a one-element array."""
    def meta(a, axis=None, dtype=None, keepdims=False):
        shape = reduced_shape(a.shape, axis, keepdims)
        probe = np.ones((1,) * a.ndim, dtype=a.dtype)
        kwargs = {"dtype": dtype} if dtype is not None else {}
        out_dtype = np.asarray(fn(probe, axis=axis, keepdims=keepdims, **kwargs)).dtype
        return ArrayMeta(shape, out_dtype, scalar=not shape and not keepdims)
    return meta


def _sum_sig(a, axis=None, dtype=None, keepdims=False): ...


register("sum", REDUCTION, impl=np.sum, meta=reduction_meta(np.sum), signature=_sum_sig,
         numpy=(np.sum,), methods={"sum": None}, doc="np.sum")
