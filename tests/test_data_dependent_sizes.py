"""Sizes only the data knows, captured (shapes.py: unbacked symbols): boolean-mask reads and
writes, np.nonzero/flatnonzero/argwhere/bincount/unique, integers computed in the graph used
as an index or a slice bound. Each program is compared with NumPy on fresh random inputs
(results, dtypes, shapes, the arguments afterwards, errors and their messages) on every
backend, with empty selections among the draws; a Python decision on such a size is a graph
break that says which size it needed."""

import numpy as np
import pytest

import numpile
from conftest import assert_same, rand, run_like_numpy

BACKENDS = ["eager", "llvm"]


def _run(fn, backend, make_args, graphs=1, calls=4):
    return run_like_numpy(fn, backend, make_args, graphs, calls)


def _masked(rng, shape=(40,), mask_shape=None):
    """(x, mask): the third draw selects nothing, the fourth everything."""
    def make(call):
        x = rand(rng, shape) - 25.0
        mask = rng.random(mask_shape or shape) < 0.5
        if call >= 2:
            mask[...] = call == 3
        return x, mask
    return make


MASK_READS = {
    "x[m]": lambda x, m: x[m] * 2,
    "x[m].sum(), x[m].mean()": lambda x, m: (x[m].sum(), x[m].mean(), x[m].std()),
    "x[m] / x[m].sum()": lambda x, m: x[m] / x[m].sum() + 1,
    "x[m], x[~m]": lambda x, m: (x[m], x[~m] - 1),
    "x[x > 0]": lambda x, m: x[x > 0] ** 2,
    "len(x[m])": lambda x, m: (len(x[m]), x[m].shape[0] + 1, x[m].size),
    "np.zeros(len(x[m]))": lambda x, m: np.zeros(len(x[m])) + x[m],
    "x[m][:, None] * x[None]": lambda x, m: (x[m][:, None] * x[None, :8]).sum(axis=1),
    "np.where(m, x, 0)[m]": lambda x, m: np.where(m, x, 0.0)[m].cumsum(),
}


@pytest.mark.parametrize("case", list(MASK_READS))
@pytest.mark.parametrize("backend", BACKENDS)
def test_mask_reads(rng, backend, case):
    _run(MASK_READS[case], backend, _masked(rng))


MASK_READS_2D = {
    "x[m2]": (lambda x, m: x[m] + 1, (5, 8), (5, 8)),
    "x[m1] rows": (lambda x, m: x[m] - x[m].mean(axis=0), (5, 8), (5,)),
    "x[:, m1]": (lambda x, m: x[:, m] * 3, (5, 8), (8,)),
    "x[m1, 1:]": (lambda x, m: x[m, 1:], (5, 8), (5,)),
    "x[..., m1]": (lambda x, m: x[..., m].sum(axis=-1), (2, 5, 8), (8,)),
    "x[1, m1]": (lambda x, m: x[1, m], (5, 8), (8,)),
    "x[m2] on 3-d": (lambda x, m: x[m].T, (4, 5, 3), (4, 5)),
}


@pytest.mark.parametrize("case", list(MASK_READS_2D))
@pytest.mark.parametrize("backend", BACKENDS)
def test_mask_reads_over_several_dims(rng, backend, case):
    fn, shape, mask_shape = MASK_READS_2D[case]
    _run(fn, backend, _masked(rng, shape, mask_shape))


def _add_through_mask(x, m):
    x[m] += 1.5
    return x


def _assign_selection(x, m):
    y = x * 2
    x[m] = y[m]
    return x.sum()


def _assign_wrong_count(x, m):
    x[m] = x[:3]   # NumPy's ValueError unless the mask selects 3 (or 1)
    return x


def _mask_view_update(x, m):
    x2 = x.reshape(4, 10)
    x2[:, m[:10]] -= 100.0
    return x


MASK_WRITES = {"x[m] += c": (_add_through_mask, 1), "x[m] = y[m]": (_assign_selection, 1),
               "x[m] = wrong count": (_assign_wrong_count, 1), "x2[:, m] -= c": (_mask_view_update, 1)}


@pytest.mark.parametrize("case", list(MASK_WRITES))
@pytest.mark.parametrize("backend", BACKENDS)
def test_mask_writes(rng, backend, case):
    fn, graphs = MASK_WRITES[case]
    _run(fn, backend, _masked(rng), graphs)


def _select(x):
    idx = np.nonzero(x > 0.5)[0]
    return idx, x[idx].sum(), np.flatnonzero(x < 0.2), np.argwhere(x.reshape(5, 8) > 0.7)


def _counts(labels, weights):
    return np.bincount(labels), np.bincount(labels, weights=weights, minlength=12), np.bincount(labels * 2) * 3


def _uniques(labels, weights):
    values, first, inverse, counts = np.unique(labels, return_index=True, return_inverse=True, return_counts=True)
    return values, counts / counts.sum(), weights[first], inverse, np.unique(weights.round(1))


def _bincount_negative(labels, weights):
    return np.bincount(labels - 3)   # NumPy's ValueError where a value is negative


def _labels(rng):
    return lambda call: (rng.integers(0, 9, 40 + call), rand(rng, (40 + call,)))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [_counts, _uniques, _bincount_negative], ids=lambda f: f.__name__[1:])
def test_counting_ops(rng, backend, fn):
    _run(fn, backend, _labels(rng), graphs=2)   # the second length of the labels recompiles for any length


@pytest.mark.parametrize("backend", BACKENDS)
def test_nonzero_family(rng, backend):
    _run(_select, backend, lambda call: (rng.random(40) if call != 2 else np.zeros(40),))


def _nonzero_of_numbers(ints, floats, zs):
    """nonzero of arrays that are not bool: their truthiness (NaN true, -0.0 false), as NumPy."""
    d = np.concatenate(([1], np.diff(ints)))
    idx = np.concatenate((np.where(d)[0], [len(ints)]))
    return (ints[idx[:-1]], np.diff(idx), np.nonzero(floats), np.flatnonzero(zs), np.argwhere(floats.reshape(4, 10)),
            np.nonzero(ints.reshape(5, 8) % 3))


def _numbers(rng):
    def make(call):
        ints = np.sort(rng.integers(0, 12, 40)).astype(np.uint32)
        floats = np.where(rng.random(40) < 0.4, 0.0, rand(rng, (40,)))
        floats[[3, 7]] = np.nan, -0.0
        zs = (rng.random(40) < 0.5) * (1 + 1j) + (rng.random(40) < 0.3) * 1j
        return (ints, floats, zs) if call != 2 else (ints * 0, floats * 0, zs * 0)
    return make


@pytest.mark.parametrize("backend", BACKENDS)
def test_nonzero_of_numbers_is_of_their_truthiness(rng, backend):
    _run(_nonzero_of_numbers, backend, _numbers(rng))


def _argmax_index(a, b):
    return a[b.argmax()], a[b.argmin() - 12] * 2


def _argmax_row(a2, b):
    return a2[b.argmax()] + a2[:, b.argmin()].sum()


def _slice_from(a, b):
    return a[b.argmax():].sum(), a[:b.argmin()], a[b[0]:b[1]] * 2


def _slice_steps(a, b):
    return a[b.argmax()::-1], a[:b.argmin():2], a[b[2]:b[3]:-2]


def _slice_2d(a2, b):
    return a2[1:, b.argmin():], a2[b.argmax():, ::2].T


def _store_into_slice(a, b):
    a[b.argmax():] = 0.0
    a[b[1]] = -1.0
    return a


def _update_through_view(a, b):
    v = a[b.argmin():]
    v += 1.0
    w = a[b.argmax()]
    return a, w


def _row_view(a2, b):
    row = a2[b.argmax()]
    row *= 2.0
    return a2


def _out_of_bounds(a, b):
    return a[b.argmax() + 20]


DATA_INDEX = {"a[v.argmax()]": _argmax_index, "a2[v.argmax()] rows and columns": _argmax_row,
              "a[k:]": _slice_from, "a[k::-1]": _slice_steps, "a2[1:, k:]": _slice_2d, "a[k:] = 0": _store_into_slice,
              "a[k:] += 1 through a view": _update_through_view, "row view of a2[k]": _row_view,
              "out of bounds": _out_of_bounds}


@pytest.mark.parametrize("case", list(DATA_INDEX))
@pytest.mark.parametrize("backend", BACKENDS)
def test_integers_from_the_graph_as_indices_and_slice_bounds(rng, backend, case):
    fn = DATA_INDEX[case]
    two_d = case in ("a2[v.argmax()] rows and columns", "a2[1:, k:]", "row view of a2[k]")
    _run(fn, backend, lambda call: (rand(rng, (6, 7) if two_d else (12,)), rng.integers(-14, 14, 6)))


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_data_slice_of_the_callers_array_is_its_view(rng, backend):
    def tail(a, b):
        return a[b.argmax():]
    if backend not in numpile.list_backends(available_only=True):
        pytest.skip(f"backend {backend!r} is not installed here")
    a, b = rand(rng, (10,)), np.array([1, 4, 2])
    got = numpile.compile(tail, backend=backend)(a, b)
    assert np.shares_memory(got, a) and got.base is (a.base if a.base is not None else a)
    assert_same(got, tail(a, b))


def _first_selected(x, m):
    return x[m][0]


def _loop_over_selection(x, m):
    s = 0.0
    idx = np.nonzero(m)[0]
    for i in range(len(idx)):
        s += x[idx[i]]
    return s


def _max_of_selection(x, m):
    return x[m].max()   # NumPy raises for an empty selection: a decision on its size


@pytest.mark.parametrize("fn, reason", [
    (_first_selected, "s0 > 0 depends on the data: s0 (the number of nonzero elements np.nonzero finds)"),
    (_loop_over_selection, "depends on the data: s0 (the number of nonzero elements np.nonzero finds)"),
    (_max_of_selection, "max: s0 == 0 depends on the data"),
])
def test_decisions_on_data_sizes_break_with_the_size_named(rng, fn, reason):
    compiled = _run(fn, "eager", _masked(rng), graphs=None)
    reasons = [e.break_reason for e in compiled.all_entries() if e.break_reason]
    assert any(reason in r for r in reasons), reasons


def test_mask_reads_are_one_graph_and_kernels_on_llvm(rng):
    """x[m].sum() is a sum of where(m, x, 0), one kernel with the arithmetic fused in; len(x[m])
    is the count nonzero (a call into NumPy) binds."""
    if "llvm" not in numpile.list_backends(available_only=True):
        pytest.skip("backend 'llvm' is not installed here")
    from numpile import lowering
    explained = numpile.explain(lambda x, m: x[m].sum() / len(x[m]))(*_masked(rng)(0))
    assert explained.graph_count == 1 and explained.graph_break_count == 0
    program = lowering.schedule(explained.graphs[0])
    externs = [s.op for s in program.steps if isinstance(s, lowering.Extern)]
    assert externs == ["nonzero"] and len(program.kernels) == 1, str(program)


def test_mask_of_another_shape_raises_numpys_error(rng):
    def f(x, m):
        return x[m]
    _run(f, "eager", lambda call: (rand(rng, (6, 5)), rng.random(4) < 0.5), graphs=0, calls=2)
    explained = numpile.explain(f)(rand(rng, (6, 5)), rng.random(6) < 0.5)
    assert explained.graph_count == 1
