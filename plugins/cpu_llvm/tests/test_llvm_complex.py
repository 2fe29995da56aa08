"""Complex numbers native on llvm (numpile_llvm/complexes.py): every kernel of these programs is
compiled (none runs with NumPy, as `perf` would say), loops of complex code run in one native
call, and the values are NumPy's, at NaN, inf, zeros and overflow too (Smith's division, hypot,
C99's cexp, npy_cpow's integer powers, the fused product of NumPy's AVX2 multiply)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import numpile
from numpile.testing import assert_same_result

rng = np.random.default_rng()
SPECIAL = [0.0, -0.0, 1.0, -2.5, np.inf, -np.inf, np.nan, 1e308, 1e-310]


def crandom(*shape, dtype=np.complex128):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def native(fn, *args, capsys):
    """fn on llvm, with what `perf` said of it."""
    numpile.set_logs(perf=True)
    try:
        got = numpile.compile(fn, backend="llvm")(*args)
    finally:
        numpile.set_logs()
    return got, capsys.readouterr().err


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("fn", [
    lambda z, w: z * w + 1j * z.real, lambda z, w: z / w - np.conj(z), lambda z, w: np.abs(z - w) ** 2,
    lambda z, w: np.exp(1j * w.imag) * z, lambda z, w: z ** 2 + w ** -1 - z ** 5, lambda z, w: (z == w) | (z != 2 * w),
    lambda z, w: np.sum(z * np.conj(w)), lambda z, w: z.prod(axis=0), lambda z, w: np.angle(z) + w.imag,
    lambda z, w: (z * 2).astype(np.complex128) + 1, lambda z, w: np.where(z.real > 0, z, w),
])
def test_kernels_are_native(fn, dtype, capsys):
    z, w = crandom(6, 9, dtype=dtype), crandom(6, 9, dtype=dtype)
    got, said = native(fn, z, w, capsys=capsys)
    assert_same_result(got, fn(z, w))
    assert "runs with NumPy" not in said, said


@pytest.mark.parametrize("fn", [lambda z: z.max(), lambda z: z ** 0.5, lambda z: np.sqrt(z), lambda z: z ** 1.5j,
                                lambda z: z ** np.nan, lambda z: z ** np.inf])
def test_what_stays_with_numpy_says_why(fn, capsys):
    z = crandom(5)
    got, said = native(fn, z, capsys=capsys)
    assert_same_result(got, fn(z))
    assert "runs with NumPy" in said


@pytest.mark.parametrize("name", ["multiply", "divide", "power2", "power3", "power-1", "power-4", "exp", "abs", "equal", "square"])
def test_special_values_as_numpy(name):
    values = np.array([complex(a, b) for a, b in itertools.product(SPECIAL, SPECIAL)])
    z, w = np.repeat(values, len(values)), np.tile(values, len(values))
    fn = {"multiply": lambda z, w: z * w, "divide": lambda z, w: z / w, "power2": lambda z, w: z ** 2,
          "power3": lambda z, w: z ** 3, "power-1": lambda z, w: z ** -1, "power-4": lambda z, w: z ** -4,
          "exp": lambda z, w: np.exp(z), "abs": lambda z, w: np.abs(z), "equal": lambda z, w: z == w,
          "square": lambda z, w: np.square(w)}[name]
    with np.errstate(all="ignore"):
        got, want = numpile.compile(fn, backend="llvm")(z, w), fn(z, w)
    assert_same_result(got, want)
    parts = (lambda x: (x.real, x.imag)) if want.dtype.kind == "c" else (lambda x: (x,))
    for g, e in zip(parts(got), parts(want)):   # NaN where NumPy has NaN, inf where it has inf
        assert np.array_equal(np.isnan(g), np.isnan(e)) and np.array_equal(np.isinf(g), np.isinf(e)) \
            and np.array_equal(g[np.isinf(g)], e[np.isinf(e)])


@pytest.fixture
def loops(monkeypatch):
    """Loops of any length kept as loops (a short one would be unrolled)."""
    monkeypatch.setattr(numpile.config, "loop_capture_min", 1)
    monkeypatch.setattr(numpile.config, "loop_unroll_ops", 0)


def test_loops_of_complex_code_are_native(capsys, loops):
    """A nearest-symbol search per element is one native nest; an escape time under masks runs
    its whole-array iterations in one native call."""

    def decide(e, symbols):
        out = np.zeros(e.shape[0], dtype=e.dtype)
        for i in range(e.shape[0]):
            out[i] = symbols[np.argmin(abs(e[i] - symbols) ** 2)]
        return out

    def escape(c, maxiter):
        counts, z = np.zeros(c.shape, dtype=np.int64), np.zeros(c.shape, np.complex128)
        for n in range(maxiter):
            inside = np.less(np.abs(z), 2.0)
            counts[inside] = n
            z[inside] = z[inside] ** 2 + c[inside]
        return z, counts
    for fn, args, how in ((decide, (crandom(40), crandom(6)), "a loop of element code is one native function"),
                          (escape, (crandom(9, 11), 25), "iterations in one native call")):
        got, said = native(fn, *args, capsys=capsys)
        want = fn(*args)
        for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
            assert_same_result(g, w)
        assert how in said and "runs with NumPy" not in said, said


def test_element_loops_of_complex_values_are_one_native_nest(capsys, loops):

    def convolve(z, w):
        out = np.zeros(z.shape[0] - w.shape[0], dtype=np.complex128)
        for i in range(z.shape[0] - w.shape[0]):
            acc = 0j      # a complex scalar carried by the inner loop: a phi of the nest
            for j in range(w.shape[0]):
                acc += z[i + j] * np.conj(w[j]) + abs(w[j]) * np.exp(1j * w[j].real)
            out[i] = acc / 2
        return out
    z, w = crandom(30), crandom(7)
    got, said = native(convolve, z, w, capsys=capsys)
    assert_same_result(got, convolve(z, w))
    assert "a loop of element code is one native function" in said, said


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_scalars_into_and_out_of_a_loop_nest(dtype, capsys, loops):
    def total(z, c, start):
        acc = start          # carried: a NumPy complex, handed back as one
        for i in range(z.shape[0]):
            acc += z[i] * z[i] - c
        return acc
    z = crandom(25, dtype=dtype)
    for c, start in ((dtype(1 - 2j), dtype(0.5j)), (2 - 1j, dtype(3)), (np.complex64(2j), dtype(1))):
        got, said = native(total, z, c, start, capsys=capsys)
        assert_same_result(got, total(z, c, start))
        assert "a loop of element code is one native function" in said, said


def test_element_code_computes_as_numpy_scalars(capsys, loops):
    """NumPy scalars' product is rounded twice (the array loop's is fused) and their z ** 2 and
    z ** -1 are npy_cpow's: a nest's element code gives NumPy's scalar results, special values too."""
    def products(z, w, out):
        for i in range(z.shape[0]):
            out[i] = z[i] * w[i] + z[i] ** 2 - w[i] ** -1
        return out
    values = np.array([complex(a, b) for a, b in itertools.product(SPECIAL, SPECIAL)])
    z, w = np.repeat(values, len(values)), np.tile(values, len(values))
    with np.errstate(all="ignore"):
        got, said = native(products, z, w, np.zeros_like(z), capsys=capsys)
        want = products(z, w, np.zeros_like(z))
    assert "a loop of element code is one native function" in said, said
    for g, e in ((got.real, want.real), (got.imag, want.imag)):
        assert np.array_equal(g, e, equal_nan=True)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_abs_and_hypot_are_numpys_to_the_bit(dtype):
    """abs of complex arrays as NumPy's SIMD loop (a * sqrt(r r + 1)), np.hypot and the abs of
    NumPy scalars as libm's hypot (glibc's algorithm), over every magnitude and at the specials."""
    n = 1 << 16
    values = rng.standard_normal((2, n)) * np.exp(rng.uniform(-700, 700, (2, n)))
    values[:, :81] = np.array(list(itertools.product(SPECIAL, SPECIAL))).T
    z = (values[0] + 1j * values[1]).astype(dtype)
    with np.errstate(all="ignore"):
        got = numpile.compile(lambda z: (np.abs(z), np.hypot(z.real, z.imag)), backend="llvm")(z)
        want = (np.abs(z), np.hypot(z.real, z.imag))
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and np.array_equal(g, w, equal_nan=True)


def test_abs_of_numpy_scalars_in_element_code(capsys, loops):
    def norms(z, out):
        for i in range(z.shape[0]):
            out[i] = abs(z[i])   # NumPy scalars: npy_cabs, libm's hypot
        return out
    z = rng.standard_normal(500) * np.exp(rng.uniform(-300, 300, 500)) + 1j * rng.standard_normal(500)
    got, said = native(norms, z, np.zeros(500), capsys=capsys)
    assert np.array_equal(got, norms(z, np.zeros(500)))
    assert "a loop of element code is one native function" in said, said
