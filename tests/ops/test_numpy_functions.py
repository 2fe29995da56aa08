"""The ops real NumPy programs reached for (copy, flip, outer and ufunc.outer, scans, einsum,
np.linalg, cov, np.ndarray, np.mgrid, roll, diff, indices, fill_diagonal), spelled as programs spell them and traced: each is
captured in one graph with no break, and compiled on eager and llvm equals NumPy eager on
fresh random inputs. The forms that are not captured break with the reason."""

import numpy as np
import pytest

import numpile
from conftest import assert_same, rand


def spd(rng, n, batch=()):
    x = rand(rng, batch + (n, n))
    return x @ x.swapaxes(-1, -2) + n * np.eye(n)


def _updated_after_copy(x):
    y = x.copy()
    x += 1  # the copy keeps the old values
    return y - x


def laplacian(Z):
    return np.roll(Z, 1, axis=0) + np.roll(Z, -1, axis=0) + np.roll(Z, 1, axis=1) + np.roll(Z, -1, axis=1) - 4 * Z


def _diffs(x, y):
    return np.diff(x, axis=0).sum() + np.diff(y, n=2, prepend=0.5, append=y[:, -1:]) * np.diff(x > 0, axis=1)


def _grids(x):
    i, j = np.indices(x.shape)
    r, c = np.indices(x.shape, sparse=True)
    return x * i - j + r * c + np.indices((2,) + x.shape, dtype=np.float32)


def _fill_diagonal(x, v):
    np.fill_diagonal(x, 0.0)
    np.fill_diagonal(x[1:, 1:], v, wrap=True)   # through a view: x sees it
    return x


PROGRAMS = {
    "copy": (lambda x: x.copy() * 2 + np.copy(x, order="F"), lambda rng: (rand(rng, (3, 4)),)),
    "copy_keeps_the_original": (lambda x: _updated_after_copy(x), lambda rng: (rand(rng, (3, 4)),)),
    "flip": (lambda x: np.flip(x, 0) + np.flip(x, (0, 1)) - np.flip(x), lambda rng: (rand(rng, (3, 4)),)),
    "outer": (lambda a, b: np.outer(a, b) + np.multiply.outer(a, b) - np.subtract.outer(b, a).T,
              lambda rng: (rand(rng, (4,)), rand(rng, (5,)))),
    "ufunc_outer_nd": (lambda a, b: np.maximum.outer(a, b).sum(axis=0), lambda rng: (rand(rng, (2, 3)), rand(rng, (4,)))),
    "scans": (lambda x: x.cumsum(axis=1) / np.cumprod(x, 0) + np.cumsum(x).reshape(x.shape),
              lambda rng: (rand(rng, (3, 4)),)),
    "int_scan": (lambda x: np.cumsum(x, axis=0) + x.cumprod(-1), lambda rng: (rand(rng, (3, 4), np.int32),)),
    "einsum": (lambda a, b: np.einsum("ij,jk->ik", a, b) + np.einsum("ij,jk", a, b, optimize=True)
               + np.einsum("ij->i", a)[:, None], lambda rng: (rand(rng, (3, 4)), rand(rng, (4, 5)))),
    "einsum_batched": (lambda a, b: np.einsum("bij,bj->bi", a, b), lambda rng: (rand(rng, (2, 3, 4)), rand(rng, (2, 4)))),
    "solve": (lambda a, b: np.linalg.solve(a, b) + np.linalg.inv(a) @ b, lambda rng: (spd(rng, 4), rand(rng, (4,)))),
    "cholesky": (lambda a: np.linalg.cholesky(a) @ np.linalg.cholesky(a, upper=True) - a, lambda rng: (spd(rng, 3, (2,)),)),
    "norm": (lambda x: np.linalg.norm(x) + np.linalg.norm(x, axis=1).sum() + np.linalg.norm(x, "fro")
             + np.linalg.norm(x, 2), lambda rng: (rand(rng, (3, 4)),)),
    "cov": (lambda x, y: np.cov(x) + np.cov(x, rowvar=False).sum(), lambda rng: (rand(rng, (3, 6)), None)),
    "cov_of_two": (lambda x, y: np.cov(x, y), lambda rng: (rand(rng, (3, 6)), rand(rng, (2, 6)))),
    "cov_weights": (lambda x, w: np.cov(x, fweights=w, aweights=w * 0.5),
                    lambda rng: (rand(rng, (3, 6)), np.arange(1, 7))),
    "ndarray": (lambda x: np.ndarray(x.shape, x.dtype).shape + np.ndarray((2, 3), dtype=np.float32).shape,
                lambda rng: (rand(rng, (3,)),)),
    "roll_stencil": (laplacian, lambda rng: (rand(rng, (9, 7)),)),
    "rolls": (lambda x: np.roll(x, (1, -7), (0, 1)) + np.roll(x, 13) * np.roll(x[::-1], -2, axis=-1),
              lambda rng: (rand(rng, (5, 6), np.int32),)),
    "diff": (_diffs, lambda rng: (rand(rng, (4, 8)), rand(rng, (4, 7)))),
    "int_diff": (lambda x: np.diff(x, 3) + np.diff(x.astype(np.uint8), axis=0)[:1, :5],   # integers wrap as NumPy's
                 lambda rng: (rand(rng, (3, 8), np.int16),)),
    "indices": (_grids, lambda rng: (rand(rng, (3, 5)),)),
    "fill_diagonal": (_fill_diagonal, lambda rng: (rand(rng, (9, 3)), rand(rng, (2,)))),
    "mgrid": (lambda x: np.mgrid[0:3, 0:4] * x + np.mgrid[0:1:4j], lambda rng: (rand(rng, (3, 4)),)),
}


@pytest.mark.parametrize("backend", ["eager", "llvm"])
@pytest.mark.parametrize("name", PROGRAMS)
def test_program(rng, name, backend):
    fn, make_args = PROGRAMS[name]
    explained = numpile.explain(fn)(*make_args(rng))
    assert (explained.graph_count, explained.graph_break_count) == (1, 0), explained.break_reasons
    compiled = numpile.compile(fn, backend=backend)
    for _ in range(2):
        args = make_args(rng)
        assert_same(compiled(*[a.copy() if isinstance(a, np.ndarray) else a for a in args]), fn(*args))


def test_updates_show_through_a_flip(rng):
    def fn(x):
        y = np.flip(x, 1)
        x[0, 0] = 100.0  # y views x: NumPy's y sees the update
        return y * 1

    compiled = numpile.compile(fn, backend="eager")
    x = rand(rng, (2, 3))
    assert_same(compiled(x.copy()), fn(x.copy()))


@pytest.mark.parametrize("fn, reason", [
    (lambda x: np.unique(x, axis=0), "unique: np.unique with axis="),
    (lambda x: np.bincount(x.ravel())[0], "depends on the data: s0 (the length of np.bincount's result"),
    (lambda x: np.einsum("ij->ji", x), "einsum: 'ij->ji' sums nothing"),
    (lambda x: x[0, 0].copy(), "copy() of a NumPy scalar is not captured"),
    (lambda x: np.ndarray((2,), buffer=x), "ndarray: buffer= and strides="),
    (lambda x: np.diff(x, n=0), "diff: n=0 (NumPy returns a itself"),
])
def test_forms_not_captured_break_with_the_reason(rng, fn, reason):
    x = np.abs(rand(rng, (3, 3), np.int64))
    explained = numpile.explain(fn)(x)
    assert explained.graph_break_count >= 1
    assert any(reason in str(b.reason) for b in explained.break_reasons), explained.break_reasons
    assert_same(numpile.compile(fn, backend="eager")(x), fn(x))
