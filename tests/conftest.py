import numpy as np
import pytest

import numpile
from numpile.testing import assert_same  # noqa: F401  (tests import it from here)


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
