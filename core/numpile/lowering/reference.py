"""The reference renderer: runs a kernel Program with NumPy, whole arrays at a time.

It gives each loop variable an index array broadcast along its own axis, evaluates
loads by fancy indexing and ops by their registry implementations, so every value
has exactly the dtype NumPy gives it. It is slow and exact: the oracle that the
scheduler and code-generating backends are tested against. Symbolic sizes take
their values from the inputs' shapes.

`run_kernel` also runs a kernel on another library's arrays that NumPy's functions dispatch to
(CuPy's, through `__array_function__`): its index arrays and constants are made arrays of the
library its output buffers are (NumPy's `like=`), so a GPU backend runs what it cannot render where
the data is.
"""

from __future__ import annotations

import math

import numpy as np

from .. import ops
from ..shapes import SymInt, evaluate
from .ir import Affine, BufferArg, Call, Const, Expr, Extern, Indirect, Kernel, Load, LoopIndex, Program, RowValue

_SCAN = {"sum": np.cumsum, "prod": np.cumprod}
_REDUCE = {"sum": np.sum, "prod": np.prod, "max": np.max, "min": np.min, "any": np.any, "all": np.all,
           "argmax": lambda v, axis: _flat_arg(np.argmax, v, axis), "argmin": lambda v, axis: _flat_arg(np.argmin, v, axis)}


def _flat_arg(arg, value, axes: tuple):
    """argmax/argmin over trailing axes, as an index into them flattened in C order (none: 0)."""
    if not axes:
        return np.zeros(value.shape, np.intp, like=value)
    kept = value.shape[:axes[0]]
    return arg(value.reshape(kept + (math.prod(value.shape[axes[0]:]),)), axis=axes[0])


def run(program: Program, *inputs) -> tuple:
    env = dict(zip(program.inputs, inputs))
    symbols = symbol_values(program, env)
    for step in program.steps:
        if isinstance(step, Kernel):
            for name in step.outputs:  # allocated when first written: its size may be one a step before bound
                if name not in env:
                    env[name] = np.empty(tuple(size(d, symbols) for d in program.buffers[name].shape),
                                         program.buffers[name].dtype)
            run_kernel(step, env, symbols)
        else:
            _run_extern(step, env, symbols)
            for k, buffer, dim in program.binds(step):
                symbols[k] = np.shape(env[buffer])[dim]
    return tuple(env[name][()] if program.buffers[name].scalar else env[name] for name in program.outputs)


def symbol_values(program: Program, env: dict) -> list:
    """The value of each symbol whose buffer env has (a dim of its shape); None for the rest."""
    return [None if s is None or s[0] not in env else int(env[s[0]]) if s[1] is None else np.shape(env[s[0]])[s[1]]
            for s in program.symbols]


def size(x, symbols: list) -> int:
    """A size, index constant or coefficient of the IR as an int."""
    return evaluate(x.expr, symbols) if isinstance(x, SymInt) else x


def compile_program(program: Program):
    """A callable taking the graph inputs and returning the tuple of outputs."""
    return lambda *inputs: run(program, *inputs)


def _run_extern(step: Extern, env: dict, symbols: list) -> None:
    def resolve(v):
        if isinstance(v, BufferArg):
            return env[v.name]
        if isinstance(v, (tuple, list)):
            return type(v)(resolve(x) for x in v)
        if isinstance(v, dict):  # keyword arguments (np.cov's y=, fweights=)
            return {k: resolve(x) for k, x in v.items()}
        return size(v, symbols)
    value = ops.get(step.op).impl(*resolve(step.args), **resolve(step.kwargs))
    for name, result in zip(step.outputs, value if isinstance(step.output, tuple) else (value,)):
        env[name] = np.asarray(result)


def run_kernel(kernel: Kernel, env: dict, symbols: list = ()) -> None:
    nouter = len(kernel.outer)
    rows: dict[str, np.ndarray] = {}
    like = env[kernel.outputs[0]]   # the arrays' library (see the module's docstring)
    outer = tuple(size(n, symbols) for n in kernel.outer)
    outer_grid = _grid(outer, like)
    for stage in kernel.stages:
        sizes = outer + tuple(size(n, symbols) for n in stage.inner)
        grid = _grid(sizes, like)
        value = np.broadcast_to(np.asarray(_eval(stage.value, grid, env, rows, symbols, like), like=like), sizes)
        if stage.scan:
            value = _SCAN[stage.scan](value, axis=nouter, dtype=stage.dtype)
        if stage.reduce:
            axes = tuple(range(nouter, len(sizes)))
            extra = {"dtype": stage.dtype} if stage.reduce in ("sum", "prod") else {}
            value = np.asarray(_REDUCE[stage.reduce](value, axis=axes, **extra), like=like)
            rows[stage.row_name] = value
            env[stage.output][_index(stage.output_index, outer_grid, symbols)] = value
        else:
            # a scatter assigns in C order, so the last of repeated positions wins, as in NumPy
            env[stage.output][_where(stage.output_index, grid, env, rows, symbols, like)] = value


def _grid(sizes: tuple, like) -> list:
    """Per loop variable, its values as an array broadcast along its own axis."""
    return [np.arange(n, like=like).reshape((1,) * v + (n,) + (1,) * (len(sizes) - v - 1)) for v, n in enumerate(sizes)]


def _index(index: tuple, grid: list, symbols: list) -> tuple:
    return tuple(_affine(a, grid, symbols) for a in index)


def _affine(a: Affine, grid: list, symbols: list):
    total = size(a.const, symbols)
    for v, c in a.terms:
        total = total + grid[v] * size(c, symbols)
    return total


def _position(i: Indirect, grid, env, rows, symbols, like, axis: int):
    """Where a gather reads along one dim: the index value made a position as NumPy does."""
    n = size(i.size, symbols)
    value = np.asarray(_eval(i.value, grid, env, rows, symbols, like), like=like)
    bad = (value < -n) | (value >= n)
    if bad.any():
        raise IndexError(f"index {value[bad].flat[0]} is out of bounds for axis {axis} with size {n}")
    value = value.astype(np.intp)
    return np.where(value < 0, value + n, value) * size(i.scale, symbols) + size(i.shift, symbols)


def _where(index: tuple, grid, env, rows, symbols, like) -> tuple:
    """An index of Affines and Indirects as index arrays (broadcast over the grid)."""
    return tuple(_position(i, grid, env, rows, symbols, like, d) if isinstance(i, Indirect) else _affine(i, grid, symbols)
                 for d, i in enumerate(index))


def _eval(e, grid, env, rows, symbols, like):
    if isinstance(e, Load):
        buffer = env[e.buffer]
        value = buffer[_where(e.index, grid, env, rows, symbols, like)] if e.index else np.asarray(buffer, like=like)[()]
        return value.item() if e.weak else value
    if isinstance(e, Const):
        return size(e.value, symbols)
    if isinstance(e, RowValue):
        row = rows[e.name]
        return np.asarray(row, like=like).reshape(row.shape + (1,) * (len(grid) - row.ndim))
    if isinstance(e, LoopIndex):
        return np.asarray(_affine(e.index, grid, symbols), like=like).astype(e.dtype)
    if isinstance(e, Call):
        args = [_eval(a, grid, env, rows, symbols, like) for a in e.args]
        kwargs = {k: _eval(v, grid, env, rows, symbols, like) if isinstance(v, Expr) else v for k, v in e.kwargs}
        if e.op == "astype" and isinstance(args[0], (bool, int, float, complex)):   # a Python number, cast as NumPy stores one
            return np.array(args[0], dtype=args[1])
        value = ops.get(e.op).impl(*args, **kwargs)
        return value.item() if e.weak else value
    raise TypeError(f"unknown expression {e!r}")
