"""A reduction's trailing loops run as one where the elements it reads lie in a row
(numpile_llvm/kernels/coalesce.py), differentially against NumPy on fresh random inputs: sums,
products, extremes and arg-reductions over trailing axes of every layout (C order, where they
merge; transposed, strided and broadcast views, where they must not), results equal to NumPy's
to the bit, and the merged kernel one loop (no gathers across rows)."""

from __future__ import annotations

import numpy as np
import pytest

import numpile

rng = np.random.default_rng()


def draw(shape, dtype):
    if np.dtype(dtype).kind == "f":
        return rng.standard_normal(shape).astype(dtype)
    return rng.integers(-50, 50, size=shape).astype(dtype)


LAYOUTS = {
    "C": lambda a: a,
    "transposed": lambda a: a.transpose(1, 0, 2).copy().transpose(1, 0, 2),
    "strided": lambda a: np.repeat(a, 2, axis=2)[:, :, ::2],
    "last axes swapped": lambda a: a.swapaxes(1, 2).copy().swapaxes(1, 2),
    "broadcast": lambda a: np.broadcast_to(a[:, :1, :], a.shape),
}

REDUCTIONS = {
    "sum": lambda a: a.sum(axis=(1, 2)),
    "sum of the last two": lambda a: np.sum(a * 2, axis=(-2, -1)),
    "max": lambda a: a.max(axis=(1, 2)),
    "min plus sum": lambda a: a.min(axis=(1, 2)) + a[:, :, :1].sum(axis=(1, 2)),
    "prod": lambda a: (a[:, :2, :3] % 3).prod(axis=(1, 2)),
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.float64, np.float32])
def test_reductions_over_trailing_axes_are_numpys(layout, name, dtype):
    fn = REDUCTIONS[name]
    compiled = numpile.compile(fn, backend="llvm")
    for shape in ((5, 3, 7), (17, 30, 40)):
        a = LAYOUTS[layout](draw(shape, dtype))
        got, want = compiled(a), fn(a)
        assert got.dtype == want.dtype and got.shape == want.shape
        if np.dtype(dtype).kind == "f" and layout in ("transposed", "last axes swapped"):
            # NumPy walks these in memory order, not the axes' (as before loops merged)
            tolerance = 8 * np.finfo(dtype).eps * np.abs(a).sum()
            np.testing.assert_allclose(got, want, rtol=0, atol=tolerance)
        else:
            np.testing.assert_array_equal(got, want)   # a float sum in NumPy's pairwise order too


def flat_argmax(a):
    return a.reshape(a.shape[0], -1).argmax(axis=1) + a.sum(axis=(1, 2))


def test_arg_reductions_beside_merged_loops():
    a = draw((9, 12, 20), np.float64)
    got, want = numpile.compile(flat_argmax, backend="llvm")(a), flat_argmax(a)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", [np.int64, np.int32])
def test_trailing_loops_of_c_ordered_data_are_one(dtype, capsys):
    """Two loops, LLVM unrolled the constant inner one and gathered across rows (an int64 sum
    at 0.03x NumPy)."""
    a = draw((100, 30, 40), dtype)
    numpile.set_logs(output_code=True)
    try:
        got = numpile.compile(lambda x: x.sum(axis=(1, 2)), backend="llvm")(a)
    finally:
        numpile.set_logs(output_code=False)
    np.testing.assert_array_equal(got, a.sum(axis=(1, 2)))
    ir = capsys.readouterr().err
    assert "LLVM IR" in ir and "masked.gather" not in ir
