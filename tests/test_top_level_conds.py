"""Branches on data at a function's top level as cond nodes (`numpile.config.top_level_conds`,
tracer/control/branches.py), differentially against NumPy on fresh random inputs taking each side: values,
dtypes, Python types, in-place updates, identity of returned arrays, graph and break counts."""

import numpy as np
import pytest

import numpile
from numpile.testing import assert_same

BACKENDS = ["eager", "llvm"]


@pytest.fixture(autouse=True)
def top_level_conds(monkeypatch):
    monkeypatch.setattr(numpile.config, "top_level_conds", True)


def choose(x):
    if x.sum() > 0:
        y = x * 2
    else:
        y = np.sin(x) * 3
    return y + 1


def bar(a, b):   # the tutorial's: b stays the caller's array on one side, and is only read after
    x = a / (np.abs(a) + 1)
    if b.sum() < 0:
        b = b * -1
    return x * b


def flip_in_place(x, y):
    if x.mean() > 0:
        x *= -1.0
    return x + y


def both_return(x, y):
    if (x * y).sum() > 0:
        return np.exp(-x * x)
    return y - x


def conditions(x, y):
    t = 0.5 if x.std() > 1.0 else 2.0
    if x.max() > 1.0 and y.min() < 0.0 or x.mean() < -0.5:
        y = y * t
    return np.tanh(y / t)


def nested(x):
    if x.sum() > 0:
        if x[0] > 0:
            out = x * 3
        else:
            out = x - 1
    else:
        out = -x
    return out.sum(), out


def integer_data(k):
    total = k.sum()
    if total % 2 == 0:
        total = total // 2
    else:
        total = 3 * total + 1
    return total, k * total


PROGRAMS = [choose, bar, flip_in_place, both_return, conditions, nested, integer_data]


def _inputs(rng, name: str, side: bool) -> tuple:
    """Arguments for which the program's first branch goes to `side` (True: its then side)."""
    sign = 1.0 if side else -1.0
    x, y = np.abs(rng.standard_normal(9)) * sign + 0.1 * sign, rng.standard_normal(9)
    return {
        "choose": (x,), "bar": (rng.standard_normal(9), -x), "flip_in_place": (x, y), "both_return": (x, np.abs(y) + 0.1),
        "conditions": (x * 3 if side else x * 0.2, y), "nested": (x,),
        "integer_data": (rng.integers(-50, 50, 8) * 2 + np.array([int(not side)] + [0] * 7),),
    }[name]


def _copies(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", PROGRAMS, ids=lambda f: f.__name__)
def test_one_graph_taking_either_side(fn, backend):
    rng = np.random.default_rng()
    compiled = numpile.compile(fn, backend=backend, fullgraph=True)
    for side in (True, False, True, False):   # one compiled entry serves both sides
        args = _inputs(rng, fn.__name__, side)
        expected_args, got_args = _copies(args), _copies(args)
        expected = fn(*expected_args)
        assert_same(expected, compiled(*got_args))
        for e, g in zip(expected_args, got_args):   # in-place updates, exactly where NumPy makes them
            np.testing.assert_array_equal(g, e)
    assert len(compiled.entries) == 1


def test_tutorial_bar_is_one_graph_with_a_cond():
    rng = np.random.default_rng()
    report = numpile.explain(bar)(rng.standard_normal(8), rng.standard_normal(8))
    assert (report.graph_count, report.graph_break_count) == (1, 0)
    assert "cond" in report.graphs[0].tabular() and "then of cond" in str(report.graphs[0])


def test_off_by_default_the_branch_breaks(monkeypatch):
    monkeypatch.setattr(numpile.config, "top_level_conds", False)
    rng = np.random.default_rng()
    report = numpile.explain(bar)(rng.standard_normal(8), rng.standard_normal(8))
    assert (report.graph_count, report.graph_break_count) == (2, 1)


def test_untaken_side_does_not_run():
    def safe_log(x):
        if x.min() > 0:
            return np.log(x)        # the untaken side would take the log of negatives
        return -x
    rng = np.random.default_rng()
    for backend in BACKENDS:
        compiled = numpile.compile(safe_log, backend=backend, fullgraph=True)
        for x in (rng.random(7) + 0.5, rng.standard_normal(7) - 3.0):
            with np.errstate(invalid="raise", divide="raise"):
                assert_same(safe_log(x.copy()), compiled(x.copy()))


def pick_argument(x, y):
    if x.sum() > 0:
        w = y
    else:
        w = y * 2
    return w


def update_after(x, y):
    if x.sum() > 0:
        w = y
    else:
        w = y * 2
    w += 1
    return w * 3


def original_updated_after(x, y):
    w = y if x.sum() > 0 else y * 2
    y += 1
    return w + 0


def view_updated_after(x, y):
    if x.sum() > 0:
        w = y[1:]
    else:
        w = y[:-1] * 1
    w[0] = 7
    return w.sum()


def return_arguments(x, y):
    if x.sum() > 0:
        return y
    return x


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn", [pick_argument, update_after, original_updated_after, view_updated_after,
                                return_arguments], ids=lambda f: f.__name__)
def test_arrays_held_apart_keep_their_identity(fn, backend):
    # a side binding a local to an array seen elsewhere too: the cond's result is a copy, so where
    # the one array matters after the branch (returned, updated, its original updated) the branch
    # breaks the graph instead, and the program does what NumPy does
    rng = np.random.default_rng()
    compiled = numpile.compile(fn, backend=backend)
    for side in (1.0, -1.0, 1.0):
        x, y = np.abs(rng.standard_normal(6)) * side, rng.standard_normal(6)
        expected_args, got_args = _copies((x, y)), _copies((x, y))
        expected, got = fn(*expected_args), compiled(*got_args)
        assert_same(expected, got)
        for e, g in zip(expected_args, got_args):
            np.testing.assert_array_equal(g, e)
        assert (got is got_args[1]) == (expected is expected_args[1])
        assert (got is got_args[0]) == (expected is expected_args[0])
    report = numpile.explain(fn)(x, y.copy())
    assert report.graph_break_count == 1 and "data-dependent jump" in str(report)


def test_side_that_prints_breaks_and_stays_right(capsys):
    def noisy(x):
        if x.sum() > 0:
            print("positive")
            x = x * 2
        return x + 1
    rng = np.random.default_rng()
    x = np.abs(rng.standard_normal(5))
    for backend in BACKENDS:
        assert_same(noisy(x), numpile.compile(noisy, backend=backend)(x))
    assert capsys.readouterr().out == "positive\n" * 2 * len(BACKENDS)
    assert numpile.explain(noisy)(x).graph_break_count >= 1
