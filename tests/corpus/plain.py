"""Corpus functions that must not live in a test module: pytest rewrites the `assert` statements of
test modules (adding locals such as `@py_assert1`), and these are meant to be plain Python."""

import numpy as np


def assert_finite_plain(x):
    y = np.log(np.abs(x) + 1)
    assert np.isfinite(y).all(), "non-finite values"
    return y * 2
