"""Complex data through the tracer, on every installed CPU backend against NumPy on fresh random
inputs: NEP 50 promotion of Python complex scalars, `.real` and `.imag` as NumPy has them (views of a
complex array, updates of it seen through them; a real array's `.real` the array itself), np.real,
np.imag, np.angle and the conjugate's spellings, and the patterns of issue 32's programs (an escape
time under masks, an argmin of distances per element, a filter's complex dot products in a loop)."""

from __future__ import annotations

import numpy as np
import pytest

import numpile
from numpile.testing import assert_same_result

rng = np.random.default_rng()
BACKENDS = [b for b in ("eager", "llvm") if b in numpile.list_backends()]


def crandom(*shape, dtype=np.complex128):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def check(fn, *args, backend):
    """fn compiled and fn run by NumPy on copies of args: results and arguments afterwards the same."""
    mine, theirs = ([a.copy() if isinstance(a, np.ndarray) else a for a in args] for _ in range(2))
    got, want = numpile.compile(fn, backend=backend)(*mine), fn(*theirs)
    for g, w in zip(got if isinstance(want, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        assert_same_result(g, w)
    for g, w in zip(mine, theirs):
        if isinstance(w, np.ndarray):
            assert_same_result(g, w, "argument afterwards")


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_arithmetic_and_promotion(backend, dtype):
    def f(z, w, x):
        return (z * w + 1j * x, z / w, x + 1j * x, z - 2.5, 3 * z, np.conj(z) * w, z.conj(), np.conjugate(w),
                -z, abs(z) ** 2, np.exp(1j * x), np.exp(z), z ** 3, z ** -2, z ** 2, z == w, z != z)
    z, w = crandom(7, 5, dtype=dtype), crandom(7, 5, dtype=dtype)
    check(f, z, w, rng.standard_normal(5).astype(np.float32), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128, np.float64, np.int32])
def test_parts(backend, dtype):
    def f(a):
        return a.real, a.imag, np.real(a) * 2, np.imag(a) + 1, np.angle(a), np.angle(a, deg=True), a.real.min() + a.imag.max()
    z = crandom(4, 6) * 10
    check(f, (z if np.dtype(dtype).kind == "c" else z.real).astype(dtype), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_real_of_a_real_array_is_the_array(backend):
    def f(x):
        r = x.real
        r[0] = 5.0       # NumPy's x.real of a real x is x: x changes
        return x * 1, np.real(x) - 1
    check(f, rng.standard_normal(3), backend=backend)
    assert numpile.compile(lambda x: (x.real is x, np.real(x) is x), backend=backend)(np.ones(2)) == (True, True)


@pytest.mark.parametrize("backend", BACKENDS)
def test_parts_follow_updates_of_their_array(backend):
    def f(z):
        re, im = z.real, z.imag
        z *= 2j
        return re + im, re.sum()
    check(f, crandom(8), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_writes_through_parts_break_the_graph_with_a_reason(backend):
    def f(z):
        z.real[:2] = 0.0
        return z * 2
    z = crandom(5)
    check(f, z, backend=backend)
    explained = numpile.explain(f)(z.copy())
    assert "through a real view" in str(explained)


@pytest.mark.parametrize("backend", BACKENDS)
def test_normalised_by_the_origin(backend):
    def normalize(a):
        a_oo = a - a.real.min() - 1j * a.imag.min()
        return a_oo / np.abs(a_oo).max()
    check(normalize, rng.random(200) + 1j * rng.random(200), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_escape_time_under_masks(backend):
    def escape(c, maxiter, horizon):
        n_of = np.zeros(c.shape, dtype=np.int64)
        z = np.zeros(c.shape, np.complex128)
        for n in range(maxiter):
            inside = np.less(np.abs(z), horizon)
            n_of[inside] = n
            z[inside] = z[inside] ** 2 + c[inside]
        n_of[n_of == maxiter - 1] = 0
        return z, n_of
    x, y = np.linspace(-2, 1, 23), np.linspace(-1.5, 1.5, 17)
    check(escape, x + y[:, None] * 1j, 30, 2.0, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_nearest_symbol_per_element(backend):
    def decide(e, symbols):
        out = np.zeros(e.shape[0], dtype=e.dtype)
        for i in range(e.shape[0]):
            out[i] = symbols[np.argmin(abs(e[i] - symbols) ** 2)]
        return out
    check(decide, crandom(50), crandom(8), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_adaptive_filter_of_complex_dot_products(backend):
    def adapt(e, w, mu, r, taps):
        err = np.zeros(e.shape[1], dtype=np.complex128)
        for i in range(e.shape[1] - taps):
            x = e[:, i:i + taps]
            estimate = np.sum(x * np.conj(w))
            err[i] = (r - abs(estimate) ** 2) * estimate
            w += mu * np.conj(err[i]) * x
        return err, w
    check(adapt, crandom(2, 60), crandom(2, 5) * 0.1, 1e-3, 1.0, 5, backend=backend)
