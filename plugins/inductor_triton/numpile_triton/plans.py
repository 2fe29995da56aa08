"""How a kernel runs on the GPU (kernel.py's note says what each mode is): the plan's record and the
launch sizes behind it, shared by the renderers (kernel.py, scans.py) and the launches (launch.py)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from numpile.lowering import Buffer, BufferArg, Kernel

POINTWISE_BLOCK = 1024     # elements per program of a pointwise kernel
PERSISTENT_MAX = 8192      # the longest row a program keeps whole in registers
LOOP_RBLOCK = 1024         # elements per step of a looped row
SPLIT_RBLOCK = 4096        # ... of a split reduction's chunk (1024 left the H100 at 61% of its bandwidth, 4096: 93%)
ROW_TILE = 4096            # XBLOCK * RBLOCK of a row kernel's block, at most
SPLIT_MIN = 1 << 14        # a whole-array reduction over more elements splits over programs
SPLIT_PROGRAMS = 256       # ... over this many
INT32_MAX = 2 ** 31 - 1


@dataclass
class KernelPlan:
    kernel: Kernel
    mode: str                     # "pointwise", "persistent", "looped", "split" (kernel.py), "scan", "scan_split" (scans.py)
    arrays: list                  # buffer names passed, in order
    rows: object = 1              # rows (row kernels), partials (split) or elements (pointwise)
    cols: list = field(default_factory=list)   # each stage's row length
    partial: str | None = None    # split: the buffer of partial results
    positions: str | None = None  # split argmin/argmax: the buffer of their positions (the combining kernel's too)
    combine: "KernelPlan | None" = None        # split: the kernel that combines the partials
    checked: str | None = None    # the flag of gathers through positions read from data (checks.py)
    unproven: frozenset = frozenset()          # ... those gathers (their Indirects' text)


def partials_buffer(name: str, dtype: np.dtype) -> Buffer:
    """The buffer of a split kernel's partial results, one per program."""
    return Buffer(name, (SPLIT_PROGRAMS,), dtype, "temp")


def reads(step) -> set:
    """The buffers a program step reads: a kernel's inputs, an extern's buffer arguments (in tuples
    and lists too)."""
    if isinstance(step, Kernel):
        return set(step.inputs)
    found = set()

    def each(v):
        if isinstance(v, BufferArg):
            found.add(v.name)
        elif isinstance(v, (tuple, list)):
            for x in v:
                each(x)
    each(step.args)
    each(list(step.kwargs.values()))
    return found
