"""How the tracer calls Python builtins and the methods of tuples, lists and dicts: tables
from the callable to a handler `(tx, args, kwargs) -> Variable`."""

from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from ..exc import Unsupported
from . import loops
from .variables import (
    ArrayVariable, ConstantVariable, DictVariable, IteratorVariable, ListVariable,
    ObjectVariable, TupleVariable, Variable, constant_result,
)


def _len(tx, args, kwargs):
    (x,) = args
    if isinstance(x, ArrayVariable):
        if not x.node.shape:
            raise Unsupported("len() of a 0-d array (TypeError)")
        return ConstantVariable(tx.output.read_size(x.node.shape[0], f"len({x.node.name})"))
    if isinstance(x, (TupleVariable, ListVariable, DictVariable)):
        return ConstantVariable(len(x.items))
    return ConstantVariable(len(x.as_constant()))


def _python_type(var: Variable):
    if isinstance(var, ArrayVariable):
        meta = var.node.array_meta
        return meta.python_type if meta.weak else meta.dtype.type if meta.scalar else np.ndarray
    if isinstance(var, TupleVariable):
        return tuple
    if isinstance(var, ListVariable):
        return list
    if isinstance(var, DictVariable):
        return dict
    if isinstance(var, ObjectVariable):
        return type(var.value)
    if var.is_constant():
        return type(var.as_constant())
    raise Unsupported(f"type of {var.describe()}")


def _isinstance(tx, args, kwargs):
    obj, cls = args
    return ConstantVariable(issubclass(_python_type(obj), cls.as_constant()))


def _type(tx, args, kwargs):
    (obj,) = args
    return ObjectVariable(_python_type(obj))


def _iterate(tx, args, kwargs):
    (x,) = args
    return tx.iterate(x, "iter()")


def _zip(tx, args, kwargs):
    if kwargs.get("strict") is not None and kwargs["strict"].as_constant():
        lengths = {len(tx.unpack(a, "zip()")) for a in args}
        if len(lengths) > 1:
            raise Unsupported("zip(strict=True) of unequal lengths (ValueError)")
    columns = [tx.unpack(a, "zip()") for a in args]
    return IteratorVariable([TupleVariable(list(row)) for row in zip(*columns)])


def _enumerate(tx, args, kwargs):
    items = tx.unpack(args[0], "enumerate()")
    start = (args[1] if len(args) > 1 else kwargs.get("start", ConstantVariable(0))).as_constant()
    return IteratorVariable([TupleVariable([ConstantVariable(start + i), v]) for i, v in enumerate(items)])


def _reversed(tx, args, kwargs):
    return IteratorVariable(tx.unpack(args[0], "reversed()")[::-1])


def _tuple(tx, args, kwargs):
    return TupleVariable(tx.unpack(args[0], "tuple()") if args else [])


def _list(tx, args, kwargs):
    return ListVariable(tx.unpack(args[0], "list()") if args else [])


def _dict(tx, args, kwargs):
    items = {}
    if args:
        src = args[0]
        if isinstance(src, DictVariable):
            items.update(src.items)
        else:
            for pair in tx.unpack(src, "dict()"):
                key, value = tx.unpack(pair, "dict()")
                items[key.as_constant()] = value
    items.update(kwargs)
    return DictVariable(items)


def _sum(tx, args, kwargs):
    items = tx.unpack(args[0], "sum()")
    total = args[1] if len(args) > 1 else kwargs.get("start", ConstantVariable(0))
    for item in items:
        total = tx.apply_operator(operator.add, [total, item])
    return total


def _getattr(tx, args, kwargs):
    obj, name = args[0], args[1].as_constant()
    try:
        return tx.getattr(obj, name)
    except Unsupported:
        if len(args) > 2 and not hasattr(_python_type(obj), name) and isinstance(obj, ObjectVariable) \
                and not hasattr(obj.value, name):
            return args[2]
        raise


def _hasattr(tx, args, kwargs):
    obj, name = args[0], args[1].as_constant()
    if isinstance(obj, ObjectVariable):
        return ConstantVariable(hasattr(obj.value, name))
    return ConstantVariable(hasattr(_python_type(obj), name) or isinstance(obj, ArrayVariable) and name in ("shape", "dtype", "ndim", "size"))


def _data_dependent(name):
    def handler(tx, args, kwargs):
        if any(isinstance(a, ArrayVariable) for a in args):
            raise Unsupported(f"{name}() of an array needs its data (a NumPy value converted to Python)")
        return constant_result(getattr(builtins, name)(*(a.as_constant() for a in args),
                                                  **{k: v.as_constant() for k, v in kwargs.items()}))
    return handler


def _range(tx, args, kwargs):
    """range(), or where a bound is an expression of a loop's index, a range only a loop node runs."""
    if any(isinstance(a, ArrayVariable) for a in args) or kwargs:
        return _data_dependent("range")(tx, args, kwargs)
    return ConstantVariable(loops.make_range(*(a.as_constant() for a in args)))


def _float(tx, args, kwargs):
    if len(args) == 1 and not kwargs and isinstance(args[0], ArrayVariable) and _python_type(args[0]) is float:
        return args[0]  # a Python float in the graph is already one
    return _data_dependent("float")(tx, args, kwargs)


def _side_effect(name):
    def handler(tx, args, kwargs):
        raise Unsupported(f"{name}() has side effects outside the graph")
    return handler


BUILTINS = {
    len: _len, isinstance: _isinstance, type: _type, iter: _iterate, zip: _zip,
    enumerate: _enumerate, reversed: _reversed, tuple: _tuple, list: _list, dict: _dict,
    sum: _sum, getattr: _getattr, hasattr: _hasattr,
    print: _side_effect("print"), input: _side_effect("input"), open: _side_effect("open"),
    float: _float,
    **{fn: _data_dependent(fn.__name__) for fn in (int, bool, complex, str, min, max, round,
                                                   sorted, repr, divmod, any, all, hash)},
    range: _range,
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
    if _is_numpy_scalar_type(fn) or fn in PURE_ON_CONSTANTS:
        if all(a.is_constant() for a in args) and all(v.is_constant() for v in kwargs.values()):
            return constant_result(fn(*(a.as_constant() for a in args), **{k: v.as_constant() for k, v in kwargs.items()}))
        if any(isinstance(a, ArrayVariable) for a in args):
            raise Unsupported(f"{getattr(fn, '__name__', fn)}() of an array is not supported")
    return None


def _is_numpy_scalar_type(fn) -> bool:
    return isinstance(fn, type) and issubclass(fn, np.generic)


# -- container methods ---------------------------------------------------------------------------
def _mutated(tx, container) -> None:
    tx.output.mark_mutated(container)


def _list_append(tx, args, kwargs):
    lst, value = args
    lst.items.append(value)
    _mutated(tx, lst)
    return ConstantVariable(None)


def _list_extend(tx, args, kwargs):
    lst, values = args
    lst.items.extend(tx.unpack(values, "list.extend()"))
    _mutated(tx, lst)
    return ConstantVariable(None)


def _list_insert(tx, args, kwargs):
    lst, index, value = args
    lst.items.insert(index.as_constant(), value)
    _mutated(tx, lst)
    return ConstantVariable(None)


def _list_pop(tx, args, kwargs):
    lst = args[0]
    if not lst.items:
        raise Unsupported("pop from an empty list (IndexError)")
    _mutated(tx, lst)
    return lst.items.pop(args[1].as_constant() if len(args) > 1 else -1)


def _copy(tx, args, kwargs):
    (c,) = args
    return type(c)(dict(c.items) if isinstance(c, DictVariable) else list(c.items))


def _dict_view(make):
    def handler(tx, args, kwargs):
        return TupleVariable(make(args[0].items))
    return handler


def _dict_get(tx, args, kwargs):
    d, key = args[0], args[1].as_constant()
    return d.items.get(key, args[2] if len(args) > 2 else ConstantVariable(None))


def _dict_update(tx, args, kwargs):
    d = args[0]
    d.items.update(_dict(tx, args[1:], kwargs).items)
    _mutated(tx, d)
    return ConstantVariable(None)


def _on_constants(method):
    def handler(tx, args, kwargs):
        container, rest = args[0], args[1:]
        if not all(v.is_constant() for v in container.items) or not all(a.is_constant() for a in rest):
            raise Unsupported(f"{method.__qualname__} over values that are not constants")
        return constant_result(method(container.as_constant(), *(a.as_constant() for a in rest)))
    return handler


CONTAINER_METHODS = {
    list.append: _list_append, list.extend: _list_extend, list.insert: _list_insert,
    list.pop: _list_pop, list.copy: _copy, dict.copy: _copy,
    list.index: _on_constants(list.index), list.count: _on_constants(list.count),
    tuple.index: _on_constants(tuple.index), tuple.count: _on_constants(tuple.count),
    dict.items: _dict_view(lambda d: [TupleVariable([ConstantVariable(k), v]) for k, v in d.items()]),
    dict.keys: _dict_view(lambda d: [ConstantVariable(k) for k in d]),
    dict.values: _dict_view(lambda d: list(d.values())),
    dict.get: _dict_get, dict.update: _dict_update,
}
_CONTAINER_TYPES = {TupleVariable: tuple, ListVariable: list, DictVariable: dict}


def container_method(container, name: str):
    """The unbound method `name` of a traced tuple/list/dict, if the table handles it."""
    method = getattr(_CONTAINER_TYPES[type(container)], name, None)
    return method if method in CONTAINER_METHODS else None


def call_container_method(tx, method, args: list, kwargs: dict) -> Variable | None:
    try:
        handler = CONTAINER_METHODS.get(method)
    except TypeError:
        return None
    return handler(tx, args, kwargs) if handler is not None else None
