"""The safety net (numpile/safety_net.py): an entry slower than its function as Python runs as
Python after a few timed calls, said once; a faster one keeps running compiled; results are
NumPy's on every call either way."""

import time

import numpy as np
import pytest

import numpile
from numpile import safety_net
from tests.conftest import assert_same


@pytest.fixture
def net_on(monkeypatch):
    monkeypatch.setattr(numpile.config, "safety_net", True)


def slow_backend(calls: list):
    """A backend whose compiled graphs are right but take 3 ms a call more than NumPy: counted."""
    def backend(graph, example_inputs):
        def run(*inputs):
            calls.append(1)
            time.sleep(0.003)
            return graph(*inputs)
        return run
    return backend


def smooth(x, y):
    return np.tanh(x) * 2.0 + y / 3.0


def test_a_slower_entry_runs_as_python_from_then_on(net_on, rng, capsys):
    calls = []
    compiled = numpile.compile(smooth, backend=slow_backend(calls))
    x, y = rng.standard_normal(50) + 0.1, rng.standard_normal(50) + 0.1
    numpile.set_logs("perf")
    try:
        for _ in range(safety_net.WARMUP + 2 * safety_net.MAX_PAIRS + 1):
            assert_same(compiled(x, y), smooth(x, y))
    finally:
        numpile.set_logs()
    (entry,) = compiled.all_entries()
    assert entry.fallback is not None and "runs it as Python" in entry.fallback
    assert not compiled.trials
    said = [line for line in capsys.readouterr().err.splitlines() if "safety net" in line]
    assert len(said) == 1 and "smooth" in said[0]
    before = len(calls)
    for _ in range(5):
        assert_same(compiled(x, y), smooth(x, y))
    assert len(calls) == before, "the compiled graph ran after the verdict"
    assert "Safety net: the safety net runs it as Python" in str(numpile.explain(compiled)(x, y))


def test_guards_still_choose_the_entry_run_as_python(net_on, rng):
    compiled = numpile.compile(smooth, backend=slow_backend([]))
    x = rng.standard_normal(50) + 0.1
    for _ in range(safety_net.WARMUP + 2 * safety_net.MAX_PAIRS + 1):
        compiled(x, x)
    assert compiled.all_entries()[0].fallback is not None
    ints = rng.integers(1, 9, size=7)
    assert_same(compiled(ints, ints), smooth(ints, ints))   # a new entry, compiled and on trial
    assert len(compiled.all_entries()) == 2 and len(compiled.trials) == 1


def test_off_the_compiled_code_always_runs(rng):
    assert numpile.config.safety_net is False   # the suite's default (conftest.py)
    calls = []
    compiled = numpile.compile(smooth, backend=slow_backend(calls))
    x = rng.standard_normal(50) + 0.1
    for _ in range(safety_net.WARMUP + 2 * safety_net.MAX_PAIRS + 1):
        compiled(x, x)
    assert len(calls) == safety_net.WARMUP + 2 * safety_net.MAX_PAIRS + 1
    assert compiled.all_entries()[0].fallback is None and not compiled.trials


def many_small_steps(x):
    for k in range(200):
        x = x * 0.5 + k
    return x


def test_a_faster_entry_keeps_running_compiled(net_on, rng):
    if "llvm" not in numpile.list_backends(available_only=True):
        pytest.skip("the llvm backend is not installed here")
    compiled = numpile.compile(many_small_steps, backend="llvm")
    x = rng.standard_normal(64) + 0.1
    for _ in range(safety_net.WARMUP + 2 * safety_net.MAX_PAIRS + 1):
        np.testing.assert_allclose(compiled(x), many_small_steps(x))
    (entry,) = compiled.all_entries()
    assert entry.fallback is None and not compiled.trials


@pytest.mark.parametrize("compiled, python, keep", [
    ([1.0], [2.5], True),                      # far faster: decided after one pair
    ([2.5], [1.0], None),                      # far slower: against it only after three pairs
    ([2.5, 0.9, 2.6], [1.0] * 3, False),       # (one call a busy machine slowed does not decide)
    ([0.5, 2.5, 0.4], [1.0] * 3, True),
    ([1.0], [1.5], None),                      # apart, not far: more pairs first
    ([1.0] * 3, [1.5] * 3, True),              # apart after three
    ([1.5] * 3, [1.0] * 3, False),
    ([1.05] * 3, [1.0] * 3, None),             # close: more pairs first
    ([1.05] * 9, [1.0] * 9, True),             # close after the most pairs: within the margin
    ([1.15] * 9, [1.0] * 9, False),            # past the margin
])
def test_verdicts(compiled, python, keep):
    trial = safety_net.Trial()
    trial.compiled, trial.python = compiled, python
    assert trial.verdict() is keep


def test_the_trial_alternates_after_the_warm_up():
    trial = safety_net.Trial()
    turns = []
    for _ in range(safety_net.WARMUP + 4):
        turns.append(trial.python_next())
        trial.seen += 1
    assert turns == [False] * safety_net.WARMUP + [True, False, True, False]


def monte_carlo(n):
    inside = 0
    for _ in range(n):
        x, y = np.random.random(), np.random.random()
        if x * x + y * y < 1.0:
            inside += 1
    return inside


def test_a_function_that_draws_random_numbers_is_never_on_trial(net_on):
    """Run as Python it would draw NumPy's stream, not numpile's: with a seed, its results would
    change with the verdict."""
    compiled = numpile.compile(monte_carlo, backend="eager")
    np.random.seed(1)
    first = [compiled(200) for _ in range(safety_net.WARMUP + 2 * safety_net.MAX_PAIRS)]
    assert compiled.draws and not compiled.trials
    np.random.seed(1)
    assert [compiled(200) for _ in range(len(first))] == first
