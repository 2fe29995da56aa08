"""Inputs that are views of other inputs.

When a frame gets an array and a view of it (a resume frame gets `x` and the row `v = x[i]` that
was live at the break), an update through one must show through the other. The tracer then makes
the view from its base inside the graph, `v = x[index]`, and guards that the caller's `v` is still
exactly that view. `view_index` finds the index; `is_view` is the guard's check.
"""

from __future__ import annotations

import itertools

import numpy as np


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def is_view(v, base, index) -> bool:
    """Whether `v` is exactly `base[index]`: an ndarray of the same dtype, memory, shape and strides."""
    if type(v) is not np.ndarray or type(base) is not np.ndarray:
        return False
    try:
        w = base[index]
    except (IndexError, TypeError, ValueError):
        return False
    return (v.dtype == w.dtype and v.shape == w.shape and v.strides == w.strides
            and _address(v) == _address(w))


def view_index(v: np.ndarray, base: np.ndarray) -> tuple | None:
    """A basic index (integers and slices) with `base[index]` exactly `v`, or None. The search covers
    bases with positive strides (C-ordered or sliced from one) and views that keep some of the base's
    dims in order, each with any step: rows, columns, slices, reversals."""
    if v.dtype != base.dtype or v.ndim > base.ndim or v.size == 0 or min(base.strides, default=1) <= 0:
        return None
    offset = _address(v) - _address(base)
    if offset < 0:
        return None
    for kept in itertools.combinations(range(base.ndim), v.ndim):
        index, rest = [], offset
        for i, stride in enumerate(base.strides):
            start, rest = divmod(rest, stride)
            if i not in kept:
                index.append(start)
                continue
            j = kept.index(i)
            step = 1 if v.shape[j] == 1 else v.strides[j] // stride
            if step == 0 or step * stride != v.strides[j] and v.shape[j] != 1:
                break
            stop = start + v.shape[j] * step
            index.append(slice(start, stop if stop >= 0 else None, step))
        else:
            if rest == 0 and is_view(v, base, tuple(index)):
                return tuple(index)
    return None
