"""Running sums and products (np.cumsum, np.cumprod) as Triton kernels (numpile_triton/scans.py):
along the last axis, along the first, of a whole array (one line split over the programs when it
is long), of reversed views, in NumPy's dtypes (bools count as int64, integers wrap)."""

from __future__ import annotations

import numpy as np
import pytest

from numpile.testing import assert_same_result

rng = np.random.default_rng()
pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")   # a backend error run as Python is one

SCANS = [lambda x: np.cumsum(x[::-1], axis=1)[::-1], lambda x: x.cumsum(axis=1), lambda x: np.cumsum(x, axis=0) * 2,
         lambda x: np.cumprod(x * 0.01 + 1 if x.dtype.kind == "f" else x % 3, axis=-1),
         lambda x: (x > 0).cumsum(axis=1), lambda x: np.cumsum(x.T, axis=1) - x.T]


def values(dtype, shape) -> np.ndarray:
    x = rng.standard_normal(shape) * 5
    return x.astype(dtype) if np.dtype(dtype).kind == "f" else rng.integers(-50, 50, shape).astype(dtype)


@pytest.mark.parametrize("shape", [(6, 37), (3, 700)])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int32, np.uint8])
@pytest.mark.parametrize("k", range(len(SCANS)))
def test_scans_as_numpy(k, dtype, shape, monkeypatch, compiled):
    from numpile_triton import kernel, launch
    monkeypatch.setattr(kernel, "SPLIT_MIN", 256)   # the whole-array scans of 2100 elements split
    monkeypatch.setattr(launch, "LOOP_RBLOCK", 16)   # lines walk 16 elements at a time
    fn = SCANS[k]
    x = values(dtype, shape)
    run, made = compiled(fn)
    with np.errstate(all="ignore"):   # integer products overflow, and wrap as NumPy's
        got, want = run(x), fn(x)
    assert_same_result(got, want, what=f"scan {k} of {np.dtype(dtype)}{shape}")
    assert all(not p.fallbacks for p in made), [p.fallbacks for p in made]
    assert sum(len(p.launches) for p in made), "no kernel ran"


LINES = [lambda x: np.cumsum(x[::-1])[::-1], lambda x: np.cumprod(x[2::3] * 0 + 1 if x.dtype.kind == "f" else x % 2 + 1),
         lambda x: ((x > 0).cumsum(), x.cumsum())]


@pytest.mark.parametrize("n", [100, 1000])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.int16])
@pytest.mark.parametrize("k", range(len(LINES)))
def test_whole_array_scans_split_over_programs(k, dtype, n, monkeypatch, compiled):
    from numpile_triton import kernel
    monkeypatch.setattr(kernel, "SPLIT_MIN", 256)
    fn = LINES[k]
    x = values(dtype, (n,))
    run, made = compiled(fn)
    with np.errstate(all="ignore"):
        got, want = run(x), fn(x)
    for g, w in zip(*(r if isinstance(r, tuple) else (r,) for r in (got, want)), strict=True):
        assert_same_result(g, w, what=f"line scan {k} of {np.dtype(dtype)}[{n}]")
    assert all(not p.fallbacks for p in made), [p.fallbacks for p in made]
    modes = {p.launches[name].kp.mode for p in made for name in p.launches}
    assert ("split" in modes) == (n // (3 if k == 1 else 1) > 256), modes


def test_float16_scans_run_through_the_reference_renderer(compiled):
    x = values(np.float16, (4, 9))
    run, made = compiled(lambda x: np.cumsum(x, axis=1))
    assert_same_result(run(x), np.cumsum(x, axis=1), what="float16")
    assert any("float16" in r for p in made for r in p.fallbacks.values())


@pytest.mark.parametrize("shape", [(4, 0), (0, 5), (0,)])
def test_empty_scans(shape, compiled):
    x = values(np.int32, shape)
    fn = lambda x: np.cumsum(x, axis=-1) + np.cumprod(x, axis=0)   # noqa: E731
    run, made = compiled(fn)
    assert_same_result(run(x), fn(x), what=f"empty {shape}")
