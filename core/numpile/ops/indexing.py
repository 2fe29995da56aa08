"""Basic indexing, `a[index]`: integers, slices (any step), None (np.newaxis), Ellipsis and
tuples of these. The result is a view of `a`, or a NumPy scalar when integers pick one
element. Advanced indexing (integer or boolean arrays, lists, booleans, array-valued
bounds) is refused with NotImplementedError: its result shape depends on data.
"""

from __future__ import annotations

import operator

import numpy as np

from . import params
from ..shapes import slice_length
from .meta import as_meta, broadcast_shapes
from .registry import INDEXING, VIEW, ArrayMeta, register


def _getitem_sig(a, index): ...


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)  # x[True] is not x[1]


def _kind(item) -> str:
    """What an index item is; IndexError/TypeError where NumPy refuses it, NotImplementedError
    for the advanced forms."""
    if item is None:
        return "newaxis"
    if item is Ellipsis:
        return "ellipsis"
    if _is_int(item):
        return "int"
    if isinstance(item, slice):
        bounds = (item.start, item.stop, item.step)
        if any(isinstance(b, ArrayMeta) for b in bounds):
            raise NotImplementedError(f"a slice with array bounds ({item}) is not supported")
        if not all(b is None or _is_int(b) for b in bounds):
            raise TypeError("slice indices must be integers or None or have an __index__ method")
        return "slice"
    if isinstance(item, (float, complex, str, bytes)):
        raise IndexError("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) "
                         "and integer or boolean arrays are valid indices")
    raise NotImplementedError(f"advanced indexing (an index of type {type(item).__name__}) "
                              f"is not supported; only integers, slices, None and Ellipsis are")


def _getitem_meta(a, index):
    a = as_meta(a)
    kinds = [_kind(item) for item in index]
    if kinds.count("ellipsis") > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = kinds.count("int") + kinds.count("slice")
    if consumed > a.ndim:
        raise IndexError(f"too many indices for array: array is {a.ndim}-dimensional, but {consumed} were indexed")
    # NumPy hands back a scalar for a 0-d result, unless the index spells out an Ellipsis
    scalar = "ellipsis" not in kinds
    if scalar:  # the dims no index names are those of an implicit trailing Ellipsis
        index, kinds = index + (Ellipsis,), kinds + ["ellipsis"]
    shape, dim = [], 0
    for item, kind in zip(index, kinds):
        if kind == "newaxis":
            shape.append(1)
        elif kind == "ellipsis":
            rest = a.ndim - consumed
            shape.extend(a.shape[dim:dim + rest])
            dim += rest
        elif kind == "int":
            size = a.shape[dim]
            if not -size <= item < size:
                raise IndexError(f"index {item} is out of bounds for axis {dim} with size {size}")
            dim += 1
        else:
            if item.step == 0:
                raise ValueError("slice step cannot be zero")
            shape.append(slice_length(item, a.shape[dim]))
            dim += 1
    return ArrayMeta(tuple(shape), a.dtype, scalar=scalar and not shape)


register("getitem", VIEW, impl=operator.getitem, meta=_getitem_meta, signature=_getitem_sig,
         numpy=(operator.getitem,), methods={"__getitem__": None}, convert={"index": params.index},
         doc="a[index], basic indexing")


# The functional form of `a[index] = value`, which the tracer uses to capture in-place updates:
# no NumPy spelling maps to it.
def _setitem_sig(a, index, value): ...


def _setitem(a, index, value):
    out = a.copy(order="K")  # the updated array keeps its layout, as an update in place does
    out[index] = value  # NumPy's assignment casting (unsafe) and broadcasting
    return out


def _setitem_meta(a, index, value):
    a = as_meta(a)
    if a.scalar:
        raise TypeError(f"'numpy.{a.dtype.type.__name__}' object does not support item assignment")
    target = _getitem_meta(a, index)
    if isinstance(value, ArrayMeta):
        if broadcast_shapes(value.shape, target.shape) != target.shape:
            raise ValueError(f"could not broadcast input array from shape {value.shape} into shape {target.shape}")
    else:  # a constant must fit the dtype, as NumPy checks when assigning (int8 <- 300 overflows)
        np.empty((), a.dtype)[()] = value
    return ArrayMeta(a.shape, a.dtype)


register("setitem", INDEXING, impl=_setitem, meta=_setitem_meta, signature=_setitem_sig,
         convert={"index": params.index}, doc="a copy of a with a[index] = value")
