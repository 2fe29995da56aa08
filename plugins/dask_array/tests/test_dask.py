"""numpile.compile on Dask arrays: the device rule, guards on chunks, graph breaks, and the
backend "dask" with the inner backend "llvm" on the threaded scheduler (test_cluster.py runs
the same programs on a LocalCluster). Every result is compared with NumPy on the whole data."""

import pickle

import dask
import dask.array as da
import numpy as np
import pytest

import numpile
from numpile.testing import assert_same
from numpile_dask import kernels

from programs import PROGRAMS, assert_matches, inputs_for


@pytest.fixture(autouse=True)
def fresh():
    numpile.reset()
    yield


def compute(value):
    return dask.compute(value, scheduler="threads")[0]


def numpy_of(value):
    return value.compute(scheduler="sync") if isinstance(value, da.Array) else value


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_programs_on_threads(name):
    fn, spec = PROGRAMS[name]
    args = inputs_for(spec, seed=hash(name) % 1000)
    want = fn(*[numpy_of(a) for a in args])
    got = numpile.compile(fn)(*args)
    outs = got if isinstance(got, tuple) else (got,)
    theirs = fn(*args)   # dask.array's own: the chunks the results must have
    assert [o.chunks for o in outs] == [o.chunks for o in (theirs if isinstance(theirs, tuple) else (theirs,))]
    assert_matches(compute(got), want)


def test_device_rule_picks_dask():
    x = da.from_array(np.arange(1.0, 13.0).reshape(3, 4), chunks=2)
    f = numpile.compile(lambda x: x * 2 + 1)
    assert isinstance(f(x), da.Array)
    assert f.entries[0].backend == "dask"
    assert numpile.config.default_backends["dask"] == ["dask"]


def test_same_chunks_as_dask_array():
    rng = np.random.default_rng(1)
    x = da.from_array(rng.standard_normal((37, 23)), chunks=(10, 7))
    y = da.from_array(rng.standard_normal(23), chunks=5)
    z = da.from_array(rng.standard_normal((37, 1)), chunks=8)

    def f(x, y, z):
        return np.sin(x) * y + np.exp(-z * z)
    got = numpile.compile(f)(x, y, z)
    assert got.chunks == f(x, y, z).chunks
    assert_matches(compute(got), f(x.compute(), y.compute(), z.compute()))


def test_one_task_per_chunk():
    """A chain of 12 ops is one blockwise layer: one task per chunk, where dask.array makes one
    per op per chunk (before its own optimisation fuses them)."""
    x = da.from_array(np.random.default_rng(2).random((64, 64), dtype=np.float32), chunks=16)

    def chain(x):
        return np.sin(x) * np.cos(x) + np.exp(-x * x) * 0.5 + np.tanh(x)
    mine = numpile.compile(chain)(x)
    chunks = x.npartitions
    tasks = len(dict(mine.__dask_graph__())) - chunks       # less the input's own tasks
    theirs = len(dict(chain(x).__dask_graph__())) - chunks
    assert tasks == chunks
    assert theirs >= 8 * chunks


def test_chunks_guarded_and_dynamic():
    rng = np.random.default_rng(3)
    f = numpile.compile(lambda x: np.sqrt(np.abs(x)) + 1)
    a = rng.standard_normal((40, 30))
    for chunks in ((16, 12), (16, 12), (20, 12)):
        assert_same(compute(f(da.from_array(a, chunks=chunks))), np.sqrt(np.abs(a)) + 1)
    assert len(f.entries) == 2                      # other chunks: one more entry
    for rows in (80, 100):                          # only the number of chunks along axis 0 changes
        b = rng.standard_normal((rows, 30))
        assert_same(compute(f(da.from_array(b, chunks=(16, 12)))), np.sqrt(np.abs(b)) + 1)
    assert len(f.entries) == 3
    assert any("('every', 16)" in g for g in f.entries[0].guards.describe())


def test_breaks_compute_where_numpy_needs_a_value():
    xn = np.random.default_rng(4).standard_normal((30, 20))
    x = da.from_array(xn, chunks=(7, 6))

    def f(x):
        s = float(x.sum())
        if x.mean() > 0:
            return x * s
        return x - s
    report = numpile.explain(f, backend="dask")(x)
    assert report.graph_break_count == 2
    assert_same(compute(numpile.compile(f)(x)), f(xn))


def test_in_place_updates_behave_as_dask_array():
    xn = np.random.default_rng(5).standard_normal((12, 8))

    def f(x):
        x += 1
        x[0] = 5
        return x * 2
    x = da.from_array(xn.copy(), chunks=5)
    want = f(da.from_array(xn.copy(), chunks=5)).compute()
    got = numpile.compile(f)(x)
    assert_same(compute(got), want)
    assert_same(compute(x), xn)                      # the caller's array: rebound inside f, not changed


def test_other_backends_refuse_dask_arrays():
    x = da.ones((4, 4), chunks=2)
    with pytest.raises(TypeError, match="dask arrays"):
        numpile.compile(lambda x: x + 1, backend="llvm")(x)


def test_row_reduction_rechunks_and_says_so(capsys):
    xn = np.random.default_rng(6).standard_normal((20, 30)).astype(np.float32)

    def softmax(x):
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    numpile.set_logs("perf")
    try:
        got = numpile.compile(softmax)(da.from_array(xn, chunks=(8, 12)))
        whole = numpile.compile(softmax)(da.from_array(xn, chunks=(8, 30)))
    finally:
        numpile.set_logs()
    said = [line for line in capsys.readouterr().err.splitlines() if "rechunked" in line]
    assert len(said) == 1 and "axis 1" in said[0]
    assert len(dict(whole.__dask_graph__())) == 2 * 3   # input tasks and one fused task per chunk
    assert got.chunks == softmax(da.from_array(xn, chunks=(8, 12))).chunks == ((8, 8, 4), (12, 12, 6))
    assert_matches(compute(got), softmax(xn))
    assert_matches(compute(whole), softmax(xn))


def test_chunk_kernels_pickle_by_key():
    x = da.from_array(np.random.default_rng(7).random((10, 10)), chunks=5)
    out = numpile.compile(lambda x: np.sin(x) + 1)(x)
    fns = [t for t in dict(out.__dask_graph__()).values() if "fused" in str(t)]
    assert fns
    kernel = next(k for k in kernels._TABLE.values() if k.key.startswith("fused"))
    compute(out)                                      # compiled once here
    data = pickle.dumps(kernel)
    assert len(data) < 2000 and b"llvm" in data       # a key and a template, no code
    assert pickle.loads(data) is kernel              # in this process: the same kernel, by key


def test_missing_inner_backend_names_the_distribution():
    t = kernels.Template((kernels.InputSpec(np.dtype("float64")),), (("sin", (kernels.Ref(0),), {}),), (1,))
    k = kernels.kernel("test-missing", t, "triton-not-installed", ())
    with pytest.raises(RuntimeError, match="install the distribution that offers backend 'triton-not-installed'"):
        k(np.ones(3))
    missing = kernels.kernel("test-missing-llvm", t, "llvm", ())
    kernels.DISTRIBUTIONS["nope"] = "numpile-nope"
    with pytest.raises(RuntimeError, match="install numpile-nope on every Dask worker"):
        kernels.inner_backend("nope")
    assert np.allclose(missing(np.ones(3)), np.sin(1.0))

    class NoDevice(numpile.Backend):   # installed, but not for this machine (triton without a GPU)
        name = "test-no-device"

        def is_available(self):
            return False, "no CUDA device"
    numpile.register_backend(NoDevice())
    with pytest.raises(RuntimeError, match="inner backend 'test-no-device' cannot run here: .*no CUDA device"):
        kernels.inner_backend("test-no-device")


def test_inner_backend_of_another_device_is_an_error():
    """A GPU inner backend ("triton") on NumPy chunks: said at compile time, naming both."""
    class CudaOnly(numpile.Backend):
        name = "test-cuda-only"
        devices = ("cuda",)

        def compile(self, graph, example_inputs, options):
            raise AssertionError("never compiled for NumPy chunks")
    numpile.register_backend(CudaOnly())
    x = da.from_array(np.random.default_rng(11).random((6, 6)), chunks=3)
    with pytest.raises(numpile.BackendCompilerFailed, match=r"runs on cuda; these Dask arrays' chunks are "
                                                            r"numpy.ndarray \(cpu\)"):
        numpile.compile(lambda x: x + 1, options={"inner": "test-cuda-only"})(x)


def test_inner_eager_and_options():
    xn = np.random.default_rng(8).random((9, 9))
    x = da.from_array(xn, chunks=4)
    f = numpile.compile(lambda x: (np.cos(x) ** 2).sum(axis=0), options={"inner": "eager", "split_every": 2})
    assert_same(compute(f(x)), (np.cos(xn) ** 2).sum(axis=0))
    with pytest.raises(numpile.BackendCompilerFailed, match="no option 'fast'"):
        numpile.compile(lambda x: x + 1, options={"fast": 1})(x)


def test_small_partials_combine_sixteen_to_a_task():
    """A tree's fan-in is Dask's 4 where partials are large, 16 where each is at most 64 KiB."""
    rng = np.random.default_rng(12)
    cases = [((64, 3), lambda x: (x * x).sum(), 1),               # a scalar per chunk: one combining level
             ((64, 9000), lambda x: (x * x).sum(axis=0), 2)]     # rows of 72 KB: 4 to a task, two levels
    for shape, fn, levels in cases:
        xn = rng.standard_normal(shape)
        out = numpile.compile(fn)(da.from_array(xn, chunks=(4, shape[1])))
        tree = [name for name in out.__dask_graph__().layers if "sum-combine" in name or "sum-aggregate" in name]
        assert len(tree) == levels, tree
        assert_matches(compute(out), fn(xn))


def test_dynamic_sizes_with_row_and_tree_reductions():
    """After a size changes the graph has symbolic dims: the Dask operations are built from each
    call's arrays, and kernels are compiled per block shape, so one entry serves both sizes."""
    fn, _ = PROGRAMS["layer_norm"]
    f = numpile.compile(lambda x, w: (fn(x, w), x.sum(axis=0)))
    rng = np.random.default_rng(9)
    w = rng.standard_normal(32).astype(np.float32)
    for rows in (18, 41, 60):
        xn = rng.standard_normal((rows, 32)).astype(np.float32)
        got = f(da.from_array(xn, chunks=(5, 16)), da.from_array(w, chunks=32))
        assert_matches(compute(got), (fn(xn, w), xn.sum(axis=0)))
    assert len(f.entries) == 2


def test_values_shared_by_reductions_are_computed_once():
    """A chain read by two reductions and a row softmax is stored once; the reductions read it
    (their chunk steps fuse only what nothing else reads)."""
    from numpile_dask.backend import describe
    from numpile_dask.partition import partition, row_fits

    def f(x):
        g = np.tanh(x) * np.exp(-x * x) + 1.0
        e = np.exp(g - g.max(axis=1, keepdims=True))
        return g.sum(axis=0), (g * g).sum(), (e / e.sum(axis=1, keepdims=True)).max(axis=1)
    x = da.from_array(np.random.default_rng(10).standard_normal((12, 8)), chunks=(5, 8))
    out = numpile.compile(f)(x)
    assert_matches(compute(out), f(x.compute()))
    report = numpile.explain(f, backend="dask")(x)
    steps = partition(report.graphs[0], set(report.graphs[0].inputs), lambda n: row_fits(n, 1 << 27))
    text = describe(steps)
    assert sum(len(s.nodes) for s in steps) == len(report.graphs[0].calls), text   # each op once
    assert [s.kind for s in steps].count("blockwise") == 1, text   # the chain (the softmax is in the max tree)
