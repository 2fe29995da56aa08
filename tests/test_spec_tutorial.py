"""SPEC-tutorial.md scenarios 1, 2, 5, 11, 12 (static shapes), 13 and 16, on the eager and debug
backends and a third-party backend registered at run time."""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import numpile
from conftest import assert_same, rand

ROOT = Path(__file__).resolve().parents[1]
BACKENDS = ["eager", "debug", "third_party"]


@pytest.fixture(autouse=True)
def third_party_backend():
    """A backend as a third party would write it: a numpile.Backend subclass, registered in-process."""
    from numpile import plugins

    class ThirdParty(numpile.Backend):
        name = "third_party"
        description = "a third-party backend used by the tests: runs the graph's Python code"

        def compile(self, graph, example_inputs, options):
            self.graphs.append(graph)
            return graph.compile_python()

    ThirdParty.graphs = []
    plugins.register_backend("third_party", ThirdParty())
    yield ThirdParty
    plugins.reset_plugins()


def foo(x, y):
    return np.sin(x) + np.cos(y)


# 1. Basic use
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(10,), (3, 4), (2, 3, 4), ()])
def test_1_basic_use(rng, backend, dtype, shape, capsys):
    compiled = numpile.compile(foo, backend=backend)
    for _ in range(2):
        x, y = rand(rng, shape, dtype), rand(rng, shape, dtype)
        assert_same(compiled(x, y), foo(x, y))
    if backend == "debug":
        out = capsys.readouterr().out
        assert "sin" in out and "def forward(x, y)" in out and "x: ndarray" in out


def test_1_decorator(rng):
    @numpile.compile(backend="eager")
    def bar(x, y):
        return np.sin(x) + np.cos(y)
    x, y = rand(rng, (4,)), rand(rng, (4,))
    assert_same(bar(x, y), foo(x, y))


# 2. Models
class LinearReLU:
    def __init__(self, w, b):
        self.w, self.b = w, b

    def __call__(self, x):
        return np.maximum(x @ self.w + self.b, 0)


@pytest.mark.parametrize("backend", BACKENDS)
def test_2_models(rng, backend, capsys):
    model = LinearReLU(rand(rng, (4, 3), np.float32), rand(rng, (3,), np.float32))
    compiled = numpile.compile(model, backend=backend)
    x = rand(rng, (5, 4), np.float32)
    assert_same(compiled(x), model(x))
    model.w *= 2                                   # updated in place: seen by the next call
    assert_same(compiled(x), model(x))
    assert len(compiled.entries) == 1
    model.w = rand(rng, (4, 6), np.float32)        # another shape: recompiles
    model.b = rand(rng, (6,), np.float32)
    assert_same(compiled(x), model(x))
    assert len(compiled.entries) == 2
    assert all(e.graph is not None for e in compiled.entries)


# 5. Python scalars
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.float32, np.float64, bool])
def test_5_python_scalars(rng, backend, dtype):
    def f2(x, y):
        return x + y
    compiled = numpile.compile(f2, backend=backend)
    x = rand(rng, (3,), dtype)
    assert_same(compiled(x, 3), f2(x, 3))


# 11. Guards
def fn(x):
    return x + 1


def test_11_guards_logged(capsys):
    numpile.set_logs("guards")
    try:
        numpile.compile(fn, backend="eager")(np.ones((3, 3)))
    finally:
        numpile.set_logs()
    assert "x: ndarray, dtype float64, shape (3, 3)" in capsys.readouterr().err


def test_11_guards_through_environment():
    code = textwrap.dedent("""
        import numpy as np, numpile
        def fn(x):
            return x + 1
        numpile.compile(fn, backend="eager")(np.ones((3, 3)))
    """)
    env = {**os.environ, "NUMPILE_LOGS": "guards", "PYTHONPATH": str(ROOT / "core")}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert "[numpile:guards]" in proc.stderr
    assert "x: ndarray, dtype float64, shape (3, 3)" in proc.stderr


# 12. Recompilation (static shapes; automatic dynamic shapes come with the dynamic-shapes work)
def test_12_recompiles_logged(capsys):
    compiled = numpile.compile(fn, backend="eager")
    numpile.set_logs(recompiles=True)
    try:
        compiled(np.ones((3, 3)))
        compiled(np.ones((4, 4)))
    finally:
        numpile.set_logs()
    assert "[numpile:recompiles] recompiling fn: shape of x changed from (3, 3) to (4, 4)" in capsys.readouterr().err
    assert len(compiled.entries) == 2


def test_12_cache_size_limit(rng):
    compiled = numpile.compile(fn, backend="eager")
    old = numpile.config.cache_size_limit
    numpile.config.cache_size_limit = 2
    try:
        compiled(np.ones(3, np.float64))
        compiled(np.ones(3, np.float32))
        with pytest.warns(RuntimeWarning, match="cache_size_limit"):
            assert_same(compiled(np.ones(3, np.int32)), np.ones(3, np.int32) + 1)
        assert_same(compiled(np.ones(3, np.int64)), np.ones(3, np.int64) + 1)  # eager, no second warning
    finally:
        numpile.config.cache_size_limit = old
    assert len(compiled.entries) == 2


# 13. Choosing and swapping backends
def test_13_list_backends():
    names = numpile.list_backends()
    assert all(isinstance(name, str) for name in names)  # names, as torch._dynamo.list_backends() gives
    assert {"eager", "debug", "third_party"} <= set(names)
    assert names[0] == "eager"  # built-ins first
    assert {"eager", "debug"} <= set(numpile.list_backends(available_only=True))
    assert numpile.backend_info("debug").distribution == "numpile-debug"
    assert [info.name for info in numpile.backend_table()][:len(names)] == names


def test_13_backends_command():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "core"), str(ROOT / "plugins" / "debug_print")])}
    proc = subprocess.run([sys.executable, "-m", "numpile", "backends"], env=env, capture_output=True, text=True, check=True)
    assert "eager" in proc.stdout and "debug" in proc.stdout


def test_13_two_models_two_backends_and_swapping(rng, third_party_backend, capsys):
    a = LinearReLU(rand(rng, (4, 3)), rand(rng, (3,)))
    b = LinearReLU(rand(rng, (4, 2)), rand(rng, (2,)))
    ca = numpile.compile(a, backend="third_party")
    cb = numpile.compile(b, backend="debug")
    x = rand(rng, (2, 4))
    assert_same(ca(x), a(x))
    assert_same(cb(x), b(x))
    assert len(third_party_backend.graphs) == 1
    assert "def forward" in capsys.readouterr().out           # the debug backend printed b's graph
    swapped = numpile.compile(ca, backend="debug")            # a new compiled model, other backend
    assert swapped is not ca and swapped.backend_name == "debug"
    assert_same(swapped(x), a(x))
    assert len(third_party_backend.graphs) == 1
    assert "def forward" in capsys.readouterr().out


def test_13_plain_callable_backend(rng, capsys):
    def custom_backend(graph, example_inputs):
        graph.print_tabular()
        return graph
    compiled = numpile.compile(foo, backend=custom_backend)
    x, y = rand(rng, (3,)), rand(rng, (3,))
    assert_same(compiled(x, y), foo(x, y))
    out = capsys.readouterr().out
    assert "opcode" in out and "sin" in out and "cos" in out


def test_13_unknown_backend_lists_known(rng):
    with pytest.raises(ValueError, match="eager"):
        numpile.compile(foo, backend="no_such_backend")(rand(rng, (2,)), rand(rng, (2,)))


# 16. reset
def test_16_reset(rng):
    calls = []

    def counting_backend(graph, example_inputs):
        calls.append(graph)
        return graph
    compiled = numpile.compile(foo, backend=counting_backend)
    x, y = rand(rng, (3,)), rand(rng, (3,))
    compiled(x, y)
    compiled(x, y)
    assert len(calls) == 1
    numpile.reset()
    assert compiled.entries == []
    assert_same(compiled(x, y), foo(x, y))
    assert len(calls) == 2
