"""Iterators whose items are known by position: the rows of an array, `enumerate` and `zip` of
such iterables, `np.ndindex`, `np.ndenumerate` and `a.flat`.

A loop node takes the item at its symbolic index (tracer/control/loops.py asks `remaining()` for the
positions and `at(index)` for the item there); an unrolled loop takes them in turn (`next()`).
`enumerate` and `zip` are positional where everything they iterate is (an array, a range, another
of these); of anything else (a list, a tuple of Python values) they are the plain iterators of
their items they always were. np.ndindex walks a flattened index: the item at position k is the
tuple of `k // stride % dim`, whose bounds shapes.py knows over a loop (intervals.py).
"""

from __future__ import annotations

import copy
import itertools
import math
import operator

import numpy as np

from ... import ops
from ...exc import Unsupported
from .base import IteratorVariable, Variable
from .containers import TupleVariable
from .objects import ConstantVariable
from ..sources import ExprSource


class PositionalIterator(IteratorVariable):
    """An iterator of `length` items, item k made by `item(k)` (k an int or a loop's SymInt, where
    `by_symbol`: a loop over it may be a loop node)."""

    by_symbol = True

    def __init__(self, length: int):
        super().__init__([])
        self.length = length

    def item(self, position) -> Variable:
        raise NotImplementedError

    def next(self) -> Variable | None:
        if self.index >= self.length:
            return None
        self.index += 1
        return self.item(self.index - 1)

    def rest(self) -> list[Variable]:
        return [self.item(k) for k in range(self.index, self.length)]

    def remaining(self) -> tuple:
        """(first, last, stop, step, count) of the positions not taken yet (a loop node's range)."""
        return self.index, self.length - 1, self.length, 1, self.length - self.index

    def at(self, index) -> Variable:
        """The item a loop over the iterator takes at `index` (a loop's symbolic index)."""
        return self.item(index)

    def residual(self, expr, const, start: int) -> str:
        """Python source of the same iterator from position `start` on (residual code at a graph
        break): `expr(variable)` and `const(value)` give the source of what it reads."""
        raise NotImplementedError


class ArrayIteratorVariable(PositionalIterator):
    """iter(x) of an array x: each step indexes x when it is taken, as NumPy's iterator does (a view
    of the row, or a copy of the element of a 1-d x), so updates of x in the loop are seen."""

    def __init__(self, array, length: int, row):
        super().__init__(length)
        self.array, self.row = array, row  # row(i): the Variable for x[i], made now

    def item(self, position) -> Variable:
        return self.row(position)

    def residual(self, expr, const, start: int) -> str:
        items = f"map({expr(self.array)}.__getitem__, range({start}, {self.length}))"
        if len(self.array.node.shape) != 1:
            return items   # rows are views, in every array library
        # an element of a 1-d array is NumPy's scalar, a copy; a CuPy array's or a tensor's x[i] is a
        # 0-d view, through which `for v in x: v *= 2` resumed after a break wrote into x (the traced
        # steps did not). deepcopy: copy.copy of a tensor shares its memory
        return f"map({const(copy.deepcopy)}, {items})"


class RangeItems(PositionalIterator):
    """The values of a range, by position (a range inside enumerate or zip)."""

    def __init__(self, values: range):
        super().__init__(len(values))
        self.values = values

    def item(self, position) -> Variable:
        return ConstantVariable(self.values.start + position * self.values.step)

    def residual(self, expr, const, start: int) -> str:
        return f"iter({const(self.values[start:])})"


class Enumerate(PositionalIterator):
    def __init__(self, inner: PositionalIterator, start: int):
        super().__init__(inner.length)
        self.inner, self.start = inner, start

    def item(self, position) -> Variable:
        return TupleVariable([ConstantVariable(self.start + position), self.inner.item(position)])

    def residual(self, expr, const, start: int) -> str:
        return f"enumerate({self.inner.residual(expr, const, start)}, {self.start + start})"


class Zip(PositionalIterator):
    def __init__(self, inners: list):
        super().__init__(min(i.length for i in inners))
        self.inners = inners

    def item(self, position) -> Variable:
        return TupleVariable([i.item(position) for i in self.inners])

    def residual(self, expr, const, start: int) -> str:
        return f"zip({', '.join(i.residual(expr, const, start) for i in self.inners)})"


class NdIndex(PositionalIterator):
    """np.ndindex(*shape): the index tuples of an array of that shape, in C order."""

    def __init__(self, shape: tuple):
        self.shape = tuple(map(operator.index, shape))   # sizes specialised (guarded), as a range's are
        super().__init__(math.prod(self.shape))

    def item(self, position) -> Variable:
        index, stride = [], self.length
        for n in self.shape:
            stride //= n
            k = position // stride if stride != 1 else position
            index.append(ConstantVariable(k % n if index else k))   # the first is below its dim already
        return TupleVariable(index)

    def residual(self, expr, const, start: int) -> str:
        return f"{const(itertools.islice)}({const(np.ndindex)}({const(self.shape)}), {start}, None)"


class ArrayItems(PositionalIterator):
    """`a.flat` and np.ndenumerate(a): a's elements in C order (with their index tuples)."""

    def __init__(self, tx, array, with_index: bool):
        self.indices = NdIndex(array.node.shape)
        super().__init__(self.indices.length)
        self.tx, self.array, self.with_index = tx, array, with_index

    def item(self, position) -> Variable:
        index = self.indices.item(position)
        element = self.array.getitem(self.tx, index)
        return TupleVariable([index, element]) if self.with_index else element

    def getitem(self, tx, index: Variable) -> Variable:
        """`a.flat[index]` (not iterated yet): the flattened array's elements at index, a copy where
        more than one (a NumPy scalar for an int index)."""
        if self.with_index or self.index:
            return super().getitem(tx, index)
        flat = tx.output.call_op(ops.get("reshape"), (self.array, ConstantVariable(-1)), {})
        picked = flat.getitem(tx, index)
        scalar = not hasattr(picked, "node") or picked.node.meta["scalar"]
        return picked if scalar else tx.output.call_op(ops.get("copy"), (picked,), {})

    def residual(self, expr, const, start: int) -> str:
        if not self.with_index and start == 0:   # NumPy's own flatiter: indexed and assigned through too
            return f"{expr(self.array)}.flat"
        items = f"{const(np.ndenumerate)}({expr(self.array)})" if self.with_index else f"{expr(self.array)}.flat"
        return f"{const(itertools.islice)}({items}, {start}, None)"


def positional(tx, value: Variable, what: str) -> PositionalIterator | None:
    """`value` as a positional iterable for enumerate/zip: a range, an array's rows, an untaken
    positional iterator; None for anything else."""
    if isinstance(value, PositionalIterator):
        return value if value.index == 0 else None
    if value.is_constant():
        return RangeItems(value.as_constant()) if type(value.as_constant()) is range else None
    it = value.iterate(tx, what)   # an array's: its rows
    return it if isinstance(it, PositionalIterator) and it.index == 0 else None


def enumerate_of(tx, args: list, kwargs: dict) -> PositionalIterator | None:
    start = (args[1] if len(args) > 1 else kwargs.get("start", ConstantVariable(0))).as_constant()
    inner = positional(tx, args[0], "enumerate()")
    return Enumerate(inner, start) if inner is not None else None


def zip_of(tx, args: list, kwargs: dict) -> PositionalIterator | None:
    if kwargs.get("strict") is not None or not args:
        return None
    inners = [positional(tx, a, "zip()") for a in args]
    if None in inners or len({id(i) for i in inners}) < len(inners):   # zip(it, it) takes in turn
        return None
    return Zip(inners)


def ndindex(tx, args: list, kwargs: dict) -> NdIndex:
    if kwargs:
        raise Unsupported("np.ndindex with keyword arguments")
    shape = tuple(a.as_constant() for a in args)
    if len(shape) == 1 and isinstance(shape[0], tuple):
        shape = shape[0]
    return NdIndex(tuple(shape))


def ndenumerate(tx, args: list, kwargs: dict) -> ArrayItems:
    (array,) = args
    if not issubclass(array.python_type(), np.ndarray):
        raise Unsupported(f"np.ndenumerate of {array.describe()}")
    return ArrayItems(tx, array, with_index=True)


# iter() of a list or a tuple, whose __reduce__ gives the sequence and the position, taking nothing
SEQUENCE_ITERATORS = (type(iter([])), type(iter(())))


class SequenceIterator(PositionalIterator):
    """A list's or a tuple's iterator reached through `source`: a loop's, which the function
    resuming the loop after a break in its body takes on its stack. Items are read where the trace
    takes them, guarded on only as many remaining as it took (a loop that breaks every iteration
    resumes with one entry, not one per count left); the residual code goes on with a copy of it.
    Its loops are unrolled: an item is any Python value, none at a symbolic position. Not the rest
    of a range (Python ints, as residual code hands it on): a loop over a range resumed every
    iteration (mandelbrot2's `if not len(Z): break`) ran 20% slower traced so, cause not found."""

    by_symbol = False

    @staticmethod
    def takes(value) -> bool:
        return type(value) in SEQUENCE_ITERATORS and not all(type(v) is int for v in value.__reduce__()[1][0])

    def __init__(self, out, value, source):
        reduced = value.__reduce__()   # (iter, (sequence,), position); exhausted: (iter, ((),))
        super().__init__(len(reduced[1][0]) - (reduced[2:] or (0,))[0])
        self.out, self.origin = out, source   # (not `source`: the iterator the trace advanced is another)
        out.guards.add(source, "type", type(value))
        self.left = f"(len({source.expr()}.__reduce__()[1][0]) - ({source.expr()}.__reduce__()[2:] or (0,))[0])"

    def _guard(self, relation: str) -> None:
        self.out.guards.add(ExprSource(f"{self.left} {relation}"), "expr", None)

    def item(self, position) -> Variable:
        here = self.origin.expr()
        self._guard(f"> {position}")
        source = ExprSource(f"{here}.__reduce__()[1][0][{here}.__reduce__()[2] + {position}]")
        return self.out.wrap(self.out.read_source(source), source)

    def next(self) -> Variable | None:
        if self.index >= self.length:
            self._guard(f"== {self.index}")
            return None
        return super().next()

    def rest(self) -> list[Variable]:
        self._guard(f"== {self.length}")
        return super().rest()

    def residual(self, expr, const, start: int) -> str:
        return f"{const(_advanced)}({self.origin.expr()}, {start})"


def _advanced(it, k: int):
    """A new iterator over the sequence of `it`, k items past it (`it` stays as it is: the residual
    code reads the items the trace took through it)."""
    reduced = it.__reduce__()
    new = iter(reduced[1][0])
    new.__setstate__((reduced[2:] or (0,))[0] + k)
    return new
