"""Dynamic shapes: symbolic dims in graphs and guards, automatic dynamic, dynamic=True/False,
shape arithmetic, guards on the relations the trace relied on, static graphs for backends
without dynamic shapes."""

import numpy as np
import pytest

import numpile
from conftest import assert_same, rand
from numpile.shapes import SymInt


def fn(x):
    return x + 1


def graphs_of(compiled):
    return [e.graph for e in compiled.all_entries() if e.graph is not None]


def test_12_automatic_dynamic(capsys):
    compiled = numpile.compile(fn, backend="eager")
    numpile.set_logs("recompiles")
    try:
        for n in (3, 4, 5):
            assert_same(compiled(np.ones((n, n))), np.ones((n, n)) + 1)
    finally:
        numpile.set_logs()
    err = capsys.readouterr().err
    assert "shape of x changed from (3, 3) to (4, 4)" in err
    assert err.count("recompiling") == 1          # the (5, 5) call reuses the dynamic entry
    assert len(compiled.entries) == 2
    dynamic = compiled.entries[0].graph
    assert all(isinstance(d, SymInt) for d in dynamic.inputs[0].shape)


def test_12_dynamic_true_serves_every_shape():
    compiled = numpile.compile(fn, backend="eager", dynamic=True)
    for n in (3, 4, 5):
        assert_same(compiled(np.ones((n, n))), np.ones((n, n)) + 1)
    assert len(compiled.entries) == 1


def test_dynamic_false_recompiles_every_shape():
    compiled = numpile.compile(fn, backend="eager", dynamic=False)
    for n in (3, 4, 5):
        compiled(np.ones((n, n)))
    assert len(compiled.entries) == 3


def test_sizes_zero_and_one_stay_static():
    compiled = numpile.compile(fn, backend="eager", dynamic=True)
    for shape in ((1, 4), (0, 4), (3, 4)):
        assert_same(compiled(np.ones(shape)), np.ones(shape) + 1)
    assert len(compiled.entries) == 3


def shape_arithmetic(x, y):
    n = x.shape[0]
    z = (x + y).reshape(-1, 2)
    w = np.zeros((n // 2, 3), dtype=x.dtype)
    inner = x[1:-1] * 2 + x[2:].sum()
    return z.sum(axis=0), w, inner, n, x.shape, len(x), x.size


def test_shape_arithmetic_on_symbols(rng):
    compiled = numpile.compile(shape_arithmetic, backend="eager", dynamic=True)
    for n in (4, 6, 10):
        x, y = rand(rng, (n,)), rand(rng, (n,))
        assert_same(compiled(x, y), shape_arithmetic(x, y))
    assert len(compiled.entries) == 1
    text = "\n".join(compiled.entries[0].guards.describe())
    assert "x.shape[0] % 2 == 0" in text and "y.shape[0] == x.shape[0]" in text
    assert "x.shape[0] // 2" in graphs_of(compiled)[0].python_code()


def test_relations_are_guarded(rng):
    compiled = numpile.compile(shape_arithmetic, backend="eager", dynamic=True)
    compiled(rand(rng, (4,)), rand(rng, (4,)))
    x = rand(rng, (5,))                            # odd: reshape(-1, 2) no longer works
    with pytest.raises(ValueError):
        compiled(x, rand(rng, (5,)))
    with pytest.raises(ValueError):
        shape_arithmetic(x, rand(rng, (5,)))
    assert len(compiled.entries) == 2              # the failed guard made a new entry


def matrix_ops(a, b):
    h = a @ b
    return np.maximum(h - h.mean(axis=1, keepdims=True), 0), h.T.shape


def test_dynamic_matmul_and_reductions(rng):
    compiled = numpile.compile(matrix_ops, backend="eager", dynamic=True)
    for m, k, n in ((3, 4, 5), (6, 2, 7), (2, 8, 3)):
        a, b = rand(rng, (m, k)), rand(rng, (k, n))
        assert_same(compiled(a, b), matrix_ops(a, b))
    assert len(compiled.entries) == 1


def test_backend_without_dynamic_shapes_gets_static_graphs(rng):
    class StaticOnly(numpile.Backend):
        name = "static_only"
        supports_dynamic_shapes = False

        def compile(self, graph, example_inputs, options):
            assert not any(isinstance(d, SymInt) for n in graph for d in n.meta.get("shape", ()))
            return graph.compile_python()

    compiled = numpile.compile(fn, backend=StaticOnly(), dynamic=True)
    for n in (3, 4, 5):
        assert_same(compiled(np.ones(n)), np.ones(n) + 1)
    assert len(compiled.entries) == 3


def test_python_loop_over_a_dynamic_dim_is_one_loop_for_every_size(rng):
    def f(x):
        acc = x[0]
        for i in range(1, x.shape[0]):     # a loop node whose trip count is the size's
            acc = acc + x[i]
        return acc
    compiled = numpile.compile(f, backend="eager", dynamic=True)
    for n in (3, 4, 9):
        x = rand(rng, (n, 2))
        assert_same(compiled(x), f(x))
    assert len(compiled.entries) == 1
    assert [n.target for n in compiled.entries[0].graph.calls].count("loop") == 1
    x = rand(rng, (1, 2))
    assert_same(compiled(x), f(x))      # no iteration: the trace's decisions took one for granted


def test_a_loop_over_a_dynamic_dim_that_no_loop_node_takes_specialises(rng):
    def f(x):
        acc = x[0]
        for i in range(1, x.shape[0]):
            if i == 2:      # a Python branch on the index: no loop node
                break
            acc = acc + x[i]
        return acc
    compiled = numpile.compile(f, backend="eager", dynamic=True)
    for n in (3, 4, 3):
        x = rand(rng, (n, 2))
        assert_same(compiled(x), f(x))
    assert len(compiled.entries) == 2


def positions_repeated(counts):
    return np.repeat(np.arange(len(counts)), counts), np.arange(0, counts.shape[0], 2) * 1.5


def group_starts(values):
    diff = np.concatenate(([1], np.diff(values)))
    idx = np.concatenate((np.where(diff)[0], [len(values)]))
    return values[idx[:-1]], np.diff(idx)


@pytest.mark.parametrize("backend", ["eager", "llvm"])
@pytest.mark.parametrize("fn", [positions_repeated, group_starts])
def test_sizes_in_aranges_and_lists_are_python_ints(rng, backend, fn):
    """np.arange(len(x)) and [len(x)] once the length is symbolic: Python ints, typed as NumPy
    types them (int64), not object arrays (pythran's grouping, numpy-100's 74 and 87)."""
    compiled = numpile.compile(fn, backend=backend)
    for n in (7, 12, 30):
        values = np.sort(rng.integers(0, 6, n)).astype(np.uint32)
        assert_same(compiled(values), fn(values))
