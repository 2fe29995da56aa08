"""What a backend's compiled graph returned, checked against the graph's outputs.

A backend that returns a bare array instead of the tuple of outputs, one output too many, or
float32 where the graph says float64 would hand the user a wrong value without a word. So the
first run of every compiled entry checks each output's count, kind (ndarray, NumPy scalar,
Python scalar), dtype and shape (symbolic dims evaluated for this call's inputs and outputs); later runs
call the backend's function directly, at no cost.
"""

from __future__ import annotations

import numpy as np

from .graph import Graph
from .shapes import SYMBOL_PATTERN, SymInt, evaluate, lone_symbol


def mismatch(outputs, graph: Graph, inputs: tuple, kind=None, host=()) -> str | None:
    """What is wrong with `outputs` as the result of `graph` on `inputs`; None when nothing is.
    With an ArrayKind (inputs that are CuPy arrays or tensors), arrays and NumPy scalars must be
    arrays of that kind (a scalar 0-d, as CuPy's and torch's reductions give), but for the `host`
    outputs (array_kinds.host_outputs), NumPy's."""
    expected = graph.outputs
    if not isinstance(outputs, (tuple, list)):
        return f"it returned {_describe(outputs)}, not the tuple of the graph's {len(expected)} outputs"
    if len(outputs) != len(expected):
        return f"it returned {len(outputs)} outputs, the graph has {len(expected)}"
    sizes = graph.symbol_values(inputs)
    for i, (got, node) in enumerate(zip(outputs, expected)):
        meta = node.array_meta
        shape = _expected_shape(meta.shape, np.shape(got), sizes)
        symbolic = any(isinstance(d, SymInt) for d in meta.shape)  # (a SymInt compares by its trace-time hint)
        want = f"{meta} (shape {shape})" if symbolic else str(meta)
        if kind is not None and not meta.weak and i not in host:
            ok = type(got) is kind.array_type() and _same_shape(tuple(got.shape), shape) and kind.dtype(got) == meta.dtype
        else:
            ok = _same_kind(got, meta) and np.shape(got) == shape and (meta.weak or got.dtype == meta.dtype)
        if not ok:
            return f"output {i} ({node.name}) is {_describe(got)}, the graph's is {want}"
    return None


def _expected_shape(dims: tuple, got: tuple, sizes: list) -> tuple:
    """The shape an output must have, its symbolic dims evaluated for this call. A size only the
    data knew (sizes[k] None) is learnt from the first output that has it as a dim; a dim that
    uses one still unknown matches what the output has. (A lazy array's such size is NaN
    until computed, Dask's: it stays unknown.)"""
    shape = []
    for i, d in enumerate(dims):
        n = got[i] if i < len(got) else -1
        if isinstance(d, SymInt):
            k = lone_symbol(d)
            if k is not None and sizes[k] is None and n == n:
                sizes[k] = n
            d = n if any(sizes[int(j)] is None for j in SYMBOL_PATTERN.findall(d.expr)) else evaluate(d.expr, sizes)
        shape.append(d)
    return tuple(shape)


def _same_shape(got: tuple, want: tuple) -> bool:
    """Shapes equal, a NaN dim (a lazy array's unknown size) equal to the NaN expected of it."""
    return len(got) == len(want) and all(g == w or g != g and w != w for g, w in zip(got, want))


def _same_kind(value, meta) -> bool:
    if meta.weak:  # a Python scalar; a NumPy scalar of its dtype is turned into one by the caller
        return type(value) is meta.python_type or (isinstance(value, np.generic) and value.dtype == meta.dtype)
    return isinstance(value, np.generic) if meta.scalar else type(value) is np.ndarray


def _describe(value) -> str:
    if isinstance(value, (np.ndarray, np.generic)):
        kind = "an ndarray" if isinstance(value, np.ndarray) else "a NumPy scalar"
        return f"{kind} {value.dtype}{list(np.shape(value))}"
    return f"a {type(value).__name__}"
