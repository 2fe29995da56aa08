"""Errors and fallback: failing backends, suppress_errors, user exceptions with the user's traceback,
library code that is called rather than inlined."""

import logging
import traceback

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
