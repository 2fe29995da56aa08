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


def run_like_numpy(fn, backend, make_args, graphs=1, calls=2):
    """fn compiled for `backend` and fn itself on copies of the same fresh arguments
    (`make_args(call)`, call = 0, 1, ...): results, the arguments afterwards and exceptions (type
    and message) the same; the number of graphs captured is `graphs` (None: not checked)."""
    if backend not in numpile.list_backends(available_only=True):
        pytest.skip(f"backend {backend!r} is not installed here")
    compiled = numpile.compile(fn, backend=backend)
    for call in range(calls):
        args = make_args(call)
        copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        try:
            with np.errstate(all="ignore"):
                want = fn(*copies)
        except Exception as e:
            with pytest.raises(type(e)) as info:
                compiled(*args)
            assert str(info.value) == str(e)
            continue
        with np.errstate(all="ignore"):
            assert_same(compiled(*args), want)
        for got, expected in zip(args, copies):
            if isinstance(expected, np.ndarray):
                assert_same(got, expected)
    entries = compiled.all_entries()
    assert graphs is None or sum(e.graph is not None for e in entries) == graphs, [e.break_reason for e in entries]
    return compiled
