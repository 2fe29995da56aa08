"""Whole-array kernels of several stages (a mean, then deviations from it; a max, then a division by
it) split into one kernel a stage (numpile_triton/stages.py), so that each reduction spreads over the
GPU's programs: results as NumPy's, on every dtype a reduction keeps or changes."""

from __future__ import annotations

import numpy as np
import pytest

from numpile.testing import assert_same_result

rng = np.random.default_rng()


def lstsqr(x, y):
    x_avg, y_avg = np.average(x), np.average(y)
    dx, dy = x - x_avg, y - y_avg
    slope = np.sum(dx * dy) / np.sum(dx ** 2)
    return slope, y_avg - slope * x_avg


def scaled_by_max(image):
    out = np.abs(4 * image[1:-1, 1:-1] - image[:-2, 1:-1] - image[2:, 1:-1] - image[1:-1, :-2] - image[1:-1, 2:])
    return out / (max(1.0, np.max(out)) + 1e-9)


PROGRAMS = {
    "lstsqr": (lstsqr, lambda dtype: (rng.random(5000).astype(dtype), rng.random(5000).astype(dtype))),
    "scaled_by_max": (scaled_by_max, lambda dtype: ((rng.random((40, 30, 3)) * 10).astype(dtype),)),
    "standardise": (lambda x: (x - x.mean()) / x.std(), lambda dtype: (rng.standard_normal(3000).astype(dtype),)),
    "shifted_sum": (lambda x: (x - x.min()).sum() * x.max(), lambda dtype: ((rng.random(4000) * 9).astype(dtype),)),
}


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64, np.float16])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_whole_array_stages_split_into_kernels(name, dtype, monkeypatch, compiled):
    from numpile_triton import kernel
    monkeypatch.setattr(kernel, "SPLIT_MIN", 64)
    fn, make = PROGRAMS[name]
    args = make(dtype)
    if name == "lstsqr" and dtype == np.int64:
        args = tuple((a * 100).astype(dtype) for a in make(np.float64))
    run, made = compiled(fn)
    with np.errstate(all="ignore"):
        got, want = run(*args), fn(*args)
    for g, w in zip(*((r,) if not isinstance(r, tuple) else r for r in (got, want)), strict=True):
        assert_same_result(g, w, what=f"{name} on {np.dtype(dtype)}")
    assert all(not p.fallbacks for p in made), [p.fallbacks for p in made]
    kernels = [k for p in made for k in p.program.kernels]
    assert all(not k.outer and len(k.stages) == 1 for k in kernels if any(s.reduce for s in k.stages)), \
        "\n".join(map(str, kernels))
    assert any(p.launches[k].kp.mode == "split" for p in made for k in p.launches), [str(k) for k in kernels]


def test_a_short_whole_array_kernel_stays_one_launch(compiled):
    x = rng.random(50)
    run, made = compiled(lambda x: (x - x.mean()) / x.std())
    assert_same_result(run(x), (x - x.mean()) / x.std(), what="short")
    assert len(made[0].program.kernels) == 1
