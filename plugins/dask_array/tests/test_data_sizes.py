"""Sizes only the data knows over Dask arrays (numpile_dask/data_sizes.py): boolean-mask reads,
np.nonzero/flatnonzero/argwhere/unique/bincount, integers computed in the graph as indices; each
program compared with NumPy on the whole data (the masks select nothing from some chunks, where
dask.array's own scans and moments go wrong). Reading such a size in Python is a graph break, as
dask.array computes nothing for it; mask writes are updates in place, which run as dask.array's;
ops dask.array is not known to run right on chunks of unknown size are an error naming them."""

import dask
import dask.array as da
import numpy as np
import pytest

import numpile
from numpile_dask import kernels

from programs import assert_matches

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")   # a replay as Python would pass unseen


@pytest.fixture(autouse=True)
def fresh():
    numpile.reset()
    yield


def masked(rng, shape=(60,), mask_shape=None, chunks=(11,), mask_chunks=(7,)):
    """(x, m) as Dask arrays of other chunks; m selects nothing from the first 15 rows."""
    x = rng.standard_normal(shape)
    m = rng.random(mask_shape or shape) < 0.5
    m[:15] = False
    return da.from_array(x, chunks=chunks), da.from_array(m, chunks=mask_chunks)


PROGRAMS = {
    "x[m] chain": (lambda x, m: np.sin(x[m]) * 2 + 1, {}),
    "x[m] reductions": (lambda x, m: (x[m].sum(), x[m].mean(), x[m].std(), x[m].var(ddof=1)), {}),
    "x[m] / x[m].sum()": (lambda x, m: x[m] / x[m].sum() + 1, {}),
    "x[m], x[~m]": (lambda x, m: (x[m], x[~m] - 1), {}),
    "x[x > 0]": (lambda x, m: x[x > 0] ** 2, {}),
    "x[m][:, None] * x[None]": (lambda x, m: (x[m][:, None] * x[None, :8]).sum(axis=1), {}),
    "x2[m2]": (lambda x, m: x[m] + 1, dict(shape=(12, 10), chunks=(5, 4), mask_chunks=(4, 6))),
    "x2[m1] rows": (lambda x, m: x[m] - x[m].mean(axis=0), dict(shape=(40, 6), mask_shape=(40,), chunks=(9, 4))),
    "softmax of x2[m1]": (lambda x, m: np.exp(x[m] - x[m].max(axis=1, keepdims=True)).sum(axis=1),
                          dict(shape=(40, 6), mask_shape=(40,), chunks=(9, 4))),
    "x2[:, m1]": (lambda x, m: (x[:, m] * 3).sum(axis=1), dict(shape=(6, 40), mask_shape=(40,), chunks=(4, 9))),
    "x3[..., m1]": (lambda x, m: x[..., m].sum(axis=-1), dict(shape=(2, 5, 40), mask_shape=(40,), chunks=(1, 3, 9))),
}


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_mask_reads(name):
    fn, layout = PROGRAMS[name]
    x, m = masked(np.random.default_rng(abs(hash(name)) % 1000), **layout)
    want = fn(x.compute(), m.compute())
    f = numpile.compile(fn)
    got = dask.compute(f(x, m), scheduler="threads")[0]
    assert f.entries[0].backend == "dask" and f.entries[0].break_reason is None
    assert_matches(got, want)


def test_mask_reads_select_chunk_by_chunk_with_one_kernel():
    """x[m] is dask.array's mask selection (one task per chunk), not a gather by positions; the
    chain after it is one kernel, compiled once for every block length."""
    x, m = masked(np.random.default_rng(1), shape=(400,), chunks=(30,), mask_chunks=(30,))
    out = numpile.compile(lambda x, m: np.exp(-x[m] * x[m]) + 0.5)(x, m)
    assert not any("slice_with_int_dask_array" in name for name in out.__dask_graph__().layers)
    assert_matches(out.compute(scheduler="threads"), np.exp(-x.compute()[m.compute()] ** 2) + 0.5)
    (fused,) = [kernels._TABLE[name.rsplit("-", 1)[0]] for name in out.__dask_graph__().layers if "fused" in name]
    (signature,) = fused._compiled
    assert all(shape == (None,) for shape, _ in signature), signature


def test_selections_counts_and_data_indices():
    rng = np.random.default_rng(2)
    xn, labels, b = rng.random(40), rng.integers(0, 9, 40), rng.integers(-14, 14, 6)

    def select(x, labels, b):
        idx = np.nonzero(x > 0.5)[0]
        values, first, inverse, counts = np.unique(labels, return_index=True, return_inverse=True, return_counts=True)
        return (idx, x[idx].sum(), np.flatnonzero(x < 0.2), np.argwhere(x.reshape(5, 8) > 0.7),
                np.bincount(labels, weights=x, minlength=12), np.bincount(labels * 2) * 3,
                values, counts / counts.sum(), x[first], inverse,
                x[b.argmax()], x[b.argmin():] * 2, x[:b.argmax():-1])
    args = [da.from_array(xn, chunks=15), da.from_array(labels, chunks=15), da.from_array(b, chunks=4)]
    f = numpile.compile(select)
    got = dask.compute(f(*args), scheduler="threads")[0]
    assert f.entries[0].break_reason is None
    assert_matches(got, select(xn, labels, b))


def test_sizes_read_in_python_break_as_dask_computes_none():
    x, m = masked(np.random.default_rng(3))
    report = numpile.explain(lambda x, m: x[m].shape[0] + 1, backend="dask")(x, m)
    assert report.graph_break_count == 1
    assert "index.shape of a dask array: s0 depends on the data" in report.break_reasons[0].reason
    with pytest.raises(ValueError, match="unknown chunk size"):   # dask.array's own len() error
        numpile.compile(lambda x, m: np.zeros(len(x[m])) + x[m])(x, m)


def test_mask_writes_run_as_dask_array_runs_them():
    """An update in place is a graph break on Dask arrays: x[m] = 0.5 as dask.array does it; an
    update by a selection of unknown size (x[m] += 1) raises dask.array's own error."""
    def clip_selected(x, m):
        x[m] = 0.5
        return x * 2

    def add_to_selected(x, m):
        x[m] += 1.5
        return x
    x, m = masked(np.random.default_rng(6))
    want = x.compute()
    want[m.compute()] = 0.5
    assert_matches(numpile.compile(clip_selected)(x, m).compute(scheduler="threads"), want * 2)
    for fn in (add_to_selected, numpile.compile(add_to_selected)):
        with pytest.raises(ValueError, match=r"cannot broadcast shape \(nan,\)"):
            fn(*masked(np.random.default_rng(7)))


def test_ops_dask_array_gets_wrong_on_unknown_chunks_are_errors():
    x, m = masked(np.random.default_rng(4))
    with pytest.raises(numpile.BackendCompilerFailed, match="cumsum of index, an array whose size only the data"):
        numpile.compile(lambda x, m: np.cumsum(x[m]))(x, m)


def test_mask_reads_on_local_cluster(cluster_client):
    x, m = masked(np.random.default_rng(5), shape=(300,), chunks=(40,), mask_chunks=(25,))

    def f(x, m):
        return np.tanh(x[m]) * 2, x[m].std(), np.unique(np.round(x[m]))
    got = cluster_client.compute(list(numpile.compile(f)(x, m)), sync=True)
    assert_matches(tuple(got), f(x.compute(), m.compute()))
