"""`assert c` and `if bad: raise ...` on graph values as check nodes (tracer/control/checks.py,
ops/control.py's check; a nest's status CHECK on llvm), and sequences assigned into arrays
(`a[i] = x, y`), differentially against NumPy on fresh random inputs: values, dtypes, the arrays a
call updates, graph and break counts, and the program's own error where a check fails, with the
arrays as Python leaves them."""

import numpy as np
import pytest

import numpile

BACKENDS = ["eager", "llvm"]


def springs(pos):
    """numpy-benchmarks' wave: an assert in a loop body, a small array made per iteration."""
    force = np.zeros((pos.shape[0], 2))
    for i in range(1, pos.shape[0]):
        dx, dy = pos[i] - pos[i - 1]
        dist = np.sqrt(dx ** 2 + dy ** 2)
        assert dist != 0
        fvec = np.array([-dx / dist, -dy / dist])
        force[i - 1] -= fvec
        force[i] += fvec
    force[0] = force[-1] = 0, 0
    return force


def reciprocal_sum(x, y):
    s = 0.0
    for i in range(x.shape[0]):
        d = x[i] - y[i]
        assert d != 0, f"x and y meet at {i}"
        s += 1.0 / d
    return s


def checked_update(x):
    for i in range(x.shape[0]):
        x[i] = x[i] * 2.0
        if x[i] > 1.9:
            raise ValueError(f"{x[i]} too large at {i}")
        x[i] += 1.0
    return x


def positive_log(x):
    assert np.all(x > 0), "x must be positive"
    return np.log(x).sum()


def caught(x):
    total = 0.0
    for i in range(x.shape[0]):
        try:
            if x[i] > 0.95:
                raise KeyError(i)
            total += x[i]
        except KeyError:
            total -= 100.0
    return total


def rows_assigned(a, x):
    a[0] = x, 2 * x
    a[1:3] = (1, 2)
    a[3] = [x, 7]
    return a


def _checks(report) -> int:
    """How many check nodes the graphs hold, loop bodies and cond sides included."""
    def count(graph):
        return sum(n.target == "check" for n in graph.nodes if n.op == "call") + \
            sum(count(a) for n in graph.nodes for a in n.args if isinstance(a, type(graph)))
    return sum(count(g) for g in report.graphs)


def _same(expected, got):
    if isinstance(expected, np.ndarray):
        assert isinstance(got, np.ndarray) and got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_allclose(got, expected, rtol=1e-12)
    else:
        assert type(got) is type(expected)
        np.testing.assert_allclose(got, expected, rtol=1e-12)


CASES = {
    springs: lambda rng: (np.cumsum(rng.random((300, 2)), axis=0),),
    reciprocal_sum: lambda rng: (rng.random(500) + 1.0, rng.random(500)),
    checked_update: lambda rng: (rng.random(400) * 0.9,),
    positive_log: lambda rng: (rng.random(100) + 0.1,),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", list(CASES), ids=lambda f: f.__name__)
def test_a_check_keeps_one_graph_and_numpys_values(fn, backend):
    rng = np.random.default_rng()
    args = CASES[fn](rng)
    expected_args = [a.copy() for a in args]
    expected = fn(*expected_args)
    got_args = [a.copy() for a in args]
    _same(expected, numpile.compile(fn, backend=backend)(*got_args))
    for e, g in zip(expected_args, got_args):
        _same(e, g)
    report = numpile.explain(fn)(*[a.copy() for a in args])
    assert (report.graph_count, report.graph_break_count) == (1, 0), str(report)
    assert _checks(report) >= 1   # the first iteration, traced before the loop is captured, has one too


def _failing(fn, rng):
    """Arguments on which fn's check fails part-way (after some of its updates)."""
    args = CASES[fn](rng)
    if fn is springs:
        args[0][150] = args[0][149]
    elif fn is reciprocal_sum:
        args[1][250] = args[0][250]
    elif fn is checked_update:
        args[0][200] = 0.99
    else:
        args[0][50] = -1.0
    return args


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", list(CASES), ids=lambda f: f.__name__)
def test_a_failing_check_raises_the_programs_error_with_pythons_updates(fn, backend):
    rng = np.random.default_rng()
    compiled = numpile.compile(fn, backend=backend)
    compiled(*CASES[fn](rng))   # compiled for these shapes first
    args = _failing(fn, rng)
    expected_args = [a.copy() for a in args]
    with pytest.raises((AssertionError, ValueError)) as expected:
        fn(*expected_args)
    with pytest.raises(expected.type) as got:
        compiled(*args)
    assert str(got.value) == str(expected.value) and type(got.value) is expected.type
    for e, g in zip(expected_args, args):
        np.testing.assert_array_equal(g, e)   # updated as far as Python got, no further
    assert compiled(*CASES[fn](rng)) is not None   # and the entry still runs compiled code


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_raise_caught_in_the_frame_still_runs_its_handler(backend):
    rng = np.random.default_rng()
    x = rng.random(200)
    x[::7] = 0.97
    assert numpile.compile(caught, backend=backend)(x) == pytest.approx(caught(x), rel=1e-12)


def test_a_check_only_where_one_side_can_only_raise():
    def both_go_on(x):
        out = 0.0
        for i in range(x.shape[0]):
            if x[i] > 0.5:
                out += x[i]
            else:
                out -= x[i]
        return out
    x = np.random.default_rng().random(50)
    assert _checks(numpile.explain(both_go_on)(x)) == 0


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int8, np.int64])
def test_sequences_assigned_into_rows_as_numpy(backend, dtype):
    rng = np.random.default_rng()
    a, x = (rng.random((5, 2)) * 10).astype(dtype), float(rng.random() * 5)
    expected = rows_assigned(a.copy(), x)
    got = numpile.compile(rows_assigned, backend=backend)(a.copy(), x)
    _same(expected, got)
    report = numpile.explain(rows_assigned)(a.copy(), x)
    assert (report.graph_count, report.graph_break_count) == (1, 0), str(report)


def test_a_python_int_a_row_cannot_hold_raises_numpys_error():
    def assign(a):
        a[0] = 300, 1
        return a
    with pytest.raises(OverflowError, match="300"):
        numpile.compile(assign, backend="llvm")(np.ones((2, 2), np.int8))


def test_llvm_runs_an_assert_inside_a_native_nest(caplog):
    rng = np.random.default_rng()
    with caplog.at_level("DEBUG", logger="numpile.perf"):
        numpile.compile(springs, backend="llvm")(*CASES[springs](rng))
    assert "one native function" in caplog.text
    assert "runs with NumPy" not in caplog.text


def test_breaks_in_resume_functions_pass_on_locals_not_named_as_identifiers():
    """pytest rewrites this module's asserts into code with locals named `@py_assert1`; on "debug"
    (no control flow) positive_log's assert breaks, and again inside the resume function. The
    second resume got those locals unbound: UnboundLocalError on 3.11, a crash on 3.12 and 3.13."""
    rng = np.random.default_rng()
    compiled = numpile.compile(positive_log, backend="debug")
    x = rng.random(100) + 0.1
    assert compiled(x) == pytest.approx(positive_log(x), rel=1e-12)
    x[17] = -1.0
    with pytest.raises(AssertionError, match="x must be positive"):
        compiled(x)
