"""Guards: the facts a compiled entry relies on, each a check on a Source.

All guards of an entry compile into one generated function with the compiled
frame's own signature, so a cache hit is one Python call evaluating one
boolean expression. On a miss, `first_failure` re-checks them one by one to
say why ("shape of x changed from (3, 3) to (4, 4)").
"""

from __future__ import annotations

import math
import types
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from .aliasing import is_view
from .python_scalars import INT_INPUT_BOUND
from .sources import Source


@dataclass(frozen=True)
class Guard:
    source: Source
    kind: str        # a key of GUARD_KINDS
    expected: Any

    def describe(self) -> str:
        text = GUARD_KINDS[self.kind].describe(self.expected)
        return f"{self.source.name()}: {text}" if text else self.source.name()

    def mismatch(self, value) -> str | None:
        """Why `value` fails this guard, or None when it passes."""
        return GUARD_KINDS[self.kind].mismatch(self.source.name(), value, self.expected)


@dataclass(frozen=True)
class GuardKind:
    # code(v, const) -> a boolean expression over the value expression v; const(obj) names a constant
    code: Callable[[str, Callable[[Any], str], Any], str]
    describe: Callable[[Any], str]
    mismatch: Callable[[str, Any, Any], str | None]
    # for a relation to another input: expected -> that Source (one guard per pair; mismatch gets both values)
    related: Callable[[Any], Source] | None = None


def _type_name(t) -> str:
    return getattr(t, "__qualname__", str(t))


def array_guard_expected(value, dynamic_dims=()) -> tuple:
    """What the "array" guard remembers of an ndarray or NumPy scalar: its type, dtype and shape,
    with None for the dims that are symbolic (their relations are guarded on their own)."""
    shape = tuple(None if i in dynamic_dims else d for i, d in enumerate(value.shape))
    return (type(value), value.dtype, shape)


def _array_code(v, const, expected) -> str:
    t, dtype, shape = expected
    if t is not np.ndarray:
        return f"type({v}) is {const(t)}"  # a NumPy scalar: its type fixes dtype and shape
    return f"type({v}) is ndarray and {_dtype_check(v, const(dtype))} and {_shape_checks(v, shape)}"


def _array_mismatch(name, value, expected) -> str | None:
    t, dtype, shape = expected
    if type(value) is not t:
        return f"type of {name} changed from {_type_name(t)} to {_type_name(type(value))}"
    if value.dtype != dtype:
        return f"dtype of {name} changed from {dtype} to {value.dtype}"
    if len(value.shape) != len(shape) or any(d is not None and d != v for d, v in zip(shape, value.shape)):
        return f"shape of {name} changed from {_shape_text(shape)} to {tuple(value.shape)}"
    return None


def _dtype_check(v, dtype: str) -> str:
    # NumPy's builtin dtypes are singletons: `is` answers most calls at a fraction of `==`'s cost
    return f"({v}.dtype is {dtype} or {v}.dtype == {dtype})"


def _shape_checks(v, shape) -> str:
    """Code testing v's shape against `shape` (None: a symbolic dim, guarded on its own)."""
    if None not in shape:
        return f"{v}.shape == {shape!r}"
    return f"{v}.ndim == {len(shape)}" + "".join(f" and {v}.shape[{i}] == {d}" for i, d in enumerate(shape) if d is not None)


def _kind_array_code(v, const, expected) -> str:
    t, dtype, shape, location, kind, layout = expected
    code = f"type({v}) is {const(t)} and {_dtype_check(v, const(dtype))} and {_shape_checks(v, shape)} and " \
           f"{const(kind.location)}({v}) == {location!r}"
    if kind.layout is not None:   # Dask's chunks
        code += f" and {const(kind.layout[1])}({v}, {_dynamic_dims(shape)!r}) == {const(layout)}"
    return code


def _dynamic_dims(shape) -> tuple:
    return tuple(i for i, d in enumerate(shape) if d is None)


def _kind_array_mismatch(name, value, expected) -> str | None:
    t, dtype, shape, location, kind, layout = expected
    if type(value) is not t:
        return f"type of {name} changed from {_type_name(t)} to {_type_name(type(value))}"
    if kind.location(value) != location:
        return f"{name} moved from {location} to {kind.location(value)}"
    wrong = _array_mismatch(name, value, (t, dtype, shape))
    if wrong is None and kind.layout is not None:
        what, fn = kind.layout
        try:
            now = fn(value, _dynamic_dims(shape))
        except TypeError as e:
            return f"{name}: {e}"
        if now != layout:
            return f"{what} of {name} changed from {layout} to {now}"
    return wrong


def _shape_text(shape) -> str:
    text = ", ".join("?" if d is None else str(d) for d in shape)
    return f"({text},)" if len(shape) == 1 else f"({text})"


def same_float(a: float, b: float) -> bool:
    """a and b are the same float: NaN matches NaN, -0.0 does not match 0.0 (np.copysign, 1/x)."""
    return a != a and b != b or a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


def _const_code(v, const, value) -> str:
    if type(value) is float and (value != value or value == 0.0):
        return f"type({v}) is float and {const(same_float)}({v}, {const(value)})"
    literal = repr(value)
    try:
        same = type(eval(literal, {})) is type(value) and eval(literal, {}) == value
    except Exception:
        same = False
    return f"type({v}) is {type(value).__name__ if same else const(type(value))} and {v} == {literal if same else const(value)}"


def function_key(fn) -> tuple:
    """What a trace of a call of `fn` depends on besides the contents of its closure's cells (read,
    and guarded, where the trace reads them): its code, globals and defaults."""
    return fn.__code__, fn.__globals__, fn.__defaults__, fn.__kwdefaults__


# Objects guarded by identity: a different one means different code.
IDENTITY_TYPES = (types.FunctionType, types.BuiltinFunctionType, types.ModuleType, type, np.ufunc,
                  types.MethodWrapperType, types.WrapperDescriptorType, types.MethodDescriptorType)


def object_guard(value) -> tuple:
    """(kind, expected) of the guard on an object the trace took as it is: a Python function by its
    code (a nested function is made anew on every call), a builtin method by its object and name,
    others of IDENTITY_TYPES by identity, the rest by type."""
    if type(value) is types.FunctionType:
        return "function", function_key(value)
    if isinstance(value, types.BuiltinMethodType) and not isinstance(value.__self__, (types.ModuleType, type(None))):
        return "method", (value.__self__, value.__name__)   # np.add.reduceat: a new bound object at every access
    return ("id", value) if isinstance(value, IDENTITY_TYPES) else ("type", type(value))


GUARD_KINDS: dict[str, GuardKind] = {
    "type": GuardKind(
        code=lambda v, const, t: f"type({v}) is {const(t)}",
        describe=lambda t: f"type is {_type_name(t)}",
        mismatch=lambda n, val, t: None if type(val) is t else f"type of {n} changed from {_type_name(t)} to {_type_name(type(val))}",
    ),
    "small_int": GuardKind(
        code=lambda v, const, _: f"type({v}) is int and {-INT_INPUT_BOUND} <= {v} < {INT_INPUT_BOUND}",
        describe=lambda _: "type is int, fits in int32",
        mismatch=lambda n, val, _: None if type(val) is int and -INT_INPUT_BOUND <= val < INT_INPUT_BOUND
        else f"{n} is no int that fits in int32 ({_short_repr(val)})",
    ),
    "id": GuardKind(
        code=lambda v, const, obj: f"{v} is {const(obj)}",
        describe=lambda obj: f"is {_short_repr(obj)}",
        mismatch=lambda n, val, obj: None if val is obj else f"{n} is now a different object ({_short_repr(val)})",
    ),
    "function": GuardKind(   # a Python function: made anew on every call of the code defining it, the same code
        code=lambda v, const, f: f"type({v}) is {const(types.FunctionType)} and {v}.__code__ is {const(f[0])} and "
                                 f"{v}.__globals__ is {const(f[1])} and {v}.__defaults__ is {const(f[2])} and "
                                 f"{v}.__kwdefaults__ is {const(f[3])}",
        describe=lambda f: f"a function of the code of {f[0].co_qualname}",
        mismatch=lambda n, val, f: None if type(val) is types.FunctionType and function_key(val) == f
        else f"{n} is now another function ({_short_repr(val)})",
    ),
    "method": GuardKind(   # a builtin method bound to an object: that object's method of that name
        code=lambda v, const, m: f"type({v}) is {const(types.BuiltinMethodType)} and {v}.__self__ is {const(m[0])} "
                                 f"and {v}.__name__ == {m[1]!r}",
        describe=lambda m: f"the method {m[1]} of {_short_repr(m[0])}",
        mismatch=lambda n, val, m: None if type(val) is types.BuiltinMethodType and val.__self__ is m[0] and val.__name__ == m[1]
        else f"{n} is now another method ({_short_repr(val)})",
    ),
    "const": GuardKind(
        code=_const_code,
        describe=lambda value: f"== {value!r} ({type(value).__name__})",
        mismatch=lambda n, val, value: None if type(val) is type(value) and val == value else f"{n} changed from {value!r} to {_short_repr(val)}",
    ),
    "array": GuardKind(
        code=_array_code,
        describe=lambda e: f"{_type_name(e[0])}, dtype {e[1]}, shape {_shape_text(e[2])}",
        mismatch=_array_mismatch,
    ),
    "kind_array": GuardKind(   # a CuPy array, torch tensor or Dask array (array_kinds.py)
        code=_kind_array_code,
        describe=lambda e: f"{e[4].name} {_type_name(e[0])}, dtype {e[1]}, shape {_shape_text(e[2])}, on {e[3]}"
                           + (f", {e[4].layout[0]} {e[5]}" if e[4].layout else ""),
        mismatch=_kind_array_mismatch,
    ),
    "writeable": GuardKind(  # an array updated in place: the write-back after the graph must not fail
        code=lambda v, const, _: f"{v}.flags.writeable",
        describe=lambda _: "is writeable",
        mismatch=lambda n, val, _: None if val.flags.writeable else f"{n} is read-only now",
    ),
    "disjoint": GuardKind(  # an array updated in place shares no memory with another input: two
        # arrays that own their memory are two allocations (a test 3x faster than may_share_memory's)
        code=lambda v, const, other: f"({v}.flags.owndata and {other.expr()}.flags.owndata and {v} is not {other.expr()} "
                                     f"or not {const(np.may_share_memory)}({v}, {other.expr()}))",
        describe=lambda other: f"shares no memory with {other.name()}",
        mismatch=lambda n, vals, other: f"{n} now shares memory with {other.name()}" if np.may_share_memory(*vals) else None,
        related=lambda other: other,
    ),
    "same": GuardKind(  # one array passed twice: the graph reads it once, an update shows through both
        code=lambda v, const, other: f"{v} is {other.expr()}",
        describe=lambda other: f"is {other.name()}",
        mismatch=lambda n, vals, other: None if vals[0] is vals[1] else f"{n} is no longer the same array as {other.name()}",
        related=lambda other: other,
    ),
    "view": GuardKind(  # an input is exactly base[index] for another input: the graph makes it so
        code=lambda v, const, e: f"{const(is_view)}({v}, {e[0].expr()}, {const(e[1])})",
        describe=lambda e: f"is the view {e[0].name()}[{_index_text(e[1])}]",
        mismatch=lambda n, vals, e: None if is_view(*vals, e[1]) else f"{n} is no longer the view {e[0].name()}[{_index_text(e[1])}]",
        related=lambda e: e[0],
    ),
    "expr": GuardKind(  # a relation between dynamic dims the trace relied on; the source is the expression
        code=lambda v, const, _: v,
        describe=lambda _: "",
        mismatch=lambda n, val, _: None if val else f"{n} no longer holds",
    ),
    "len": GuardKind(
        code=lambda v, const, n: f"len({v}) == {n}",
        describe=lambda n: f"len == {n}",
        mismatch=lambda name, val, n: None if len(val) == n else f"length of {name} changed from {n} to {len(val)}",
    ),
    "keys": GuardKind(
        code=lambda v, const, keys: f"list({v}) == {const(list(keys))}",
        describe=lambda keys: f"keys == {list(keys)!r}",
        mismatch=lambda n, val, keys: None if list(val) == list(keys) else f"keys of {n} changed from {list(keys)!r} to {list(val)!r}",
    ),
}


def _index_text(index: tuple) -> str:
    return ", ".join(f"{s.start}:{'' if s.stop is None else s.stop}:{s.step}" if isinstance(s, slice) else str(s)
                     for s in index)


def _short_repr(obj) -> str:
    text = repr(obj)
    return text if len(text) <= 60 else text[:57] + "..."


class GuardSet:
    """The guards of one entry, in the order they were installed (bases before their attributes)."""

    def __init__(self):
        self._guards: dict[tuple, Guard] = {}

    def add(self, source: Source, kind: str, expected) -> None:
        related = GUARD_KINDS[kind].related
        key = (source, kind) if related is None else (source, kind, related(expected))
        if key not in self._guards:
            self._guards[key] = Guard(source, kind, expected)

    def __iter__(self):
        return iter(self._guards.values())

    def __len__(self) -> int:
        return len(self._guards)

    def describe(self) -> list[str]:
        return [g.describe() for g in self]

    def code(self, const: Callable[[Any], str]) -> str:
        """One boolean expression for all guards; each source is fetched once (walrus-bound)."""
        bound: dict[Source, str] = {}
        parts = []
        for g in self:
            expr = g.source.expr()
            if g.source in bound:
                v = bound[g.source]
            elif "." in expr or "[" in expr:
                v = f"__s{len(bound)}"
                bound[g.source] = v
                expr_code = GUARD_KINDS[g.kind].code(v, const, g.expected)
                # bind on first use: replace the first occurrence of v by (v := expr)
                parts.append(expr_code.replace(v, f"({v} := {expr})", 1))
                continue
            else:
                v = expr
            parts.append(GUARD_KINDS[g.kind].code(v, const, g.expected))
        return " and ".join(f"({p})" for p in parts) or "True"

    def first_failure(self, env: dict) -> str | None:
        """The reason the first failing guard gives, evaluating sources with `env` as the frame."""
        for g in self:
            try:
                value = eval(g.source.expr(), dict(env))
            except Exception as e:  # the source itself is gone: an attribute deleted, a shorter list
                return f"{g.source.name()} can no longer be read ({type(e).__name__}: {e})"
            related = GUARD_KINDS[g.kind].related
            if related is not None:
                value = (value, eval(related(g.expected).expr(), dict(env)))
            reason = g.mismatch(value)
            if reason:
                return reason
        return None
