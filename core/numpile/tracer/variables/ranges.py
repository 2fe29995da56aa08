"""Ranges as loops take them: a range's values made as they are taken (a loop node's candidate,
tracer/loops.py), and a range whose bounds are expressions of a loop's index, which only a loop
node can run."""

from __future__ import annotations

from dataclasses import dataclass

from ...exc import Unsupported
from ...shapes import loop_dependent
from .base import IteratorVariable
from .objects import ConstantVariable


@dataclass(frozen=True)
class SymbolicRange:
    """range(start, stop, step) with bounds that are expressions of a loop's index (`range(i)` in
    the body of a loop over i): only a loop node can run it."""

    start: object
    stop: object
    step: int

    def __iter__(self):
        raise Unsupported(f"a loop over {self} cannot be unrolled (its length changes with an enclosing loop's index)")

    def __str__(self) -> str:
        return f"range({self.start}, {self.stop}, {self.step})"


def make_range(*args):
    """range(*args), or a SymbolicRange where a bound is an expression of a loop's index."""
    if not any(loop_dependent(a) for a in args):
        return range(*args)
    start, stop, step = (0, args[0], 1) if len(args) == 1 else (*args, 1)[:3]
    if not isinstance(step, int) or step == 0:
        raise Unsupported(f"range() with step {step} over an expression of a loop's index")
    return SymbolicRange(start, stop, step)


class RangeIteratorVariable(IteratorVariable):
    """iter(range(...)): its values are made as they are taken; a SymbolicRange has none to take."""

    def __init__(self, values):
        super().__init__([])
        self.range = values

    def next(self):
        if isinstance(self.range, SymbolicRange):
            iter(self.range)   # raises, saying why
        if self.index >= len(self.range):
            return None
        self.index += 1
        return ConstantVariable(self.range[self.index - 1])

    def rest(self):
        return [ConstantVariable(v) for v in self.range[self.index:]] if isinstance(self.range, range) else list(self.range)

    def at(self, index) -> ConstantVariable:
        """The value a loop over the range takes at `index` (a loop's symbolic index): the index."""
        return ConstantVariable(index)

    def remaining(self) -> tuple:
        """(first, last, stop, step, count) of the values not taken yet; count None where symbolic."""
        if isinstance(self.range, range):
            rest = self.range[self.index:]
            return (rest[0], rest[-1], rest.stop, rest.step, len(rest)) if rest else (None, None, rest.stop, rest.step, 0)
        r = self.range
        last = r.stop - 1 if r.step > 0 else r.stop + 1   # a bound of the last value: what decisions need
        return r.start, last, r.stop, r.step, None
