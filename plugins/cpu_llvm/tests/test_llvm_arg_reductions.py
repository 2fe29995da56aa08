"""argmax and argmin compiled as reductions: the first extreme's index (C order over the reduced
axes), the first NaN for floats, every dtype, any axis and layout, fused with their producers;
compared with NumPy on fresh random inputs with ties and NaNs planted."""

from __future__ import annotations

import numpy as np
import pytest

import numpile
from numpile.lowering import Extern
from test_llvm_in_place import run_both

rng = np.random.default_rng()


def data(shape, dtype, nans: bool):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) > 0.7
    x = rng.integers(-3, 4, shape).astype(dtype)   # few values: many ties
    if dtype.kind == "f":
        x[rng.random(shape) < 0.1] = np.inf
        x.flat[rng.integers(0, x.size)] = -0.0
        if nans:
            x[rng.random(shape) < 0.05] = np.nan
    return x


@pytest.mark.parametrize("dtype, nans", [("float64", True), ("float32", True), ("float64", False), ("int8", False),
                                         ("uint64", False), ("int64", False), ("bool", False)])
def test_every_axis_and_dtype(dtype, nans):
    def f(x):
        return (x.argmax(), np.argmin(x), x.argmin(axis=0), np.argmax(x, axis=-1), x.argmax(axis=1, keepdims=True),
                x.T[::2].argmin(), x[1:, ::-1].argmax(axis=1))
    [program] = run_both(f, lambda: (data((9, 13), dtype, nans),))
    assert not any(isinstance(s, Extern) for s in program.steps), str(program)


def test_fused_with_the_producer():
    def f(x, y):
        return np.abs(x - y[:1]).argmax(axis=1), ((x[:, None, :] - y[None]) ** 2).sum(-1).argmin(1)
    [program] = run_both(f, lambda: (rng.standard_normal((50, 8)), rng.standard_normal((6, 8))))
    assert not any(isinstance(s, Extern) for s in program.steps)
    # a float arg-reduction is two stages, the extreme and the first position holding it
    # (lowering/decompose.py), each fused with what it reads
    assert sum(len(k.stages) for k in program.kernels) == 5


def test_large_rows_and_dynamic_shapes():
    def f(x):
        return x.argmin(axis=1), x.argmax()
    run_both(f, lambda: (data((300, 700), np.float64, True),))
    compiled = numpile.compile(f, backend="llvm", dynamic=True)
    for shape in ((3, 4), (17, 5), (2, 40)):
        x = data(shape, np.float32, True)
        for got, want in zip(compiled(x), f(x)):
            assert type(got) is type(want) and np.array_equal(got, want)


def test_an_empty_reduction_raises_numpys_error():
    def f(x):
        return x.argmin(axis=1)
    compiled = numpile.compile(f, backend="llvm")
    with pytest.raises(ValueError) as numpy_error:
        f(np.ones((3, 0)))
    with pytest.raises(ValueError) as ours:
        compiled(np.ones((3, 0)))
    assert str(ours.value) == str(numpy_error.value)


@pytest.mark.parametrize("values", [[-0.0, 0.0, -0.0], [0.0, -0.0], [np.nan, 1.0, np.nan], [1.0, np.inf, np.inf, -np.inf],
                                    [np.nan, np.nan], [3.0], [-np.inf, -np.inf], [1.0, 2.0, np.nan, 5.0]])
def test_ties_zeros_infinities_and_nans_as_numpy(values):
    """A float argmax/argmin is the extreme, then the least position holding it (the first NaN
    where there is one): ties, signed zeros and infinities give NumPy's first position."""
    x = np.array(values)

    def f(x):
        return x.argmax(), x.argmin(), np.argmax(x.reshape(-1, 1), axis=0), x[::-1].argmin()
    got = numpile.compile(f, backend="llvm")(x)
    for g, w in zip(got, f(x)):
        assert type(g) is type(w) and np.array_equal(g, w) and np.shape(g) == np.shape(w)
