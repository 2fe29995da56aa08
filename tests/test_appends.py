"""Lists a loop appends to, carried as one array the loop node fills (tracer/control/appends.py,
tracer/variables/stacked.py): list comprehensions and `out.append(v)` loops, differentially
against NumPy on fresh random inputs (values, dtypes, shapes, Python types of what comes back),
graph and break counts, and the cases refused (the loop then runs as before, still right)."""

import numpy as np
import pytest

import numpile
from numpile.testing.compare import assert_same

BACKENDS = ["eager", "llvm"]


def comprehension(X, y):
    return np.array([np.sum((x - y) ** 2) for x in X])


def nested_comprehension(X, Y):
    return np.array([[np.sum((x - y) ** 2) for x in X] for y in Y])


def appended_spreads(X):
    out = []
    for i in range(X.shape[0]):
        out.append(X[i].max() - X[i].min())
    return np.array(out)


def appended_rows(X):
    out = []
    for i in range(X.shape[0]):
        out.append(X[i] * 2.0 + 1.0)
    return np.asarray(out)


def two_a_step(x):
    out = []
    for i in range(x.shape[0]):
        out.append(x[i] * 2)
        out.append(x[i] - 1)
    return np.array(out)


def used_after(x):
    vals = [v * v for v in x]
    total = 0.0
    for v in vals:
        total += v
    return len(vals), vals[3], vals[-1], total


def handed_back(X):
    return [np.linalg.norm(r) for r in X]


def few(x):
    return np.array([np.float32(v) * 2 for v in x[:40]]), [v + 1 for v in x[:40]]


def nested_loops(X):
    rows = []
    for i in range(X.shape[0]):
        row = []
        for j in range(X.shape[1]):
            row.append(X[i, j] * (i + j))
        rows.append(row)
    return np.array(rows)


CAPTURED = {
    comprehension: lambda rng: (rng.random((600, 10)), rng.random(10)),
    nested_comprehension: lambda rng: (rng.random((300, 8)), rng.random((120, 8))),
    appended_spreads: lambda rng: (rng.random((500, 7)),),
    appended_rows: lambda rng: (rng.random((400, 5)),),
    two_a_step: lambda rng: (rng.random(300),),
    used_after: lambda rng: (rng.random(500),),
    handed_back: lambda rng: (rng.random((400, 3)),),
    few: lambda rng: (rng.random(100),),
    nested_loops: lambda rng: (rng.random((90, 70)),),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", list(CAPTURED), ids=lambda f: f.__name__)
def test_appends_are_one_graph_and_numpys_values(fn, backend):
    rng = np.random.default_rng()
    args = CAPTURED[fn](rng)
    assert_same(numpile.compile(fn, backend=backend)(*args), fn(*args))
    report = numpile.explain(fn)(*args)
    assert (report.graph_count, report.graph_break_count) == (1, 0), str(report)


def reads_while_appending(x):
    out = []
    for i in range(x.shape[0]):
        out.append(x[i] * len(out))
    return np.array(out)


def appends_views(X):
    out = []
    for i in range(X.shape[0]):
        out.append(X[i])
        X[i] += 1.0
    return np.array(out)


def appends_one_array_again(x):
    state = np.zeros(3)
    out = []
    for i in range(x.shape[0]):
        state += x[i]
        out.append(state)
    return np.array(out)


def appends_some(x):
    out = []
    for i in range(x.shape[0]):
        if x[i] > 0.5:
            out.append(x[i])
    return np.array(out)


def appends_after_some(x):
    out = [x[0]]
    for i in range(1, x.shape[0]):
        out.append(out[-1] + x[i])
    return np.array(out)


def appends_python_numbers(x):
    return np.array([float(v) * 2.0 for v in x])


REFUSED_OR_NOT = {
    reads_while_appending: lambda rng: (rng.random(60),),
    appends_views: lambda rng: (rng.random((60, 4)),),
    appends_one_array_again: lambda rng: (rng.random((60, 3)),),
    appends_some: lambda rng: (rng.random(300),),
    appends_after_some: lambda rng: (rng.random(300),),
    appends_python_numbers: lambda rng: (rng.random(60),),
}


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", list(REFUSED_OR_NOT), ids=lambda f: f.__name__)
def test_what_a_stacked_list_cannot_be_stays_right(fn, backend):
    """Lists read while appended to, appended views or carried arrays, appends under a branch, a
    list not empty before the loop, Python numbers: NumPy's values, whatever numpile captures."""
    rng = np.random.default_rng()
    args = REFUSED_OR_NOT[fn](rng)
    expected_args = [a.copy() for a in args]
    got_args = [a.copy() for a in args]
    assert_same(numpile.compile(fn, backend=backend)(*got_args), fn(*expected_args))
    for e, g in zip(expected_args, got_args):
        np.testing.assert_array_equal(g, e)


def test_a_long_stacked_list_refuses_item_by_item_use_with_a_reason():
    def summed(x):
        vals = [v * 2 for v in x]
        vals.append(x[0])
        return np.array(vals)
    x = np.random.default_rng().random(500)
    assert_same(numpile.compile(summed, backend="llvm")(x), summed(x))
    report = numpile.explain(summed)(x)
    assert any("a loop appended" in str(b) for b in report.break_reasons), str(report)


def running_totals(X):
    totals = []
    acc = 0.0
    for x in X:
        acc += x.sum()
        totals.append(acc)
    return np.array(totals), totals[0]


def test_a_running_total_appended_after_a_peeled_first_iteration():
    X = np.random.default_rng().random((400, 6))
    for backend in BACKENDS:
        assert_same(numpile.compile(running_totals, backend=backend)(X), running_totals(X))
    report = numpile.explain(running_totals)(X)
    assert (report.graph_count, report.graph_break_count) == (1, 0), str(report)
