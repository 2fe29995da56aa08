"""How the tracer calls Python builtins: a table from the builtin to a handler
`(tx, args, kwargs) -> Variable`, and the pure functions it computes on constants."""

from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from ... import ops
from ...exc import Unsupported
from ...ops.pointwise import PYTHON_MATH
from ...shapes import DataDependent, SymInt, loop_dependent, sym_max
from . import iterators
from .arrays import ArrayVariable
from .base import IteratorVariable, Variable
from .containers import DictVariable, ListVariable, TupleVariable, constant_result, dict_items, make_slice
from .objects import ConstantVariable, DynamicIntVariable, ObjectVariable
from .ranges import DataRange, make_range


def _len(tx, args, kwargs):
    (x,) = args
    return ConstantVariable(x.length(tx))


def _isinstance(tx, args, kwargs):
    obj, cls = args
    tx.output.check_python_or_numpy(obj, "isinstance()")
    return ConstantVariable(issubclass(obj.python_type(), cls.as_constant()))


def _type(tx, args, kwargs):
    (obj,) = args
    tx.output.check_python_or_numpy(obj, "type()")
    return ObjectVariable(obj.python_type())


def _iterate(tx, args, kwargs):
    (x,) = args
    return x.iterate(tx, "iter()")


def _zip(tx, args, kwargs):
    positional = iterators.zip_of(tx, args, kwargs)
    if positional is not None:
        return positional
    if kwargs.get("strict") is not None and kwargs["strict"].as_constant():
        lengths = {len(a.unpack(tx, "zip()")) for a in args}
        if len(lengths) > 1:
            raise Unsupported("zip(strict=True) of unequal lengths (ValueError)")
    iterators_ = [a.iterate(tx, "zip()") for a in args]   # taken in turn, as zip does: zip(it, it) pairs
    rows = []
    while (row := _next_row(iterators_)) is not None:
        rows.append(TupleVariable(row))
    return IteratorVariable(rows)


def _next_row(iterators_: list) -> list | None:
    """zip's next row: an item of each iterator, or None at the first one exhausted."""
    row = []
    for it in iterators_:
        item = it.next()
        if item is None:
            return None
        row.append(item)
    return row


def _enumerate(tx, args, kwargs):
    positional = iterators.enumerate_of(tx, args, kwargs)
    if positional is not None:
        return positional
    items = args[0].unpack(tx, "enumerate()")
    start = (args[1] if len(args) > 1 else kwargs.get("start", ConstantVariable(0))).as_constant()
    return IteratorVariable([TupleVariable([ConstantVariable(start + i), v]) for i, v in enumerate(items)])


def _reversed(tx, args, kwargs):
    return IteratorVariable(args[0].unpack(tx, "reversed()")[::-1])


def _tuple(tx, args, kwargs):
    return TupleVariable(args[0].unpack(tx, "tuple()") if args else [])


def _list(tx, args, kwargs):
    return ListVariable(args[0].unpack(tx, "list()") if args else [])


def _dict(tx, args, kwargs):
    return DictVariable(dict_items(tx, args, kwargs))


def _sum(tx, args, kwargs):
    items = args[0].unpack(tx, "sum()")
    total = args[1] if len(args) > 1 else kwargs.get("start", ConstantVariable(0))
    for item in items:
        total = tx.apply_operator(operator.add, [total, item])
    return total


def _getattr(tx, args, kwargs):
    obj, name = args[0], args[1].as_constant()
    try:
        return obj.getattr(tx, name)
    except Unsupported:
        if len(args) > 2 and not hasattr(obj.python_type(), name) and isinstance(obj, ObjectVariable) \
                and not hasattr(obj.value, name):
            return args[2]
        raise


def _hasattr(tx, args, kwargs):
    obj, name = args[0], args[1].as_constant()
    if isinstance(obj, ObjectVariable):
        return ConstantVariable(hasattr(obj.value, name))
    return ConstantVariable(hasattr(obj.python_type(), name) or isinstance(obj, ArrayVariable) and name in ("shape", "dtype", "ndim", "size"))


def _data_dependent(name):
    def handler(tx, args, kwargs):
        if any(isinstance(a, ArrayVariable) for a in args):
            raise Unsupported(f"{name}() of an array needs its data (a NumPy value converted to Python)")
        return constant_result(getattr(builtins, name)(*(a.as_constant() for a in args),
                                                  **{k: v.as_constant() for k, v in kwargs.items()}))
    return handler


def _range(tx, args, kwargs):
    """range(), or where a bound is an expression of a loop's index or an integer computed in the
    graph, a range only a loop node runs."""
    if any(isinstance(a, ArrayVariable) for a in args) or kwargs:
        if kwargs or not tx.output.control.loops or not _data_bounds(args):
            return _data_dependent("range")(tx, args, kwargs)
        start, stop, step = (ConstantVariable(0), args[0], ConstantVariable(1)) if len(args) == 1 else (*args, ConstantVariable(1))[:3]
        return ConstantVariable(DataRange(start, stop, step.as_constant()))
    # a range of symbolic sizes, or of Python ints that changed between calls, is a loop node's,
    # unless a trace found that none takes it (then they are specialised: guarded)
    site = (tx.code, tx.ip)
    loops = tx.output.control.loops and ("specialise", site) not in tx.output.hints
    if loops and any(isinstance(a, DynamicIntVariable) for a in args) and _data_bounds(args):
        bounds = [a.graph_value(tx.output) if isinstance(a, DynamicIntVariable) else a for a in args]
        start, stop, step = (ConstantVariable(0), bounds[0], ConstantVariable(1)) if len(args) == 1 else (*bounds, ConstantVariable(1))[:3]
        return ConstantVariable(DataRange(start, stop, step.as_constant(), site))
    return ConstantVariable(make_range(*(a.as_constant() for a in args), site=site if loops else None))


def _data_bounds(args: list) -> bool:
    """Whether range(*args) may be a DataRange: its bounds 0-d integer graph values or ints, its
    step a constant int other than 0."""
    if not 1 <= len(args) <= 3 or len(args) == 3 and not (args[2].is_constant() and type(args[2].as_constant()) is int
                                                           and args[2].as_constant() != 0):
        return False
    return all(a.node.shape == () and a.node.dtype.kind in "iub" if isinstance(a, ArrayVariable)
               else isinstance(a, DynamicIntVariable) or a.is_constant() and type(a.as_constant()) is int
               for a in args[:2])


def _slice(tx, args, kwargs):
    """slice(stop), slice(start, stop[, step]), as the BUILD_SLICE of `start:stop:step`."""
    if kwargs or not 1 <= len(args) <= 3:
        raise Unsupported("slice() takes 1 to 3 positional arguments")
    none = ConstantVariable(None)
    start, stop, step = (none, args[0], none) if len(args) == 1 else (*args, none)[:3]
    return make_slice(start, stop, step)


def _float(tx, args, kwargs):
    if len(args) == 1 and not kwargs and isinstance(args[0], ArrayVariable) and args[0].python_type() is float:
        return args[0]  # a Python float in the graph is already one
    if _in_loop_body(tx, args, kwargs) and args[0].node.dtype.kind in "biuf":
        return tx.output.call_op(ops.get("astype"), (args[0], ConstantVariable(np.dtype(np.float64))), {}, weak=True)
    return _data_dependent("float")(tx, args, kwargs)


def _int(tx, args, kwargs):
    if _in_loop_body(tx, args, kwargs) and args[0].python_type() is not int:
        kind = args[0].node.dtype.kind
        if kind == "f":
            return tx.output.call_op(ops.get("python_int"), (args[0],), {}, weak=True)
        if kind in "biu" and args[0].node.dtype != np.uint64:   # exact in int64
            return tx.output.call_op(ops.get("astype"), (args[0], ConstantVariable(np.dtype(np.int64))), {}, weak=True)
    if len(args) == 1 and not kwargs and isinstance(args[0], ArrayVariable) and args[0].python_type() is int:
        return args[0]  # a Python int in the graph is already one
    return _data_dependent("int")(tx, args, kwargs)


def _extremum(name: str, better):
    """max()/min() of 0-d graph values of one meta, or of such NumPy scalars and Python numbers of
    their dtype (`max(1.0, np.max(x))`): Python keeps the first of the best, `b if b > a else a`,
    a choice in the graph (np.where). A Python number among them makes the result a Python number
    or a NumPy scalar as the data decides (ArrayVariable.python_or_numpy: where that shows, the
    trace starts again with this call a break). Else as before (it needs their data)."""
    def handler(tx, args, kwargs):
        out = tx.output
        arrays = [a for a in args if isinstance(a, ArrayVariable)]
        metas = {a.node.array_meta for a in arrays}
        call = (tx.code, tx.instructions[tx.ip - 1].offset)
        numbers = [a for a in args if not isinstance(a, ArrayVariable)]
        if not arrays and len(args) == 2 and not kwargs and all(type(a.as_constant()) in (int, SymInt) for a in args) \
                and loop_dependent(*(a.as_constant() for a in args)):
            # of a loop's index (`x[max(i - 2, 0):i + 1]`): decided for the whole loop, else symbolic
            values, fn = [a.as_constant() for a in args], getattr(builtins, name)
            try:
                return ConstantVariable(fn(*values))
            except DataDependent:
                return ConstantVariable(sym_max(*values, fn))
        if len(args) < 2 or kwargs or len(metas) != 1 or not _chosen_in_graph(metas, numbers) \
                or ("python or numpy", call) in out.hints:
            return _data_dependent(name)(tx, args, kwargs)
        (meta,) = metas
        best = args[0]
        for item in args[1:]:
            chosen = out.call_op(ops.get("where"), (tx.apply_operator(better, [item, best]), item, best), {})
            best = out.call_op(ops.get("getitem"), (chosen, ConstantVariable(())), {}, weak=meta.weak)
        python = [n for n in numbers if type(n.as_constant()) in (int, float, bool)]
        best.python_or_numpy = call if python else next((a.python_or_numpy for a in arrays if a.python_or_numpy), None)
        return best
    return handler


def _chosen_in_graph(metas: set, numbers: list) -> bool:
    """Whether max()/min() of 0-d graph values of these metas and these other arguments is a choice
    in the graph: all of them graph values of one meta, or NumPy scalars with Python numbers that
    NumPy makes their dtype (float: float64) and constant NumPy scalars of it, which compare as the
    same values."""
    (meta,) = metas
    if meta.shape != ():
        return False    # Python's comparison of arrays raises
    if not numbers:
        return True
    return meta.scalar and not meta.weak and all(
        n.is_constant() and type(n.as_constant()) in (int, float, bool, meta.dtype.type)
        and np.asarray(n.as_constant()).dtype == meta.dtype for n in numbers)


def _in_loop_body(tx, args, kwargs) -> bool:
    """Whether int()/float() of this one graph value stays in the graph: in a loop body (being
    captured, or an iteration unrolled before the rest is), on a backend that runs branches
    on such values (Backend.supports_conditionals)."""
    control = tx.output.control
    return len(args) == 1 and not kwargs and isinstance(args[0], ArrayVariable) and args[0].node.shape == () \
        and control.conds and control.in_body(tx)


def _any_all(name):
    """any(x) or all(x) of a 1-D array: the truth of its elements taken together, np.any's or
    np.all's, as a Python bool in the graph (`if any(np.array([pr1, pr2]) < 0):` a branch on it).
    Of other arrays Python iterates rows, whose truth needs their data."""
    def handler(tx, args, kwargs):
        if len(args) == 1 and not kwargs and isinstance(args[0], ArrayVariable) and len(args[0].node.shape) == 1:
            return tx.output.call_op(ops.get(name), (args[0],), {}, weak=True)
        return _data_dependent(name)(tx, args, kwargs)
    return handler


def _side_effect(name):
    def handler(tx, args, kwargs):
        raise Unsupported(f"{name}() has side effects outside the graph")
    return handler


BUILTINS = {
    len: _len, isinstance: _isinstance, type: _type, iter: _iterate, zip: _zip,
    enumerate: _enumerate, reversed: _reversed, tuple: _tuple, list: _list, dict: _dict,
    sum: _sum, getattr: _getattr, hasattr: _hasattr,
    print: _side_effect("print"), input: _side_effect("input"), open: _side_effect("open"),
    float: _float, int: _int, max: _extremum("max", operator.gt), min: _extremum("min", operator.lt),
    any: _any_all("any"), all: _any_all("all"),
    **{fn: _data_dependent(fn.__name__) for fn in (bool, complex, str, round, sorted, repr, divmod, hash)},
    range: _range, slice: _slice, np.ndindex: iterators.ndindex, np.ndenumerate: iterators.ndenumerate,
}

def _python_math(name: str):
    """math.<name>(x) of a graph value: Python's float, its errors Python's (ops/pointwise.py)."""
    return lambda tx, x: tx.output.call_op(ops.get("python_math"), (x, ConstantVariable(name)), {}, weak=True)


def _rounded(ufunc: str):
    """math.floor(x) (ceil, trunc): int() of the rounded value, as Python's (in a loop body)."""
    return lambda tx, x: _int(tx, [tx.output.call_op(ops.get(ufunc), (x,), {})], {})


# math's functions of one number, on graph values
_MATH_CALLS = {
    **{getattr(math, name): _python_math(name) for name in PYTHON_MATH if hasattr(math, name)},
    math.floor: _rounded("floor"), math.ceil: _rounded("ceil"), math.trunc: _rounded("trunc"),
}

# Callables that compute a constant from constants and have no side effects.
PURE_ON_CONSTANTS = (
    {getattr(math, name) for name in dir(math) if callable(getattr(math, name))}
    | {getattr(operator, name) for name in dir(operator) if not name.startswith("_") and callable(getattr(operator, name))}
    | {abs, pow, chr, ord, np.dtype}
)


def call_builtin(tx, fn, args: list, kwargs: dict) -> Variable | None:
    """The result of a builtin (or other pure) call, or None when `fn` is not one the table knows."""
    try:
        handler = BUILTINS.get(fn)
    except TypeError:  # unhashable callable
        return None
    if handler is not None:
        return handler(tx, args, kwargs)
    math_call = _MATH_CALLS.get(fn)
    if math_call is not None and len(args) == 1 and not kwargs and isinstance(args[0], ArrayVariable):
        return math_call(tx, args[0])
    if _is_numpy_scalar_type(fn) or fn in PURE_ON_CONSTANTS:
        if all(a.is_constant() for a in args) and all(v.is_constant() for v in kwargs.values()):
            try:
                return constant_result(fn(*(a.as_constant() for a in args), **{k: v.as_constant() for k, v in kwargs.items()}))
            except TypeError:   # abs(i - c) of a loop's index: on its value in the graph
                values = tx.indices_in_graph(args) if not kwargs and ops.lookup_callable(fn) is not None else None
                if values is None:
                    raise
                return tx.apply_operator(fn, values)
        if _is_numpy_scalar_type(fn) and len(args) == 1 and not kwargs and _castable(args[0], np.dtype(fn)):
            return tx.output.call_op(ops.get("astype"), (args[0], ConstantVariable(np.dtype(fn))), {})
        if any(isinstance(a, ArrayVariable) for a in args):
            raise Unsupported(f"{getattr(fn, '__name__', fn)}() of an array is not supported")
    return None


def _castable(x, dtype: np.dtype) -> bool:
    """Whether np.float32(x) (a NumPy scalar type called on a graph value) is x.astype: a real
    NumPy scalar or an array of one dimension or more, to a real dtype (a Python int NumPy would
    check against a narrower int dtype, a 0-d array NumPy makes a scalar of, are not)."""
    if not isinstance(x, ArrayVariable) or x.node.dtype.kind not in "biuf" or dtype.kind not in "biuf":
        return False
    meta = x.node.meta
    return bool(meta["scalar"] and not meta.get("weak") or x.node.shape)


def _is_numpy_scalar_type(fn) -> bool:
    return isinstance(fn, type) and issubclass(fn, np.generic)
