"""Copies of an array's elements laid out again: np.tile (the whole array, along each axis) and
np.repeat (each element, along one axis); np.triu and np.tril (a triangle kept, the rest zeros);
np.pad (the array with a border of constants, its edges, reflections or wrap-arounds).

Each is a new array in the input's dtype. np.repeat with repeats computed in the graph has a
length only the data knows (an unbacked symbol, as np.nonzero's).
"""

from __future__ import annotations

import numpy as np

from . import params
from ..shapes import unbacked
from .meta import as_meta, normalize_axis_index, probe_call
from .registry import SHAPE, ArrayMeta, register


# -- tile ----------------------------------------------------------------------------------

def _tile_sig(A, reps): ...


def tile_layout(shape: tuple, reps: tuple) -> tuple[tuple, tuple]:
    """(A's shape, reps) as np.tile lines them up: the shorter one given leading 1s."""
    ndim = max(len(shape), len(reps))
    return (1,) * (ndim - len(shape)) + tuple(shape), (1,) * (ndim - len(reps)) + tuple(reps)


def _tile_meta(A, reps):
    a = as_meta(A)
    dtype = probe_call(np.tile, a, reps).dtype  # NumPy's refusal of a negative repetition
    shape, reps = tile_layout(a.shape, reps)
    return ArrayMeta(tuple(d * r for d, r in zip(shape, reps)), dtype)


register("tile", SHAPE, impl=np.tile, meta=_tile_meta, signature=_tile_sig, numpy=(np.tile,),
         convert={"reps": params.shape}, doc="np.tile")


# -- repeat --------------------------------------------------------------------------------

def _repeat_sig(a, repeats, axis=None): ...


def repeat_counts(n: int, repeats) -> np.ndarray | None:
    """How many copies np.repeat makes of each of the n elements along its axis, for repeats given
    as a constant (None for one count, NumPy's errors for counts it refuses)."""
    # NumPy casts an array safely, Python numbers (1.5 too) as int() does
    counts = np.asarray(repeats).astype(np.intp, casting="safe" if isinstance(repeats, np.ndarray) else "unsafe")
    if counts.ndim > 1:
        raise ValueError("object too deep for desired array")
    if counts.size == 1:
        if counts.reshape(()) < 0:
            raise ValueError("negative dimensions are not allowed")
        return None
    if counts.shape != (n,):
        raise ValueError(f"operands could not be broadcast together with shape ({n},) {counts.shape}")
    if (counts < 0).any():
        raise ValueError("repeats may not contain negative values.")
    return counts


def repeat_count(repeats) -> int:
    """The one count of repeats that hold one."""
    return int(np.asarray(repeats).reshape(()).astype(np.intp))


def _repeat_meta(a, repeats, axis=None):
    a = as_meta(a)
    shape = a.shape if a.ndim and axis is not None else (a.size,)   # NumPy repeats a 0-d a as 1-D
    axis = 0 if axis is None else normalize_axis_index(axis, len(shape))
    n = shape[axis]
    if isinstance(repeats, ArrayMeta):
        probe_call(np.repeat, np.ones(1), repeats)   # NumPy's refusal of a dtype it does not cast
        if repeats.ndim > 1:
            raise ValueError("object too deep for desired array")
        length = unbacked("the length of np.repeat's result (the sum of its repeats)")
    else:   # counts given as constants: a symbolic size along the axis is guarded to be their number
        counts = repeat_counts(n, repeats)
        length = n * repeat_count(repeats) if counts is None else int(counts.sum())
    return ArrayMeta(shape[:axis] + (length,) + shape[axis + 1:], a.dtype)


register("repeat", SHAPE, impl=np.repeat, meta=_repeat_meta, signature=_repeat_sig, numpy=(np.repeat,),
         methods={"repeat": None}, convert={"axis": params.axis_index}, doc="np.repeat, x.repeat()")


# -- triu, tril ----------------------------------------------------------------------------

def _triangle_sig(m, k=0): ...


def _triangle_meta(fn):
    def meta(m, k=0):
        m = as_meta(m)
        dtype = probe_call(fn, m, k).dtype   # NumPy's refusal of a 0-d m
        return ArrayMeta(m.shape if m.ndim > 1 else m.shape * 2, dtype)   # a 1-D m: its rows stacked
    return meta


for _fn in (np.triu, np.tril):
    register(_fn.__name__, SHAPE, impl=_fn, meta=_triangle_meta(_fn), signature=_triangle_sig, numpy=(_fn,),
             convert={"k": params.integer}, doc=f"np.{_fn.__name__}")


# -- pad -------------------------------------------------------------------------------------

def _pad_sig(array, pad_width, mode="constant", options=()): ...


def _pad_call(array, pad_width, mode="constant", **kwargs):
    """np.pad's keywords of its mode (constant_values=, stat_length=, ...) as one canonical
    `options`, the pairs given in order of their names (NumPy refuses those of other modes)."""
    return (array, pad_width), {"mode": mode, "options": tuple(sorted(kwargs.items()))}


def _pad(array, pad_width, mode="constant", options=()):
    return np.pad(array, pad_width, mode, **dict(options))


def _pad_meta(array, pad_width, mode="constant", options=()):
    """Each dim widened by its (before, after) widths; NumPy's call on a probe checks the widths'
    form, the mode and its keywords. A mode given as a function stays NumPy's (a break)."""
    a = as_meta(array)
    if callable(mode):
        raise NotImplementedError("np.pad with a function as mode is not supported")
    widths = np.broadcast_to(np.asarray(pad_width, dtype=object), (a.ndim, 2)) if a.ndim else ()
    if any(not isinstance(w, int) or w < 0 for pair in widths for w in pair):
        raise ValueError("index can't contain negative values")
    _pad(np.ones((3,) * a.ndim, a.dtype), pad_width, mode, options)
    return ArrayMeta(tuple(d + before + after for d, (before, after) in zip(a.shape, widths)), a.dtype)


register("pad", SHAPE, impl=_pad, meta=_pad_meta, signature=_pad_sig, numpy=(np.pad,), adapter=_pad_call, doc="np.pad")
