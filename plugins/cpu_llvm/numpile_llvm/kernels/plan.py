"""How a kernel runs natively (KernelPlan): the buffers it takes, the symbols whose values it
needs, and the loop its threads share.

The parallel loop is the flattened outer loops ("outer"), or, for a kernel of one stage with
no outer loops, that stage's first inner loop, or all of them as one for a float sum ("inner"):
a 1-d pointwise chain or a full reduction then still splits over threads, each reduction
writing its partial result into slot `slot` of an extra partials array (slot -1: straight
into the output). Stages of a 1-d kernel that store each element split the same way where
each thread's part of every stage reads only what its own parts of the others store
(_own_elements: mandelbrot's `Z = Z*Z + C; I = abs(Z) > horizon`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from numpile.lowering import Affine, BufferArg, Const, Extern, Indirect, Kernel, Load, LoopIndex, Program, Stage, walk
from numpile.shapes import SYMBOL_PATTERN, SymInt, identical

from ..irbuilder import BOOL
from ..sizes import c_strides, read_at_run_time

# a kernel's status bits: an input's strides are not the ones it was compiled for (compile a
# variant); a gather met an index out of bounds
RELAYOUT, OUT_OF_BOUNDS = 1, 2
ARG_REDUCTIONS = {"argmax": "max", "argmin": "min"}   # and the extreme each looks for
BLOCK = 4096
PARTIALS = "__partials__"


@dataclass
class KernelPlan:
    kernel: Kernel
    arrays: list            # buffer names passed, in order; PARTIALS last for a split reduction
    split: str              # "outer", "inner" or "none"
    extent: int             # iterations of the parallel loop (a SymInt with dynamic shapes)
    work: int               # elements computed per call, to decide on threads (likewise)
    symbols: list           # the graph symbols whose values the kernel takes, by number
    partial: np.dtype | None = None   # dtype of a split reduction's partial results
    reduce: str | None = None         # the reduction a split kernel combines partials with
    split_loop: int = 0               # the inner loop an "inner" split shares out


def plan(kernel: Kernel, program: Program) -> KernelPlan:
    inputs = kernel.inputs
    arrays = inputs + [o for o in kernel.outputs if o not in inputs]
    work = math.prod(kernel.outer) * sum(math.prod(s.inner) for s in kernel.stages)
    symbols = sorted({int(k) for x in _sizes_of(kernel, program) if isinstance(x, SymInt)
                      for k in SYMBOL_PATTERN.findall(x.expr)})
    if kernel.outer:
        return KernelPlan(kernel, arrays, "outer", math.prod(kernel.outer), work, symbols)
    if len(kernel.stages) == 1 and kernel.stages[0].reduce in ARG_REDUCTIONS:
        return KernelPlan(kernel, arrays, "none", 1, work, symbols)   # the first extreme: in order, on one thread
    if len(kernel.stages) == 1 and kernel.stages[0].scan:
        # a scan along its first loop: threads share the next one (the lanes), or it runs whole
        inner = kernel.stages[0].inner
        if len(inner) > 1:
            return KernelPlan(kernel, arrays, "inner", inner[1], work, symbols, split_loop=1)
        return KernelPlan(kernel, arrays, "none", 1, work, symbols)
    if len(kernel.stages) == 1 and kernel.stages[0].inner:
        stage = kernel.stages[0]
        # no outer loops: a reduction over every axis. A float sum runs over them as one (see
        # body.KernelBody._nest), and threads split that
        extent = math.prod(stage.inner) if pairwise(stage) else stage.inner[0]
        result = KernelPlan(kernel, arrays, "inner", extent, work, symbols)
        if stage.reduce:
            result.arrays = arrays + [PARTIALS]
            result.partial = total_dtype(stage)
            result.reduce = stage.reduce
        return result
    if _own_elements(kernel):
        return KernelPlan(kernel, arrays, "inner", kernel.stages[0].inner[0], work, symbols)
    return KernelPlan(kernel, arrays, "none", 1, work, symbols)


def _own_elements(kernel: Kernel) -> bool:
    """Whether threads can share the first loop of a kernel of several stages, each running every
    stage over its part: stages that store each element (no reduction, scan or scatter) along one
    first loop, storing at their position along it, and reading what the kernel stores only there."""
    stages = kernel.stages
    if any(s.reduce or s.scan or not s.inner or not identical(s.inner[0], stages[0].inner[0]) for s in stages):
        return False
    own, stored = Affine.var(0), {s.output for s in stages}
    return all(s.output_index[0] == own and
               all(e.index[0] == own for e in walk(s.value) if isinstance(e, Load) and e.buffer in stored)
               for s in stages)


def _sizes_of(kernel: Kernel, program: Program):
    """Every size a kernel's code may compute with: loop sizes, index coefficients and constants,
    constant operands, its outputs' shapes (whether one is large), its inputs' C-order strides
    (in any other layout a stride is a constant or read from the array)."""
    for stage in kernel.stages:
        yield from stage.inner
        # the value's expressions, and those a scatter's positions are read with (x[idx[i]] = ...)
        exprs = [e for root in [stage.value, *(i.value for i in stage.output_index if isinstance(i, Indirect))]
                 for e in walk(root)]
        indices = [i for index in [stage.output_index] + [e.index for e in exprs if isinstance(e, Load)] for i in index]
        for e in exprs:
            if isinstance(e, LoopIndex):
                indices.append(e.index)   # an index's value, which may be read through np.roll's wrap too
            elif isinstance(e, Const):
                yield e.value
        for a in indices:
            if isinstance(a, Indirect):
                yield from (a.size, a.scale, a.shift)
            else:
                yield a.const
                yield from (c for _, c in a.terms)
    yield from kernel.outer
    for name in kernel.outputs:
        yield from program.buffers[name].shape
    for name in kernel.inputs:
        yield from c_strides(program.buffers[name].shape)


def size_parameters(kp: KernelPlan, strides: dict) -> list[str]:
    """The names of the i64 values a kernel body takes besides its range: the symbols, then the
    strides read at run time."""
    read = [s.expr for name in kp.arrays if name != PARTIALS
            for d, s in enumerate(strides[name]) if read_at_run_time(name, d, s)]
    return [f"s{k}" for k in kp.symbols] + read


def buffer_bytes(buffer) -> int:
    return math.prod(buffer.shape) * buffer.dtype.itemsize


def total_dtype(stage: Stage) -> np.dtype:
    """The type a reduction accumulates in: NumPy's loop type, bool for any/all, the values' own
    for argmax/argmin (whose result is an index)."""
    if stage.reduce in ARG_REDUCTIONS:
        return np.dtype(stage.value.dtype)
    return BOOL if stage.reduce in ("any", "all") else np.dtype(stage.dtype)


def scatters(kernel: Kernel) -> bool:
    """Whether a kernel stores through an index array: in order, on one thread, so that the last
    of repeated positions wins as in NumPy."""
    return any(isinstance(i, Indirect) for stage in kernel.stages for i in stage.output_index)


def checks_positions(kernel: Kernel) -> bool:
    """Whether a scatter's positions are checked in a first pass before anything is stored (an
    error leaves the array as it was, as in NumPy): unless all are a mask's, `inside` their dims."""
    return any(isinstance(i, Indirect) and not i.inside for stage in kernel.stages for i in stage.output_index)


def sequential(stage: Stage) -> bool:
    """Whether a reduction must take its elements in order on one thread: a float product."""
    return stage.reduce == "prod" and np.dtype(stage.dtype).kind == "f"


def pairwise(stage: Stage) -> bool:
    """Whether a stage is a float sum, added in NumPy's pairwise order."""
    return stage.reduce == "sum" and np.dtype(stage.dtype).kind == "f"


def element_offset(index: tuple, strides: tuple) -> tuple[dict, int]:
    """The element offset of an index (an Affine per dimension) in a buffer of these strides:
    (coefficient per loop variable, constant)."""
    coefficients: dict[int, int] = {}
    for a, s in zip(index, strides):
        for v, c in a.terms:
            coefficients[v] = coefficients.get(v, 0) + c * s
    return coefficients, sum(a.const * s for a, s in zip(index, strides))


def allocated_buffers(program: Program) -> set[str]:
    """The buffers the runner allocates: kernels' temporaries and outputs, not externs' results
    (but those of an extern that updates a buffer it is given: NumPy's setitem into a kernel's)."""
    made_by_externs = {name for s in program.steps if isinstance(s, Extern)
                       for name in s.outputs if BufferArg(name) not in s.args}
    return {n for n, b in program.buffers.items() if b.kind in ("temp", "output") and n not in made_by_externs}

