"""Python's math module on array elements (math.exp(-0.5 * d * d), math.sqrt(S[i]), math.floor),
the way Numba code is written: captured in loop bodies, native on llvm, Python's values and
Python's errors (math domain error, math range error) where Python raises them."""

import math

import numpy as np
import pytest

from tests.conftest import rand, run_like_numpy

BACKENDS = ["eager", "llvm"]


def gaussian(x, mu):
    out = np.empty_like(x)
    for i in range(len(x)):
        d = x[i] - mu
        out[i] = math.exp(-0.5 * d * d) / math.sqrt(2 * math.pi) + math.fabs(d)
    return out


def logs_and_roots(x):
    s = 0.0
    for i in range(len(x)):
        s += math.log(x[i]) + math.sqrt(x[i]) + math.log1p(x[i]) + math.log10(x[i]) + math.log2(x[i])
    return s


def trigonometry(x):
    out = np.zeros(len(x))
    for i in range(len(x)):
        v = x[i]
        out[i] = math.sin(v) + math.cos(v) + math.tan(v) + math.atan(v) + math.tanh(v) + math.sinh(v) \
            + math.cosh(v) + math.asinh(v) + math.expm1(v) + math.cbrt(v)
    return out


def unit_interval(x):
    out = np.zeros(len(x))
    for i in range(len(x)):
        out[i] = math.asin(x[i]) + math.acos(x[i]) + math.atanh(x[i] * 0.5)
    return out


def rounded(x):
    out = np.zeros(len(x), dtype=np.int64)
    for i in range(len(x)):
        out[i] = math.floor(x[i] * 3) + math.ceil(x[i]) - math.trunc(-x[i] * 2)
    return out


def float32_elements(x):
    out = np.empty_like(x)
    for i in range(len(x)):
        out[i] = math.exp(x[i]) * 0.5    # a Python float times 0.5, stored into float32
    return out


def euclidean_distance(x1, x2):   # ML-From-Scratch's: builtin pow() of elements, math.sqrt of the total
    distance = 0
    for i in range(len(x1)):
        distance += pow((x1[i] - x2[i]), 2)
    return math.sqrt(distance) + pow(2, 3) + pow(x1, 2).sum()


def positive(rng, n=40):
    return np.abs(rand(rng, (n,))) + 0.1


CASES = [
    (gaussian, lambda rng: (rand(rng, (60,)), 0.3)),
    (logs_and_roots, lambda rng: (positive(rng),)),
    (trigonometry, lambda rng: (rng.uniform(-1.2, 1.2, 50),)),
    (unit_interval, lambda rng: (rng.uniform(-0.99, 0.99, 50),)),
    (rounded, lambda rng: (rand(rng, (30,)),)),
    (float32_elements, lambda rng: (rand(rng, (30,), np.float32),)),
    (euclidean_distance, lambda rng: (rand(rng, (12,)), rand(rng, (12,)))),
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, make", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_captured_whole_and_same_as_python(fn, make, backend, rng):
    run_like_numpy(fn, backend, lambda call: make(rng), graphs=1, calls=3)


def sqrt_each(x):
    s = 0.0
    for i in range(len(x)):
        s += math.sqrt(x[i])
    return s


def exp_each(x):
    s = 0.0
    for i in range(len(x)):
        s += math.exp(x[i])
    return s


def sin_each(x):
    s = 0.0
    for i in range(len(x)):
        s += math.sin(x[i])
    return s


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("fn, bad", [
    (sqrt_each, -1.0),        # ValueError: math domain error
    (exp_each, 1000.0),       # OverflowError: math range error
    (sin_each, np.inf),       # ValueError: math domain error
    (logs_and_roots, 0.0),    # ValueError: math domain error (log of 0)
], ids=["sqrt", "exp", "sin", "log"])
def test_pythons_errors_where_python_raises(fn, bad, backend, rng):
    def make(call):
        x = positive(rng, 12)
        if call:              # the first call compiles on good values; the next ones meet the bad one
            x[call * 3] = bad
        return (x,)
    run_like_numpy(fn, backend, make, graphs=None, calls=3)


def test_nan_passes_as_in_python(rng):
    x = positive(rng, 8)
    x[2] = np.nan
    run_like_numpy(logs_and_roots, "llvm", lambda call: (x.copy(),), graphs=1)
