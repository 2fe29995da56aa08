"""Which gathers a Triton kernel loads directly: positions that are arithmetic of loop indices
(np.roll's `(i - k) mod n` as the scheduler writes it, `at(i - k, n)`) always inside the dimension,
which NumPy never refuses. Positions read from data can be out of range, where NumPy raises
IndexError: those kernels stay with the reference renderer, which raises it."""

from __future__ import annotations

import numpy as np

from numpile.lowering import Call, Const, Indirect, LoopIndex


def gathers_inside(i: Indirect, extents: tuple) -> bool:
    """Whether `i`'s positions always index its dimension as NumPy allows (from -size to size - 1),
    given the extents of the loop variables."""
    bounds = _bounds(i.value, extents)
    return bounds is not None and _integer(i.size) and -i.size <= bounds[0] and bounds[1] < i.size


def _integer(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def _bounds(e, extents: tuple) -> tuple | None:
    """The least and greatest value of an integer expression of loop indices, or None."""
    if isinstance(e, Const):
        return (int(e.value), int(e.value)) if _integer(e.value) else None
    if isinstance(e, LoopIndex):
        if not (_integer(e.index.const) and all(_integer(c) and _integer(extents[v]) for v, c in e.index.terms)):
            return None
        ends = [sorted((0, int(c) * (int(extents[v]) - 1))) for v, c in e.index.terms]
        return int(e.index.const) + sum(lo for lo, _ in ends), int(e.index.const) + sum(hi for _, hi in ends)
    if isinstance(e, Call) and e.op in ("add", "subtract") and len(e.args) == 2:
        a, b = (_bounds(x, extents) for x in e.args)
        if a is None or b is None:
            return None
        return (a[0] + b[0], a[1] + b[1]) if e.op == "add" else (a[0] - b[1], a[1] - b[0])
    return None
