"""Python values the tracer knows at compile time: by value (`ConstantVariable`: numbers, strings,
dtypes, tuples of them) or by identity (`ObjectVariable`: modules, classes, functions, user
objects such as a model). Their attributes are looked up as Python does, without running
descriptors the tracer cannot follow; a property is inlined, a method is bound at its call.
"""

from __future__ import annotations

import inspect
import types
from dataclasses import dataclass
from typing import Any

import numpy as np

from ...exc import Unsupported
from ... import ops
from ..sources import AttrSource, Source
from .base import CONSTANT_TYPES, Variable
from .functions import BoundMethodVariable

# Module attributes that are code or namespaces are taken as constant, like Dynamo does; data
# (arrays, numbers) read from a module is guarded.
_MODULE_CODE = (types.FunctionType, types.BuiltinFunctionType, type, types.ModuleType, np.ufunc)


class ConstantVariable(Variable):
    """A value known at compile time. One read from the frame's inputs is guarded only once the
    trace uses the value: passed through untouched (to residual code, to a resume function), it
    costs no guard and no recompilation when it changes."""

    def __init__(self, value, source: Source | None = None, pending_guard=None):
        self._value, self.source, self._pending_guard = value, source, pending_guard

    @property
    def value(self):
        if self._pending_guard is not None:
            install, self._pending_guard = self._pending_guard, None
            install()
        return self._value

    def is_constant(self) -> bool:
        return True

    def as_constant(self):
        return self.value

    def unguarded(self):
        """The value read without guarding it (to look at what it is, not to use it)."""
        return self._value

    def describe(self) -> str:
        return f"constant {self._value!r}"

    def getattr(self, tx, name: str) -> Variable:
        return python_attr(tx, self, self.value, name)


# id of an object whose subscript is another op's (np.c_, np.r_) -> handler(tx, index) giving
# the result or None (NumPy's own then); spellings.py fills it
SUBSCRIPT_SPELLINGS: dict = {}


@dataclass(eq=False)
class ObjectVariable(Variable):
    """Any other Python object, known by identity: functions, modules, classes, user objects."""

    value: Any
    source: Source | None = None

    def is_constant(self) -> bool:
        return isinstance(self.value, (types.ModuleType, type, types.BuiltinFunctionType, np.ufunc))

    def as_constant(self):
        if not self.is_constant():  # a live object (a generator, a file) must not be used up at compile time
            return super().as_constant()
        return self.value

    def describe(self) -> str:
        return f"{type(self.value).__name__} {getattr(self.value, '__qualname__', '')}".rstrip()

    def python_type(self) -> type:
        return type(self.value)

    def getattr(self, tx, name: str) -> Variable:
        written = tx.output.written_attr(self, name)
        if written is not None:
            return written
        value = self.as_constant() if self.is_constant() else self.value
        if isinstance(value, types.ModuleType):
            try:
                attr = getattr(value, name)  # modules may load attributes lazily (np.random)
            except AttributeError:
                raise Unsupported(f"module {value.__name__} has no attribute {name!r}") from None
            return self._attr_variable(tx, name, attr, guard=not isinstance(attr, _MODULE_CODE))
        return python_attr(tx, self, value, name)

    def _attr_variable(self, tx, name: str, attr, guard: bool) -> Variable:
        if self.source is None:
            if isinstance(attr, CONSTANT_TYPES):
                return ConstantVariable(attr)
            if isinstance(attr, (np.ndarray, np.generic)):
                raise Unsupported(f"array attribute {name!r} of an object made inside the compiled code")
            return ObjectVariable(attr)
        return tx.output.wrap(attr, AttrSource(self.source, name), guard=guard)

    def call(self, tx, args: list, kwargs: dict) -> Variable:
        return tx.call_known(self, args, kwargs)

    def truth(self, tx) -> bool:
        if self.is_constant():
            return bool(self.as_constant())
        cls = type(self.value)
        if hasattr(cls, "__bool__") or hasattr(cls, "__len__"):
            raise Unsupported(f"truth value of {self.describe()} (it defines __bool__ or __len__)")
        return True

    def getitem(self, tx, index: Variable) -> Variable:
        spelled = SUBSCRIPT_SPELLINGS.get(id(self.value))
        if spelled is not None and (result := spelled(tx, index)) is not None:
            return result
        op = None if self.is_constant() else ops.lookup_callable(getattr(self.value, "__getitem__", None))
        if op is None:
            return super().getitem(tx, index)
        index.as_key(self)
        return tx.output.call_op(op, (index,), {})  # an object whose subscript makes an array: np.mgrid[0:3, 0:4]


def python_attr(tx, var: ConstantVariable | ObjectVariable, value, name: str) -> Variable:
    """`value.name` for the Variable `var` of a value that is not a module, looked up statically."""
    try:
        static = inspect.getattr_static(value, name)
    except AttributeError:
        raise Unsupported(f"{var.describe()} has no attribute {name!r}") from None
    own = name in getattr(value, "__dict__", {})
    if isinstance(static, (types.FunctionType, staticmethod, classmethod)) and not own:
        of_class = isinstance(value, type)   # `C.make`: a class's own attribute, not its instances'
        if isinstance(static, staticmethod) or of_class and isinstance(static, types.FunctionType):
            return ObjectVariable(getattr(static, "__func__", static))
        if isinstance(static, classmethod):
            return BoundMethodVariable(ObjectVariable(static.__func__), var if of_class else ObjectVariable(type(value)))
        return BoundMethodVariable(ObjectVariable(static, None), var)
    if isinstance(static, (types.MethodDescriptorType, types.WrapperDescriptorType)) and not own:
        # a C method (io.StringIO.getvalue): bound at the call, not guarded as a new object each time
        return BoundMethodVariable(ObjectVariable(static), var)
    if isinstance(static, property):
        return tx.inline_call(static.fget, [var], {})
    attr = getattr(value, name)
    if var.is_constant() and not isinstance(value, (types.ModuleType, type)):
        return ConstantVariable(attr) if isinstance(attr, CONSTANT_TYPES) else ObjectVariable(attr)
    return var._attr_variable(tx, name, attr, guard=True)


class DynamicIntVariable(ConstantVariable):
    """A Python int argument that changed between compiles: a constant that is guarded on its value
    only when the trace needs the value; Python arithmetic on it (tracer/python_scalars.py), or a
    range it bounds, makes it a graph input instead."""

    def graph_value(self, output):
        if not hasattr(self, "_graph_value"):
            self._graph_value = output.dynamic_int_input(self._value, self.source)
        return self._graph_value
