"""Ranges as loops take them: a range's values made as they are taken (a loop node's candidate,
tracer/control/loops.py); a range whose bounds are expressions of a loop's index, and one whose bounds
are integers computed in the graph (`range(indptr[i], indptr[i + 1])`), which only a loop node
can run."""

from __future__ import annotations

from dataclasses import dataclass

from ...exc import Retrace, Unsupported
from ...shapes import SymInt, loop_dependent
from .base import IteratorVariable, Variable
from .objects import ConstantVariable


@dataclass(frozen=True)
class SymbolicRange:
    """range(start, stop, step) with bounds that are expressions of a loop's index (`range(i)` in
    the body of a loop over i) or of symbolic sizes (`range(1, len(x) - 1)` of a dynamic x): only a
    loop node can run it. `site` (code, offset) of a range of sizes alone: where no loop node takes
    it, the frame is traced again with that range's sizes specialised (a guard on their values)."""

    start: object
    stop: object
    step: int
    site: tuple | None = None

    def __iter__(self):
        if self.site is not None:
            raise Retrace(f"a loop over {self} is not a loop node: its sizes are specialised", ("specialise", self.site))
        raise Unsupported(f"a loop over {self} cannot be unrolled (its length changes with an enclosing loop's index)")

    def __str__(self) -> str:
        return f"range({self.start}, {self.stop}, {self.step})"


@dataclass(frozen=True)
class DataRange:
    """range(start, stop, step) with a bound computed in the graph (a 0-d integer graph value):
    its length is known only when the graph runs, so only a loop node can run it, its index a
    graph value (a Python int) rather than a symbol."""

    start: object   # a Variable: an integer graph value or a constant
    stop: object
    step: int
    site: tuple | None = None   # of a range of Python ints made graph values: specialised where no loop node takes it

    def __iter__(self):
        if self.site is not None:
            raise Retrace(f"a loop over {self} is not a loop node: its ints are specialised", ("specialise", self.site))
        raise Unsupported("range() of an array needs its data (a NumPy value converted to Python): "
                          "a loop over it is captured only as a loop node")

    __len__ = __iter__

    def __str__(self) -> str:
        return f"range({self.start.describe()}, {self.stop.describe()}, {self.step})"


def make_range(*args, site: tuple | None = None):
    """range(*args), or a SymbolicRange where a bound is an expression of a loop's index, or with
    `site` (where the range is made, for a loop node to take) of a symbolic size."""
    sizes = site is not None and any(isinstance(a, SymInt) for a in args)
    if not any(loop_dependent(a) for a in args) and not sizes:
        return range(*args)
    start, stop, step = (0, args[0], 1) if len(args) == 1 else (*args, 1)[:3]
    if not isinstance(step, int) or step == 0:
        if sizes and not any(loop_dependent(a) for a in args):
            return range(*args)
        raise Unsupported(f"range() with step {step} over an expression of a loop's index")
    return SymbolicRange(start, stop, step, None if any(loop_dependent(a) for a in args) else site)


class RangeIteratorVariable(IteratorVariable):
    """iter(range(...)): its values are made as they are taken; a SymbolicRange has none to take."""

    def __init__(self, values):
        super().__init__([])
        self.range = values

    def next(self):
        if isinstance(self.range, (SymbolicRange, DataRange)):
            iter(self.range)   # raises, saying why
        if self.index >= len(self.range):
            return None
        self.index += 1
        return ConstantVariable(self.range[self.index - 1])

    def rest(self):
        return [ConstantVariable(v) for v in self.range[self.index:]] if isinstance(self.range, range) else list(self.range)

    def at(self, index):
        """The value a loop over the range takes at `index` (a loop's symbolic index, or the graph
        value of a DataRange's): the index."""
        return index if isinstance(index, Variable) else ConstantVariable(index)

    def remaining(self) -> tuple:
        """(first, last, stop, step, count) of the values not taken yet; count None where symbolic
        (last None too where the graph computes the bounds)."""
        if isinstance(self.range, DataRange):
            r = self.range
            return r.start, None, r.stop, r.step, None
        if isinstance(self.range, range):
            rest = self.range[self.index:]
            return (rest[0], rest[-1], rest.stop, rest.step, len(rest)) if rest else (None, None, rest.stop, rest.step, 0)
        r = self.range
        last = r.stop - 1 if r.step > 0 else r.stop + 1   # a bound of the last value: what decisions need
        return r.start, last, r.stop, r.step, None
