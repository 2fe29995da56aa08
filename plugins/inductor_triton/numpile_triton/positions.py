"""Which gathers a Triton kernel loads directly: positions that are arithmetic of loop indices
(np.roll's `(i - k) mod n` as the scheduler writes it, `at(i - k, n)`) or read from a temporary
that only argmin and argmax stages write (`symbols[np.argmin(d)]`: positions in [0, n) of rows of n)
always inside the dimension, or read from a temporary only a slice_positions extern writes (the
positions of `a[a_row[i]:a_row[i + 1]]`, inside by Python's slice rules), or clipped to constants
inside it (np.hstack's and concatenate's pieces), which NumPy never refuses.
Other positions read from data can be out of range, where NumPy raises IndexError: the kernel checks
them (checks.py)."""

from __future__ import annotations

import math

import numpy as np

from numpile.lowering import Call, Const, Indirect, Kernel, Load, LoopIndex, Program


def gathers_inside(i: Indirect, extents: tuple, program: Program | None = None) -> bool:
    """Whether `i`'s positions always index its dimension as NumPy allows (from -size to size - 1),
    given the extents of the loop variables (and the program, whose arg-reductions' results lie
    inside their rows)."""
    bounds = _bounds(i.value, extents, program)
    return bounds is not None and _integer(i.size) and -i.size <= bounds[0] and bounds[1] < i.size


def _integer(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def _arg_rows(program: Program | None, buffer: str) -> int | None:
    """The longest row of the argmin and argmax stages that write `buffer`, a temporary nothing else
    writes (so each value in it is a position in [0, that row's length)), or None."""
    if program is None or program.buffers[buffer].kind != "temp":
        return None
    longest = None
    for step in program.steps:
        for stage in step.stages if isinstance(step, Kernel) else ():
            if stage.output == buffer:
                if stage.reduce not in ("argmin", "argmax") or not all(map(_integer, stage.inner)):
                    return None
                longest = max(longest or 0, math.prod(stage.inner))
        if not isinstance(step, Kernel) and buffer in step.outputs:
            return None
    return longest


def _sliced(program: Program | None, buffer: str) -> int | None:
    """The dimension's size where `buffer` is a temporary only a slice_positions extern writes
    (`a[a_row[i]:a_row[i + 1]]`'s positions, in [0, that size)), or None."""
    if program is None or program.buffers[buffer].kind != "temp":
        return None
    writers = [s for s in program.steps if buffer in s.outputs]
    if len(writers) != 1 or isinstance(writers[0], Kernel) or writers[0].op != "slice_positions":
        return None
    size = writers[0].args[0]
    return int(size) if _integer(size) else None


def _bounds(e, extents: tuple, program: Program | None = None) -> tuple | None:
    """The least and greatest value of an integer expression of loop indices, or None."""
    if isinstance(e, Load) and not any(isinstance(i, Indirect) for i in e.index):
        sliced = _sliced(program, e.buffer)
        if sliced is not None:
            return (0, sliced - 1)
        rows = _arg_rows(program, e.buffer)
        return None if not rows else (0, rows - 1)
    if isinstance(e, Const):
        return (int(e.value), int(e.value)) if _integer(e.value) else None
    if isinstance(e, LoopIndex):
        if not (_integer(e.index.const) and all(_integer(c) and _integer(extents[v]) for v, c in e.index.terms)):
            return None
        ends = [sorted((0, int(c) * (int(extents[v]) - 1))) for v, c in e.index.terms]
        return int(e.index.const) + sum(lo for lo, _ in ends), int(e.index.const) + sum(hi for _, hi in ends)
    if isinstance(e, Call) and e.op == "clip" and len(e.args) == 1:   # np.hstack's and concatenate's positions
        return _clipped(_bounds(e.args[0], extents, program), dict(e.kwargs))
    if isinstance(e, Call) and e.op in ("add", "subtract") and len(e.args) == 2:
        a, b = (_bounds(x, extents, program) for x in e.args)
        if a is None or b is None:
            return None
        return (a[0] + b[0], a[1] + b[1]) if e.op == "add" else (a[0] - b[1], a[1] - b[0])
    return None


def _clipped(inner: tuple | None, kwargs: dict) -> tuple | None:
    """The bounds of min(max(x, a_min), a_max) for x within `inner` (None: any integer)."""
    low, high = (kwargs.get(k) for k in ("a_min", "a_max"))
    if not (_integer(low) and _integer(high)):
        return None
    clip = lambda v: min(max(v, int(low)), int(high))   # noqa: E731
    return (min(int(low), int(high)), int(high)) if inner is None else (clip(inner[0]), clip(inner[1]))
