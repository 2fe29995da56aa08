import numpy as np
import pytest

import numpile


def assert_same(got, want, path="result"):
    """Compiled result == NumPy eager: same Python structure, array types, dtypes, shapes, values."""
    assert type(got) is type(want), f"{path}: type {type(got).__name__} != {type(want).__name__}"
    if isinstance(want, dict):
        assert list(got) == list(want), f"{path}: keys {list(got)} != {list(want)}"
        for k in want:
            assert_same(got[k], want[k], f"{path}[{k!r}]")
    elif isinstance(want, (list, tuple)):
        assert len(got) == len(want), f"{path}: length {len(got)} != {len(want)}"
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, f"{path}[{i}]")
    elif isinstance(want, (np.ndarray, np.generic)):
        assert got.dtype == want.dtype, f"{path}: dtype {got.dtype} != {want.dtype}"
        assert got.shape == want.shape, f"{path}: shape {got.shape} != {want.shape}"
        if want.dtype.kind in "fc":
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-12, equal_nan=True, err_msg=path)
        else:
            np.testing.assert_array_equal(got, want, err_msg=path)
    else:
        assert got == want, f"{path}: {got!r} != {want!r}"


@pytest.fixture
def rng():
    return np.random.default_rng()


@pytest.fixture(autouse=True)
def _fresh_numpile():
    numpile.reset()
    yield
    numpile.reset()


def rand(rng, shape, dtype=np.float64):
    """Random non-zero data of a dtype."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return np.asarray(rng.random(shape) < 0.5)
    if dtype.kind in "iu":
        return np.asarray(rng.integers(1, 50, size=shape), dtype=dtype)
    return np.asarray(rng.standard_normal(shape) + 0.1, dtype=dtype)
