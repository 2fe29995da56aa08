"""Reductions NumPy users reach for beyond sum and max, rendered as Triton kernels (never run on the
host): argmin and argmax along an axis and over the whole array, with NumPy's first-occurrence ties
and first NaN, in each row layout; any and all; min and max with NaN. And np.roll, a gather at
positions the loop indices give, also a Triton kernel."""

from __future__ import annotations

import numpy as np
import pytest

from numpile.testing import assert_same_result

rng = np.random.default_rng()

ARGS = [lambda x: x.argmin(1), lambda x: x.argmax(0), lambda x: (x * 2).argmin(), lambda x: np.argmax(x),
        lambda x: x[:, ::-1].argmin(axis=0), lambda x: x.argmax(axis=-1) + (x.max(1) > 0)]


def values(dtype) -> np.ndarray:
    """(7, 9) of dtype with ties; float32 with NaNs in one row, a row of +inf and one of -inf."""
    x = (rng.standard_normal((7, 9)) * 3).astype(dtype)
    if dtype == np.float32:
        x[2, [3, 5]] = np.nan
        x[4], x[5] = np.inf, -np.inf
    return x


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.uint8, np.bool_, np.float16])
@pytest.mark.parametrize("k", range(len(ARGS)))
def test_argmin_and_argmax_as_numpy_in_every_layout(dtype, k, layout, compiled):
    fn = ARGS[k]
    x = values(dtype)
    run, made = compiled(fn)
    assert_same_result(run(x), fn(x), what=f"{k} on {np.dtype(dtype)}")
    assert all(not p.fallbacks for p in made), [p.fallbacks for p in made]


@pytest.mark.parametrize("fn", [lambda x: (x > 0).any(1), lambda x: (x > -2).all(0), lambda x: np.any(x > 3),
                                lambda x: x.max(1), lambda x: np.min(x, axis=0)])
def test_any_all_and_nan_propagating_min_max(fn, layout, compiled):
    x = values(np.float32)
    run, made = compiled(fn)
    assert_same_result(run(x), fn(x), what="reduction")
    assert all(not p.fallbacks for p in made), [p.fallbacks for p in made]


ROLLS = [lambda x: np.roll(x, 3, axis=1) + np.roll(x, -2, axis=0)[::-1], lambda x: (np.roll(x, 2, axis=1) * x).sum(1),
         lambda g: g + 0.1 * (np.roll(g, 1, 0) + np.roll(g, -1, 0) + np.roll(g, 1, 1) + np.roll(g, -1, 1) - 4 * g)]


@pytest.mark.parametrize("k", range(len(ROLLS)))
def test_rolls_are_triton_kernels(k, layout, compiled):
    x = values(np.float64)
    run, made = compiled(ROLLS[k])
    assert_same_result(run(x), ROLLS[k](x), what=f"roll {k}")
    assert all(not p.fallbacks for p in made), [p.fallbacks for p in made]


def test_gathers_at_argmin_positions_are_triton_kernels(compiled):
    """`symbols[np.argmin(d)]`: positions an argmin wrote lie inside its row (positions.py); a gather
    through an index array the caller passes may be out of range (NumPy's IndexError): the kernel
    checks it (checks.py)."""
    def nearest(E, symbols):
        out = np.zeros(E.shape[0], dtype=E.dtype)
        for i in range(E.shape[0]):
            out[i] = symbols[np.argmin(abs(E[i] - symbols) ** 2)]
        return out
    E, symbols = rng.standard_normal(12) + 1j * rng.standard_normal(12), rng.standard_normal(5) + 0.5j
    run, made = compiled(nearest)
    assert_same_result(run(E, symbols), nearest(E, symbols), what="nearest")
    assert all(not p.fallbacks for p in made), [p.fallbacks for p in made]
    x, idx = rng.standard_normal(9), rng.integers(-9, 9, 4)
    run, made = compiled(lambda x, idx: x[idx] * 2)
    assert_same_result(run(x, idx), x[idx] * 2, what="gather")
    assert all(not p.fallbacks for p in made) and any(k.kp.checked for p in made for k in p.launches.values())
