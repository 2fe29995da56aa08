"""Slices over sizes that may be symbolic (shapes.py): how long a slice is and where it starts,
as `slice.indices` resolves them, with the comparisons that takes made decisions (guards, or
decisions over a loop's range where a bound is an expression of its index)."""

from __future__ import annotations

from .shapes import DataDependent, SymInt, is_unbacked, loop_dependent, sym_max


def slice_length(s: slice, size):
    """len(range(*s.indices(size))) for a size that may be symbolic; the comparisons it makes on
    the size become guards."""
    if not isinstance(size, SymInt) and not loop_dependent(s.start, s.stop):
        return len(range(*s.indices(size)))
    start, stop, step = _bounds(s, size)
    length = (_difference(stop, start) + step - 1) // step if step > 0 else (_difference(start, stop) - step - 1) // -step
    if loop_dependent(length):   # in a loop's body: one decision for every index (a length of 0 at one end is fine)
        return length if length >= 0 else 0
    return sym_max(0, length) if is_unbacked(length) else max(0, length)   # a size only the data knows: no decision


def slice_start(s: slice, size):
    """s.indices(size)[0] for a size that may be symbolic (the comparisons slice_length makes)."""
    return s.indices(size)[0] if not isinstance(size, SymInt) and not loop_dependent(s.start, s.stop) else _bounds(s, size)[0]


def _bounds(s: slice, size) -> tuple:
    """(start, stop, step) as slice.indices resolves them, for a symbolic size."""
    step = 1 if s.step is None else s.step
    lo, hi = (0, size) if step > 0 else (-1, size - 1)
    first, last = (lo, hi) if step > 0 else (hi, lo)
    start = first if s.start is None else _clamp(s.start, size, lo, hi)
    stop = last if s.stop is None else _clamp(s.stop, size, lo, hi)
    return start, stop, step


def _clamp(bound: int, size, lo, hi):
    """A slice bound as slice.indices resolves it: negatives count from the end, then clamped to [lo, hi]."""
    value = bound + size if bound < 0 else bound
    if loop_dependent(value):
        return _over_loop(value, lo, hi)
    if is_unbacked(value):      # a size only the data knows: no decision where the larger is known (`x[:-1]`)
        return sym_max(lo, min(value, hi))
    return max(lo, min(value, hi))


def _over_loop(value, lo, hi):
    """value clamped to [lo, hi] for every index of the loop: decided where it holds at both ends
    of the loop's range, else symbolic (`x[i:i + k]` whose end passes the array's for the last
    indices: min(i + k, n))."""
    try:
        low = value if value >= lo else lo
    except DataDependent:
        low = sym_max(value, lo)
    try:
        return low if low <= hi else hi
    except DataDependent:
        return sym_max(low, hi, min)


def _difference(a, b):
    """a - b, taken inside a symbolic min or max (min(i + k, n) - i is min(k, n - i)), so that its
    bounds over a loop keep what the two sides share (intervals.py bounds each side alone)."""
    for x, subtracted in ((a, False), (b, True)):
        tree = x.tree if isinstance(x, SymInt) else None
        if tree is not None and tree[0] in ("min", "max"):
            _, p, q = tree
            fn = min if (tree[0] == "min") != subtracted else max   # a - min(p, q) is max(a - p, a - q)
            return sym_max(*((_difference(p, b), _difference(q, b)) if not subtracted
                             else (_difference(a, p), _difference(a, q))), fn)
    return a - b
