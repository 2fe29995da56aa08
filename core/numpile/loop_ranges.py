"""The ranges of the loops being captured or lowered: what decisions on their loop symbols are
taken over (shapes.py decides a linear expression of a loop's index at both ends of its range).

`loop_range` sets a loop's range while its body is traced or lowered; where the loop's length is
an expression of enclosing loops' indices (`range(i)` in a loop over i), the enclosing ranges are
narrowed to where it is not empty, for the body runs only there. `assuming` narrows them to where
a side of a branch on indices runs (`if i < j - 1`). The ranges themselves are this thread's
(`shapes.ranges_in_force()`), since decisions read them; this module is what sets them.
"""

from __future__ import annotations

import contextlib
import threading
from dataclasses import dataclass

from .shapes import NEGATED, NewGuard, SymInt, hint, ranges_in_force, substitute_loop_symbol


@dataclass(frozen=True)
class LoopRange:
    """The values a loop symbol takes while its body runs: from `first` to `last` (ints or
    expressions of enclosing loops' symbols and sizes) in the direction of `step`; `hint` is the
    symbol's own hint (its first value when the trace began, None where unknown)."""

    first: object
    last: object
    step: int
    hint: int | None

    def low_high(self) -> tuple:
        return (self.first, self.last) if self.step > 0 else (self.last, self.first)

    def with_low_high(self, low, high) -> "LoopRange":
        first, last = (low, high) if self.step > 0 else (high, low)
        return LoopRange(first, last, self.step, self.hint)


class _Key(threading.local):
    """active_loop_ranges() of this thread's ranges, made once per change of them (None: not made)."""

    def __init__(self):
        self.text: tuple | None = None


_KEY = _Key()


@contextlib.contextmanager
def loop_range(index: "SymInt", first, last, step: int):
    """Decisions on `index` (a loop symbol) made inside are taken for every value from first to
    last, the loop going by `step`. Where the loop's length is an expression of enclosing loops'
    indices (`range(i)`, `range(i + 1, j)` in loops over i and j), their ranges are narrowed to
    the values for which it is not empty: the body runs only for those."""
    name, loops = index.expr, ranges_in_force()
    narrowed = _nonempty(first, last, step)
    saved = {k: loops[k] for k in narrowed}
    loops.update(narrowed)
    loops[name] = LoopRange(first, last, step, index.hint if index.hint is not None else hint(first))
    _KEY.text = None
    try:
        yield
    finally:
        del loops[name]
        loops.update(saved)
        _KEY.text = None


def active_loop_ranges() -> tuple:
    """The ranges of the loops being captured or lowered, innermost last, as text (a key: what
    lowering a loop's body decided holds for these)."""
    if _KEY.text is None:   # a loop's body runs many times under one set of ranges: made once for them
        _KEY.text = tuple((name, str(r.first), str(r.last)) for name, r in ranges_in_force().items())
    return _KEY.text


def in_loop() -> bool:
    """Whether a loop is being captured or lowered (a loop symbol's range is set)."""
    return bool(ranges_in_force())


def is_loop_symbol(k) -> bool:
    """Whether symbol s<k> is the index of a loop being captured or lowered."""
    return f"s{k}" in ranges_in_force()


def _nonempty(first, last, step: int) -> dict:
    """{enclosing loop symbol: its narrowed LoopRange} for which a loop from first to last by
    step runs (see loop_range)."""
    return _narrowed(last - first if step > 0 else first - last)


def _narrowed(gap) -> dict:
    """{loop symbol: its narrowed LoopRange} for which `gap >= 0` (a linear expression): the
    innermost loop symbol of the gap narrowed, then the loops its new range needs narrowed in
    turn. Nothing is narrowed where the new end cannot be compared with the old one (decisions
    then cover the wider range: sound, if less often decided)."""
    if not isinstance(gap, SymInt) or gap.opaque is not None:
        return {}
    terms, loops = dict(gap.terms), ranges_in_force()
    outer = next((name for name in reversed(loops) if name in terms), None)
    if outer is None:
        return {}
    coeff, rest = terms[outer], substitute_loop_symbol(gap, outer, 0)   # gap = coeff * outer + rest
    if isinstance(rest, SymInt) and abs(coeff) != 1:
        return {}
    r = loops[outer]
    low, high = r.low_high()
    if coeff > 0:   # outer >= ceil(-rest / coeff)
        low = _larger(low, -(rest // coeff) if isinstance(rest, int) else -rest)
    else:           # outer <= floor(rest / -coeff)
        high = _smaller(high, rest // -coeff if isinstance(rest, int) else rest)
    if low is None or high is None:
        return {}
    narrowed = r.with_low_high(low, high)
    return {**_nonempty(narrowed.first, narrowed.last, narrowed.step), outer: narrowed}


# What `a sym b` says of loop symbols, as gaps that are >= 0 where it holds (`!=` leaves two
# ranges, which one range cannot say).
_GAPS = {"<": lambda a, b: (b - a - 1,), "<=": lambda a, b: (b - a,), ">": lambda a, b: (a - b - 1,),
         ">=": lambda a, b: (a - b,), "==": lambda a, b: (a - b, b - a), "!=": lambda a, b: ()}


def facts(sym: str, a, b, holds: bool = True) -> tuple:
    """The gaps (see `assuming`) that `a sym b` (or, with holds False, its negation) gives."""
    return _GAPS[sym if holds else NEGATED[sym]](a, b)


@contextlib.contextmanager
def assuming(gaps: tuple):
    """Decisions made inside hold where every gap (a linear expression of loop symbols) is >= 0:
    the loops' ranges narrowed to where it is (a side of a branch on `i < j - 1` runs only there)."""
    loops = ranges_in_force()
    saved = dict(loops)
    for gap in gaps:
        loops.update(_narrowed(gap))
    _KEY.text = None
    try:
        yield
    finally:
        loops.clear()
        loops.update(saved)
        _KEY.text = None


def _larger(a, b):
    """The larger of a and b, a decision as any other (a guard on sizes, or one over enclosing
    loops); None where it cannot be taken."""
    try:
        return a if a >= b else b
    except NewGuard:
        return None


def _smaller(a, b):
    return None if (larger := _larger(a, b)) is None else b if larger is a else a
