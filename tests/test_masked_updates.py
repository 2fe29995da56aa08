"""Updates through a boolean mask of the array's shape (`x[m] *= -1`, `x[m] = y[m] + 1`) lowered
as selects (lowering/selections.py), differentially against NumPy on fresh random inputs: values,
dtypes, the arrays updated in place, empty and full masks, and the forms that stay gathers."""

from contextlib import nullcontext

import numpy as np
import pytest

import numpile
from conftest import run_like_numpy
from numpile.lowering import decompose

BACKENDS = ["eager", "llvm"]


def flip(x, m):
    x[m] *= -1
    return x


def add_other(x, y, m):
    x[m] += y[m] * 2.0
    return x


def root_of_positive(x):
    x[x > 0] = np.sqrt(x[x > 0]) + 1
    return x


def ints_down(a):
    a[a > 3] -= 3
    return a


def cast_in(a, y):
    a[y > 0.5] = y[y > 0.5] * 100   # float values stored into an int8 array: cast as setitem casts
    return a


def centred(x, m):
    x[m] -= x[m].mean()             # a 0-d value of the selection: the same for each element
    return x


def reversed_selection(x, m):
    x[m] = x[m][::-1]               # not element-wise: stays a gather and a scatter
    return x


def rows(x, r):
    x[r] *= 2.0                     # a mask of the rows only: stays a gather and a scatter
    return x


def counted_too(x, m):
    x[m] *= -1
    return x * (len(np.nonzero(m)[0]) + 1)   # the positions' count is still needed: they stay


def wrapped(x, L):
    x[x > L / 2] = x[x > L / 2] - L    # two comparisons of the same values: one mask, one selection
    x[x < -L / 2] = x[x < -L / 2] + L
    return x


def other_selection(x, y):
    x[x > 0] = y[y > 0]                 # two masks: NumPy raises where their counts differ
    return x


def sweeps(spins, draws):
    for t in range(draws.shape[0]):
        flipping = draws[t] < 0.3
        spins[flipping] *= -1
    return spins


def julia_step(z, c):   # the numpy tutorials' Julia sets: a dear function of the complex values selected
    m = np.abs(z) < 2.0
    z[m] = np.tan(z[m] ** 2) + c
    return z


def real_power(r):   # NPBench's nbody: a real power, as a select
    r[r > 0] = r[r > 0] ** -1.5
    return r


def _inputs(rng, name):
    shape = (int(rng.integers(3, 9)), int(rng.integers(3, 9)))
    x, y = rng.standard_normal(shape), rng.random(shape)
    m = rng.random(shape) < rng.choice([0.0, 0.4, 1.0])
    return {"flip": (x, m), "add_other": (x, y, m), "root_of_positive": (x,),
            "ints_down": (rng.integers(-9, 9, shape),), "cast_in": (rng.integers(-9, 9, shape).astype(np.int8), y),
            "centred": (x, m | (rng.random(shape) < 0.5)), "reversed_selection": (x, m),
            "rows": (x, rng.random(shape[0]) < 0.5), "counted_too": (x, m), "sweeps": (np.sign(x), rng.random((6, *shape))),
            "wrapped": (4 * x, 4), "julia_step": ((x + 1j * y) * 1.5, -0.8 + 0.2j), "real_power": (x,)}[name]


def _fresh(args) -> list:
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


PROGRAMS = [flip, add_other, root_of_positive, ints_down, cast_in, centred, reversed_selection, rows, counted_too, sweeps,
            wrapped, julia_step, real_power]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_masked_updates_as_numpy(fn, backend):
    rng = np.random.default_rng()
    compiled = numpile.compile(fn, backend=backend)
    for _ in range(3):
        args = _inputs(rng, fn.__name__)
        mine, theirs = _fresh(args), _fresh(args)
        got, expected = compiled(*mine), fn(*theirs)
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
        for a, b in zip(mine, theirs):   # centred's mean sums where(m, x, 0): equal within rounding
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12, strict=True)


class Recording(numpile.Backend):
    name = "recording-selects"
    supports_dynamic_shapes = supports_loops = True

    def __init__(self):
        self.graphs = []

    def compile(self, graph, example_inputs, options):
        self.graphs.append(graph)
        return graph.compile_python()


@pytest.mark.parametrize("fn, selects", [(flip, True), (add_other, True), (centred, True), (wrapped, True),
                                         (reversed_selection, False), (rows, False), (real_power, True),
                                         (julia_step, False)],   # a complex tan only where the mask selects
                         ids=lambda v: getattr(v, "__name__", str(v)))
def test_element_wise_updates_are_selects_with_no_positions_left(fn, selects):
    backend = Recording()
    args = _inputs(np.random.default_rng(), fn.__name__)
    numpile.compile(fn, backend=backend)(*_fresh(args))
    targets = [n.target for n in decompose(backend.graphs[0]).calls]
    assert ("where" in targets and "setitem" not in targets) == selects
    if fn is not centred:   # its mean still gathers the selection
        assert ("nonzero" not in targets) == selects


def test_the_same_comparison_is_one_mask_and_other_masks_are_not():
    x = np.random.default_rng().standard_normal((5, 6))
    assert numpile.explain(wrapped)(4 * x, 4).graph_break_count == 0
    assert numpile.explain(root_of_positive)(x.copy()).graph_break_count == 0
    broken = numpile.explain(other_selection)(x.copy(), x[::-1].copy())
    assert broken.graph_break_count == 1 and "depends on the data" in broken.break_reasons[0].reason
    compiled = numpile.compile(other_selection, backend="llvm")
    np.testing.assert_array_equal(compiled(np.array([1.0, -2, 3]), np.array([-1.0, 5, 6])), [5.0, -2, 6])
    with pytest.raises(ValueError):     # NumPy's own error: 4 values for 2 positions
        compiled(np.array([1.0, 2, -1, -2]), np.array([1.0, 1, 1, 1]))


def selected_totals(x, m):
    return x[m].sum(), x[m].mean(), x[x > x.dtype.type(0)].sum() + x[m & (x < 1)].mean()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int32, np.uint8])
def test_sums_and_means_of_selections(dtype, backend):
    """x[m].sum() and x[m].mean() are sums of where(m, x, 0) (one pass, no positions): NumPy's
    values and dtypes, an empty selection's mean NaN."""
    rng = np.random.default_rng()
    compiled = numpile.compile(selected_totals, backend=backend)
    for fraction in (0.0, 0.4, 1.0):
        x = (rng.standard_normal(40) * 20).astype(dtype) if dtype != np.uint8 else rng.integers(0, 9, 40).astype(dtype)
        m = rng.random(40) < fraction
        with np.errstate(all="ignore"), pytest.warns(RuntimeWarning) if fraction == 0.0 else nullcontext():
            expected = selected_totals(x, m)
        got = compiled(x, m)
        tolerance = 1e-5 if dtype == np.float32 else 1e-12
        for g, e in zip(got, expected):
            assert type(g) is type(e)
            # another order of additions: within rounding of the terms' size (a sum can cancel)
            np.testing.assert_allclose(g, e, rtol=tolerance, atol=tolerance * float(np.abs(x.astype(float)).sum()))
    targets = [n.target for n in decompose(compiled.entries[0].graph).calls]
    assert "nonzero" not in targets and "index" not in targets


def grid(x):   # numpy-benchmarks' create_grid
    z = np.zeros((x.shape[0], x.shape[0], 3))
    z[:, :, 0] = x.reshape(-1, 1)
    z[:, :, 1] = x
    return z.reshape(-1, 3)


def rows_of_ones(x):
    a = np.ones((4, x.shape[0]), np.int32)
    a[0] = x * 10          # floats stored into int32: truncated as setitem does
    a[-1] = 7
    total = a.sum()        # read between the updates
    a[2, 1] = -5
    a[0, 1] = a[0, 2] + 1  # later updates win, and read earlier ones
    return a, total


def filled_planes(x, y):
    f = np.full((3, 5, x.shape[0]), 2.5, np.float32)
    f[1] = y               # (5, n) stored into a plane
    f[:, 2, :] = x         # then a row of every plane, overlapping it
    f[-1, -1, 0] = np.float32(9.0)
    return f


def filled_with_a_mean(x):
    f = np.full((x.shape[0], 3), x.mean())   # the fill a graph value
    f[:, 0] = x
    return f


CONSTANT_FILLED = [grid, rows_of_ones, filled_planes]
FILLED = [*CONSTANT_FILLED, filled_with_a_mean]   # a fill the graph computes keeps its np.full


def _filled_inputs(rng, fn):
    x = rng.standard_normal(6) * 3
    return (x,) if fn is not filled_planes else (x, rng.standard_normal((5, 6)))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", FILLED, ids=lambda f: f.__name__)
def test_updates_of_filled_arrays_as_numpy(fn, backend):
    rng = np.random.default_rng()
    run_like_numpy(fn, backend, lambda call: _filled_inputs(rng, fn))


@pytest.mark.parametrize("fn", CONSTANT_FILLED, ids=lambda f: f.__name__)
def test_updates_of_filled_arrays_are_one_select_and_no_creation(fn):
    backend = Recording()
    numpile.compile(fn, backend=backend)(*_filled_inputs(np.random.default_rng(), fn))
    targets = [n.target for n in decompose(backend.graphs[0]).calls]
    assert "setitem" not in targets and "where" in targets and not {"zeros", "ones", "full"} & set(targets), targets


def one_point(x):
    z = np.zeros((40, 50))
    z[5, 7] = x[0]
    return z


def test_a_creation_updated_at_a_few_elements_stays_a_store():
    backend = Recording()
    x = np.random.default_rng().standard_normal(3)
    np.testing.assert_array_equal(numpile.compile(one_point, backend=backend)(x), one_point(x))
    targets = [n.target for n in decompose(backend.graphs[0]).calls]
    assert "setitem" in targets and "where" not in targets, targets
