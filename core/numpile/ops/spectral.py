"""The discrete Fourier transforms of np.fft (fft, ifft, rfft, irfft and their 2-D and n-D forms),
its fftshift and ifftshift, and np.vdot.

Each is NumPy's own call on the op's buffers (an extern), captured so that a spectral solver's time
loop stays one graph. A transform's length along each axis it takes is `n` (or `s`), else the
array's; rfft keeps n // 2 + 1 of them, irfft makes n (2 * (m - 1) by default). Dtypes are NumPy's
for the input's (a probe of 2 x 2: NumPy 2 transforms float32 in complex64).
"""

from __future__ import annotations

import functools

import numpy as np

from .meta import as_meta, normalize_axis_index
from .registry import LINALG, SHAPE, ArrayMeta, register


@functools.cache
def _dtype(fn, dtype: np.dtype) -> np.dtype:
    return fn(np.ones((2, 2), dtype)).dtype


def _length(n, size, kind: str):
    """The transform's output length along its axis: `n` points taken (the axis' size by default)."""
    if n is not None and (not isinstance(n, int) or n < 1):
        raise ValueError(f"Invalid number of FFT data points ({n}) specified.")
    if kind == "real":     # rfft: the n // 2 + 1 non-negative frequencies
        return (size if n is None else n) // 2 + 1
    if kind == "inverse real":
        return 2 * (size - 1) if n is None else n
    return size if n is None else n


def _one_axis(fn, kind: str):
    def meta(a, n=None, axis=-1, norm=None):
        a = as_meta(a)
        if a.ndim == 0:
            raise ValueError("Invalid number of FFT data points (1) specified.")
        k = normalize_axis_index(axis, a.ndim)
        shape = list(a.shape)
        shape[k] = _length(n, shape[k], kind)
        return ArrayMeta(tuple(shape), _dtype(fn, a.dtype))
    return meta


def _several_axes(fn, kind: str, default_axes):
    def meta(a, s=None, axes=default_axes, norm=None):
        a = as_meta(a)
        if axes is None:
            axes = tuple(range(a.ndim - (len(s) if s is not None else a.ndim), a.ndim))
        if s is not None and len(s) != len(axes):
            raise ValueError("When given, axes and shape arguments have to be of the same length.")
        if not axes or a.ndim == 0:
            raise ValueError("at least 1 axis must be transformed")
        axes = [normalize_axis_index(k, a.ndim) for k in axes]
        shape = list(a.shape)
        for i, k in enumerate(axes):
            last = i == len(axes) - 1
            shape[k] = _length(None if s is None else s[i], shape[k], kind if last else "complex")
        return ArrayMeta(tuple(shape), _dtype(fn, a.dtype))
    return meta


def _one_axis_sig(a, n=None, axis=-1, norm=None): ...   # NumPy 2's out= is not captured
def _two_axes_sig(a, s=None, axes=(-2, -1), norm=None): ...
def _n_axes_sig(a, s=None, axes=None, norm=None): ...


TRANSFORMS = {   # name: (NumPy's function, kind of its last axis' length, default axes: None for one axis)
    "fft": (np.fft.fft, "complex", None), "ifft": (np.fft.ifft, "complex", None),
    "rfft": (np.fft.rfft, "real", None), "irfft": (np.fft.irfft, "inverse real", None),
    "fft2": (np.fft.fft2, "complex", (-2, -1)), "ifft2": (np.fft.ifft2, "complex", (-2, -1)),
    "rfft2": (np.fft.rfft2, "real", (-2, -1)), "irfft2": (np.fft.irfft2, "inverse real", (-2, -1)),
    "fftn": (np.fft.fftn, "complex", ()), "ifftn": (np.fft.ifftn, "complex", ()),
    "rfftn": (np.fft.rfftn, "real", ()), "irfftn": (np.fft.irfftn, "inverse real", ()),
}
for _name, (_fn, _kind, _axes) in TRANSFORMS.items():
    if _axes is None:
        _meta, _sig = _one_axis(_fn, _kind), _one_axis_sig
    else:
        _meta = _several_axes(_fn, _kind, None if _axes == () else _axes)
        _sig = _n_axes_sig if _axes == () else _two_axes_sig
    register(_name, LINALG, impl=_fn, meta=_meta, signature=_sig, numpy=(_fn,), doc=f"np.fft.{_name}")


def _shift_sig(x, axes=None): ...


def _shift_meta(x, axes=None):
    """fftshift / ifftshift: x's elements rolled along axes: its shape and dtype."""
    x = as_meta(x)
    for k in (axes if isinstance(axes, (tuple, list)) else () if axes is None else (axes,)):
        normalize_axis_index(k, x.ndim)
    return ArrayMeta(x.shape, x.dtype, scalar=False)


for _fn in (np.fft.fftshift, np.fft.ifftshift):
    register(_fn.__name__, SHAPE, impl=_fn, meta=_shift_meta, signature=_shift_sig, numpy=(_fn,),
             doc=f"np.fft.{_fn.__name__}")


def _vdot_sig(a, b): ...


def _vdot_meta(a, b):
    """The dot product of a and b flattened, a conjugated: a scalar of their result type."""
    a, b = as_meta(a), as_meta(b)
    if a.size != b.size:
        raise ValueError("vectors have different lengths")
    dtype = np.vdot(np.ones(1, a.dtype), np.ones(1, b.dtype)).dtype
    return ArrayMeta((), dtype, scalar=True)


register("vdot", LINALG, impl=np.vdot, meta=_vdot_meta, signature=_vdot_sig, numpy=(np.vdot,), doc="np.vdot")
