"""Gathers through positions read from data (`x[cols]`, `A_val[A_row[i]:A_row[i + 1]]`'s picked
positions), loaded by the Triton kernel and checked after it.

NumPy raises IndexError for a position outside its dimension, which a kernel cannot. So a kernel
whose gathers are not all provably inside (positions.py) takes one more buffer, its flag, zeroed
before the launch: each lane whose position is out of range stores 1 there and loads from position
0 instead (never outside the buffer). After the launch the runner reads the flag (a
synchronisation, as the reference renderer's own range check is one) and, where it is set, runs the
kernel through the lowering's reference renderer on host copies: that raises NumPy's IndexError with
NumPy's message. Running it again is exact only where the kernel's launch changed nothing it reads:
a kernel that updates a buffer in place, or stores through an index array (a scatter), or scans,
stays with the reference renderer. A program with such a kernel reads a number after it, so its
launches are not captured in CUDA graphs (loop_graphs.py, graphs.py).

spmv's row loop (NPBench) ran each row's gather through about thirty CuPy operations and two
range checks; it is one launch and one check now.
"""

from __future__ import annotations

import numpy as np

from numpile.lowering import Buffer, Indirect, Kernel, Program
from numpile.lowering.reference import run_kernel

from .scalar import Unlowerable

FLAG_DTYPE = np.dtype(np.int32)


def flag_buffer(kernel: Kernel, program: Program) -> str:
    """The name of `kernel`'s flag buffer, added to the program; Unlowerable where checking after
    the launch would not be exact (see the module's docstring)."""
    if set(kernel.outputs) & set(kernel.inputs):
        raise Unlowerable("a load through an index array in a kernel that updates a buffer in place")
    for stage in kernel.stages:
        if stage.scan:
            raise Unlowerable("a load through an index array in a scan")
        if any(isinstance(i, Indirect) for i in stage.output_index):
            raise Unlowerable("a store through an index array")
    name = f"{kernel.name}_out_of_range"
    program.buffers[name] = Buffer(name, (1,), FLAG_DTYPE, "temp")
    return name


def guard(renderer, position: str, size: str, mask: str | None) -> str:
    """Kernel lines flagging the lanes of `position` (a block of positions) outside [-size, size);
    the position to load from, 0 in those lanes."""
    flag = renderer.pointers[renderer.kp.checked]
    bad = renderer.let(f"({position} < -{size}) | ({position} >= {size})", np.bool_).text
    # the mask's shape, which a row's positions ([XBLOCK, 1]) may not have
    flagged = bad if mask is None else renderer.let(f"{bad} & ({mask})", np.bool_).text
    renderer.emit(f"tl.store({flag} + {flagged}.to(tl.int32) * 0, {flagged}.to(tl.int32), mask={flagged})")
    return renderer.let(f"tl.where({bad}, 0, {position})", renderer.index_dtype).text


class Check:
    """The runner's check after a checked kernel's launch (see the module's docstring)."""

    def __init__(self, kernel: Kernel, arrays, graph_name: str):
        self.kernel, self.arrays, self.graph_name = kernel, arrays, graph_name

    def __call__(self, flag, buffers: dict, symbols: list) -> None:
        if not int(flag[0]):
            return
        run_kernel(self.kernel, {name: self.arrays.to_host(b) for name, b in buffers.items()}, symbols)
        raise RuntimeError(f"numpile-triton: {self.kernel.name} of {self.graph_name} flagged a position out of "
                           "range that NumPy's own check did not find")
