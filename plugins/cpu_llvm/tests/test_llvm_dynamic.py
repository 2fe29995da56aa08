"""Dynamic shapes on "llvm": kernels take the symbols' values at run time, so one compiled
entry serves every size (dynamic=True, or after automatic dynamic marks a dim), with NumPy's
results: sums to the bit, every conformance case with its dims symbolic, views, layouts."""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np
import pytest

import numpile
from numpile import ops, shapes
from numpile.graph import Graph
from numpile.ops import ArrayMeta
from numpile.testing import assert_same_result, conformance_cases
from numpile_llvm import jit
from numpile_llvm.kernels import streams
from numpile_llvm.backend import LLVMBackend
from test_llvm import programs

rng = np.random.default_rng()


def chain(x):
    return np.sin(x) * np.cos(x) + np.exp(-x * x) * 0.5 + np.tanh(x)


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def assert_same(got, want):
    for g, w in zip(got, want) if isinstance(want, tuple) else [(got, want)]:
        assert_same_result(g, w)


def test_llvm_supports_dynamic_shapes():
    assert LLVMBackend.supports_dynamic_shapes


def test_one_entry_serves_every_size():
    compile_llvm, made = programs()
    compiled = numpile.compile(chain, backend=compile_llvm, dynamic=True)
    for n in (100, 1000, 3, 12345, 1 << 18, 7, 100):
        x = rng.standard_normal(n).astype(np.float32)
        assert_same(compiled(x), chain(x))
    assert len(compiled.entries) == 1 and len(made) == 1 and not made[0].fallbacks
    assert "s0 = b0.shape[0]" in made[0].source   # the runner reads the size, the kernel takes it


def test_automatic_dynamic_compiles_the_second_size_for_all_later_ones(capsys):
    # past cache_size_limit (8) sizes a function with one entry per size ran eagerly for good
    compile_llvm, made = programs()
    compiled = numpile.compile(softmax, backend=compile_llvm)
    numpile.set_logs("recompiles")
    try:
        for rows in (3, 5, 64, 2, 300, 9, 17, 33, 65, 129, 4, 6):
            x = rng.standard_normal((rows, 256))
            assert_same(compiled(x), softmax(x))
    finally:
        numpile.set_logs()
    err = capsys.readouterr().err
    assert err.count("recompiling") == 1 and "shape of x changed from (3, 256) to (5, 256)" in err
    assert len(made) == 2 and made[1].program.buffers["x"].shape[1] == 256   # the row length stays static


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_sums_of_symbolic_lengths_are_numpys_to_the_bit(dtype):
    # the pairwise tree's shape is decided at run time: balanced (4096, 3 << 20 over threads)
    # or not (1000, 100003), a single leaf (13), whole arrays, rows, columns, means
    for fn in (np.sum, np.mean, lambda a: ((a - 0.25) ** 2).sum()):
        compiled = numpile.compile(lambda a: fn(a), backend="llvm", dynamic=True)
        for n in (13, 128, 129, 384, 1000, 4096, 100003, 3 << 20):
            x = (rng.standard_normal(n) * 100).astype(dtype)
            got, want = compiled(x), fn(x)
            assert type(got) is type(want) and got.dtype == want.dtype and got == want, (n, got, want)
    for fn in (lambda a: a.sum(axis=1), lambda a: (2 * a + 1).mean(axis=-1, keepdims=True), lambda a: a.sum(),
               lambda a: a - a.mean(axis=1, keepdims=True), lambda a: a.sum(axis=0)):
        compiled = numpile.compile(fn, backend="llvm", dynamic=True)
        for shape in ((37, 1000), (64, 4096), (3, 5), (300, 129), (2048, 1024)):
            m = (rng.standard_normal(shape) * 100).astype(dtype)
            got, want = compiled(m), fn(m)
            assert got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got, want), shape


def test_rows_of_a_varying_batch_stream_out_when_large():
    if "sse2" not in jit.host_features():
        pytest.skip("streamed rows are for x86")
    compile_llvm, made = programs()
    compiled = numpile.compile(softmax, backend=compile_llvm)   # the batch size becomes symbolic
    large = streams.STREAM_MIN_BYTES // (1024 * 4) + 3
    for rows in (3, 5, large, 7):
        x = rng.standard_normal((rows, 1024)).astype(np.float32)
        assert_same(compiled(x), softmax(x))
    [_, program] = made
    # two bodies, one streaming rows out with non-temporal stores, chosen at entry by the size
    assert ".large(" in program.ir and "!nontemporal" in program.ir and "%scratch" in program.ir


def views_and_sizes(x, y):
    return ((x - x.mean(axis=-1, keepdims=True)) * 2 + y[::-1], x[1:-1, -1].sum(), x.var(axis=0, ddof=1),
            x.reshape(-1)[2:] + 1, np.zeros((x.shape[0] // 2, 3)), x[::2, 1:] * x.shape[1], x.T + 1)


@pytest.mark.filterwarnings("error")   # a kernel failing its own layout check replays eagerly, with a warning
def test_views_sizes_and_layouts_of_symbolic_arrays():
    compile_llvm, made = programs()
    compiled = numpile.compile(views_and_sizes, backend=compile_llvm, dynamic=True)
    layouts = (lambda a: a, lambda a: a[::-1], np.asfortranarray, lambda a: np.repeat(a, 2, axis=1)[:, ::2])
    for shape in ((5, 6), (7, 9), (40, 30), (4, 3)):
        for layout in layouts:
            x, y = layout(rng.standard_normal(shape)), rng.standard_normal(shape[1])
            assert_same(compiled(x, y), views_and_sizes(x, y))
    [program] = made
    assert not program.fallbacks
    # other layouts are kernel variants: a reversed or strided input's row stride is read at run time
    assert any(step.variants for step in program.steps.values())


def test_kernels_without_a_lowering_run_with_numpy_at_every_size():
    compile_llvm, made = programs()
    compiled = numpile.compile(lambda a: a * 3 + 1, backend=compile_llvm, dynamic=True)
    for n in (16, 40, 7):
        x = rng.standard_normal(n).astype(np.float16)
        assert_same(compiled(x), x * 3 + 1)
    assert len(made) == 1 and list(made[0].fallbacks.values()) == ["dtype float16 has no LLVM lowering"]


def symbolic_graph(case) -> tuple[Graph, list]:
    """The case's graph with every dim of its array inputs larger than 1 symbolic."""
    op = ops.get(case.op)
    inputs = case.inputs()
    env, graph = shapes.ShapeEnv(), Graph()
    with shapes.active(env):
        metas = []
        for i, x in enumerate(inputs):
            meta = ArrayMeta.of(x)
            if isinstance(x, np.ndarray):
                meta = dataclasses.replace(meta, shape=tuple(env.new_symbol(f"x{i}", d, n) if n > 1 else n
                                                             for d, n in enumerate(x.shape)))
            metas.append(meta)
        nodes = [graph.input(f"x{i}", m) for i, m in enumerate(metas)]
        args, kwargs = op.normalize(*case.bind(metas))
        meta = op.meta(*args, **kwargs)
        value = graph.call(op.name, *op.normalize(*case.bind(nodes)), meta)
        # an op with several results: the graph returns each
        results = [graph.result(value, i) for i in range(len(meta))] if isinstance(meta, tuple) else [value]
        graph.output(results)
    for node in results:   # the sizes only the data knows: bound by the results
        env.bind_dims(node, node.shape)
    graph.symbols = [(env.unbacked[k].node, env.unbacked[k].dim) if k in env.unbacked else (nodes[int(s[0][1:])], s[1])
                     for k, s in enumerate(env.symbols)]
    return graph, inputs


@pytest.mark.parametrize("case", [c for c in conformance_cases()
                                  if any(n > 1 for x in c.inputs() if isinstance(x, np.ndarray) for n in x.shape)],
                         ids=str)
def test_conformance_with_symbolic_dims(case):
    graph, inputs = symbolic_graph(case)
    op = ops.get(case.op)
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)   # log of 0, var of one value: not what is compared
        args, kwargs = op.normalize(*case.bind([x.copy() if isinstance(x, np.ndarray) else x for x in inputs]))
        expected = op.impl(*args, **kwargs)
        got = LLVMBackend().compile(graph, inputs, {})(*inputs)
    expected = tuple(expected) if isinstance(expected, tuple) else (expected,)  # several results
    assert len(got) == len(expected)
    for g, want in zip(got, expected):
        assert_same_result(g, want, what=str(case), values=case.values)
