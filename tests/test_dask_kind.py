"""Dask arrays as inputs (numpile.array_kinds): traced like ndarrays, guarded by chunks, sent to
config.default_backends["dask"], never computed by the tracer, updated in place only by Python.
A backend of this file's own stands in for the plugin numpile-dask (plugins/dask_array): it
runs the graph's NumPy code on the Dask arrays (dask.array's implementations)."""

import subprocess
import sys

import numpy as np
import pytest

import numpile
from numpile import array_kinds

da = pytest.importorskip("dask.array")

GRAPHS = []


class LazyBackend(numpile.Backend):
    name = "test-dask-kind"
    devices = ("dask",)
    supports_dynamic_shapes = True

    def compile(self, graph, example_inputs, options):
        assert all(isinstance(x, da.Array) for x in example_inputs if not isinstance(x, (int, float)))
        GRAPHS.append(graph)
        return graph.compile_python()


@pytest.fixture(scope="module")
def registered():
    numpile.register_backend(LazyBackend())


@pytest.fixture
def backend(registered, monkeypatch):
    monkeypatch.setitem(numpile.config.default_backends, "dask", [LazyBackend.name])
    GRAPHS.clear()
    numpile.reset()
    yield
    numpile.reset()


def test_kind_and_device():
    x = da.ones((4, 3), chunks=2)
    assert array_kinds.kind_of(x).name == "dask"
    assert array_kinds.call_device((np.ones(2), x), {}) == "dask"
    assert array_kinds.call_device(([x],), {}) == "dask"
    assert array_kinds.call_device((np.ones(2),), {}) == "cpu"


def test_the_device_rule_picks_the_dask_default(backend):
    x = da.from_array(np.arange(12.0).reshape(3, 4), chunks=2)
    f = numpile.compile(lambda x: np.sin(x) * 2)
    out = f(x)
    assert isinstance(out, da.Array) and f.entries[0].backend == LazyBackend.name
    np.testing.assert_allclose(out.compute(), np.sin(np.arange(12.0).reshape(3, 4)) * 2)


def test_chunks_are_guarded_and_dynamic_dims_guard_the_chunk_size(backend):
    a = np.random.default_rng(0).random((20, 6))
    f = numpile.compile(lambda x: x + 1)
    f(da.from_array(a, chunks=(8, 3)))
    guards = f.entries[0].guards.describe()
    assert any("chunks ((8, 8, 4), (3, 3))" in g for g in guards), guards
    f(da.from_array(a, chunks=(8, 3)))
    assert len(f.entries) == 1
    f(da.from_array(a, chunks=(10, 3)))
    assert len(f.entries) == 2
    b = np.random.default_rng(1).random((36, 6))
    f(da.from_array(b, chunks=(8, 3)))                       # a dim changed: symbolic from now on
    assert any("('every', 8)" in g for g in f.entries[0].guards.describe())
    np.testing.assert_allclose(f(da.from_array(b[:30], chunks=(8, 3))).compute(), b[:30] + 1)
    assert len(f.entries) == 3


def test_the_tracer_never_computes_a_dask_array(backend, monkeypatch):
    x = da.from_array(np.random.default_rng(2).random((6, 4)) + 0.5, chunks=3)
    computed = []
    monkeypatch.setattr(da.Array, "__array__", lambda self, *a, **k: computed.append(1) or np.asarray(self.compute()))

    def f(x):
        y = np.exp(x) + x.sum(axis=0)
        return y * 2, y.max()
    numpile.compile(f)(x)
    assert not computed


def test_unknown_chunk_sizes_and_in_place_updates_run_as_python(backend):
    xn = np.random.default_rng(3).random(10) - 0.5
    masked = da.from_array(xn, chunks=4)
    masked = masked[masked > 0]                              # shape (nan,)

    def g(x):
        x += 1
        return x * 2
    report = numpile.explain(g, backend=LazyBackend.name)(da.from_array(xn, chunks=4))
    assert any("in-place update" in b.reason for b in report.break_reasons)
    x = da.from_array(xn, chunks=4)
    np.testing.assert_allclose(numpile.compile(g)(x).compute(), (xn + 1) * 2)
    np.testing.assert_allclose(x.compute(), xn)              # rebound inside g, as dask does
    report = numpile.explain(lambda x: x * 2, backend=LazyBackend.name)(masked)
    assert "compute_chunk_sizes" in report.break_reasons[0].reason


@pytest.mark.filterwarnings("error::RuntimeWarning")   # a replay as Python would pass unseen
def test_sizes_only_the_data_knows_stay_unknown(backend):
    """x[m]'s length is nan to Dask until computed: the first run's output check takes it so, and
    Python code reading it is a graph break (Python then reads dask.array's nan)."""
    rng = np.random.default_rng(4)
    xn, mn = rng.random(10) - 0.5, rng.random(10) < 0.5
    x, m = da.from_array(xn, chunks=4), da.from_array(mn, chunks=3)
    np.testing.assert_allclose(numpile.compile(lambda x, m: x[m] * 2)(x, m).compute(), xn[mn] * 2)

    def length(x, m):
        return x[m].shape[0] + 1
    report = numpile.explain(length, backend=LazyBackend.name)(x, m)
    assert "index.shape of a dask array: s0 depends on the data" in report.break_reasons[0].reason
    assert np.isnan(numpile.compile(length)(x, m))


def test_core_does_not_import_dask():
    code = ("import sys, numpy as np, numpile\n"
            "f = numpile.compile(lambda x: x + 1, backend='eager')\n"
            "f(np.ones(3))\n"
            "assert 'dask' not in sys.modules, 'dask imported'\n")
    subprocess.run([sys.executable, "-c", code], check=True)
