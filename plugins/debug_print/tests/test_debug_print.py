"""The "debug" backend: what it prints, that it runs the graph, and that numpile finds it."""

from __future__ import annotations

import tomllib
from importlib import import_module
from pathlib import Path

import numpy as np
import pytest

import numpile
from numpile import plugins
from numpile.graph import Graph
from numpile.ops import ArrayMeta
from numpile_debug.backend import DebugBackend

DISTRIBUTION = Path(__file__).resolve().parents[1]


@pytest.fixture
def debug_registered():
    """numpile with the debug plugin: from its entry point when installed, else registered in process."""
    plugins.reset_plugins()
    if "debug" not in plugins.list_backends():
        plugins.get_plugin_manager().register(import_module("numpile_debug.plugin"))
    yield
    plugins.reset_plugins()


def scaled_sin_graph() -> Graph:
    """np.sin(x) * 2.0 on a float32[4] array."""
    graph = Graph()
    meta = ArrayMeta((4,), np.dtype("float32"))
    x = graph.input("x", meta)
    graph.output([graph.call("multiply", (graph.call("sin", (x,), {}, meta), 2.0), {}, meta)])
    graph.guards = ["x: ndarray, dtype float32, shape (4,)"]
    return graph


def test_prints_graph_code_and_guards_under_headings(capsys):
    graph = scaled_sin_graph()
    DebugBackend().compile(graph, [np.ones(4, np.float32)], {"mode": None})
    out = capsys.readouterr().out
    sections = ["=== numpile debug: graph (inputs: 1, ops: 2, outputs: 1) ===\n" + graph.tabular(),
                "=== numpile debug: Python code ===\n" + graph.python_code().rstrip(),
                "=== numpile debug: guards (1) ===\n  x: ndarray, dtype float32, shape (4,)"]
    assert out == "\n\n".join(sections) + "\n\n"


def test_a_graph_without_guards_says_so(capsys):
    graph = scaled_sin_graph()
    graph.guards = []
    DebugBackend().compile(graph, [np.ones(4, np.float32)], {"mode": None})
    assert capsys.readouterr().out.endswith("=== numpile debug: guards (0) ===\n  (none)\n\n")


def test_runs_the_graph_like_numpy(capsys):
    x = np.random.default_rng(0).standard_normal(4).astype(np.float32)
    (result,) = DebugBackend().compile(scaled_sin_graph(), [x], {"mode": None})(x)
    expected = np.sin(x) * 2.0
    assert result.dtype == expected.dtype
    np.testing.assert_array_equal(result, expected)


def test_entry_point_names_the_plugin_module():
    project = tomllib.loads((DISTRIBUTION / "pyproject.toml").read_text())
    target = project["project"]["entry-points"]["numpile"]["debug"]
    assert [b.name for b in import_module(target).numpile_backends()] == ["debug"]


def test_numpile_finds_and_lists_it(debug_registered):
    assert isinstance(plugins.lookup("debug"), DebugBackend)
    info = plugins.backend_info("debug")
    assert info.available and info.description == DebugBackend.description


def test_compile_with_backend_debug_prints_and_is_right(debug_registered, capsys):
    def foo(x, y):
        return np.sin(x) + np.cos(y)

    rng = np.random.default_rng(1)
    x, y = rng.standard_normal((2, 3)), rng.standard_normal((2, 3))
    result = numpile.compile(foo, backend="debug")(x, y)
    np.testing.assert_array_equal(result, foo(x, y))
    out = capsys.readouterr().out
    assert "=== numpile debug: Python code ===" in out and "np.sin(x)" in out
