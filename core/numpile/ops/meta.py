"""What meta rules share: operands as metas or stand-ins, broadcasting, axes.

Meta rules see `ArrayMeta` for array operands and plain constants for the rest. Where
NumPy's result dtype (or its refusal of a call) is simpler to ask NumPy than to restate,
a rule calls the NumPy function on probes: one-element arrays with the operands' dtypes
and ndims, constants passed through unchanged so that NEP 50 weak Python scalars stay
weak and out-of-range Python ints raise as they do on real data. No rule touches or
allocates anything the size of its inputs.
"""

from __future__ import annotations

import warnings

import numpy as np
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

from ..shapes import SymInt, identical, is_unbacked, loop_dependent
from .registry import ArrayMeta

__all__ = ["probe", "probe_call", "as_meta", "shape_of", "broadcast_shapes",
           "normalize_axis_index", "normalize_axis_tuple"]


def probe(x):
    """A one-element stand-in for an array operand; constants stay as they are, a symbolic size
    is its value in this call, or 1 where only the data knows it (a Python int: its dtype does not
    depend on the value)."""
    if isinstance(x, ArrayMeta):
        return x.python_type(1) if x.weak else np.ones((1,) * x.ndim, dtype=x.dtype)
    return _constant(x)


def probe_call(fn, *args, **kwargs):
    """fn on the probes of its arguments, quietly: the warnings of computing on ones
    (log(1), var with ddof=1 of one element) mean nothing."""
    args = tuple(map(probe, args))
    kwargs = {k: probe(v) for k, v in kwargs.items()}
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return fn(*args, **kwargs)


def as_meta(x) -> ArrayMeta:
    """The meta of an operand that NumPy converts with np.asarray (a list, a Python or NumPy scalar)."""
    if isinstance(x, ArrayMeta):
        return x
    x = _constant(x)
    return ArrayMeta.of(x if isinstance(x, (np.ndarray, np.generic)) else np.asarray(x))


def _constant(x):
    """A constant operand. A list or tuple holding arrays is one that NumPy would stack into
    an array: no row captures that (np.asarray would make an object array of metas)."""
    if isinstance(x, (list, tuple)) and _holds_array(x):
        raise NotImplementedError("a list or tuple of arrays as one operand (NumPy stacks it) is not supported")
    return _sizes_as_ints(x)


def _sizes_as_ints(x):
    """A constant with its symbolic sizes (`[len(values)]` after a length changed) as the Python
    ints they stand for, so that NumPy types it as it types them (int64, not object)."""
    if isinstance(x, SymInt):
        return 1 if x.hint is None else x.hint
    if isinstance(x, list):
        return [_sizes_as_ints(v) for v in x]
    return tuple(map(_sizes_as_ints, x)) if type(x) is tuple else x


def _holds_array(x) -> bool:
    return isinstance(x, ArrayMeta) or isinstance(x, (list, tuple)) and any(map(_holds_array, x))


def shape_of(x) -> tuple:
    return x.shape if isinstance(x, ArrayMeta) else np.shape(_constant(x))


def broadcast_shapes(*shapes: tuple) -> tuple:
    """np.broadcast_shapes in plain arithmetic (no arrays made, dims may be symbolic: every
    comparison is one NumPy makes); ValueError on a mismatch as NumPy."""
    ndim = max(map(len, shapes), default=0)
    out = []
    for i in range(-ndim, 0):
        dims = [s[i] for s in shapes if len(s) >= -i and not (type(s[i]) is int and s[i] == 1)]
        if any(is_unbacked(d) or loop_dependent(d) for d in dims) and all(identical(d, dims[0]) for d in dims):
            out.append(dims[0])  # a size only the data (or a loop's index) knows, against itself or 1: it, whatever it is
            continue
        dim = None
        for s in shapes:
            if len(s) < -i or s[i] == 1:
                continue
            if dim is None:
                dim = s[i]
            elif s[i] != dim:
                raise ValueError("shape mismatch: objects cannot be broadcast to a single shape: "
                                 + " ".join(str(tuple(s)) for s in shapes))
        out.append(1 if dim is None else dim)
    return tuple(out)
