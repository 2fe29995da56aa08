"""Ops with several results (np.divmod, np.modf, np.frexp, np.histogram, np.meshgrid, np.linalg's
eigh, slogdet, qr and svd, which return named tuples): traced as
one node read by a tuple_getitem node per result, unpacked and indexed as tuples, captured in one
graph, and compiled on eager and llvm equal to NumPy eager on fresh random inputs; NumPy's errors
for bad arguments; the forms not captured break with the reason."""

import numpy as np
import pytest

import numpile
from conftest import assert_same, rand
from numpile import lowering


def positive(rng, shape, dtype=np.float64):
    return (np.abs(rand(rng, shape)) + 0.5).astype(dtype)


def _divmod_unpacked(a, b):
    q, r = np.divmod(a, b)
    return q * b + r, q, r


def _results_indexed(a, b):
    return np.divmod(a, b)[0] - divmod(a, b)[1] + divmod(2.5, b)[1], np.modf(a)[1]


def _ufuncs_of_one(x):
    fractional, integral = np.modf(x)
    mantissa, exponent = np.frexp(x)
    return fractional + integral, np.ldexp(mantissa, exponent), exponent


def _scalars(x):
    return np.divmod(x.sum(), 3.0), np.frexp(x[0, 0])


def _divmod_out(a, b, q, r):
    result = np.divmod(a, b, out=(q, None))
    np.modf(a, out=(r, q))  # q written twice: NumPy's order
    return result[1], q, r


def _histograms(x, edges, w):
    counts, bin_edges = np.histogram(x, bins=12)
    weighted = np.histogram(x, edges, weights=w, density=True)[0]
    ranged = np.histogram(x.ravel(), 5, range=(-1.0, 1.0))[0]
    listed, _ = np.histogram(x, [-2, -0.5, 0, 0.5, 2])
    return counts * 2, bin_edges, weighted, ranged, listed, np.histogram_bin_edges(x, 4)


def _edges_are_the_bins(x, edges):
    counts, bin_edges = np.histogram(x, bins=edges)
    bin_edges *= 2  # NumPy's bin_edges is `edges` itself: the caller's array is doubled
    return counts, bin_edges is edges


def _grids(x, y, z):
    X, Y = np.meshgrid(x, y)
    A, B, C = np.meshgrid(x, y, z, indexing="ij", sparse=True)
    P, Q = np.meshgrid(x, [1, 2, 3], indexing="ij")
    return np.sin(X) * np.cos(Y), A * B + C, P, Q, np.meshgrid(z)


def _radial_histogram(x, y):
    X, Y = np.meshgrid(x, y)
    counts, edges = np.histogram(np.hypot(X, Y), bins=8, range=(0.0, 3.0))
    centers = (edges[1:] + edges[:-1]) / 2
    return counts, centers, (counts * centers).sum() / counts.sum()


def _decompositions(a, b):
    w, v = np.linalg.eigh(a)
    sign, logdet = np.linalg.slogdet(a)
    q, r = np.linalg.qr(b)
    u, s, vh = np.linalg.svd(b, full_matrices=False)
    return (v * w) @ v.T, sign * np.exp(logdet), q @ r, (u * s) @ vh, np.linalg.svd(b, compute_uv=False)


def _named_tuples(a):
    result = np.linalg.eigh(a)
    return result.eigenvalues.sum(), np.linalg.slogdet(a), np.linalg.qr(a, mode="r"), result


def spd(rng, n, batch=()):
    x = rand(rng, batch + (n, n))
    return x @ x.swapaxes(-1, -2) + n * np.eye(n)


PROGRAMS = {
    "divmod_unpacked": (_divmod_unpacked, lambda rng: (rand(rng, (3, 4)), positive(rng, (4,)))),
    "divmod_ints": (_divmod_unpacked, lambda rng: (rand(rng, (3, 4), np.int32) - 25, rand(rng, (3, 1), np.int64))),
    "results_indexed": (_results_indexed, lambda rng: (rand(rng, (5,), np.float32), positive(rng, (5,), np.float32))),
    "modf_frexp": (_ufuncs_of_one, lambda rng: (rand(rng, (2, 3)) * 10,)),
    "scalars": (_scalars, lambda rng: (rand(rng, (2, 3)),)),
    "divmod_out": (_divmod_out, lambda rng: (rand(rng, (3, 4)) * 5, positive(rng, (4,)),
                                             rand(rng, (3, 4)), rand(rng, (3, 4)))),
    "histograms": (_histograms, lambda rng: (rand(rng, (50, 3)), np.sort(rand(rng, (7,))) + np.arange(7),
                                             positive(rng, (50, 3)))),
    "histogram_ints": (lambda x: np.histogram(x, 6, weights=x, density=False), lambda rng: (rand(rng, (40,), np.int32),)),
    "edges_are_the_bins": (_edges_are_the_bins, lambda rng: (rand(rng, (30,)), np.linspace(-2, 2, 6))),
    "grids": (_grids, lambda rng: (rand(rng, (5,)), rand(rng, (2, 3), np.float32), rand(rng, (4,), np.int64))),
    "radial_histogram": (_radial_histogram, lambda rng: (rand(rng, (20,)), rand(rng, (15,)))),
    "decompositions": (_decompositions, lambda rng: (spd(rng, 4), rand(rng, (5, 3)))),
    "named_tuples": (_named_tuples, lambda rng: (spd(rng, 3, (2,)),)),
}


@pytest.mark.parametrize("backend", ["eager", "llvm"])
@pytest.mark.parametrize("name", PROGRAMS)
def test_program(rng, name, backend):
    fn, make_args = PROGRAMS[name]
    compiled = numpile.compile(fn, backend=backend, fullgraph=True)
    for _ in range(2):
        args = make_args(rng)
        mine = [a.copy() for a in args]
        assert_same(compiled(*mine), fn(*args))
        assert_same(mine, list(args))  # inputs updated exactly where NumPy updates them (out=, edges)


@pytest.mark.parametrize("backend", ["eager", "llvm"])
def test_new_sizes_recompile_with_symbolic_dims(rng, backend):
    compiled = numpile.compile(_radial_histogram, backend=backend)
    for n in (10, 13, 17):
        x, y = rand(rng, (n,)), rand(rng, (n + 2,))
        assert_same(compiled(x, y), _radial_histogram(x, y))


@pytest.mark.parametrize("backend", ["eager", "llvm"])
def test_results_cross_a_graph_break(rng, backend, capsys):
    def fn(a, b):
        q, r = np.divmod(a, b)
        print("break")
        return q + r

    a, b = rand(rng, (3, 4)), positive(rng, (4,))
    assert_same(numpile.compile(fn, backend=backend)(a, b), fn(a, b))


# -- NumPy's errors ------------------------------------------------------------------------

BAD_CALLS = {
    "bins < 1": (lambda x: np.histogram(x, bins=0), ValueError, "`bins` must be positive"),
    "negative bins": (lambda x: np.histogram(x, -3), ValueError, "`bins` must be positive"),
    "weights of another shape": (lambda x: np.histogram(x, weights=x[1:]), ValueError, "weights should have the same shape"),
    "range reversed": (lambda x: np.histogram(x, range=(2, 1)), ValueError, "max must be larger than min"),
    "range infinite": (lambda x: np.histogram(x, range=(0, np.inf)), ValueError, "is not finite"),
    "2-d edges": (lambda x: np.histogram(x, bins=[[0, 1], [2, 3]]), ValueError, "must be 1d"),
    "bad indexing=": (lambda x: np.meshgrid(x, x, indexing="xx"), ValueError, "Valid values for `indexing`"),
    "out= of one array": (lambda x: np.divmod(x, 2.0, out=(x,)), ValueError, "one entry per ufunc output"),
}


@pytest.mark.parametrize("name", BAD_CALLS)
def test_bad_arguments_raise_numpys_error(rng, name):
    fn, error, message = BAD_CALLS[name]
    x = rand(rng, (10,))
    with pytest.raises(error, match=message):
        fn(x.copy())
    with pytest.raises(error, match=message):
        numpile.compile(fn, backend="eager")(x.copy())
    with pytest.raises(numpile.Unsupported):
        numpile.compile(fn, backend="eager", fullgraph=True)(x.copy())


@pytest.mark.parametrize("fn, reason", [
    (lambda x: np.histogram(x, bins="auto"), "bins='auto' picks the number of bins from the data"),
    (lambda x: np.histogram(x, bins=(x[0] * 0 + 5).astype(int)), "a 0-d array computed in the graph"),
    (lambda x: np.histogram_bin_edges(x, bins=x), "edges given as an array are returned as they are"),
    (lambda x: np.meshgrid(x, x, copy=False), "copy=False"),
])
def test_forms_not_captured_break_with_the_reason(rng, fn, reason):
    x = np.sort(rand(rng, (10,)))
    explained = numpile.explain(fn)(x)
    assert explained.graph_break_count >= 1
    assert any(reason in str(b.reason) for b in explained.break_reasons), explained.break_reasons
    assert_same(numpile.compile(fn, backend="eager")(x), fn(x))


# -- what each stage shows ---------------------------------------------------------------------

def _capture(fn, *args):
    graphs = []

    def backend(graph, example_inputs):
        graphs.append(graph)
        return graph

    numpile.compile(fn, backend=backend, fullgraph=True)(*args)
    (graph,) = graphs
    return graph


def test_graph_shows_the_tuple_and_its_results(rng):
    graph = _capture(_divmod_unpacked, rand(rng, (3, 4)), positive(rng, (4,)))
    table = graph.tabular()
    assert "(float64[3, 4], float64[3, 4])" in table and "tuple_getitem" in table
    code = graph.python_code()
    assert "divmod = np.divmod(a, b)" in code and "divmod[0]" in code and "divmod[1]" in code
    assert [n.target for n in graph.calls][:3] == ["divmod", "tuple_getitem", "tuple_getitem"]


def test_divmod_is_one_kernel_storing_both_results_on_llvm(rng):
    graph = _capture(_divmod_unpacked, rand(rng, (3, 4)), positive(rng, (4,)))
    program = lowering.schedule(graph)
    assert not any(isinstance(s, lowering.Extern) for s in program.steps)
    assert len(program.kernels) == 1 and len(program.kernels[0].outputs) == 3


def test_histogram_is_an_extern_filling_a_buffer_per_result(rng, capsys):
    x = rand(rng, (30,))
    graph = _capture(lambda x: np.histogram(x, 5)[0] * 2, x)
    program = lowering.schedule(graph)
    (extern,) = [s for s in program.steps if isinstance(s, lowering.Extern)]
    assert extern.outputs == ("histogram[0]", "histogram[1]")
    numpile.set_logs(output_code=True)
    try:
        numpile.compile(lambda x: np.histogram(x, 5)[0] * 2, backend="llvm")(x)
    finally:
        numpile.set_logs()
    text = capsys.readouterr().err
    assert "histogram[0], histogram[1] = extern histogram(x)" in text and "= map(asarray, extern" in text


def test_meshgrid_read_by_pointwise_ops_is_index_arithmetic_on_llvm(rng):
    def fn(x, y):
        X, Y = np.meshgrid(x, y)
        return np.sin(X) * np.cos(Y)

    program = lowering.schedule(_capture(fn, rand(rng, (5,)), rand(rng, (4,))))
    assert [type(s).__name__ for s in program.steps] == ["Kernel"] and len(program.buffers) == 3
