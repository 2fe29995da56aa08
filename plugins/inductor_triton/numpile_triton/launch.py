"""Launch configurations from sizes: how many programs a kernel runs and the block sizes each
takes (see kernel.py's note for the modes). Sizes known at compile time are decided once; with
dynamic shapes, on every call from the sizes of that call (Triton compiles once per distinct set
of block sizes, all powers of two)."""

from __future__ import annotations

import math

from .kernel import LOOP_RBLOCK, POINTWISE_BLOCK, ROW_TILE, SPLIT_PROGRAMS, KernelPlan, next_power_of_2


def _warps(elements: int) -> int:
    """Warps per program: one per 256 elements of its block, 1 to 16."""
    return max(1, min(16, elements // 256))


def config(kp: KernelPlan, rows: int, cols: tuple) -> tuple | None:
    """(grid, constexpr and runtime block arguments, num_warps) for these sizes, or None when
    the kernel has nothing to do."""
    if kp.mode == "pointwise":
        if rows == 0:
            return None
        block = min(POINTWISE_BLOCK, next_power_of_2(rows))
        return (math.ceil(rows / block),), {"BLOCK": block}, _warps(block)
    longest = max(max(cols, default=1), 1)
    if kp.mode == "split":
        rblock = min(LOOP_RBLOCK, next_power_of_2(longest))
        chunk = math.ceil(math.ceil(cols[0] / SPLIT_PROGRAMS) / rblock) * rblock or rblock
        return (SPLIT_PROGRAMS,), {"CHUNK": chunk, "XBLOCK": 1, "RBLOCK": rblock}, _warps(rblock)
    if rows == 0:
        return None
    rblock = next_power_of_2(longest) if kp.mode == "persistent" else min(LOOP_RBLOCK, next_power_of_2(longest))
    xblock = min(next_power_of_2(rows), max(1, ROW_TILE // rblock))
    return (math.ceil(rows / xblock),), {"XBLOCK": xblock, "RBLOCK": rblock}, _warps(xblock * rblock)


class Launch:
    """Runs one kernel (and a split reduction's combining kernel after it) on device tensors."""

    def __init__(self, kp: KernelPlan, fn, combine: "Launch | None" = None, static: tuple | None = None):
        self.kp, self.fn, self.combine = kp, fn, combine
        self.static = static   # (rows, cols) when no size is symbolic: the config is decided once
        self.fixed = config(kp, *static) if static is not None else None

    def __call__(self, arrays: tuple, sizes: tuple = (), rows: int | None = None, cols: tuple = ()) -> None:
        launch = self.fixed if self.static is not None else config(self.kp, rows, cols)
        if launch is not None:
            grid, blocks, warps = launch
            self.fn[grid](*arrays, *sizes, **blocks, num_warps=warps, enable_fp_fusion=False)
        if self.combine is not None:
            picked = [arrays[self.kp.arrays.index(b)] for b in self.combine.kp.arrays]
            self.combine(tuple(picked), (), 1, (SPLIT_PROGRAMS,))
