"""Canonical spellings of parameter values: the `convert` hooks of registry rows.

Each takes what a user passed and returns the one spelling backends see, or raises
TypeError where the value is not one NumPy takes for that parameter (the tracer then
leaves the call to NumPy, which raises the real error).
"""

from __future__ import annotations

import operator

import numpy as np

from ..shapes import SymInt


def optional(convert):
    """A parameter whose None means "NumPy decides": None stays None, anything else is converted."""
    return lambda value: None if value is None else convert(value)


dtype = optional(np.dtype)               # dtype= whose None defers to the operands (np.sum, np.full)
integer = operator.index                 # a count or an axis: a Python int
axis_index = optional(operator.index)    # axis= that names one axis or none (argmax, concatenate)


def dtype_or(default):
    """dtype= of a function whose None means a fixed dtype (np.zeros: float64): that dtype."""
    default = np.dtype(default)
    return lambda value: default if value is None else np.dtype(value)


def shape(value) -> tuple:
    """A shape: an int or a sequence of ints, as a tuple of Python ints (symbolic dims stay symbolic)."""
    if isinstance(value, (tuple, list)):
        return tuple(_dim(d) for d in value)
    return (_dim(value),)


def _dim(d):
    return d if isinstance(d, SymInt) else operator.index(d)


def axis(value):
    """axis= of reductions and squeeze: None, an int or a tuple of ints (NumPy refuses lists)."""
    if value is None:
        return None
    if isinstance(value, tuple):
        return tuple(operator.index(a) for a in value)
    return operator.index(value)


def axes(value):
    """Axes given as an int or any sequence (transpose, moveaxis, expand_dims; roll's shifts too):
    int, tuple or None."""
    if value is None:
        return None
    if isinstance(value, (tuple, list)):
        return tuple(operator.index(a) for a in value)
    return operator.index(value)


def sequence(value):
    """A sequence of operands (concatenate, stack): a tuple; anything else is left to the meta rule."""
    return tuple(value) if isinstance(value, list) else value


def index(value) -> tuple:
    """A subscript as a tuple; integers (NumPy's too) as Python ints, in slices as well.
    Booleans stay booleans: x[True] is not x[1]."""
    items = value if isinstance(value, tuple) else (value,)
    return tuple(_index_item(i) for i in items)


def _index_item(item):
    if isinstance(item, slice):  # bounds are __index__ values: True is 1 here
        return slice(*(b if b is None or not isinstance(b, (int, np.integer)) else int(b)
                        for b in (item.start, item.stop, item.step)))
    if isinstance(item, (int, np.integer)) and not isinstance(item, (bool, np.bool_)):
        return int(item)
    return item
