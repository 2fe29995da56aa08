"""Running sums and products (np.cumsum, np.cumprod) as Triton kernels.

[Note: scans] A scan stage stores, along its one inner loop, the running total of its values, each
cast to the stage's dtype first (NumPy's accumulate). Two layouts:
- "scan": XBLOCK lines (the outer loops, flattened) per program, each walking its line RBLOCK
  elements at a time: a block's running totals are `tl.cumsum`/`tl.cumprod` along the line plus the
  carry of the blocks before it, and the carry moves on by the block's total;
- "scan_split": a whole array's one line of more than SPLIT_MIN elements, of static length. A split
  reduction (kernel.py) first writes each of SPLIT_PROGRAMS chunks' totals, then each program of the
  scan kernel starts its chunk from the total of the chunks before it (the partials below its
  position, reduced) and walks it as above: the line spread over the GPU, each element read twice.
Float totals add as trees (within reassociation rounding of NumPy's one-by-one order, as sums do);
integers wrap as NumPy's. float16, whose NumPy scan rounds every step to half precision, and bools
are not rendered.
"""

from __future__ import annotations

import math

import numpy as np

from numpile.lowering import Affine, Kernel, Load, LoopIndex, Program, Stage
from numpile.shapes import SymInt

from . import scalar
from .plans import SPLIT_PROGRAMS, KernelPlan, partials_buffer
from .rewrite import mapped
from .scalar import Unlowerable, constant, tl_type

# scan -> (a block's running totals along the line, a block's total, combining two totals)
_SCAN = {"sum": ("tl.cumsum({0}, axis=1)", "tl.sum({0}, axis=1, keep_dims=True)", "{0} + {1}"),
         "prod": ("tl.cumprod({0}, axis=1)", "tl.reduce({0}, 1, _multiply, keep_dims=True)", "{0} * {1}")}


def scan_plan(kernel: Kernel, program: Program, split_min: int):
    """The KernelPlan of a kernel with a scan stage (see the note), or Unlowerable."""
    stage = kernel.stages[0]
    dtype = np.dtype(stage.dtype)
    if len(kernel.stages) != 1 or stage.scan not in _SCAN:
        raise Unlowerable(f"a running {stage.scan} beside other stages")
    if any(isinstance(n, int) and n == 0 for n in (*kernel.outer, *stage.inner)):
        raise Unlowerable(f"a running {stage.scan} of no elements")
    if len(stage.inner) > 1:
        kernel = _lines_outer(kernel)
        stage = kernel.stages[0]
    if dtype.kind == "b" or dtype == np.float16:
        raise Unlowerable(f"a running {stage.scan} of {dtype} (NumPy rounds every step)")
    arrays = kernel.inputs + [o for o in kernel.outputs if o not in kernel.inputs]
    length = stage.inner[0]
    rows = math.prod(kernel.outer)
    if kernel.outer or isinstance(length, SymInt) or length <= split_min:
        return KernelPlan(kernel, "scan", arrays, rows=rows, cols=[length])
    partial = f"{kernel.name}_partials"
    program.buffers[partial] = partials_buffer(partial, dtype)
    totals = Kernel(f"{kernel.name}_totals", (), [Stage(stage.inner, stage.value, reduce=stage.scan,
                                                        row_name=f"{kernel.name}_total", dtype=dtype)])
    arrays = [*arrays, partial]
    scan = KernelPlan(kernel, "scan_split", arrays, rows=SPLIT_PROGRAMS, cols=[length], partial=partial)
    return KernelPlan(totals, "split", arrays, rows=SPLIT_PROGRAMS, cols=[length], partial=partial, combine=scan)


def _lines_outer(kernel: Kernel) -> Kernel:
    """A scan along the first of several inner loops (`np.cumsum(x, axis=0)`) with the other inner
    loops made outer ones: each of their indices is one more line. Loop variables renumbered."""
    stage, o = kernel.stages[0], len(kernel.outer)
    k = len(stage.inner)
    order = {**{v: v for v in range(o)}, o: o + k - 1, **{o + j: o + j - 1 for j in range(1, k)}}

    def renumbered(a):   # (a gather's position: its value is renumbered by `mapped` already)
        return Affine(tuple(sorted((order[v], c) for v, c in a.terms)), a.const) if isinstance(a, Affine) else a

    def moved(e):
        if isinstance(e, Load):
            return Load(e.buffer, tuple(map(renumbered, e.index)), e.dtype, e.weak)
        if isinstance(e, LoopIndex):
            return LoopIndex(renumbered(e.index), e.dtype)
        return None
    scan = Stage((stage.inner[0],), mapped(stage.value, moved), None, None, stage.output,
                 tuple(map(renumbered, stage.output_index)), stage.dtype, 0, stage.scan)
    return Kernel(kernel.name, (*kernel.outer, *stage.inner[1:]), [scan])


class Scans:
    """The Renderer's scan kernels (see the note)."""

    def _scan(self) -> None:
        kp, stage = self.kp, self.kp.kernel.stages[0]
        acc = np.dtype(stage.dtype)
        running, total, combine = _SCAN[stage.scan]
        identity = constant(0 if stage.scan == "sum" else 1, acc)
        split = kp.mode == "scan_split"
        if split:   # this program's chunk [start, end), after the chunks whose totals are below it
            self.emit("rows = tl.program_id(0) + tl.arange(0, 1)[:, None]")
            self.emit(f"start = {self._program_start('CHUNK')}")
            self.emit(f"end = tl.minimum(start + CHUNK, {self.size(kp.cols[0])})")
            self.emit("rmask = rows >= 0")
            self.emit(f"before = tl.arange(0, {SPLIT_PROGRAMS})[None, :]")
            self.emit(f"totals = tl.load({self.pointers[kp.partial]} + before, mask=before < rows, other={identity})")
            self.emit(f"carry = {total.format('totals')}")
            outer_vars, start, end = {}, "start", "end"
        else:
            self.emit(f"rows = {self._program_start('XBLOCK')} + tl.arange(0, XBLOCK)[:, None]")
            self.emit(f"rmask = rows < {self.size(kp.rows)}")
            self.emit(f"carry = tl.full([XBLOCK, 1], {identity}, {tl_type(acc)})")
            outer_vars, start, end = self._split_index("rows", tuple(self.kp.kernel.outer), 0), "0", self.size(kp.cols[0])
        self.emit(f"for offset in range({start}, {end}, RBLOCK):")
        self.indent += 1
        self.scopes.append(len(self.lines))
        space = self._row_space(stage, outer_vars, "offset", "end" if split else kp.cols[0], 0)
        value = scalar.cast(self, self.value(stage.value, space), acc)
        block = self.let(f"tl.where({space.mask}, {value.text}, {identity})", acc)
        scanned = self.let(running.format(block.text), acc)
        self._store(stage, self.let(combine.format("carry", scanned.text), acc), space)
        self.emit(f"carry = {combine.format('carry', total.format(block.text))}")
        self.scopes.pop()
        self.indent -= 1
