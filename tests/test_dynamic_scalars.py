"""Automatic dynamic Python scalars: a float or int argument whose value changed between compiles
becomes a graph input (NEP 50 weak, as NumPy treats a Python scalar) instead of a constant guarded
by value, so loops that feed `float(...)` or a step counter back through a break do not compile an
entry per value (an int only where Python arithmetic uses it; other uses still specialise)."""

import io
import math
import warnings

import numpy as np
import pytest

import numpile
from conftest import assert_same, rand, run_like_numpy


def newton_sqrt2(x, tol):
    err = 1.0
    while err > tol:
        x = 0.5 * (x + 2.0 / x)
        err = float(np.abs(x * x - 2.0).max())
    return x, err


def test_float_fed_back_through_a_break_compiles_a_bounded_number_of_entries(rng):
    compiled = numpile.compile(newton_sqrt2, backend="eager")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # hitting config.cache_size_limit warns
        for i in range(10):
            x = (rng.random(6) * 3 + 1 + i).astype(np.float32)
            tol = 10.0 ** -(2 + i % 3)
            assert_same(compiled(x, tol), newton_sqrt2(x, tol))
    entries = compiled.all_entries()
    assert len(entries) <= 8, len(entries)
    assert any(any(n.meta["weak"] for n in e.graph.inputs) for e in entries if e.graph is not None)


def weak_arithmetic(x, s, i):
    t = s * 2 - 1.5
    return x * s + t, np.where(x > s, x, t), np.clip(x, -s, s), np.maximum(x, t) + i * s, (x - t).sum() + s, t, s > 0.5


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int8])
def test_dynamic_float_is_weak_as_in_numpy(dtype, rng):
    compiled = numpile.compile(weak_arithmetic, backend="eager")
    for k in range(4):
        x = (rand(rng, (7,)) * 4).astype(dtype)
        i = (rng.random(7) * 4).astype(np.int16)
        s = float(rng.random()) + k
        assert_same(compiled(x, s, i), weak_arithmetic(x, s, i))
    weak_entry = compiled.entries[0]
    assert "s: type is float" in weak_entry.guards.describe()
    (s_input,) = [n for n in weak_entry.graph.inputs if n.meta["weak"]]
    assert str(s_input.array_meta) == "python float"


def scaled(x, s):
    return x * s


def test_python_floats_come_back_as_python_scalars(rng):
    def f(x, s):
        return s * 3 + 1, s >= 1.0, float(s), type(s) is float, x.sum() * s
    compiled = numpile.compile(f, backend="eager")
    x = rand(rng, (5,), np.float32)
    for s in (0.25, 1.75, -2.5):
        got, want = compiled(x, s), f(x, s)
        assert_same(got, want)
        assert [type(v) for v in got] == [float, bool, float, bool, np.float32]


def test_division_by_a_dynamic_float_breaks_and_raises_as_python_does(rng):
    def f(x, s):
        return x * (1.0 / s)
    compiled = numpile.compile(f, backend="eager")
    x = rand(rng, (4,))
    for s in (2.0, 4.0, 0.5):
        assert_same(compiled(x, s), f(x, s))
    with pytest.raises(ZeroDivisionError):
        compiled(x, 0.0)
    report = numpile.explain(f)(x, 3.0)
    assert report.graph_break_count == 0  # explain compiles afresh: s is a constant there
    weak_breaks = [e for e in compiled.all_entries() if e.graph_break is not None]
    assert any("Python's result may differ from NumPy's" in e.graph_break.reason for e in weak_breaks)


def test_nan_and_signed_zero_constants_are_guarded_exactly(rng):
    numpile.config.automatic_dynamic_scalars = False
    try:
        def f(x, s):
            return np.copysign(x, s) + s
        compiled = numpile.compile(f, backend="eager")
        x = rand(rng, (4,))
        for s in (0.0, -0.0, math.nan, math.nan, 0.0):
            assert_same(compiled(x, s), f(x, s)) if s == s else np.testing.assert_array_equal(compiled(x, s), f(x, s))
        assert len(compiled.entries) == 3  # 0.0, -0.0, nan: the second nan and the last 0.0 hit
    finally:
        numpile.config.automatic_dynamic_scalars = True


@pytest.mark.parametrize("how", ["config", "dynamic=False"])
def test_floats_can_stay_specialised(how, rng):
    numpile.config.automatic_dynamic_scalars = how != "config"
    try:
        compiled = numpile.compile(scaled, backend="eager", **({"dynamic": False} if how != "config" else {}))
        x = rand(rng, (3,))
        for s in (0.5, 1.5, 2.5):
            assert_same(compiled(x, s), scaled(x, s))
        assert len(compiled.entries) == 3
        assert not any(n.meta["weak"] for e in compiled.entries for n in e.graph.inputs)
    finally:
        numpile.config.automatic_dynamic_scalars = True


def test_float_attribute_of_a_model_becomes_dynamic(rng):
    class Decay:
        def __init__(self):
            self.rate = 0.9

        def __call__(self, x):
            return x * self.rate

    model = Decay()
    compiled = numpile.compile(model, backend="eager")
    x = rand(rng, (4,), np.float32)
    for rate in (0.9, 0.8, 0.7, 0.6):
        model.rate = rate
        assert_same(compiled(x), model(x))
    assert len(compiled.all_entries()) == 2


def train_with_logging(x, steps, log):
    for t in range(steps):
        x = x * 0.9 + 0.1
        if t % 10 == 0:            # a Python branch on the loop counter, after a break in the loop
            print(t, file=log)
    return x


def test_loop_counter_live_at_breaks_does_not_exhaust_the_cache(rng):
    compiled = numpile.compile(train_with_logging, backend="eager")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # hitting config.cache_size_limit warns
        for steps in (35, 50):
            x, got, want = rand(rng, (4,)), io.StringIO(), io.StringIO()
            assert_same(compiled(x, steps, got), train_with_logging(x, steps, want))
            assert got.getvalue() == want.getvalue()
    assert len(compiled.all_entries()) <= 8


def int_arithmetic(x, t, k):
    return x * t + (t % 7) * 0.5, (t * 3 - 1) // 2, t / 4, t > 10, x[k], -t


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.int32, np.int8])
def test_dynamic_int_is_weak_and_exact(dtype):
    compiled = numpile.compile(int_arithmetic, backend="eager")
    x = (np.arange(6) % 5).astype(dtype)
    for t in (-5, 3, 12, 27, 300, -200, 70000):
        try:
            want = int_arithmetic(x, t, 2)
        except OverflowError as e:  # a Python int out of an int8 array's range: NumPy raises
            with pytest.raises(OverflowError, match=str(e)):
                compiled(x, t, 2)
            continue
        assert_same(compiled(x, t, 2), want)
    weak_entry = compiled.entries[0]
    assert "t: type is int, fits in int32" in weak_entry.guards.describe()
    assert "k: == 2 (int)" in weak_entry.guards.describe()  # an index: specialised


def test_dynamic_int_division_by_it_breaks_and_huge_values_recompile(rng):
    def f(x, t):
        return x + 100 // t, t * t * t
    compiled = numpile.compile(f, backend="eager")
    x = rand(rng, (3,))
    for t in (3, 5, 7, 2 ** 40, -9):
        assert_same(compiled(x, t), f(x, t))
    with pytest.raises(ZeroDivisionError):
        compiled(x, 0)
    reasons = [e.graph_break.reason for e in compiled.all_entries() if e.graph_break is not None]
    assert any("Python's result may differ from NumPy's" in r for r in reasons)


def jacobi_steps(T, A, B):
    for t in range(1, T):
        B[1:-1] = 0.33333 * (A[:-2] + A[1:-1] + A[2:])
        A[1:-1] = 0.33333 * (B[:-2] + B[1:-1] + B[2:])
    return A


def stops_early(T, A):
    for t in range(T):
        if t == 3:      # a Python branch on the index: no loop node takes this range
            break
        A[t] += 1.0
    return A


@pytest.mark.parametrize("backend", ["eager", "llvm"])
def test_an_int_trip_count_that_changed_is_one_loop_for_every_value(backend, rng):
    compiled = numpile.compile(jacobi_steps, backend=backend)
    for T in (30, 31, 45, 1, 0, 31):
        A, B = rand(rng, (50,)), rand(rng, (50,))
        want = jacobi_steps(T, A.copy(), B.copy())
        assert_same(compiled(T, A, B), want)
    assert len(compiled.entries) == 2   # T = 30, then T as a graph value for every other


def test_an_int_range_no_loop_node_takes_is_specialised(rng):
    compiled = numpile.compile(stops_early, backend="eager")
    for T in (5, 6, 7, 6):
        A = rand(rng, (10,))
        assert_same(compiled(T, A.copy()), stops_early(T, A.copy()))
    assert len(compiled.entries) == 3   # one per value (5, 6, 7): specialised


def inverted(T, x):
    crc = T
    for i in range(x.shape[0]):
        crc = (crc >> 1) ^ int(x[i])
    return ~crc & 0xFFFF


@pytest.mark.parametrize("backend", ["eager", "llvm"])
def test_invert_of_a_python_int_graph_value(backend, rng):
    """`~crc` of a Python int the graph computes is Python's (-crc - 1): it broke the graph."""
    run_like_numpy(inverted, backend, lambda call: (0xFFFF, rng.integers(0, 256, 20)), graphs=1)


def _rows_by_index(X, i, j):
    X[i, j] = 7.0
    X[i] += 1
    row = X[i - 1]   # a view: the update below reaches X
    row[0] = -5.0
    return X[i] * 2, X[i, j] + X[i - 1]


@pytest.mark.parametrize("backend", ["eager", "llvm"])
def test_an_int_index_that_changed_is_a_graph_value(backend, rng):
    """X[i] with an int argument that changes between calls: one entry for every value after the
    second (not one per value), NumPy's results, updates through the view, and its IndexError."""
    compiled = numpile.compile(_rows_by_index, backend=backend)
    X = rand(rng, (12, 5))
    for i in (0, 1, 2, -1, -11, 5, 7):
        mine, theirs = X.copy(), X.copy()
        for got, want in zip(compiled(mine, i, i % 5), _rows_by_index(theirs, i, i % 5)):
            assert_same(got, want)
        assert_same(mine, theirs)
    assert len(compiled.all_entries()) == 2
    for bad in (12, -13):
        with pytest.raises(IndexError) as want:
            _rows_by_index(X.copy(), bad, 0)
        with pytest.raises(IndexError) as got:
            compiled(X.copy(), bad, 0)
        assert str(got.value) == str(want.value)
