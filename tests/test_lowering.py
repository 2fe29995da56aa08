"""The lowering toolkit on its own: kernel counts for known patterns, views folded into indices,
and every conformance case run through schedule() and the reference renderer."""

import numpy as np
import pytest

import numpile
from conftest import assert_same, rand
from numpile import lowering, testing
from numpile.lowering import Extern, Kernel
from numpile.lowering.schedule import INLINE_SIZE


class Recorder:
    """A backend that lowers each graph, keeps the Program, and runs it with the reference renderer."""

    def __init__(self):
        self.programs = []

    def __call__(self, graph, example_inputs):
        program = lowering.schedule(graph)
        self.programs.append(program)
        return lowering.compile_program(program)


def lowered(fn, *args):
    rec = Recorder()
    compiled = numpile.compile(fn, backend=rec, fullgraph=True)
    assert_same(compiled(*args), fn(*args))
    [program] = rec.programs
    return program


@pytest.mark.parametrize("case", testing.conformance_cases(), ids=str)
def test_conformance_through_the_scheduler(case):
    testing.check_case(case, lambda graph, inputs: lowering.compile_program(lowering.schedule(graph)))


def softmax(x):
    m = x.max(axis=1, keepdims=True)
    e = np.exp(x - m)
    return e / e.sum(axis=1, keepdims=True)


def layer_norm(x, g, b):
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + 1e-5) * g + b


def squared_distance(x, y):
    return ((x - y) ** 2).sum()


def chain(x):
    return np.sin(x) * np.cos(x) + np.exp(-x * x) * 0.5 + np.tanh(x)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fused_patterns_are_one_kernel(rng, dtype):
    x = rand(rng, (8, 16), dtype)
    g, b = rand(rng, (16,), dtype), rand(rng, (16,), dtype)
    for fn, args in ((softmax, (x,)), (layer_norm, (x, g, b)), (squared_distance, (x, x * 2)), (chain, (x,))):
        program = lowered(fn, *args)
        assert len(program.steps) == 1 and isinstance(program.steps[0], Kernel), (fn.__name__, str(program))


def test_softmax_stages(rng):
    [kernel] = lowered(softmax, rand(rng, (4, 5))).kernels
    assert kernel.outer == (4,)
    assert [s.reduce for s in kernel.stages] == ["max", "sum", None]


def test_mlp_epilogues_fuse_between_matmuls(rng):
    def mlp(x, w1, b1, w2, b2):
        h = np.maximum(x @ w1 + b1, 0)
        return np.tanh(h @ w2 + b2)
    program = lowered(mlp, rand(rng, (8, 32)), rand(rng, (32, 16)), rand(rng, (16,)), rand(rng, (16, 24)), rand(rng, (24,)))
    kinds = [type(s).__name__ if isinstance(s, Kernel) else s.op for s in program.steps]
    assert kinds == ["matmul", "Kernel", "matmul", "Kernel"]


def test_views_become_index_arithmetic(rng):
    def f(x):
        return (x.T[1:, ::-1] * 2).sum(axis=0) + np.expand_dims(x[:, 0], 1).squeeze(1)
    program = lowered(f, rand(rng, (6, 5)))
    assert not any(isinstance(s, Extern) for s in program.steps), str(program)
    assert "x[-1*i0 + 5, i1 + 1]" in str(program)


def test_broadcasting_is_a_constant_index(rng):
    program = lowered(lambda x, y: x * y, rand(rng, (3, 4)), rand(rng, (1, 4)))
    assert "y[0, i1]" in str(program)


def test_a_value_two_kernels_need_is_stored_once(rng):
    def f(x):
        t = np.exp(x) * 2          # used by a row reduction and a column reduction: two kernels
        return t.sum(axis=1), t.sum(axis=0)
    program = lowered(f, rand(rng, (5, 6)))
    assert "multiply" in program.buffers
    assert sum(str(s).count("exp(") for s in program.kernels) == 1


def test_reductions_over_leading_axes(rng):
    program = lowered(lambda x: x.sum(axis=0) + 1, rand(rng, (5, 6)))
    [kernel] = program.kernels      # parallel over the columns; the add uses each column's sum
    assert kernel.outer == (6,) and [s.reduce for s in kernel.stages] == ["sum", None]
    assert "x[i1, i0]" in str(program)


def laplacian(Z):
    return np.roll(Z, 1, axis=0) + np.roll(Z, -1, axis=0) + np.roll(Z, 1, axis=1) + np.roll(Z, -1, axis=1) - 4 * Z


@pytest.mark.parametrize("fn", [laplacian, lambda x: np.roll(x, (1, -7), (0, 1)) * np.roll(x[::-1], 15, axis=-1),
                                lambda x: np.diff(x, 2, axis=0) + np.diff(x, prepend=x[:, :1])[1:-1],
                                lambda x: np.indices(x.shape) * x - np.arange(x.shape[1])])
def test_rolls_diffs_and_grids_are_one_kernel(rng, fn):
    """A roll is a gather at arange(n) - shift (negative positions wrap), an integer arange the loop
    index itself; diff's slices (its prepend= concatenated by gathers) and np.indices' grids are
    index arithmetic too. (The view prepend= reads is a NumPy call before the kernel.)"""
    program = lowered(fn, rand(rng, (5, 6)))
    assert len(program.kernels) == 1, str(program)
    assert all(s.op in ("concatenate", "getitem") for s in program.steps if isinstance(s, Extern)), str(program)


@pytest.mark.parametrize("fn, make", [
    (lambda x, y: np.stack([np.sin(x), x * y, y - 1], axis=1), lambda rng: (rand(rng, (5, 4)), rand(rng, (5, 4)))),
    (lambda x, y: np.stack((x, y)) * 2, lambda rng: (rand(rng, (3,)), rand(rng, (3,)))),
    (lambda x, y: np.stack([x, y, x], axis=-1).sum(axis=0), lambda rng: (rand(rng, (2, 3)), rand(rng, (2, 3)))),
    (lambda x, y: np.stack([x, y]), lambda rng: (rng.integers(-9, 9, (4,), dtype=np.int32), rand(rng, (4,), np.float32))),
    (lambda x, y: np.stack([x.sum(), y.max()]), lambda rng: (rand(rng, (6,)), rand(rng, (2,)))),
])
def test_stacks_are_one_kernel(rng, fn, make):
    """np.stack as a where on the index along the new axis: each element from its array, NumPy's
    result dtype (int32 with float32: float64), any axis, 0-d arrays too; one kernel with what
    reads it, and on llvm too."""
    args = make(rng)
    program = lowered(fn, *args)
    assert not any(isinstance(s, Extern) and s.op == "stack" for s in program.steps), str(program)
    assert_same(numpile.compile(fn, backend="llvm")(*args), fn(*args))


@pytest.mark.parametrize("fn, make", [
    (lambda x, y: np.concatenate([x, np.sin(y), x[:2]]) * 2, lambda rng: (rand(rng, (5,)), rand(rng, (3,)))),
    (lambda x, y: np.concatenate((x, y), axis=1), lambda rng: (rand(rng, (3, 2)), rand(rng, (3, 4)))),
    (lambda x, y: np.concatenate((x, y.T), axis=-2).sum(axis=1),
     lambda rng: (rng.integers(-9, 9, (2, 3), dtype=np.int16), rand(rng, (3, 4), np.float32))),
    (lambda x, y: np.diff(x, prepend=0.0, append=y[-1]), lambda rng: (rand(rng, (6,)), rand(rng, (2,)))),
    (lambda x, y: np.diff(x, axis=0, prepend=y[:1]), lambda rng: (rand(rng, (4, 3)), rand(rng, (2, 3)))),
])
def test_concatenations_are_one_kernel(rng, fn, make):
    """np.concatenate of arrays of known sizes (and diff's prepend= and append=, a repeated constant
    among them): each position gathered from its piece, NumPy's dtype, one kernel; on llvm too."""
    args = make(rng)
    program = lowered(fn, *args)
    assert not any(isinstance(s, Extern) and s.op == "concatenate" for s in program.steps), str(program)
    assert_same(numpile.compile(fn, backend="llvm")(*args), fn(*args))


def test_fill_diagonal_is_a_kernel_storing_into_its_argument(rng):
    x = rand(rng, (7, 3))
    program = lowered(lambda x, v: np.fill_diagonal(x, v, wrap=True), x, rand(rng, (2,)))
    assert all(isinstance(s, Kernel) for s in program.steps) and program.kernels[-1].stages[-1].output == "x", str(program)


def views_and_sizes(x, y):
    return ((x - x.mean(axis=-1, keepdims=True)) * 2 + y[::-1], x[1:-1, -1].sum(), x.var(axis=0, ddof=1),
            x.reshape(-1)[2:] + 1, np.zeros((x.shape[0] // 2, 3)), x[::2, 1:] * x.shape[1])


def test_symbolic_shapes_lower_to_one_program_for_every_size(rng):
    rec = Recorder()
    compiled = numpile.compile(views_and_sizes, backend=rec, dynamic=True)
    for shape in ((5, 6), (7, 9), (4, 3), (12, 4)):
        x, y = rand(rng, shape), rand(rng, shape[1:])
        assert_same(compiled(x, y), views_and_sizes(x, y))
    [program] = rec.programs
    assert program.symbols == [("x", 0), ("x", 1), ("y", 0)]
    text = str(program)
    # sizes, index constants and extern arguments are expressions of the symbols
    assert "x[i0 + 1, -1 % s1]" in text and "y[-1*i1 + s2 - 1]" in text and "max(s0 - 1, 0)" in text
    assert "extern zeros((s0 // 2, 3))" in text


def test_lowering_takes_no_decision_the_trace_did_not_guard(rng):
    graphs = []
    numpile.compile(lambda x, y: (x + 1, y + 1), backend=lambda g, _: graphs.append(g) or g, dynamic=True)(
        rand(rng, (4,)), rand(rng, (4,)))
    [x, y] = graphs[0].inputs
    # s0 and s1 are equal in this call, but nothing guards that: the scheduler does not ask
    assert numpile.shapes.identical(x.shape, x.shape) and not numpile.shapes.identical(x.shape, y.shape)
    with numpile.shapes.no_new_guards(), pytest.raises(numpile.shapes.NewGuard, match="s0 == s1"):
        bool(x.shape[0] == y.shape[0])
    program = lowering.schedule(graphs[0])
    assert [k.outer for k in program.kernels] == [()] and [len(k.stages) for k in program.kernels] == [2]


def _diagonal_sum(a, n):
    t = 0.0
    for i in range(n):
        t += a[i, i]          # a chain of dependent 0-d ops: 2n graph ops
    return t


def _shared_chain(x, n):
    for i in range(n):
        x = x * 1.0001 + 0.5 if i % 3 else np.sin(x) + x[::-1]   # x used twice: inlined naively, 2**n ops
    return x


@pytest.mark.parametrize("fn, make_args", [(_diagonal_sum, lambda rng: (rand(rng, (2500, 2500)), 2500)),
                                           (_shared_chain, lambda rng: (rand(rng, (16,)), 2100))])
def test_graphs_of_thousands_of_ops_lower_without_recursion(rng, monkeypatch, fn, make_args):
    monkeypatch.setattr(numpile.config, "unroll_limit", 10_000)
    program = lowered(fn, *make_args(rng))
    sizes = [sum(isinstance(e, lowering.Call) for e in lowering.walk(stage.value)) for k in program.kernels for stage in k.stages]
    assert len(program.kernels) >= 1 and max(sizes) <= 3 * INLINE_SIZE   # an op of three operands at most


def test_gathers_are_loads_through_the_index_arrays(rng):
    def f(x, i, j):
        return np.exp(x)[:, ::2][j, 1:, i] * 2, x.T[i, 0]
    x, i, j = rand(rng, (5, 6, 7)), rng.integers(-7, 7, 3), rng.integers(-5, 5, (2, 1))
    program = lowered(f, x, i, j)
    assert not any(isinstance(s, Extern) for s in program.steps)
    text = str(program)
    assert "exp(x[at(j[i0, 0], 5), 2*i2 + 2, at(i[i1], 7)])" in text and "x[i1, 0, at(i[i0], 7)]" in text
    with pytest.raises(IndexError, match="index 7 is out of bounds for axis 2 with size 7"):
        lowering.run(program, x, np.array([0, 7, 1]), j)


EINSUMS = [("bij,bjk->bik", (4, 3, 5), (4, 5, 6)), ("ij,jk", (3, 5), (5, 6)), ("ij,kj->ik", (3, 5), (6, 5)),
           ("bij,bjk->bki", (4, 3, 5), (4, 5, 6)), ("abc,cbd->ad", (2, 3, 4), (4, 3, 5)),
           ("ijk,jl->kil", (2, 3, 4), (3, 5))]


@pytest.mark.parametrize("subscripts, a_shape, b_shape", EINSUMS)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "bool"])
def test_einsum_contractions_become_one_matmul(rng, subscripts, a_shape, b_shape, dtype):
    """Integers and booleans exactly NumPy's; floats within rounding (BLAS adds in its own order)."""
    a, b = ((rng.standard_normal(s) * 3).astype(dtype) for s in (a_shape, b_shape))
    rec = Recorder()
    got = numpile.compile(lambda x, y: np.einsum(subscripts, x, y), backend=rec)(a, b)
    want = np.einsum(subscripts, a, b)
    assert type(got) is type(want) and got.dtype == want.dtype and got.shape == want.shape
    if np.dtype(dtype).kind == "f":
        scale = np.einsum(subscripts, np.abs(a).astype(np.float64), np.abs(b).astype(np.float64))
        assert np.all(np.abs(got - want) <= 4 * np.finfo(dtype).eps * scale)
    else:
        assert np.array_equal(got, want)
    [program] = rec.programs
    assert [s.op for s in program.steps if isinstance(s, Extern)].count("matmul") == 1
    assert "einsum" not in [s.op for s in program.steps if isinstance(s, Extern)]


@pytest.mark.parametrize("subscripts, shapes", [("ij,ij->i", ((3, 4), (3, 4))), ("i,j->ij", ((3,), (4,))),
                                                ("ij,jk,kl->il", ((2, 3), (3, 4), (4, 5))), ("...ij,...jk", ((2, 3), (3, 4)))])
def test_other_einsums_stay_numpys(rng, subscripts, shapes):
    ops = [rand(rng, s) for s in shapes]
    program = lowered(lambda *x: np.einsum(subscripts, *x), *ops)
    assert [s.op for s in program.steps if isinstance(s, Extern)] == ["einsum"]


SMALL_PRODUCTS = [((4, 3), (3, 5)), ((3,), (3, 4)), ((4, 3), (3,)), ((6,), (6,)), ((2, 1, 3, 4), (5, 4, 2)),
                  ((3, 2, 4), (4,))]


@pytest.mark.parametrize("a_shape, b_shape", SMALL_PRODUCTS)
@pytest.mark.parametrize("dtype", ["float64", "float32", "int32", "int8", "uint8"])
@pytest.mark.parametrize("op", [np.matmul, np.dot])
def test_small_matmuls_are_kernels(rng, op, a_shape, b_shape, dtype):
    """Integers exactly NumPy's (int8 wraps as its matmul loop does); floats within rounding."""
    if op is np.dot and (len(a_shape) > 2 or len(b_shape) > 2):
        pytest.skip("np.dot of stacks is not matmul")
    a, b = ((rng.standard_normal(s) * 40).astype(dtype) for s in (a_shape, b_shape))
    rec = Recorder()
    got = numpile.compile(lambda x, y: op(x, y) + 1, backend=rec)(a, b)
    want = op(a, b) + 1
    assert type(got) is type(want) and got.dtype == want.dtype and np.shape(got) == np.shape(want)
    if np.dtype(dtype).kind == "f":
        scale = op(np.abs(a).astype(np.float64), np.abs(b).astype(np.float64)) + 1
        assert np.all(np.abs(got - want) <= 4 * np.finfo(dtype).eps * scale)
    else:
        assert np.array_equal(got, want)
    [program] = rec.programs
    assert [type(s) for s in program.steps] == [Kernel], str(program)


@pytest.mark.parametrize("a, b", [(np.ones((64, 64)), np.ones((64, 64))), (np.ones((3, 3), bool), np.ones((3, 3), bool)),
                                  (np.ones((3, 3), np.complex128), np.ones((3, 3)))])
def test_large_boolean_and_complex_matmuls_stay_blas(a, b):
    rec = Recorder()
    assert_same(numpile.compile(lambda x, y: x @ y, backend=rec)(a, b), a @ b)
    [program] = rec.programs
    assert [s.op for s in program.steps if isinstance(s, Extern)] == ["matmul"]
