"""Integer powers of array exponents on llvm (scalar._integer_power), differentially against
NumPy on fresh random inputs: exponents that cannot be negative (a loop index, `2 ** np.arange(8)`
as numpy-100's bit unpacking writes it; unsigned arrays) compile, wrapping on overflow as NumPy's
loop does; a signed exponent array still runs as NumPy, which raises for a negative one."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import numpile

rng = np.random.default_rng()


def unpack_bits(I):
    return ((I.reshape(-1, 1) & (2 ** np.arange(8))) != 0).astype(int)


def powers_of_rows(x):
    return x[:, None] ** np.arange(x.shape[0])   # wraps past the dtype's range


def unsigned_powers(x, e):
    return x ** e


def compiled_quietly(fn):
    compiled = numpile.compile(fn, backend="llvm")

    def run(*args):
        with warnings.catch_warnings():
            warnings.simplefilter("error")   # the llvm graph failing and running as Python is a failure here
            return compiled(*args)
    return run


def same(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_bit_unpacking_as_written(capsys):
    I = rng.integers(0, 256, size=rng.integers(5, 50))
    numpile.set_logs(perf=True)
    try:
        same(compiled_quietly(unpack_bits)(I), unpack_bits(I))
    finally:
        numpile.set_logs(perf=False)
    assert "runs with NumPy" not in capsys.readouterr().err   # the power is in the kernel


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64, np.uint16, np.uint32])
def test_powers_by_a_loop_index_wrap_as_numpys(dtype):
    x = rng.integers(-9 if np.dtype(dtype).kind == "i" else 0, 9, size=23).astype(dtype)
    same(compiled_quietly(powers_of_rows)(x), powers_of_rows(x))


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32])   # int64 ** uint64 is a float power
def test_unsigned_exponent_arrays(dtype):
    x = rng.integers(-5, 5, size=40)
    e = rng.integers(0, 70, size=40).astype(dtype)
    same(compiled_quietly(unsigned_powers)(x, e), unsigned_powers(x, e))


def test_a_negative_signed_exponent_raises_numpys_error():
    x, e = rng.integers(1, 5, size=10), rng.integers(0, 4, size=10)
    compiled = numpile.compile(unsigned_powers, backend="llvm")
    same(compiled(x, e), unsigned_powers(x, e))
    e[3] = -1
    with pytest.raises(ValueError, match="negative integer powers"):
        unsigned_powers(x, e)
    with pytest.raises(ValueError, match="negative integer powers"):
        compiled(x, e)
