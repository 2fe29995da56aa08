"""Ops whose result size only the data knows: np.nonzero (and a[mask], which the tracer reads as
a[mask.nonzero()]), np.flatnonzero, np.argwhere, np.bincount, np.unique.

Each result size is an unbacked symbol (shapes.unbacked): the meta rule names it, the node that
computes it binds it when the graph runs, and later ops compute with it as with any size. The
several results of one call (nonzero's index arrays, unique's values and counts) share one
symbol, so they broadcast together without asking the data. Dtypes and NumPy's refusals (a 0-d
nonzero, a float bincount) come from the NumPy function on probes.
"""

from __future__ import annotations

import numpy as np

from ..shapes import unbacked
from .meta import as_meta, probe_call
from .registry import INDEXING, REDUCTION, SHAPE, ArrayMeta, register


def _nonzero_sig(a): ...


def _nonzero_meta(a):
    a = as_meta(a)
    (index,) = probe_call(np.nonzero, np.ones(1, a.dtype)) if a.ndim else probe_call(np.nonzero, a)
    count = unbacked("the number of nonzero elements np.nonzero finds")
    return tuple(ArrayMeta((count,), index.dtype) for _ in range(a.ndim))


register("nonzero", INDEXING, impl=np.nonzero, meta=_nonzero_meta, signature=_nonzero_sig,
         numpy=(np.nonzero,), methods={"nonzero": None}, doc="np.nonzero: an index array per dim")


def _flatnonzero_meta(a):
    a = as_meta(a)
    return ArrayMeta((unbacked("the number of nonzero elements np.flatnonzero finds"),), np.dtype(np.intp))


register("flatnonzero", INDEXING, impl=np.flatnonzero, meta=_flatnonzero_meta, signature=_nonzero_sig,
         numpy=(np.flatnonzero,), doc="np.flatnonzero: the flat indices of the nonzero elements")


def _argwhere_meta(a):
    a = as_meta(a)
    return ArrayMeta((unbacked("the number of nonzero elements np.argwhere finds"), a.ndim), np.dtype(np.intp))


register("argwhere", INDEXING, impl=np.argwhere, meta=_argwhere_meta, signature=_nonzero_sig,
         numpy=(np.argwhere,), doc="np.argwhere: one row of indices per nonzero element")


def _bincount_sig(x, weights=None, minlength=0): ...


def _bincount_meta(x, weights=None, minlength=0):
    x = as_meta(x)
    if x.ndim != 1:
        raise ValueError("object too deep for desired array" if x.ndim > 1 else "object of too small depth for desired array")
    if weights is not None and as_meta(weights).shape != x.shape:
        raise ValueError("The weights and list don't have the same length.")
    counts = probe_call(np.bincount, x, weights, minlength)
    return ArrayMeta((unbacked("the length of np.bincount's result (the largest value + 1)"),), counts.dtype)


register("bincount", REDUCTION, impl=np.bincount, meta=_bincount_meta, signature=_bincount_sig,
         numpy=(np.bincount,), doc="np.bincount: the count (or weight sum) of each value")


def _unique_sig(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *, equal_nan=True): ...


def _unique_meta(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *, equal_nan=True):
    ar = as_meta(ar)
    if axis is not None:
        raise NotImplementedError("np.unique with axis= (unique rows or columns) is not supported")
    flags = (return_index, return_inverse, return_counts)
    if not all(isinstance(f, bool) for f in flags):
        raise NotImplementedError("np.unique's return_* flags must be Python bools")
    probes = probe_call(np.unique, ar, *flags, None, equal_nan=equal_nan)
    if not any(flags):
        probes = (probes,)
    count = unbacked("the number of distinct values np.unique finds")
    shapes = [(count,)]
    for flag, shape in zip(flags, [(count,), ar.shape, (count,)]):
        if flag:
            shapes.append(shape)
    metas = tuple(ArrayMeta(shape, p.dtype) for shape, p in zip(shapes, probes))
    return metas if any(flags) else metas[0]


register("unique", SHAPE, impl=np.unique, meta=_unique_meta, signature=_unique_sig, numpy=(np.unique,),
         doc="np.unique: the sorted distinct values (and, as asked, first indices, inverse, counts)")
