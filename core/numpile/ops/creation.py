"""Array creation: zeros, ones, full, empty, arange, linspace, eye, identity, indices, the *_like
functions, the np.ndarray constructor and np.mgrid[...]. Their sizes come from constants (a Python int, a shape tuple), never
from data: array-valued arange bounds are refused, as the length would depend on data.
"""

from __future__ import annotations

import math

import numpy as np

from ..shapes import SymInt, sym_max
from . import params
from .meta import as_meta, broadcast_shapes, normalize_axis_index, probe_call, shape_of
from .registry import CREATION, ArrayMeta, register

_FLOAT64 = params.dtype_or(np.float64)  # NumPy's default dtype of zeros, ones, empty, eye, identity


def _check_dims(shape: tuple) -> tuple:
    if any(d < 0 for d in shape):
        raise ValueError("negative dimensions are not allowed")
    return shape


def _check_fill(fill_value, shape: tuple) -> None:
    """A fill value must broadcast to the result's shape, as np.copyto requires."""
    f = as_meta(fill_value)
    if f.ndim > len(shape) or broadcast_shapes(f.shape, shape) != shape:
        raise ValueError(f"could not broadcast input array from shape {f.shape} into shape {shape}")


def _fill_sample(fill_value):
    """One element standing for a fill value: a Python scalar as it is (weak, and checked
    against the dtype: 300 does not fit int8), an array as one element of its dtype."""
    if isinstance(fill_value, ArrayMeta):
        return np.ones(1, fill_value.dtype)
    if np.ndim(fill_value) == 0:
        return fill_value
    return np.asarray(fill_value).reshape(-1)[:1]


# -- zeros, ones, empty, full --------------------------------------------------------------

def _filled_sig(shape, dtype=None): ...


def _filled_meta(shape, dtype):
    return ArrayMeta(_check_dims(shape), dtype)


for _fn in (np.zeros, np.ones, np.empty):
    register(_fn.__name__, CREATION, impl=_fn, meta=_filled_meta, signature=_filled_sig, numpy=(_fn,),
             convert={"shape": params.shape, "dtype": _FLOAT64}, doc=f"np.{_fn.__name__}")


def _full_sig(shape, fill_value, dtype=None): ...


def _full_meta(shape, fill_value, dtype=None):
    _check_dims(shape)
    _check_fill(fill_value, shape)
    return ArrayMeta(shape, probe_call(np.full, 1, _fill_sample(fill_value), dtype=dtype).dtype)


register("full", CREATION, impl=np.full, meta=_full_meta, signature=_full_sig, numpy=(np.full,),
         convert={"shape": params.shape, "dtype": params.dtype}, doc="np.full")


# -- zeros_like, ones_like, empty_like, full_like ------------------------------------------
# The result is always an ndarray (of a NumPy scalar too); dtype and shape default to a's.

def _like_sig(a, dtype=None, *, shape=None): ...
def _empty_like_sig(prototype, /, dtype=None, *, shape=None): ...


def _like_meta(a, dtype=None, *, shape=None):
    a = as_meta(a)
    return ArrayMeta(_check_dims(a.shape if shape is None else shape), a.dtype if dtype is None else dtype)


_LIKE_CONVERT = {"dtype": params.dtype, "shape": params.optional(params.shape)}
for _fn, _sig in ((np.zeros_like, _like_sig), (np.ones_like, _like_sig), (np.empty_like, _empty_like_sig)):
    register(_fn.__name__, CREATION, impl=_fn, meta=_like_meta, signature=_sig, numpy=(_fn,),
             convert=_LIKE_CONVERT, doc=f"np.{_fn.__name__}")


def _full_like_sig(a, fill_value, dtype=None, *, shape=None): ...


def _full_like_meta(a, fill_value, dtype=None, *, shape=None):
    a = as_meta(a)
    shape = _check_dims(a.shape if shape is None else shape)
    _check_fill(fill_value, shape)
    dtype = probe_call(np.full_like, np.ones(1, a.dtype), _fill_sample(fill_value), dtype=dtype).dtype
    return ArrayMeta(shape, dtype)


register("full_like", CREATION, impl=np.full_like, meta=_full_like_meta, signature=_full_like_sig,
         numpy=(np.full_like,), convert=_LIKE_CONVERT, doc="np.full_like")


# -- arange, linspace ----------------------------------------------------------------------

def _arange_sig(start_or_stop, /, stop=None, step=1, *, dtype=None): ...


def _arange_meta(start_or_stop, stop=None, step=1, *, dtype=None):
    bounds = [b for b in (start_or_stop, stop, step) if b is not None]
    if any(isinstance(b, ArrayMeta) for b in bounds):
        raise NotImplementedError("array-valued start/stop/step are not supported (the length would depend on data)")
    if any(isinstance(b, (complex, np.complexfloating)) for b in bounds):
        raise NotImplementedError("complex start/stop/step are not supported")
    start, stop = (0, start_or_stop) if stop is None else (start_or_stop, stop)
    step = 1 if step is None else step
    if step == 0:
        raise ZeroDivisionError("division by zero")
    # NumPy: the length is ceil((stop - start) / step) in the bounds' own arithmetic; the dtype,
    # unless given, promotes the bounds' dtypes with intp (so float32 bounds give float64)
    if any(isinstance(b, SymInt) for b in (start, stop, step)) and \
            all(isinstance(b, (int, np.integer, SymInt)) for b in (start, stop, step)):
        # a symbolic size (np.arange(len(x))) is a Python int: the length in integers, no decision
        length = sym_max(stop - start if step == 1 else -((start - stop) // step), 0)
    else:
        length = max(math.ceil((stop - start) / step), 0)
    if dtype is None:
        dtype = np.result_type(np.intp, *(np.asarray(0 if isinstance(b, SymInt) else b).dtype for b in bounds))
    return ArrayMeta((length,), dtype)


register("arange", CREATION, impl=np.arange, meta=_arange_meta, signature=_arange_sig, numpy=(np.arange,),
         convert={"dtype": params.dtype}, doc="np.arange")


def _linspace_sig(start, stop, num=50, endpoint=True, *, dtype=None, axis=0): ...


def _linspace_meta(start, stop, num=50, endpoint=True, *, dtype=None, axis=0):
    # the dtype and NumPy's refusals (a negative num, a bad axis) from a linspace of at most 2 samples
    dtype = probe_call(np.linspace, start, stop, min(num, 2), endpoint, dtype=dtype, axis=axis).dtype
    shape = broadcast_shapes(shape_of(start), shape_of(stop))
    axis = normalize_axis_index(axis, len(shape) + 1)
    return ArrayMeta(shape[:axis] + (num,) + shape[axis:], dtype)


register("linspace", CREATION, impl=np.linspace, meta=_linspace_meta, signature=_linspace_sig,
         numpy=(np.linspace,), convert={"num": params.integer, "dtype": params.dtype, "axis": params.integer},
         doc="np.linspace")


# -- window functions: M samples of float64 (QuantEcon's smooth, `np.hanning(window_len)`) ----------
WINDOWS = (np.bartlett, np.blackman, np.hamming, np.hanning)


def _window_sig(M): ...


def _window_meta(M):
    return ArrayMeta((max(M, 0),), np.dtype(np.float64))


for _window in WINDOWS:
    register(_window.__name__, CREATION, impl=_window, meta=_window_meta, signature=_window_sig, numpy=(_window,),
             convert={"M": params.integer}, doc=f"np.{_window.__name__}: the window's M samples")


# -- eye, identity -------------------------------------------------------------------------

def _eye_sig(N, M=None, k=0, dtype=None): ...


def _eye_meta(N, M=None, k=0, dtype=None):
    return ArrayMeta(_check_dims((N, N if M is None else M)), dtype)


register("eye", CREATION, impl=np.eye, meta=_eye_meta, signature=_eye_sig, numpy=(np.eye,),
         convert={"N": params.integer, "M": params.optional(params.integer), "k": params.integer,
                  "dtype": _FLOAT64},
         doc="np.eye")


def _identity_sig(n, dtype=None): ...


def _identity_meta(n, dtype=None):
    return ArrayMeta(_check_dims((n, n)), dtype)


register("identity", CREATION, impl=np.identity, meta=_identity_meta, signature=_identity_sig,
         numpy=(np.identity,), convert={"n": params.integer, "dtype": _FLOAT64}, doc="np.identity")


# -- indices -------------------------------------------------------------------------------

def _indices_sig(dimensions, dtype=int, sparse=False): ...


def _dimensions(value) -> tuple:
    """np.indices' dimensions: a sequence of ints (NumPy takes the len() of an int alone)."""
    if not isinstance(value, (tuple, list)):
        raise TypeError(f"object of type '{type(value).__name__}' has no len()")
    return params.shape(value)


def _indices_meta(dimensions, dtype=int, sparse=False):
    """One grid per dim, counting along its own axis: stacked into one array, or if sparse a tuple
    of arrays of 1s but along that axis (an op with several results)."""
    # NumPy's dtypes (dtype=None: float64 stacked, the arange's if sparse) and its refusals (negative
    # dims, a bool dtype counting past 1), from a grid of at most 3 per dim
    probes = probe_call(np.indices, tuple(min(d, 3) if isinstance(d, int) else 1 for d in dimensions), dtype, sparse)
    if sparse:
        return tuple(ArrayMeta(tuple(d if k == i else 1 for k in range(len(dimensions))), p.dtype)
                     for i, (d, p) in enumerate(zip(dimensions, probes)))
    return ArrayMeta((len(dimensions), *dimensions), probes.dtype)


register("indices", CREATION, impl=np.indices, meta=_indices_meta, signature=_indices_sig, numpy=(np.indices,),
         convert={"dimensions": _dimensions, "dtype": params.dtype}, doc="np.indices: a tuple of arrays if sparse")


# -- np.ndarray(shape, dtype), np.mgrid[...] -------------------------------------------------

def _ndarray_sig(shape, dtype=None, buffer=None, offset=0, strides=None, order=None): ...


def _ndarray_meta(shape, dtype=None, buffer=None, offset=0, strides=None, order=None):
    if buffer is not None or strides is not None:
        raise NotImplementedError("buffer= and strides= (an array over existing memory) are not supported")
    return ArrayMeta(_check_dims(shape), dtype)


# The constructor makes an uninitialised array, as np.empty does.
register("ndarray", CREATION, impl=np.ndarray, meta=_ndarray_meta, signature=_ndarray_sig, numpy=(np.ndarray,),
         convert={"shape": params.shape, "dtype": _FLOAT64}, doc="np.ndarray(shape, dtype)")


def _mgrid_sig(key): ...


def _mgrid_bounds(s: slice) -> tuple:
    """(start, stop, step, length) of one slice of an mgrid key, as nd_grid reads it: a complex
    step is a number of points (stop included)."""
    if any(isinstance(b, ArrayMeta) for b in (s.start, s.stop, s.step)):
        raise NotImplementedError("array-valued slice bounds are not supported (the length would depend on data)")
    start = 0 if s.start is None else s.start
    step = 1 if s.step is None else s.step
    if isinstance(step, (complex, np.complexfloating)):
        return start, s.stop, abs(step), int(abs(step))
    if all(isinstance(b, (int, np.integer, SymInt)) for b in (start, s.stop, step)):   # a size may be symbolic
        return start, s.stop, step, s.stop - start if step == 1 else -((start - s.stop) // step)
    return start, s.stop, step, math.ceil((s.stop - start) / step)


def _mgrid_meta(key):
    if isinstance(key, slice):  # one slice: the values of an arange (or linspace for a complex step)
        start, stop, step, length = _mgrid_bounds(key)
        if not isinstance(key.step, (complex, np.complexfloating)):
            return _arange_meta(start, stop, step)
        spacing = (stop - start) / float(length - 1) if length != 1 else 1
        dtype = probe_call(lambda: np.arange(0, 1, 1, dtype=np.result_type(start, stop, step)) * spacing + start).dtype
        return ArrayMeta((length,), dtype)
    if not isinstance(key, tuple) or not all(isinstance(s, slice) for s in key):
        raise NotImplementedError("np.mgrid takes slices")
    bounds = [_mgrid_bounds(s) for s in key]
    # the grid is np.indices of the lengths in the dtype of every bound (0 among them), filled in place
    numbers = (0 if isinstance(b, SymInt) else b for start, stop, step, _ in bounds for b in (start, stop, step))
    dtype = np.result_type(0, *numbers)   # a symbolic size is a Python int
    return ArrayMeta((len(key), *_check_dims(tuple(length for *_, length in bounds))), dtype)


register("mgrid", CREATION, impl=np.mgrid.__getitem__, meta=_mgrid_meta, signature=_mgrid_sig,
         numpy=(np.mgrid.__getitem__,), doc="np.mgrid[start:stop:step, ...]")
