"""The template's own tests: numpile's conformance kit on the backend, and numpile finding it by name.

Run them with the distribution installed (`pip install '.[test]'`, then `pytest tests`).
"""

import numpy as np

import numpile
import numpile.testing
from numpile_example.backend import ExampleBackend


def test_numpile_conformance_kit():
    # every op as a one-op graph, then random multi-op programs: raises with a per-op report
    report = numpile.testing.check_backend(ExampleBackend())
    assert report.cases_passed["add"] and report.cases_unsupported["matmul"]  # pointwise only, as declared


def test_numpile_finds_it_by_name():
    assert "example" in numpile.list_backends(available_only=True)
    info = numpile.backend_info("example")
    assert (info.distribution, info.api_version) == ("numpile-example-backend", "1.1")


def test_compiled_by_name_matches_numpy():
    def f(x, y):
        return np.tanh(x) * y + 2.5

    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((3, 4)), rng.standard_normal(4).astype(np.float32)
    compiled = numpile.compile(f, backend="example")
    numpile.testing.assert_same(compiled(x, y), f(x, y))
    [entry] = compiled.all_entries()
    assert entry.backend == "example" and [n.target for n in entry.graph.calls] == ["tanh", "multiply", "add"]
