"""Dask arrays of CuPy chunks with the inner backend "triton": the chunk kernels run on the GPU,
results stay CuPy-chunked, values are NumPy's on the whole data. Runs only where CuPy, triton and
a CUDA device are (the lent GPU box: plugins/inductor_triton/tests/run_on_gpu.sh's way)."""

import numpy as np
import pytest

import numpile

da = pytest.importorskip("dask.array")
cupy = pytest.importorskip("cupy")
pytest.importorskip("triton")
torch = pytest.importorskip("torch")
if not torch.cuda.is_available():
    pytest.skip("no CUDA device", allow_module_level=True)

rng = np.random.default_rng()


def chain(x, y):
    return np.sin(x) * np.cos(y) + np.exp(-x * x) * 0.5


def reductions(x, y):
    return ((x - y) ** 2).sum(), (x * y).mean(axis=0)


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("fn, shapes", [(chain, [(300, 70), (300, 70)]), (reductions, [(300, 70), (300, 70)]),
                                        (softmax, [(300, 70)])])
def test_cupy_chunks_with_inner_triton(fn, shapes, capsys):
    host = [rng.standard_normal(s) for s in shapes]
    arrays = [da.from_array(cupy.asarray(h), chunks=(64, 70), asarray=False) for h in host]
    got = numpile.compile(fn, backend="dask", options={"inner": "triton"})(*arrays)
    want = fn(*host)
    got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
    numpile.set_logs("perf")
    try:
        values = [g.compute(scheduler="threads") for g in got]
    finally:
        numpile.set_logs()
    for value, w in zip(values, want):
        assert type(value) is cupy.ndarray, type(value)
        np.testing.assert_allclose(cupy.asnumpy(value), w, rtol=1e-10, atol=1e-12)
    assert "triton: first run of graph" in capsys.readouterr().err   # the chunk kernels ran on triton
