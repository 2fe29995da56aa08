"""Python floats and NumPy float64 scalars passed to a compiled function reach its kernels as they
are (ndarray.float_or_array_data reads their value where an ndarray keeps its data pointer): no
np.asarray per argument and call. Steps that need arrays (an extern, a kernel run again for new
strides) still get them; a loop nest takes them by value. Results are NumPy's, dtypes included (a Python float is
weak beside a float32 array, a float64 scalar is not)."""

from __future__ import annotations

import numpy as np
import pytest

import numpile
from numpile.testing import assert_same
from test_llvm import programs

rng = np.random.default_rng()


def hasting(y, a1, a2, b1, b2, d1, d2):   # numpy-benchmarks' hasting, the shape of its arguments
    yprime = np.empty((3,))
    yprime[0] = y[0] * (1. - y[0]) - a1 * y[0] * y[1] / (1. + b1 * y[0])
    yprime[1] = a1 * y[0] * y[1] / (1. + b1 * y[0]) - a2 * y[1] * y[2] / (1. + b2 * y[1]) - d1 * y[1]
    yprime[2] = a2 * y[1] * y[2] / (1. + b2 * y[1]) - d2 * y[2]
    return yprime


def weak_and_strong(x32, a, s):
    return x32 * a + 1.0, x32 * s, np.linspace(0.0, a, 5) * a


def smoothing_steps(x, a, b, steps):   # a loop nest: its scalars by value
    for _ in range(steps):
        y = x * a
        x[1:-1] = b * (y[2:] + y[:-2])
    return x


def _compare(fn, make_args, calls=3):
    compile_llvm, made = programs()
    compiled = numpile.compile(fn, backend=compile_llvm)
    for _ in range(calls):
        args = make_args()
        assert_same(compiled(*args), fn(*args))
    return made


@pytest.mark.parametrize("kind", [float, np.float64])
def test_scalars_reach_kernels_as_they_are(kind):
    made = _compare(hasting, lambda: (rng.random(3), *map(kind, rng.random(6))))
    program = made[-1]   # Python floats are constants in the first, graph inputs once they change
    assert program.float_inputs and "asarray(b1)" not in program.source, program.source


def test_a_float_read_by_numpy_is_an_array_there_and_weak_beside_float32():
    made = _compare(weak_and_strong, lambda: (rng.random(6, dtype=np.float32), float(rng.random()),
                                              np.float64(rng.random())))
    assert any(p.float_inputs for p in made)


def test_strided_arrays_beside_floats_and_a_loop_nest():
    x = rng.random(16)
    compiled = numpile.compile(hasting, backend="llvm")
    for y in (x[:3], x[3:6], x[::5], x[1:10:3]):
        a = tuple(float(v) for v in rng.random(6))
        assert_same(compiled(y, *a), hasting(y, *a))
    compiled = numpile.compile(smoothing_steps, backend="llvm")
    for steps in (6, 9):
        a, b = float(rng.random()), np.float64(rng.random())
        assert_same(compiled(x.copy(), a, b, steps), smoothing_steps(x.copy(), a, b, steps))
