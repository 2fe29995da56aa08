"""Orderings and order statistics: np.sort, np.argsort, np.partition, np.argpartition,
np.searchsorted, np.take_along_axis (gathers at the positions they give), np.median, np.percentile,
np.quantile.

Each is NumPy's own call on the op's buffers (an extern on every backend) captured at its own
level, so that a loop or a function using one stays one graph: `for row in d: idx = np.argsort(row)[:k]`
was a graph break per iteration. Shapes follow from the operands; dtypes and NumPy's refusals
(a bad axis, an unknown kind or method) from probes. `ndarray.sort()` sorts in place and stays
Python's.
"""

from __future__ import annotations

import math

import numpy as np

from . import params
from .meta import as_meta, broadcast_shapes, normalize_axis_index, probe_call
from .reductions import reduced_axes, reduced_shape, reduction_meta
from .registry import INDEXING, REDUCTION, SHAPE, ArrayMeta, register


def _sort_sig(a, axis=-1, kind=None, order=None, *, stable=None): ...


def _sorted_meta(fn):
    """np.sort's or np.argsort's meta: the operand's shape (flattened with axis=None)."""
    def meta(a, axis=-1, kind=None, order=None, *, stable=None):
        a = as_meta(a)
        if order is not None:
            raise NotImplementedError(f"{fn.__name__} with order= (structured arrays) is not supported")
        result = probe_call(fn, a, axis, kind, stable=stable)
        if axis is None:
            return ArrayMeta((math.prod(a.shape),), result.dtype)
        if a.ndim:
            normalize_axis_index(axis, a.ndim)
        return ArrayMeta(a.shape, result.dtype)
    return meta


register("sort", SHAPE, impl=np.sort, meta=_sorted_meta(np.sort), signature=_sort_sig, numpy=(np.sort,),
         convert={"axis": params.axis}, doc="np.sort (ndarray.sort sorts in place: Python's)")
register("argsort", SHAPE, impl=np.argsort, meta=_sorted_meta(np.argsort), signature=_sort_sig, numpy=(np.argsort,),
         methods={"argsort": None}, convert={"axis": params.axis}, doc="np.argsort, ndarray.argsort")


def _searchsorted_sig(a, v, side="left", sorter=None): ...


def _searchsorted_meta(a, v, side="left", sorter=None):
    """An index (intp) per element of v, of v's shape."""
    a, v = as_meta(a), as_meta(v)
    if a.ndim != 1:
        raise ValueError("object too deep for desired array")
    result = probe_call(np.searchsorted, a, v, side, None if sorter is None else as_meta(sorter))
    return ArrayMeta(v.shape, result.dtype, scalar=not v.shape)


register("searchsorted", INDEXING, impl=np.searchsorted, meta=_searchsorted_meta, signature=_searchsorted_sig,
         numpy=(np.searchsorted,), methods={"searchsorted": None}, doc="np.searchsorted, ndarray.searchsorted")


def _median_sig(a, axis=None, out=None, overwrite_input=False, keepdims=False): ...


register("median", REDUCTION, impl=np.median, meta=reduction_meta(np.median, None), signature=_median_sig, numpy=(np.median,),
         convert={"axis": params.axis, "keepdims": bool}, doc="np.median")


def _quantile_sig(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *, weights=None): ...


def _quantile_meta(fn):
    """np.percentile's or np.quantile's meta: q's shape, then the reduced shape."""
    def meta(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *, weights=None):
        a = as_meta(a)
        if out is not None or overwrite_input or weights is not None:
            raise NotImplementedError(f"np.{fn.__name__} with out=, overwrite_input=True or weights= is not supported")
        result = probe_call(fn, a, q, axis, method=method, keepdims=keepdims)   # a Python float q is weak
        shape = tuple(as_meta(q).shape) + reduced_shape(a.shape, reduced_axes(axis, a.ndim), keepdims)
        return ArrayMeta(shape, result.dtype, scalar=not shape)
    return meta


for _fn in (np.percentile, np.quantile):
    register(_fn.__name__, REDUCTION, impl=_fn, meta=_quantile_meta(_fn), signature=_quantile_sig, numpy=(_fn,),
             convert={"axis": params.axis, "keepdims": bool}, doc=f"np.{_fn.__name__}")


def _partition_sig(a, kth, axis=-1, kind="introselect", order=None): ...


def _partitioned_meta(fn):
    """np.partition's or np.argpartition's meta: the operand's shape (flattened with axis=None)."""
    def meta(a, kth, axis=-1, kind="introselect", order=None):
        a = as_meta(a)
        if order is not None:
            raise NotImplementedError(f"{fn.__name__} with order= (structured arrays) is not supported")
        length = math.prod(a.shape) if axis is None else a.shape[normalize_axis_index(axis, a.ndim)] if a.ndim else 1
        kths = np.asarray(kth)
        if kths.dtype.kind not in "iu" or isinstance(length, int) and (kths.size and (kths.max() >= length or kths.min() < -length)):
            raise ValueError(f"kth(={kth}) out of bounds ({length})")
        result = probe_call(fn, a, 0, axis, kind)
        return ArrayMeta((length,) if axis is None else a.shape, result.dtype)
    return meta


register("partition", SHAPE, impl=np.partition, meta=_partitioned_meta(np.partition), signature=_partition_sig,
         numpy=(np.partition,), convert={"axis": params.axis}, doc="np.partition (kth constant)")
register("argpartition", SHAPE, impl=np.argpartition, meta=_partitioned_meta(np.argpartition), signature=_partition_sig,
         numpy=(np.argpartition,), methods={"argpartition": None}, convert={"axis": params.axis},
         doc="np.argpartition, ndarray.argpartition (kth constant)")


def _take_along_axis_sig(arr, indices, axis=-1): ...


def _take_along_axis_meta(arr, indices, axis=-1):
    """indices' shape along `axis`, the broadcast of both elsewhere (NumPy's rule); arr's dtype."""
    arr, indices = as_meta(arr), as_meta(indices)
    if indices.dtype.kind not in "iu":
        raise IndexError("`indices` must be an integer array")
    if axis is None:
        return ArrayMeta(indices.shape, arr.dtype)
    if arr.ndim != indices.ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    axis = normalize_axis_index(axis, arr.ndim)
    others = broadcast_shapes(tuple(1 if i == axis else d for i, d in enumerate(arr.shape)),
                              tuple(1 if i == axis else d for i, d in enumerate(indices.shape)))
    return ArrayMeta(tuple(indices.shape[i] if i == axis else d for i, d in enumerate(others)), arr.dtype)


register("take_along_axis", INDEXING, impl=np.take_along_axis, meta=_take_along_axis_meta,
         signature=_take_along_axis_sig, numpy=(np.take_along_axis,), doc="np.take_along_axis")
