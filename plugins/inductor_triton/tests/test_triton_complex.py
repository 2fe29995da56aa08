"""Complex values in Triton kernels as (real, imaginary) pairs (numpile_triton/pairs.py): arithmetic,
abs, conj, .real and .imag, sums, updates in place, against NumPy on random values with zeros of
both signs, infinities and NaNs among them; none of these kernels runs through the reference
renderer."""

from __future__ import annotations

import numpy as np
import pytest

from numpile.testing import assert_same_result

rng = np.random.default_rng()
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")   # a backend error run as Python is one


def values(dtype, n=37, special=False) -> np.ndarray:
    z = (rng.standard_normal(n) * 3 + 1j * rng.standard_normal(n) * 3).astype(dtype)
    if special:
        with np.errstate(over="ignore"):
            parts = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.5, -2.5, 1e-300, 1e300]).astype(z.real.dtype)
        z.real[:16], z.imag[:16] = rng.choice(parts, 16), rng.choice(parts, 16)
    return z


def normalize(a):
    a_oo = a - a.real.min() - 1j * a.imag.min()
    return a_oo / np.abs(a_oo).max()


def filtered(E, wx, mu, R):
    Xest = np.sum(E * np.conj(wx))
    err = (R - abs(Xest) ** 2) * Xest
    return err, wx + mu * np.conj(err) * E


PROGRAMS = {   # name: (function, arguments from a complex dtype and whether special values are in)
    "arithmetic": (lambda z, w, r: (z * w - z / 2.5 + w * 1j, z + r, r - z, -z), lambda d, s: (values(d, special=s), values(d, special=s), values(d).real)),
    "divide": (lambda z, w, r: (z / w, z / r, r / z, 3.0 / z), lambda d, s: (values(d, special=s), values(d, special=s), values(d, special=s).real)),
    "abs_conj_parts": (lambda z: (np.abs(z), np.conj(z), z.real * 2, z.imag + 1, abs(z) ** 2), lambda d, s: (values(d, special=s),)),
    "compare_where_power": (lambda z, w: (z == w, z != z, np.where(z.real > 0, z, w), z ** 2, z.astype(np.complex128),
                                          np.square(w), np.isnan(z), np.isinf(z) | np.isfinite(w)),
                            lambda d, s: (values(d, special=s), values(d, special=s))),
    "sums": (lambda z, w: ((z * np.conj(w)).sum(), z.sum(axis=1), np.sum(z.real * w)), lambda d, s: (values(d, 40).reshape(5, 8), values(d, 40).reshape(5, 8))),
    "normalize": (normalize, lambda d, s: (values(d, 300),)),
    "filter": (filtered, lambda d, s: (values(d, 42).reshape(2, 21), values(d, 42).reshape(2, 21), 1e-3, 1.0)),
    "mixed_real": (lambda x, z: (x * z, x.astype(z.dtype) + 1, np.abs(z * 0.5) > x), lambda d, s: (values(d).real.copy(), values(d))),
}


def _each(result):
    return result if isinstance(result, tuple) else (result,)


@pytest.mark.parametrize("special", [False, True])
@pytest.mark.parametrize("dtype", [np.complex128, np.complex64])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_complex_kernels_as_numpy(name, dtype, special, compiled):
    if special and name in ("sums", "normalize", "filter"):
        pytest.skip("reductions over inf and NaN are covered by the element-wise programs")
    fn, make = PROGRAMS[name]
    args = make(dtype, special)
    run, made = compiled(fn)
    with np.errstate(all="ignore"):
        got, want = run(*args), fn(*args)
    for k, (g, w) in enumerate(zip(_each(got), _each(want), strict=True)):
        assert_same_result(g, w, what=f"{name} result {k} on {np.dtype(dtype)}")
    assert all(not p.fallbacks for p in made), [p.fallbacks for p in made]


def test_complex_update_in_place_reads_the_old_parts(compiled):
    """`z *= w` computes each imaginary part from the real part before its update (pairs.py)."""
    def update(z, w, k):
        z[k] *= w
        z[k] += 0.5j * np.conj(w)
        return z
    z, w = values(np.complex128, 24).reshape(3, 8), values(np.complex128, 8)
    want = update(z.copy(), w, 1)
    run, made = compiled(update)
    got_z = z.copy()
    assert_same_result(run(got_z, w, 1), want, what="update")
    assert_same_result(got_z, want, what="argument")
    assert all(not p.fallbacks for p in made), [p.fallbacks for p in made]


@pytest.mark.parametrize("fn", [lambda z: np.exp(z), lambda z: z.prod(), lambda z: np.sqrt(z), lambda z: z ** 3])
def test_complex_ops_without_a_pair_form_run_through_the_reference_renderer(fn, compiled):
    z = values(np.complex128)
    run, made = compiled(fn)
    with np.errstate(all="ignore"):
        assert_same_result(run(z), fn(z), what="fallback")
    assert any(p.fallbacks for p in made)


def test_every_pair_of_special_values(compiled):
    """Products, squares, quotients and magnitudes of every pair of zeros of both signs, infinities,
    NaN, tiny and huge values (overflowing products included) as NumPy's."""
    parts = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.5, -2.5, 1e-300, 1e300, 3e200])
    z = np.empty(100, np.complex128)
    z.real, z.imag = np.repeat(parts, 10), np.tile(parts, 10)
    zz, ww = (a.ravel() for a in np.meshgrid(z, z))

    def fn(z, w):
        return z * w, np.square(z), z / w, np.abs(z), z ** 2
    run, made = compiled(fn)
    with np.errstate(all="ignore"):
        got, want = run(zz, ww), fn(zz, ww)
    for k, (g, w) in enumerate(zip(got, want, strict=True)):   # parts apart: an infinite part beside a
        assert_same_result(g, w, values=False, what=f"result {k}")   # finite one needs that one bit-equal
        for part in ("real", "imag"):
            assert_same_result(getattr(g, part), getattr(w, part), what=f"result {k}, {part} parts")
    assert all(not p.fallbacks for p in made), [p.fallbacks for p in made]
