"""Checking against NumPy: one op's compiled graph (`check_case`), one result (`assert_same_result`),
a whole program's result (`assert_same`)."""

from __future__ import annotations

import math
import warnings
from dataclasses import replace

import numpy as np

from .. import ops, shapes
from ..graph import Graph
from ..ops import ArrayMeta
from ..shapes import ShapeEnv
from .specs import Case

# Relative tolerance per float dtype: a few ulps of reassociation over small reductions.
RTOL = {"float16": 2e-3, "float32": 1e-5, "float64": 1e-12, "complex64": 1e-5, "complex128": 1e-12}



def check_case(case: Case, compile_fn) -> None:
    """Run `case` through `compile_fn(graph, example_inputs) -> callable` and compare with NumPy.
    Raises AssertionError saying what differs."""
    op = ops.get(case.op)
    inputs = case.inputs()
    pristine = [_copy(x) for x in inputs]

    def call(values) -> tuple[tuple, dict]:
        """The case's call in the op's canonical layout, with `values` as its array arguments."""
        return op.normalize(*case.bind(values))

    graph, results, meta = one_op_graph(op, case, inputs)
    several = isinstance(meta, tuple)  # an op with several results: the graph returns each
    graph.output(results)

    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # log of 0, var of one value: not what is compared
        ref_args, ref_kwargs = call([_copy(x) for x in inputs])
        expected = op.impl(*ref_args, **ref_kwargs)
        outputs = compile_fn(graph, list(inputs))(*inputs)

    metas, expected = (meta, tuple(expected)) if several else ((meta,), (expected,))
    metas = _sized(metas, expected, case)
    numpy_metas = tuple(ArrayMeta.of(e) for e in expected)
    assert metas == numpy_metas, f"{case}: meta rule says {_text(metas)}, NumPy gives {_text(numpy_metas)}"
    assert isinstance(outputs, (tuple, list)) and len(outputs) == len(metas), \
        f"{case}: the compiled graph must return a tuple of its {len(metas)} outputs, got {type(outputs).__name__}"
    for i, (got, want) in enumerate(zip(outputs, expected)):
        assert_same_result(got, want, what=f"{case}" + (f" result {i}" if several else ""), values=case.values)
    for i, (x, before) in enumerate(zip(inputs, pristine)):
        assert np.array_equal(x, before, equal_nan=x.dtype.kind in "fc"), f"{case}: input {i} was modified"


def one_op_graph(op: ops.OpDef, case: Case, inputs: list) -> tuple[Graph, list, object]:
    """The case's call as a graph of one op on inputs x0, x1, ...: the graph (no output yet), its
    result nodes (one per result of an op with several) and the meta rule's result. Sizes only
    the data knows are symbols of the graph, bound by the result dims that are they."""
    graph, env = Graph(), ShapeEnv()
    nodes = [graph.input(f"x{i}", ArrayMeta.of(x)) for i, x in enumerate(inputs)]
    meta_args, meta_kwargs = op.normalize(*case.bind([ArrayMeta.of(x) for x in inputs]))
    with shapes.active(env):
        meta = op.meta(*meta_args, **meta_kwargs)
    value = graph.call(op.name, *op.normalize(*case.bind(nodes)), meta)
    results = [graph.result(value, i) for i in range(len(meta))] if isinstance(meta, tuple) else [value]
    for node in results:
        env.bind_dims(node, node.shape)
    graph.symbols = [(env.unbacked[k].node, env.unbacked[k].dim) for k in range(len(env.symbols))]
    return graph, results, meta


def _sized(metas: tuple, expected: tuple, case: Case) -> tuple:
    """The metas with each size only the data knows replaced by NumPy's, which must agree where
    results share one (nonzero's index arrays, unique's values and counts)."""
    sizes: dict = {}

    def size(d, n):
        k = shapes.lone_symbol(d)
        if k is None:
            return d
        assert sizes.setdefault(k, n) == n, f"{case}: NumPy's results differ in the size s{k} the meta rule gives them"
        return n
    return tuple(replace(m, shape=tuple(size(d, n) for d, n in zip(m.shape, np.shape(e)))) if m.ndim == np.ndim(e) else m
                 for m, e in zip(metas, expected))


def _text(metas: tuple) -> str:
    return ", ".join(map(str, metas))


def _copy(x):
    """A copy that keeps the input's type (np.copy turns a NumPy scalar into a 0-d array)."""
    return x.copy() if isinstance(x, np.ndarray) else x


def assert_same_result(actual, expected, what: str = "", values: bool = True) -> None:
    """Same type (NumPy scalar vs ndarray), dtype and shape; equal values (floats: NaN-aware,
    within RTOL of the dtype, relative to the result's largest finite magnitude)."""
    assert type(actual) is type(expected), f"{what}: type {type(actual).__name__}, NumPy gives {type(expected).__name__}"
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype}, NumPy gives {expected.dtype}"
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape}, NumPy gives {expected.shape}"
    if not values:
        return
    if expected.dtype.kind in "fc":
        rtol = RTOL[expected.dtype.name]
        finite = np.abs(expected[np.isfinite(expected)]) if expected.size else np.zeros(0)
        atol = rtol * max(1.0, float(finite.max()) if finite.size else 1.0)
        ok = np.allclose(actual, expected, rtol=rtol, atol=atol, equal_nan=True)
    else:
        ok = np.array_equal(actual, expected)
    assert ok, f"{what}: values differ\n got:      {actual!r}\n expected: {expected!r}"


def assert_same(got, want, path="result"):
    """A whole program's result == NumPy eager's: the same Python structure (dicts, lists, tuples),
    types, dtypes and shapes, equal values (floats, in arrays or as NumPy or Python scalars, within
    1e-6: a program chains many ops, and `float(x.sum())` is as exact as `x.sum()`)."""
    assert type(got) is type(want), f"{path}: type {type(got).__name__} != {type(want).__name__}"
    if isinstance(want, dict):
        assert list(got) == list(want), f"{path}: keys {list(got)} != {list(want)}"
        for k in want:
            assert_same(got[k], want[k], f"{path}[{k!r}]")
    elif isinstance(want, (list, tuple)):
        assert len(got) == len(want), f"{path}: length {len(got)} != {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, f"{path}[{i}]")
    elif isinstance(want, (np.ndarray, np.generic)):
        assert got.dtype == want.dtype, f"{path}: dtype {got.dtype} != {want.dtype}"
        assert got.shape == want.shape, f"{path}: shape {got.shape} != {want.shape}"
        try:
            if want.dtype.kind in "fc":
                np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-12, equal_nan=True)
            else:
                np.testing.assert_array_equal(got, want)
        except AssertionError as e:  # NumPy's report (mismatched elements, largest difference) after the path
            raise AssertionError(f"{path}: values differ{e}") from None
    elif isinstance(want, float):
        close = math.isclose(got, want, rel_tol=1e-6, abs_tol=1e-12) or math.isnan(got) and math.isnan(want)
        assert close, f"{path}: {got!r} != {want!r}"
    else:
        assert got == want, f"{path}: {got!r} != {want!r}"
