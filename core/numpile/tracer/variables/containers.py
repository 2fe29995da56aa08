"""Tuples, lists, dicts and slices of Variables: their items are known at compile time (their
lengths and keys guarded), so indexing, iteration and their methods run at compile time.
The methods the tracer runs are a table from the unbound method (`list.append`) to a handler
`(tx, args, kwargs) -> Variable`; the call reaches it through `tx.call_known`."""

from __future__ import annotations

import operator
from dataclasses import dataclass

import numpy as np

from ...exc import Unsupported
from ..sources import Source
from .base import CONSTANT_TYPES, IteratorVariable, Variable
from .functions import BoundMethodVariable
from .objects import ConstantVariable, ObjectVariable


class ContainerVariable(Variable):
    """What tuples, lists and dicts share: truth by length, their methods from the table below."""

    items: list | dict

    def truth(self, tx) -> bool:
        return bool(self.items)

    def length(self, tx) -> int:
        return len(self.items)

    def getattr(self, tx, name: str) -> Variable:
        method = getattr(self.python_type(), name, None)
        if method in CONTAINER_METHODS:
            return BoundMethodVariable(ObjectVariable(method), self)
        return super().getattr(tx, name)


class SequenceVariable(ContainerVariable):
    """What tuples and lists share: items by position."""

    def iterate(self, tx, what: str) -> IteratorVariable:
        return IteratorVariable(list(self.items))

    def getitem(self, tx, index: Variable) -> Variable:
        key = index.as_key(self)
        try:
            item = self.items[key]
        except (IndexError, TypeError) as e:
            raise Unsupported(f"indexing {self.describe()} with {key!r} raises {type(e).__name__}") from None
        return type(self)(list(item)) if isinstance(key, slice) else item

    def contains(self, tx, item: Variable) -> bool:
        if not item.is_constant():
            return super().contains(tx, item)
        if not all(v.is_constant() for v in self.items):
            raise Unsupported(f"`in` over {self.describe()} holding arrays")
        return item.as_constant() in [v.as_constant() for v in self.items]


@dataclass(eq=False)
class TupleVariable(SequenceVariable):
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

    def python_type(self) -> type:
        return tuple

    def getattr(self, tx, name: str) -> Variable:
        if name in getattr(self.cls, "_fields", ()):
            return self.items[self.cls._fields.index(name)]  # a named tuple's field (EighResult.eigenvalues)
        return super().getattr(tx, name)


@dataclass(eq=False)
class ListVariable(SequenceVariable):
    """A list; mutable, so Variables share it by reference like Python names do."""

    items: list
    source: Source | None = None

    def as_constant(self):
        return [v.as_constant() for v in self.items]

    def describe(self) -> str:
        return f"list of {len(self.items)}"

    def python_type(self) -> type:
        return list

    def apply_inplace(self, tx, fn, other: Variable) -> Variable:
        if fn is not operator.add:
            return super().apply_inplace(tx, fn, other)
        self.items.extend(other.unpack(tx, "list +="))
        tx.output.mark_mutated(self)
        return self

    def setitem(self, tx, index: Variable, value: Variable) -> None:
        key = index.as_constant()
        self.items[key] = value.known_items(tx, "slice assignment") if isinstance(key, slice) else value
        tx.output.mark_mutated(self)


@dataclass(eq=False)
class DictVariable(ContainerVariable):
    items: dict  # constant key -> Variable
    source: Source | None = None

    def as_constant(self):
        return {k: v.as_constant() for k, v in self.items.items()}

    def describe(self) -> str:
        return f"dict of {len(self.items)}"

    def python_type(self) -> type:
        return dict

    def iterate(self, tx, what: str) -> IteratorVariable:
        return IteratorVariable([ConstantVariable(k) for k in self.items])

    def getitem(self, tx, index: Variable) -> Variable:
        key = index.as_key(self)
        if key not in self.items:
            raise Unsupported(f"key {key!r} is not in the dict (KeyError)")
        return self.items[key]

    def setitem(self, tx, index: Variable, value: Variable) -> None:
        self.items[index.as_constant()] = value
        tx.output.mark_mutated(self)

    def contains(self, tx, item: Variable) -> bool:
        return item.as_constant() in self.items


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


def make_slice(start: Variable, stop: Variable, step: Variable) -> Variable:
    """start:stop:step, a constant where its bounds are."""
    var = SliceVariable(start, stop, step)
    return ConstantVariable(var.as_constant()) if var.is_constant() else var


def constant_result(value) -> Variable:
    """A Variable for a value computed at compile time from constants."""
    if isinstance(value, np.ndarray):
        raise Unsupported("a constant NumPy computation made an array outside the graph")
    if isinstance(value, (*CONSTANT_TYPES, np.generic)):
        return ConstantVariable(value)
    if type(value) is tuple:
        return TupleVariable([constant_result(v) for v in value])
    return ObjectVariable(value)


def dict_items(tx, args: list, kwargs: dict) -> dict:
    """The items of dict(*args, **kwargs)."""
    items = {}
    if args:
        src = args[0]
        if isinstance(src, DictVariable):
            items.update(src.items)
        else:
            for pair in src.unpack(tx, "dict()"):
                key, value = pair.unpack(tx, "dict()")
                items[key.as_constant()] = value
    items.update(kwargs)
    return items


# -- the methods -----------------------------------------------------------------------------
def _list_append(tx, args, kwargs):
    lst, value = args
    lst.items.append(value)
    tx.output.mark_mutated(lst)
    return ConstantVariable(None)


def _list_extend(tx, args, kwargs):
    lst, values = args
    lst.items.extend(values.unpack(tx, "list.extend()"))
    tx.output.mark_mutated(lst)
    return ConstantVariable(None)


def _list_insert(tx, args, kwargs):
    lst, index, value = args
    lst.items.insert(index.as_constant(), value)
    tx.output.mark_mutated(lst)
    return ConstantVariable(None)


def _list_pop(tx, args, kwargs):
    lst = args[0]
    if not lst.items:
        raise Unsupported("pop from an empty list (IndexError)")
    tx.output.mark_mutated(lst)
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
    d.items.update(dict_items(tx, args[1:], kwargs))
    tx.output.mark_mutated(d)
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
