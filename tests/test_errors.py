"""Errors and fallback: failing backends, suppress_errors, user exceptions with the user's traceback,
library code that is called rather than inlined."""

import logging
import traceback
import warnings

import numpy as np
import pytest

import numpile
from conftest import assert_same, rand


def foo(x):
    return np.sin(x) * 2


def broken_backend(graph, example_inputs):
    raise RuntimeError("codegen exploded")


def test_backend_failure_names_backend_and_graph(rng):
    compiled = numpile.compile(foo, backend=broken_backend)
    with pytest.raises(numpile.BackendCompilerFailed) as info:
        compiled(rand(rng, (3,)))
    err = info.value
    assert err.backend == "broken_backend" and isinstance(err.error, RuntimeError)
    assert "codegen exploded" in str(err) and "sin" in str(err)


def test_suppress_errors_falls_back_to_eager_with_one_warning(rng, monkeypatch):
    monkeypatch.setattr(numpile.config, "suppress_errors", True)
    compiled = numpile.compile(foo, backend=broken_backend)
    x = rand(rng, (3,))
    with pytest.warns(RuntimeWarning, match="codegen exploded"):
        assert_same(compiled(x), foo(x))
    assert_same(compiled(x), foo(x))      # cached: no second compile, no second warning


def two_outputs(x, n):
    y = np.sin(x) * 2
    return y, y.sum(), y[: n // 2]


def _returning(change):
    """A backend whose compiled graph returns change(the right outputs)."""
    def backend(graph, example_inputs):
        return lambda *inputs: change(graph(*inputs))
    return backend


WRONG_OUTPUTS = {
    "a bare array": (lambda outs: outs[0], "it returned an ndarray float64[6, 4], not the tuple of the graph's"),
    "one too many": (lambda outs: (*outs, outs[0]), "it returned 3 outputs, the graph has 2"),
    "one too few": (lambda outs: outs[:1], "it returned 1 outputs, the graph has 2"),
    "another dtype": (lambda outs: (outs[0].astype(np.float32), outs[1]), "is an ndarray float32[6, 4], the graph's is float64[6, 4]"),
    "another shape": (lambda outs: (outs[0][1:], outs[1]), "is an ndarray float64[5, 4], the graph's is float64[6, 4]"),
    "array for scalar": (lambda outs: (outs[0], np.asarray(outs[1])), "is an ndarray float64[], the graph's is float64[] scalar"),
}


@pytest.mark.parametrize("case", list(WRONG_OUTPUTS))
def test_wrong_outputs_of_a_backend_are_caught_on_the_first_run(rng, case):
    change, why = WRONG_OUTPUTS[case]
    compiled = numpile.compile(lambda x: (np.sin(x) * 2, x.sum()), backend=_returning(change))
    with pytest.raises(numpile.BackendCompilerFailed, match="returned wrong outputs") as info:
        compiled(rand(rng, (6, 4)))
    assert why in str(info.value) and "(registered in this process)" in str(info.value)


def test_outputs_with_symbolic_dims_are_checked_for_this_calls_sizes(rng):
    compiled = numpile.compile(lambda x: (x[1:] * 2, x.sum(axis=0)), backend=_returning(lambda outs: outs), dynamic=True)
    for n in (5, 9):
        x = rand(rng, (n, 3))
        assert_same(compiled(x), (x[1:] * 2, x.sum(axis=0)))
    bad = numpile.compile(lambda x: (x[1:] * 2,), backend=_returning(lambda outs: (outs[0][1:],)), dynamic=True)
    with pytest.raises(numpile.BackendCompilerFailed, match=r"float64\[6, 3\], the graph's is float64\[s0 - 1, s1\] \(shape \(7, 3\)\)"):
        bad(rand(rng, (8, 3)))


def test_wrong_outputs_with_suppress_errors_warn_once_and_run_eagerly(rng, monkeypatch):
    monkeypatch.setattr(numpile.config, "suppress_errors", True)
    compiled = numpile.compile(lambda x: (np.sin(x) * 2, x.sum()), backend=_returning(lambda outs: outs[0]))
    x = rand(rng, (6, 4))
    with pytest.warns(RuntimeWarning, match="returned wrong outputs"):
        assert_same(compiled(x), (np.sin(x) * 2, x.sum()))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_same(compiled(x), (np.sin(x) * 2, x.sum()))


def test_a_backend_raising_at_run_time_is_said_once_and_the_frame_runs_as_python(rng):
    def flaky(graph, example_inputs):
        def run(*inputs):
            raise RuntimeError("kernel exploded")
        return run
    compiled = numpile.compile(foo, backend=flaky)
    x = rand(rng, (3,))
    with pytest.warns(RuntimeWarning, match="backend 'flaky' .* raised RuntimeError: kernel exploded"):
        assert_same(compiled(x), foo(x))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert_same(compiled(x), foo(x))   # said once


def test_numpys_own_errors_in_a_graph_are_not_blamed_on_the_backend(rng):
    compiled = numpile.compile(lambda x, y: np.sin(x) @ y, backend="eager")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match="matmul"):
            compiled(rand(rng, (2, 3)), rand(rng, (2, 3)))


def raises_inside(x, d):
    y = x * 2
    return y + d["missing"]


def test_user_exceptions_keep_the_users_traceback(rng):
    compiled = numpile.compile(raises_inside, backend="eager")
    with pytest.raises(KeyError) as info:
        compiled(rand(rng, (3,)), {"present": 1})
    frames = [f.name for f in traceback.extract_tb(info.value.__traceback__)]
    assert "raises_inside" in frames


def test_numpy_errors_surface_as_numpy_errors(rng):
    def f(x, y):
        return x @ y
    compiled = numpile.compile(f, backend="eager")
    with pytest.raises(ValueError, match="matmul"):
        compiled(rand(rng, (2, 3)), rand(rng, (2, 3)))


def test_library_functions_are_called_not_inlined(rng, caplog):
    def f(x):
        logging.getLogger("numpile-test").info("value %s", 1)
        return x + 1
    compiled = numpile.compile(f, backend="eager")
    for _ in range(2):
        x = rand(rng, (3,))
        assert_same(compiled(x), f(x))
    assert "logging" in compiled.entries[0].break_reason


def test_each_break_is_logged_once(rng, capsys):
    def f(x):
        for i in range(3):
            x = x + 1
            print(i)
        return x
    compiled = numpile.compile(f, backend="eager")
    numpile.set_logs("graph_breaks")
    try:
        for _ in range(2):
            compiled(rand(rng, (3,)))
    finally:
        numpile.set_logs()
    assert capsys.readouterr().err.count("print() has side effects") == 1
