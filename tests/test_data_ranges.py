"""Loops over ranges whose bounds the graph computes (`range(indptr[i], indptr[i + 1])`): loop
nodes whose index is a graph value (tracer/control/loops.py DataRangeBody), differentially against NumPy
on fresh random inputs, empty ranges included, and NumPy's errors where Python raises."""

import numpy as np
import pytest

import numpile
from numpile.testing.loop_programs import sparse_rows as spmv, sparse_rows_args

BACKENDS = ["eager", "llvm"]


def counted(counts, w):
    out = np.zeros(counts.shape[0])
    for i in range(counts.shape[0]):
        for k in range(counts[i]):        # one bound: range(stop)
            out[i] += w[k] * (k + 1)
    return out


def downwards(lo, hi, x):
    out = np.zeros(lo.shape[0], dtype=np.int64)
    for i in range(lo.shape[0]):
        for k in range(hi[i], lo[i], -2):
            out[i] = out[i] * 3 + x[k]
    return out


def row_stats(data, indices, indptr, x):
    sums = np.zeros(indptr.shape[0] - 1)
    counts = np.zeros(indptr.shape[0] - 1, dtype=np.int64)
    for i in range(indptr.shape[0] - 1):
        s = data.dtype.type(0)        # a NumPy float64 before and after: carried (the range may be empty)
        c = 0                         # a Python int before and after
        for k in range(indptr[i], indptr[i + 1]):
            s += data[k] * x[indices[k]]
            c += 1
        sums[i], counts[i] = s, c
    return sums, counts


def row_sums_stored(data, indices, indptr, x):
    # s is a Python float where a row is empty and a NumPy float64 after an iteration, but it is
    # only stored into a float array, where both store the same: one graph
    y = np.zeros(indptr.shape[0])
    for i in range(indptr.shape[0] - 1):
        s = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            s += data[k] * x[indices[k]]
        y[i + 1] = s
    return y


def csr(rng):
    return sparse_rows_args(rng, int(rng.integers(5, 30)))


def _inputs(rng, name):
    n = int(rng.integers(5, 30))
    lo = rng.integers(-3, n // 2, n)
    return {"sparse_rows": csr(rng), "row_stats": csr(rng), "row_sums_stored": csr(rng), "counted": (rng.integers(0, 6, n), rng.random(6)),
            "downwards": (lo, lo + rng.integers(-2, n // 2, n), rng.integers(-50, 50, n))}[name]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [spmv, counted, downwards, row_stats, row_sums_stored], ids=lambda f: f.__name__)
def test_captured_whole_and_same_as_numpy(fn, backend):
    rng = np.random.default_rng()
    compiled = numpile.compile(fn, backend=backend, fullgraph=True)
    for _ in range(3):
        args = _inputs(rng, fn.__name__)
        expected, got = fn(*args), compiled(*args)
        for e, g in zip(expected, got) if isinstance(expected, tuple) else [(expected, got)]:
            assert g.dtype == e.dtype and g.shape == e.shape
            np.testing.assert_allclose(g, e, rtol=1e-12, atol=0)


def test_the_loop_is_a_loop_node_over_graph_values():
    args = csr(np.random.default_rng())
    report = numpile.explain(spmv)(*args)
    assert (report.graph_count, report.graph_break_count) == (1, 0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_index_out_of_range_raises_numpys_error(backend):
    data, indices, indptr, x = csr(np.random.default_rng())
    indices[-1] = x.shape[0] + 5
    with pytest.raises(IndexError):
        spmv(data, indices, indptr, x)
    with pytest.raises(IndexError):
        numpile.compile(spmv, backend=backend)(data, indices, indptr, x)


def test_a_float_bound_is_pythons_type_error():
    def f(a):
        total = 0
        for k in range(a[0]):
            total += k
        return total
    with pytest.raises(TypeError):
        numpile.compile(f, backend="llvm")(np.array([3.0, 1.0]))


def row_sums_listed(data, indptr):
    out = []
    for i in range(indptr.shape[0] - 1):
        s = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            s += data[k]
        out.append(s)
    return out


def row_sums_doubled(data, indptr):
    out = np.zeros(indptr.shape[0] - 1, dtype=np.float32)
    for i in range(indptr.shape[0] - 1):
        s = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            s += data[k]
        out[i] = s * 3.0 ** 40   # a Python float overflows float32 where a NumPy float64 does not
    return out


def row_sums_in_ints(data, indptr):
    out = np.zeros(indptr.shape[0] - 1, dtype=np.int64)
    for i in range(indptr.shape[0] - 1):
        s = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            s += data[k]
        out[i] = s
    return out


def row_sums_into_a_rebound_local(data, indptr):
    out, kept = np.zeros(indptr.shape[0] - 1), [0.0] * (indptr.shape[0] - 1)
    for i in range(indptr.shape[0] - 1):
        target = out
        s = 0.0
        for k in range(indptr[i], indptr[i + 1]):
            s += data[k]
        target = kept               # rebound to a list before the store: the type shows there
        target[i] = s
    return kept


@pytest.mark.parametrize("fn", [row_sums_listed, row_sums_doubled, row_sums_in_ints, row_sums_into_a_rebound_local],
                         ids=lambda f: f.__name__)
def test_a_python_float_that_becomes_a_numpy_scalar_and_is_read_breaks_and_stays_right(fn):
    # s is 0.0 (a Python float) where the range is empty and a NumPy float64 after an iteration:
    # read as anything but the value stored into a float array, one loop node cannot give both
    data, _, indptr, _ = csr(np.random.default_rng())
    with np.errstate(all="ignore"):
        got, expected = numpile.compile(fn, backend="llvm")(data, indptr), fn(data, indptr)
    if isinstance(expected, list):
        assert [type(v) for v in got] == [type(v) for v in expected] and got == expected
    else:
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)
    assert numpile.explain(fn)(data, indptr).graph_break_count >= 1
