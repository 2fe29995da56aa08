"""The reference renderer: runs a kernel Program with NumPy, whole arrays at a time.

It gives each loop variable an index array broadcast along its own axis, evaluates
loads by fancy indexing and ops by their registry implementations, so every value
has exactly the dtype NumPy gives it. It is slow and exact: the oracle that the
scheduler and code-generating backends are tested against.
"""

from __future__ import annotations

import numpy as np

from .. import ops
from .ir import Affine, BufferArg, Call, Const, Expr, Extern, Kernel, Load, LoopIndex, Program, RowValue

_REDUCE = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min, "any": np.any, "all": np.all}


def run(program: Program, *inputs) -> tuple:
    env = dict(zip(program.inputs, inputs))
    for name, buf in program.buffers.items():
        if buf.kind != "input":
            env[name] = np.empty(buf.shape, buf.dtype)
    for step in program.steps:
        if isinstance(step, Kernel):
            run_kernel(step, env)
        else:
            _run_extern(step, env)
    return tuple(env[name][()] if program.buffers[name].scalar else env[name] for name in program.outputs)


def compile_program(program: Program):
    """A callable taking the graph inputs and returning the tuple of outputs."""
    return lambda *inputs: run(program, *inputs)


def _run_extern(step: Extern, env: dict) -> None:
    def resolve(v):
        if isinstance(v, BufferArg):
            return env[v.name]
        if isinstance(v, (tuple, list)):
            return type(v)(resolve(x) for x in v)
        return v
    env[step.output] = np.asarray(ops.get(step.op).impl(*resolve(step.args), **resolve(step.kwargs)))


def run_kernel(kernel: Kernel, env: dict) -> None:
    nouter = len(kernel.outer)
    rows: dict[str, np.ndarray] = {}
    outer_grid = _grid(tuple(kernel.outer))
    for stage in kernel.stages:
        sizes = tuple(kernel.outer) + tuple(stage.inner)
        grid = _grid(sizes)
        value = np.broadcast_to(_eval(stage.value, grid, env, rows, len(sizes)), sizes)
        if stage.reduce:
            axes = tuple(range(nouter, len(sizes)))
            extra = {"dtype": stage.dtype} if stage.reduce in ("sum", "prod") else {}
            value = np.asarray(_REDUCE[stage.reduce](value, axis=axes, **extra))
            rows[stage.row_name] = value
            env[stage.output][_index(stage.output_index, outer_grid)] = value
        else:
            env[stage.output][_index(stage.output_index, grid)] = value


def _grid(sizes: tuple) -> list:
    """Per loop variable, its values as an array broadcast along its own axis."""
    return [np.arange(n).reshape((1,) * v + (n,) + (1,) * (len(sizes) - v - 1)) for v, n in enumerate(sizes)]


def _index(index: tuple, grid: list) -> tuple:
    return tuple(_affine(a, grid) for a in index)


def _affine(a: Affine, grid: list):
    total = a.const
    for v, c in a.terms:
        total = total + grid[v] * c
    return total


def _eval(e, grid, env, rows, ndim):
    if isinstance(e, Load):
        value = env[e.buffer][_index(e.index, grid)] if e.index else np.asarray(env[e.buffer])[()]
        return value.item() if e.weak else value
    if isinstance(e, Const):
        return e.value
    if isinstance(e, RowValue):
        row = rows[e.name]
        return np.asarray(row).reshape(row.shape + (1,) * (ndim - row.ndim))
    if isinstance(e, LoopIndex):
        return np.asarray(_affine(e.index, grid)).astype(e.dtype)
    if isinstance(e, Call):
        args = [_eval(a, grid, env, rows, ndim) for a in e.args]
        kwargs = {k: _eval(v, grid, env, rows, ndim) if isinstance(v, Expr) else v for k, v in e.kwargs}
        value = ops.get(e.op).impl(*args, **kwargs)
        return value.item() if e.weak else value
    raise TypeError(f"unknown expression {e!r}")
