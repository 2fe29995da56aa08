"""A reduction's trailing inner loops run as one loop where every element it reads sits at an
address linear in their row-major flat index, as NumPy's iterator coalesces C-ordered axes:
`a.sum(axis=(1, 2))` of a (1000, 30, 40) int64 array reads a[i0, i1, i2] at byte 320*i1 + 8*i2
= 8*(40*i1 + i2), one loop of 1200 elements in a row. As two loops, LLVM unrolled the constant
inner one and gathered across rows (0.03x NumPy); a float sum split its flat index by a division
and a remainder per element (0.5x).

The merged loops' variables are then all 0 but the last, which takes the flat index: every
address, a row buffer's row-major offset and an arg-reduction's flat position are unchanged.
"""

from __future__ import annotations

from numpile.lowering import Load, LoopIndex, Stage, gathers, walk

from .plan import element_offset


def coalesced_loops(stage: Stage, first: int, strides: dict, split_loop: int | None) -> int:
    """How many of `stage`'s trailing inner loops (its loop variables are numbered from `first`)
    run as one loop over their flat index: 1 where none merge. Only reductions over elements
    whose every address is known (no gathers, no loop index as a value); the loop a kernel's
    threads split is not merged."""
    inner = stage.inner
    if stage.reduce is None or stage.scan or len(inner) < 2 or not all(isinstance(n, int) for n in inner):
        return 1
    last = len(inner) - 1
    parts = list(walk(stage.value))
    if any(isinstance(e, LoopIndex) or isinstance(e, Load) and gathers(e) for e in parts):
        return 1
    coefficients = [element_offset(e.index, strides[e.buffer])[0] for e in parts if isinstance(e, Load)]
    merged = 1
    while merged <= last:
        k = last - merged   # the loop that would join the merged ones after it
        if split_loop is not None and split_loop >= k:
            break
        linear = all(isinstance(c.get(first + k, 0), int) and isinstance(c.get(first + k + 1, 0), int)
                     and c.get(first + k, 0) == c.get(first + k + 1, 0) * inner[k + 1] for c in coefficients)
        if not linear:
            break
        merged += 1
    return merged
