"""The ops real NumPy programs reached for (copy, flip, outer and ufunc.outer, scans, einsum,
np.linalg, cov, np.ndarray, np.mgrid), spelled as programs spell them and traced: each is
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
])
def test_forms_not_captured_break_with_the_reason(rng, fn, reason):
    x = np.abs(rand(rng, (3, 3), np.int64))
    explained = numpile.explain(fn)(x)
    assert explained.graph_break_count >= 1
    assert any(reason in str(b.reason) for b in explained.break_reasons), explained.break_reasons
    assert_same(numpile.compile(fn, backend="eager")(x), fn(x))
