"""Calls of Python callables the tracer knows by identity (an ObjectVariable's value): a NumPy
function becomes an op node; a context manager, a container method or a builtin runs at compile
time from its table; a user function, method or callable object is inlined; library code is
never inlined, and its call is a graph break. This module sits above every family it reaches;
`ObjectVariable.call` gets here through the translator (`tx.call_known`)."""

from __future__ import annotations

import os
import sysconfig
import types

import numpy as np

from ... import ops
from ...exc import Unsupported
from ..sources import AttrSource
from .arrays import ArrayVariable
from .base import Variable, unsupported_call_reason
from .builtins import call_builtin
from .containers import CONTAINER_METHODS, ListVariable, TupleVariable
from .contexts import CONTEXT_FACTORIES
from .draws import call_draw
from .objects import ConstantVariable, ObjectVariable
from .spellings import call_spelled

_LIBRARY_PATHS = tuple(sorted({sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib", "platlib")}
                              | {os.path.dirname(os.path.dirname(os.path.dirname(__file__)))}))


def is_library_code(code: types.CodeType) -> bool:
    """Code of the standard library, an installed package or numpile itself: called, never inlined
    (like Dynamo's skip files), so that a library's internals never become part of a trace."""
    return code.co_filename.startswith(_LIBRARY_PATHS)


# NumPy functions that return an attribute of an array: np.real(x) is x.real (x itself for a real x)
_ATTRIBUTES = {np.real: "real", np.imag: "imag"}


def call_known(tx, fn: ObjectVariable, args: list, kwargs: dict) -> Variable:
    value = fn.as_constant() if fn.is_constant() else fn.value
    spelled = call_spelled(tx, value, args, kwargs)
    if spelled is None:
        spelled = call_draw(tx, fn, value, args, kwargs)
    if spelled is not None:
        return spelled
    if isinstance(value, types.FunctionType) and value in _ATTRIBUTES and len(args) == 1 and not kwargs \
            and isinstance(args[0], ArrayVariable):
        return args[0].getattr(tx, _ATTRIBUTES[value])
    op = ops.lookup_callable(value)
    if op is not None and (_is_numpy(value) or _has_array(args, kwargs)):
        if isinstance(value, np.ufunc) and len(args) > value.nin:
            args, kwargs = _outputs_by_keyword(value, args, kwargs)
        if "out" in kwargs:
            return _call_with_out(tx, op, args, dict(kwargs))
        if op.updates is not None:
            return _call_updating(tx, op, args, kwargs)
        return tx.output.call_op(op, tuple(args), kwargs)
    if isinstance(value, type) and value in CONTEXT_FACTORIES:
        return CONTEXT_FACTORIES[value](tx, args, kwargs)
    method = _container_method(value)
    if method is not None:
        return method(tx, args, kwargs)
    result = call_builtin(tx, value, args, kwargs)
    if result is not None:
        return result
    if isinstance(value, types.FunctionType) and not is_library_code(value.__code__):
        return tx.inline_call(value, args, kwargs, fn.source)
    if isinstance(value, types.MethodType) and isinstance(value.__func__, types.FunctionType) \
            and not is_library_code(value.__func__.__code__):
        self_src = AttrSource(fn.source, "__self__") if fn.source else None
        func_src = AttrSource(fn.source, "__func__") if fn.source else None
        self_var = tx.output.wrap(value.__self__, self_src) if self_src else ObjectVariable(value.__self__)
        return tx.inline_call(value.__func__, [self_var, *args], kwargs, func_src)
    call = getattr(type(value), "__call__", None)
    if not isinstance(value, type) and isinstance(call, types.FunctionType):
        return tx.inline_call(call, [fn, *args], kwargs)  # a callable object; its type is guarded
    raise Unsupported(unsupported_call_reason(value))


def _container_method(value):
    try:
        return CONTAINER_METHODS.get(value)
    except TypeError:  # unhashable callable
        return None


def _call_updating(tx, op, args, kwargs) -> Variable:
    """`np.add.at(a, i, b)`: the op's result is a's new value, written into a; returns None."""
    position = list(op.signature.parameters).index(op.updates)
    target = args[position] if position < len(args) else kwargs.get(op.updates)
    if not isinstance(target, ArrayVariable) or target.node.meta["scalar"]:
        raise Unsupported(f"{op.name} updates {op.updates}, which must be an array here, not "
                          f"{target.describe() if target is not None else 'missing'}")
    target.update(tx, tx.output.call_op(op, tuple(args), kwargs), op.name)
    return ConstantVariable(None)


def _outputs_by_keyword(ufunc: np.ufunc, args: list, kwargs: dict) -> tuple[list, dict]:
    """`np.multiply(a, b, c)`: a ufunc's outputs given after its inputs are its out= (a tuple of
    them for a ufunc of several)."""
    outs = args[ufunc.nin:]
    if "out" in kwargs or len(outs) != ufunc.nout:
        raise Unsupported(f"np.{ufunc.__name__} takes {ufunc.nin} inputs and {ufunc.nout} outputs, "
                          f"given {len(args)} positionally{' and out=' if 'out' in kwargs else ''} (NumPy raises TypeError)")
    return args[:ufunc.nin], {**kwargs, "out": outs[0] if ufunc.nout == 1 else TupleVariable(list(outs))}


def _call_with_out(tx, op, args, kwargs) -> Variable:
    """`np.add(a, b, out=c)`: the result written into c, which is returned. An op with several
    results takes a tuple, an array or None for each (`np.divmod(a, b, out=(q, None))`)."""
    out = kwargs.pop("out")
    if out.is_constant() and out.as_constant() is None:
        return tx.output.call_op(op, tuple(args), kwargs)
    targets = out.items if isinstance(out, TupleVariable) else [out]
    unused = [t.is_constant() and t.as_constant() is None for t in targets]
    for target, none in zip(targets, unused):
        if not none and (not isinstance(target, ArrayVariable) or target.node.meta["scalar"]):
            raise Unsupported(f"out= of {op.name} must hold arrays or None, not {target.describe()}")
    result = tx.output.call_op(op, tuple(args), kwargs)
    results = list(result.items) if isinstance(result, TupleVariable) else [result]
    if len(targets) != len(results):
        raise Unsupported(f"out= of {op.name} holds {len(targets)} values for its {len(results)} results "
                          "(NumPy raises ValueError)")
    for i, (target, none) in enumerate(zip(targets, unused)):
        if not none:
            target.update(tx, results[i], f"{op.name}(out=...)")
            results[i] = target
    return TupleVariable(results) if isinstance(result, TupleVariable) else results[0]


def _is_numpy(fn) -> bool:
    return (getattr(fn, "__module__", None) or "").split(".")[0] == "numpy" or isinstance(fn, np.ufunc)


def _has_array(args, kwargs) -> bool:
    """Whether an array is among the arguments (a builtin like abs() of constants stays Python)."""
    def has(v):
        return isinstance(v, ArrayVariable) or isinstance(v, (TupleVariable, ListVariable)) and any(map(has, v.items))
    return any(map(has, (*args, *kwargs.values())))
