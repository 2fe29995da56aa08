"""cumsum and cumprod compiled as scans: along any axis, their producers fused in, each lane in
NumPy's order so that float results are NumPy's to the bit; compared with NumPy on fresh random
inputs of every dtype and layout."""

from __future__ import annotations

import numpy as np
import pytest

import numpile
from numpile.lowering import Extern
from test_llvm_in_place import run_both

rng = np.random.default_rng()


def scans(program) -> list:
    return [s for k in program.kernels for s in k.stages if s.scan]


def data(shape, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        x = rng.standard_normal(shape).astype(dtype)
        x.flat[0] = -0.0    # NumPy's first total is the first element itself, sign included
        return x
    if dtype.kind == "b":
        return rng.random(shape) > 0.5
    return rng.integers(-3 if dtype.kind == "i" else 0, 4, shape).astype(dtype)


@pytest.mark.parametrize("shape, axis", [((37,), 0), ((37,), None), ((5, 300), 0), ((5, 300), 1), ((300, 5), -1),
                                         ((4, 5, 6), 0), ((4, 5, 6), 1), ((4, 5, 6), 2)])
@pytest.mark.parametrize("op", [np.cumsum, np.cumprod])
def test_every_axis(shape, axis, op):
    def f(x):
        return op(x * 0.5, axis=axis)
    [program] = run_both(f, lambda: (data(shape, np.float64),))
    assert len(scans(program)) == 1 and not any(isinstance(s, Extern) for s in program.steps)


@pytest.mark.parametrize("dtype", ["float32", "int8", "uint8", "int32", "uint64", "bool"])
def test_dtypes_as_numpy_accumulates_them(dtype):
    def f(x):
        return np.cumsum(x, axis=0), np.cumsum(x, axis=1), x.cumprod(axis=1), np.cumsum(x, axis=1, dtype=np.float32)
    run_both(f, lambda: (data((6, 9), dtype),))


def test_views_and_consumers():
    def f(x):
        c = np.cumsum(x.T[::-1], axis=1)
        return c * 2, np.cumsum(x[:, ::3], axis=0).sum(axis=1), np.cumsum(np.broadcast_to(x[0], (4, 9)), axis=0)
    run_both(f, lambda: (data((9, 9), np.float64),))


def test_large_scans_split_over_threads():
    def f(m):
        return np.cumsum(m, axis=0), np.cumsum(m, axis=1)
    [program] = run_both(f, lambda: (data((700, 600), np.float32),))
    assert len(scans(program)) == 2


def test_dynamic_shapes():
    def f(x):
        return np.cumsum(x, axis=0) + np.cumprod(x, axis=-1)
    compiled = numpile.compile(f, backend="llvm", dynamic=True)
    for shape in ((3, 4), (17, 5), (2, 40)):
        x = data(shape, np.float64)
        got, want = compiled(x), f(x)
        assert got.dtype == want.dtype and np.array_equal(got, want)
    assert len(compiled.all_entries()) == 1
