"""NumPy functions the tracer captures as other ops' calls, where NumPy defines one by the other:
np.where(condition) is np.nonzero(condition); np.shape(a), np.ndim(a) and np.size(a) its attributes;
np.isscalar(a) what a is; np.finfo(t) and np.iinfo(t) NumPy's object for a type known when traced;
np.allclose(a, b) np.all(np.isclose(a, b)) and np.array_equal(a, b) np.all(a == b), Python bools; np.atleast_1d/2d/3d(a) a itself or its view with new axes; np.asarray(x) of an array is x itself, np.array(x)
a copy of it (an astype for another dtype=); np.array (np.asarray) of a list or tuple of arrays
and numbers of one shape is their np.stack, nested lists stacked from the inside; np.take(a, i,
axis) is a's integer indexing along axis (of a flattened a where axis is None); np.r_[...] and
np.c_[...] of arrays their concatenate. A handler returns None where the call is the op row's own
form (np.where(c, x, y)) or one left to NumPy."""

from __future__ import annotations

import numpy as np

from ... import ops
from ...exc import Unsupported
from .arrays import ArrayVariable, take
from .base import Variable
from .containers import ListVariable, TupleVariable
from .objects import SUBSCRIPT_SPELLINGS, ConstantVariable
from .stacked import stacked_rows


def _where(tx, args, kwargs):
    if len(args) == 1 and not kwargs:
        return tx.output.call_op(ops.get("nonzero"), tuple(args), {})
    return None


def _array(new: bool):
    """np.array (new: a new array always) or np.asarray (x itself where it is an array of the dtype)."""
    def handler(tx, args, kwargs):
        if not 1 <= len(args) <= 2 or set(kwargs) - {"dtype"} or len(args) == 2 and kwargs:
            raise Unsupported(f"np.{'array' if new else 'asarray'} with arguments other than the object and "
                              f"dtype= is not captured: {sorted(kwargs)}")
        obj = args[0]
        dtype = (args[1] if len(args) == 2 else kwargs.get("dtype", ConstantVariable(None))).as_constant()
        dtype = None if dtype is None else np.dtype(dtype)
        out = tx.output
        if isinstance(obj, (ListVariable, TupleVariable)):
            array = _stacked(tx, obj)
        elif isinstance(obj, ArrayVariable) and dtype not in (None, obj.node.dtype):
            return out.call_op(ops.get("astype"), (obj, ConstantVariable(dtype)), {})
        elif not new and isinstance(obj, ArrayVariable) and not (obj.node.meta["scalar"] or obj.node.meta["weak"]):
            return obj
        else:
            array = out.call_op(ops.get("copy"), (obj,), {})    # a new array (0-d, of a scalar)
        return array if dtype in (None, array.node.dtype) else out.call_op(ops.get("astype"), (array, ConstantVariable(dtype)), {})
    return handler


def _stacked(tx, seq) -> ArrayVariable:
    """The array np.array makes of a list or tuple: its items (each a sequence stacked the same
    way first) stacked along a new first axis."""
    rows = stacked_rows(seq)
    if rows is not None:   # the rows of an array a loop filled
        return tx.output.call_op(ops.get("copy"), (rows,), {})
    if not seq.items:
        raise Unsupported("np.array of an empty list is not captured")
    items = [_stacked(tx, v) if isinstance(v, (ListVariable, TupleVariable)) else v for v in seq.items]
    return tx.output.call_op(ops.get("stack"), (TupleVariable(items),), {})


def assigned_sequence(tx, array: ArrayVariable, seq) -> ArrayVariable:
    """`a[i] = x, y`: the array NumPy makes of the sequence in a's dtype. Python numbers it cannot
    hold raise as in NumPy (300 into int8: OverflowError), not wrap as a stacked int64 would."""
    dtype = array.node.dtype
    seq = _variables(seq.as_constant()) if isinstance(seq, ConstantVariable) else seq
    numbers = [v.as_constant() for v in _items(seq) if v.is_constant()]
    try:
        np.array(numbers, dtype=dtype)
    except (OverflowError, ValueError, TypeError) as e:
        raise Unsupported(f"setitem raises {type(e).__name__} in NumPy: {e}") from None
    return _array(new=True)(tx, [seq, ConstantVariable(dtype)], {})


def _variables(value):
    """A constant (nested) tuple or list as TupleVariables of its items."""
    return TupleVariable([_variables(v) if isinstance(v, (tuple, list)) else ConstantVariable(v) for v in value])


def _constant(v):
    return v.as_constant() if v.is_constant() else [_constant(w) if isinstance(w, (ListVariable, TupleVariable)) else
                                                    w.as_constant() for w in v.items]


def _known(v) -> bool:
    """A constant, or a list or tuple of constants (nested): what NumPy's function can take now."""
    return v.is_constant() or isinstance(v, (ListVariable, TupleVariable)) and isinstance(v.items, list) \
        and all(w.is_constant() for w in _items(v))


def _items(seq) -> list:
    return [w for v in seq.items for w in (_items(v) if isinstance(v, (ListVariable, TupleVariable)) else [v])]


def _take(tx, args, kwargs):
    if not args or not isinstance(args[0], ArrayVariable):
        return None
    return take(tx, args[0], args[1:], kwargs)


def _attribute(name: str):
    """np.shape(a), np.ndim(a), np.size(a) (np.size(a, axis): a.shape[axis]) of an array: as the
    attribute reads; of constants (a list of numbers), computed now."""
    fn = getattr(np, name)

    def handler(tx, args, kwargs):
        values = [*args, *kwargs.values()]
        if values and all(map(_known, values)):
            return ConstantVariable(fn(*(_constant(a) for a in args), **{k: _constant(v) for k, v in kwargs.items()}))
        if not args or not isinstance(args[0], ArrayVariable):
            return None
        axis = (args[1:] or list(kwargs.values()) or [None])[0] if name == "size" else None
        if axis is not None:
            return args[0].getattr(tx, "shape").getitem(tx, axis)
        return args[0].getattr(tx, name) if len(args) == 1 and not kwargs else None
    return handler


# where np.atleast_<n>d puts the new axes of an array of each ndim below n (None: a new axis)
_AT_LEAST = {1: {0: (None,)}, 2: {0: (None, None), 1: (None, slice(None))},
             3: {0: (None, None, None), 1: (None, slice(None), None), 2: (slice(None), slice(None), None)}}


def _at_least(ndim: int):
    """np.atleast_<ndim>d(a, ...): each array as it is or the view NumPy makes with new axes; a
    tuple of them for several."""
    def handler(tx, args, kwargs):
        if kwargs or not args or not all(isinstance(a, ArrayVariable) for a in args):
            return None
        made = [a.getitem(tx, _variables(_AT_LEAST[ndim][len(a.node.shape)])) if len(a.node.shape) < ndim else a
                for a in args]
        return made[0] if len(made) == 1 else TupleVariable(made)
    return handler


def _isscalar(tx, args, kwargs):
    """np.isscalar(a): a NumPy scalar or a Python number is one, an array (0-d too) is not."""
    if kwargs or len(args) != 1:
        return None
    if isinstance(args[0], ArrayVariable):
        return ConstantVariable(bool(args[0].node.meta["scalar"]))
    return ConstantVariable(np.isscalar(args[0].as_constant())) if args[0].is_constant() else None


def _allclose(tx, args, kwargs):
    """np.allclose(a, b, rtol, atol, equal_nan): np.all of np.isclose's, as the Python bool NumPy
    gives (`assert np.allclose(X.sum(axis=1), 1)` is a check in the graph)."""
    close = tx.output.call_op(ops.get("isclose"), tuple(args), kwargs)
    return tx.output.call_op(ops.get("all"), (close,), {}, weak=True)


def _array_equal(tx, args, kwargs):
    """np.array_equal(a1, a2) of arrays: False where their shapes differ (known when traced),
    else np.all(a1 == a2) as a Python bool. equal_nan= is left to NumPy."""
    if kwargs or len(args) != 2 or not all(isinstance(a, ArrayVariable) for a in args):
        return None
    a1, a2 = args
    if a1.node.shape != a2.node.shape:
        return ConstantVariable(False)
    same = tx.output.call_op(ops.get("equal"), (a1, a2), {})
    return tx.output.call_op(ops.get("all"), (same,), {}, weak=True)


class TypeInfoVariable(ConstantVariable):
    """What np.finfo(t) or np.iinfo(t) gives for a type known when traced: its attributes (eps, max,
    tiny: Python ints or NumPy scalars, which NumPy's properties compute) are constants."""

    def getattr(self, tx, name: str) -> Variable:
        try:
            return ConstantVariable(getattr(self.value, name))
        except AttributeError:
            raise Unsupported(f"{type(self.value).__name__} has no attribute {name!r}") from None


def _type_info(info):
    """np.finfo(t) or np.iinfo(t) (`np.finfo(float).eps`, `np.iinfo(x.dtype).max`)."""
    def handler(tx, args, kwargs):
        if kwargs or len(args) != 1 or not args[0].is_constant():
            return None
        try:
            return TypeInfoVariable(info(args[0].as_constant()))
        except (TypeError, ValueError):   # NumPy raises it when the frame runs
            return None
    return handler


SPELLINGS = {np.where: _where, np.isscalar: _isscalar, np.finfo: _type_info(np.finfo), np.iinfo: _type_info(np.iinfo),
             np.allclose: _allclose, np.array_equal: _array_equal,
             **{getattr(np, f"atleast_{n}d"): _at_least(n) for n in _AT_LEAST}, np.array: _array(new=True), np.asarray: _array(new=False),
             np.asanyarray: _array(new=False), np.take: _take,
             **{getattr(np, name): _attribute(name) for name in ("shape", "ndim", "size")}}


def call_spelled(tx, fn, args: list, kwargs: dict) -> Variable | None:
    """The result of a call of a function of SPELLINGS as another op's, or None (not one, or the
    row's own form)."""
    try:
        handler = SPELLINGS.get(fn)
    except TypeError:  # unhashable callable
        return None
    return handler(tx, args, kwargs) if handler is not None else None


def _joined(axis: int, ndmin: int, new_axes: dict):
    """np.r_[a, b, ...] (axis 0) or np.c_[a, b, ...] (the last axis, each array upgraded to 2-D with
    its 1's after its shape: a column of a vector) of arrays: their concatenate. Slices, Python
    numbers and directive strings are left to NumPy (None)."""
    def handler(tx, index):
        items = index.items if isinstance(index, TupleVariable) else [index]
        if not items or not all(isinstance(a, ArrayVariable) and len(a.node.shape) in new_axes
                                and not a.node.meta["weak"] for a in items):   # a Python number is weak in NumPy's
            return None
        made = [a.getitem(tx, _variables(new_axes[len(a.node.shape)])) if len(a.node.shape) < ndmin else a for a in items]
        return tx.output.call_op(ops.get("concatenate"), (TupleVariable(made),), {"axis": ConstantVariable(axis)})
    return handler


_ANY_NDIM = range(1, 33)
SUBSCRIPT_SPELLINGS.update({
    id(np.r_): _joined(0, 1, {0: (None,), **{n: () for n in _ANY_NDIM}}),
    id(np.c_): _joined(-1, 2, {1: (Ellipsis, None), **{n: () for n in _ANY_NDIM[1:]}}),
})
