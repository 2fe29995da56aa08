"""What the tracer knows about a value.

Arrays are symbolic (`ArrayVariable`: a Graph node); Python scalars, strings
and other immutable values are known exactly (`ConstantVariable`);
containers hold Variables; any other object is known by identity
(`ObjectVariable`) and is asked for attributes and called through the
translator. A Variable that came from the frame's inputs carries its
`Source`, which names it in guards and in the code that rebuilds results.
"""

from __future__ import annotations

import types
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..exc import Unsupported
from ..graph import Node
from ..shapes import SymInt
from .sources import Source


class Variable:
    source: Source | None = None

    def is_constant(self) -> bool:
        return False

    def as_constant(self):
        """The Python value this Variable stands for, when it is fully known."""
        raise Unsupported(f"{self.describe()} is not a constant known at compile time")

    def describe(self) -> str:
        return type(self).__name__


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

    def describe(self) -> str:
        return f"constant {self._value!r}"


@dataclass(eq=False)
class ArrayVariable(Variable):
    """An ndarray or NumPy scalar computed by (or fed into) the graph.

    The graph is functional, so an in-place update gives the Variable a new `node` and bumps its
    `version`. A view (`base` set) remembers how it was made from its base (`view_op`, the op and
    its other arguments) and is made again from the base's newest value when the base changed.
    """

    node: Node
    source: Source | None = None      # set for the caller's arrays: they are written back if updated
    base: "ArrayVariable | None" = None
    view_op: tuple = ()               # (op, args after the base, kwargs, method name or None)
    base_version: int = 0
    version: int = 0
    spelled: "Variable | None" = None  # the index item the user wrote, where this array stands for it
                                       # (a slice with bounds computed in the graph): generated code uses it
    numpy_views: bool = True          # NumPy's view functions make views of the caller's array (not of a tensor)

    def describe(self) -> str:
        if self.node.meta["weak"]:
            return f"Python {self.node.array_meta.python_type.__name__} {self.node.name} (a graph value: it changes between calls)"
        kind = "NumPy scalar" if self.node.meta["scalar"] else "array"
        return f"{kind} {self.node.name} ({self.node.array_meta})"


@dataclass(eq=False)
class TupleVariable(Variable):
    items: list
    source: Source | None = None
    cls: type = tuple  # or a named tuple NumPy returns (np.linalg.eigh's EighResult), its fields attributes

    def is_constant(self) -> bool:
        return all(v.is_constant() for v in self.items)

    def as_constant(self):
        values = [v.as_constant() for v in self.items]
        return tuple(values) if self.cls is tuple else self.cls(*values)

    def describe(self) -> str:
        return f"tuple of {len(self.items)}"


@dataclass(eq=False)
class ListVariable(Variable):
    """A list; mutable, so Variables share it by reference like Python names do."""

    items: list
    source: Source | None = None

    def as_constant(self):
        return [v.as_constant() for v in self.items]

    def describe(self) -> str:
        return f"list of {len(self.items)}"


@dataclass(eq=False)
class DictVariable(Variable):
    items: dict  # constant key -> Variable
    source: Source | None = None

    def as_constant(self):
        return {k: v.as_constant() for k, v in self.items.items()}

    def describe(self) -> str:
        return f"dict of {len(self.items)}"


@dataclass(eq=False)
class SliceVariable(Variable):
    """A slice whose bounds are Variables (constants in static shapes)."""

    start: Variable
    stop: Variable
    step: Variable

    def is_constant(self) -> bool:
        return self.start.is_constant() and self.stop.is_constant() and self.step.is_constant()

    def as_constant(self):
        return slice(self.start.as_constant(), self.stop.as_constant(), self.step.as_constant())


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


@dataclass(eq=False)
class BoundMethodVariable(Variable):
    """`obj.method` looked up but not yet called: `fn` gets `self_var` as its first argument."""

    fn: Variable
    self_var: Variable
    source: Source | None = None

    def describe(self) -> str:
        return f"method {self.fn.describe()}"


@dataclass(eq=False)
class ArrayMethodVariable(Variable):
    """`x.sum` for an array x: becomes an op node when called."""

    array: ArrayVariable
    name: str

    def describe(self) -> str:
        return f"ndarray.{self.name}"


@dataclass(eq=False)
class NestedFunctionVariable(Variable):
    """A function made by MAKE_FUNCTION inside the traced code (closures, lambdas, comprehensions)."""

    code: types.CodeType
    f_globals: dict
    defaults: tuple = ()                         # Variables
    kwdefaults: dict = field(default_factory=dict)
    closure: tuple = ()                          # CellVariables
    globals_source: Any = None                   # how guards reach f_globals: a callable name -> Source

    def describe(self) -> str:
        return f"function {self.code.co_name}"


@dataclass(eq=False)
class CellVariable(Variable):
    """A closure cell. `contents` is None while the cell is empty."""

    contents: Variable | None = None
    source: Source | None = None   # set for cells of the compiled function's own closure (read-only)

    def describe(self) -> str:
        return "cell"


@dataclass(eq=False)
class IteratorVariable(Variable):
    """An iterator over values known at compile time (unrolled loops)."""

    items: list
    index: int = 0

    def next(self) -> Variable | None:
        if self.index >= len(self.items):
            return None
        self.index += 1
        return self.items[self.index - 1]

    def rest(self) -> list[Variable]:
        """The items not taken yet (without taking them)."""
        return self.items[self.index:]


class ArrayIteratorVariable(IteratorVariable):
    """iter(x) of an array x: each step indexes x when it is taken, as NumPy's iterator does (a view
    of the row, or a copy of the element of a 1-d x), so updates of x in the loop are seen."""

    def __init__(self, array: ArrayVariable, length: int, row):
        super().__init__([])
        self.array, self.length, self.row = array, length, row  # row(i): the Variable for x[i], made now

    def next(self) -> Variable | None:
        if self.index >= self.length:
            return None
        self.index += 1
        return self.row(self.index - 1)

    def rest(self) -> list[Variable]:
        return [self.row(i) for i in range(self.index, self.length)]


class NullVariable(Variable):
    """The NULL CPython pushes beside callables."""

    def describe(self) -> str:
        return "NULL"


NULL = NullVariable()


# -- values known at compile time ----------------------------------------------------------------
CONSTANT_TYPES = (bool, int, float, complex, str, bytes, type(None), type(Ellipsis), slice, range, np.dtype, SymInt)


def constant_result(value) -> Variable:
    """A Variable for a value computed at compile time from constants."""
    if isinstance(value, np.ndarray):
        raise Unsupported("a constant NumPy computation made an array outside the graph")
    if isinstance(value, (*CONSTANT_TYPES, np.generic)):
        return ConstantVariable(value)
    if type(value) is tuple:
        return TupleVariable([constant_result(v) for v in value])
    return ObjectVariable(value)


def unpack_known(var: Variable, what: str) -> list[Variable]:
    """The items of a non-array Variable whose length is known at compile time."""
    if isinstance(var, (TupleVariable, ListVariable)):
        return list(var.items)
    if isinstance(var, DictVariable):
        return [ConstantVariable(k) for k in var.items]
    if isinstance(var, IteratorVariable):
        return var.rest()
    if var.is_constant():
        value = var.as_constant()
        try:
            items = list(value)
        except TypeError:
            raise Unsupported(f"{what} over {var.describe()}") from None
        return [constant_result(v) for v in items]
    raise Unsupported(f"{what} over {var.describe()}")
