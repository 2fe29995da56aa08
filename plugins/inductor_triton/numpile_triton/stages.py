"""Kernels with no outer loops and several stages over many elements, split into one kernel a stage;
scan stages split from the stages beside them.

[Note: a whole-array kernel of several stages] The scheduler fuses `x - x.mean()` into one kernel
of no outer loops and two stages (the mean's sum, then the subtraction reading it as a row value);
kernel.py runs a row kernel's rows in parallel, so such a kernel of one row runs as one program
looping over every element, on one of the GPU's multiprocessors: lstsqr of the numpy-benchmarks
corpus (four sums over 500000 elements) took 0.9 ms on the H200 against CuPy eager's 0.46, and
laplacien (a max, then a division by it) 1.75 against 0.89. Split into one kernel a stage, each
reduction over more than `SPLIT_MIN` elements splits over many programs and each elementwise stage
is a pointwise kernel; the row values pass through 0-d buffers (the reduce stage's own output where
it has one of the row value's dtype, else a temporary). Kernels of short stages stay whole: one
launch is cheaper than several there.
"""

from __future__ import annotations

import math

from numpile.lowering import Buffer, Indirect, Kernel, Load, Program, RowValue, Stage
from numpile.shapes import SymInt

from . import kernel as plans
from .rewrite import mapped


def split_stages(program: Program) -> Program:
    """`program` with each kernel the note above describes split into one kernel a stage."""
    buffers, steps = dict(program.buffers), []
    for step in program.steps:
        steps.extend(_split(step, buffers) if isinstance(step, Kernel) else [step])
    if len(steps) == len(program.steps):
        return program
    return Program(buffers, program.inputs, steps, program.outputs, program.symbols)


def _long(stage: Stage) -> bool:
    size = math.prod(stage.inner)
    return isinstance(size, SymInt) or size > plans.SPLIT_MIN


def _split(kernel: Kernel, buffers: dict) -> list[Kernel]:
    stages = kernel.stages
    if any(s.scan for s in stages):
        return _scans_alone(kernel)
    if kernel.outer or len(stages) < 2 or not any(map(_long, stages)) or \
            any(isinstance(i, Indirect) for s in stages for i in s.output_index):   # (a scatter's positions)
        return [kernel]
    values, split, made = {}, [], {}   # row name -> the Load that reads it back; new buffers
    for k, stage in enumerate(stages):
        rows = _row_values(stage.value)
        if any(r.name not in values or values[r.name].dtype != r.dtype for r in rows):
            return [kernel]
        value = mapped(stage.value, lambda e: values[e.name] if isinstance(e, RowValue) else None)
        stage = Stage(stage.inner, value, stage.reduce, stage.row_name, stage.output, stage.output_index, stage.dtype,
                      stage.trailing, stage.scan)
        if stage.reduce:
            stage = _with_row_buffer(stage, f"{kernel.name}_{stage.row_name}", buffers, made)
            if stage is None:
                return [kernel]
            values[stage.row_name] = Load(stage.output, stage.output_index, stage.dtype)
        if split and not stage.reduce and not _long(stage) and not any(s.reduce or _long(s) for s in split[-1].stages):
            split[-1].stages.append(stage)   # short elementwise stages stay together: one launch
        else:
            split.append(Kernel(f"{kernel.name}_{k}", (), [stage]))
    buffers.update(made)
    return split


def _scans_alone(kernel: Kernel) -> list[Kernel]:
    """A kernel of a scan stage and others (`np.cumsum(x, axis=0) * 2`) as kernels over the same
    outer loops, each scan alone (scans.py renders a scan kernel of one stage), the other stages
    together between them. Stages that read row values stay in one kernel."""
    if len(kernel.stages) < 2 or any(_row_values(s.value) for s in kernel.stages):
        return [kernel]
    groups: list[list[Stage]] = []
    for stage in kernel.stages:
        if stage.scan or not groups or groups[-1][0].scan:
            groups.append([stage])
        else:
            groups[-1].append(stage)
    return [Kernel(f"{kernel.name}_{k}", kernel.outer, group) for k, group in enumerate(groups)]


def _row_values(expr) -> list[RowValue]:
    found = []
    mapped(expr, lambda e: found.append(e) if isinstance(e, RowValue) else None)
    return found


def _with_row_buffer(stage: Stage, name: str, buffers: dict, made: dict) -> Stage | None:
    """The reduce stage storing its row value where later kernels read it: its own output when that
    holds the row value's dtype, else a new 0-d temporary (None where it stores another dtype)."""
    if stage.output is not None:
        return stage if buffers[stage.output].dtype == stage.dtype else None
    made[name] = Buffer(name, (), stage.dtype, "temp")
    return Stage(stage.inner, stage.value, stage.reduce, stage.row_name, name, (), stage.dtype, stage.trailing)
