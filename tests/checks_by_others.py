"""numpy-ml's (ddbourgin/numpy-ml, utils/testing.py) checks of its inputs, asserted before the
work, as written. A module of its own: pytest rewrites the asserts of test modules into code of
its own, which is not what users' asserts compile to."""

import numpy as np


def is_stochastic(X):
    assert np.allclose(np.sum(X, axis=1), np.ones(X.shape[0])), "Array should be stochastic along the columns"
    return np.log(X)


def is_binary(x, y):
    assert np.array_equal(x, x.astype(bool)), "Matrix must be binary"
    return x * 2.0, np.array_equal(x, y), np.array_equal(x, y[:2]), np.allclose(x, y, atol=0.5)
