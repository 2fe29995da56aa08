"""Programs the CuPy fuzz (cupy_fuzz.py) found failing on the GPU, each run as the fuzz ran it: on
CuPy arguments in every layout, then empty, 0-d, and one array passed as both, against NumPy and
CuPy eager. Skipped without a GPU (Triton's interpreter has no CuPy arrays)."""

from __future__ import annotations

import numpy as np
import pytest

import numpile
from cupy_fuzz import check_program
from numpile.fuzz.check import Inputs

FOUND = {   # what went wrong: the program
    # a graph of Python numbers only (the loop's `w0 < 3`) returned a CuPy 0-d array for a Python bool
    "python bool of a loop condition": '''\
def f(x, y, n):
    w0 = 0
    while ((x * G).sum() > 1e-9) and w0 < 3:
        w0 += 1
        np.add(x, np.sign(y), out=x)
    x[...] = y
    return [x, np.arcsin(np.clip(y, -1.0, 1.0)), float(y.mean()) > 0.1]
''',
    # CuPy's ascontiguousarray made 0-d arguments 1-d: results of shape (1,)
    "0-d arguments updated in place": '''\
def f(x, y, n):
    np.multiply(x, 0.5, out=x)
    return x + y, x.copy()
''',
    # an entry traced with two CuPy arrays ran when one array was passed as both (no disjointness guard)
    "one array as both, after two": '''\
def f(x, y, n):
    x[:] += 1.0
    a = y.T.T
    return (a + a), n
''',
    "one array as both, a strided store": '''\
def f(x, y, n):
    x[::2] = np.exp(np.tanh(y))[::2]
    y = (-y)
    return y
''',
    # CuPy's min(axis=-1) of a 0-d array raises AxisError where NumPy's reduces it
    "a 0-d reduction along axis -1": '''\
def f(x, y, n):
    a = np.tanh(x) * y
    b = (a + np.ones_like(a) * 0.5).min(axis=-1, keepdims=True) * 0.25 + y
    return b / (np.abs(x) + 1.0)
''',
    # the loop resumed after the break at copyto took CuPy's 0-d views of y's elements, not NumPy's
    # scalar copies: `c0 *= 0.5` halved y's later elements (the traced first step did not)
    "a loop over elements resumed after a break": '''\
def f(x, y, n):
    for c0 in y:
        c0 *= 0.5
        np.copyto(x, (np.tanh(y) * x.std()))
        a = (np.tanh(y) * (-x))
    return y, x
''',
    # arrays made from a list (no CuPy array among their inputs) came back as CuPy arrays where CuPy
    # eager gives NumPy's; after a break, `c.max(axis=0)` of a 0-d one raised AxisError (CuPy's)
    "an array made from a list, across a break": '''\
def f(x, y, n):
    c = np.asarray((np.tanh(y) * y).tolist())
    if c.sum() > 0.0:
        c = c * 0.5
    return np.sign(c.max(axis=0, keepdims=True) * 0.25), c * 1.5
''',
}


@pytest.mark.parametrize("shape", [(4,), (3, 2)])
@pytest.mark.parametrize("name", FOUND)
def test_found_programs_match_numpy_and_cupy(name, shape, cupy):
    failures = []
    inputs = Inputs(shape=shape, other=shape, n1=1, n2=2, layout="C", seed=7)
    assert check_program(FOUND[name], inputs, cupy, failures.append) == 0, failures


def test_fill_diagonal_of_an_empty_value_leaves_the_array(cupy):
    """CuPy's fill_diagonal with an empty value reads past it: an illegal address, the device
    unusable after it. NumPy writes nothing."""

    def fill(a, v):
        np.fill_diagonal(a, v)
        return a * 2.0
    a = np.random.default_rng(3).standard_normal((4, 4))
    got = numpile.compile(fill)(cupy.asarray(a), cupy.zeros(0))
    np.testing.assert_array_equal(cupy.asnumpy(got), fill(a.copy(), np.zeros(0)))
