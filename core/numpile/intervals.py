"""The values an expression of loop symbols takes while its loops run, as an interval of ints.

shapes.py decides a linear expression of a loop's index at the two ends of its range. An
expression with `//` or `%` (`(i + 1) % n`, `k // 4` of an index that walks a flattened array)
is not linear, but it is bounded: `a % m` lies in [0, m - 1] for m > 0, `a // m` between the
quotients of a's bounds, `min(a, b)` (a slice's end past an array's) between the two's.
`interval` gives those bounds from the loops' ranges, or None where they are not known (an
operation without a rule), and the decision then depends on the data as before. Sizes are the
same at every index: a bound may be an expression of them (a SymInt), which the decision then
compares as any other, a guard. (pythran's 2-d convolution reads `x[min(max(0, i + ii - 2), 5)]`:
once a new shape made x's sizes symbols, its index checks `min(...) < s0` could not be taken
over the loops, and the loops unrolled.)
"""

from __future__ import annotations


def interval(x, loops: dict, sizes) -> tuple | None:
    """(low, high) of x over the loops' ranges. x: an int, or a SymInt, linear (`terms`, `const`)
    or opaque with its `tree` (op, a, b) where its shapes.py operation recorded one; `loops`: loop
    symbol name -> loop_ranges.LoopRange; `sizes(x)`: linear x without its loop symbols' terms."""
    if isinstance(x, int):
        return x, x
    if x.opaque is None:
        low = high = sizes(x)
        for name, coeff in x.terms:
            if name not in loops:
                continue
            ends = [interval(e, loops, sizes) for e in loops[name].low_high()]
            if None in ends:
                return None
            lo, hi = ends[0][0], ends[1][1]
            low, high = (low + coeff * lo, high + coeff * hi) if coeff > 0 else (low + coeff * hi, high + coeff * lo)
        return low, high
    if x.tree is None:
        return None
    op, a, b = x.tree
    a, b = interval(a, loops, sizes), interval(b, loops, sizes)
    return None if a is None or b is None else _RULES[op](a, b)


def _corners(fn, a, b) -> tuple:
    values = [fn(p, q) for p in a for q in b]
    return min(values), max(values)


def _floor_divide(a, b):
    # for a divisor > 0, a // b is monotone in each argument: its bounds are at the corners
    return _corners(lambda p, q: p // q, a, b) if b[0] > 0 else None


def _remainder(a, b):
    if b[0] <= 0:
        return None
    return a if 0 <= a[0] and a[1] < b[0] else (0, b[1] - 1)   # a % m is a itself where 0 <= a < m


_RULES = {
    "+": lambda a, b: (a[0] + b[0], a[1] + b[1]),
    "-": lambda a, b: (a[0] - b[1], a[1] - b[0]),
    "*": lambda a, b: _corners(lambda p, q: p * q, a, b),
    "//": _floor_divide,
    "%": _remainder,
    "max": lambda a, b: (max(a[0], b[0]), max(a[1], b[1])),
    "min": lambda a, b: (min(a[0], b[0]), min(a[1], b[1])),
}
