"""A program that backend 'llvm' compiles to something other than NumPy eager does.

Found by `python -m numpile.fuzz --backend llvm --seed 1`; the test fails while the bug is there.
"""
# call 3 (n=3): x afterwards: values differ
# Not equal to tolerance rtol=1e-06, atol=1e-12
#
# Mismatched elements: 2 / 4 (50%)
# Mismatch at indices:
#  [2]: -1.604975002283879 (ACTUAL), -0.8148516060857531 (DESIRED)
#  [3]: 2.9528449412115885 (ACTUAL), 1.1144026345237734 (DESIRED)
# Max absolute difference among violations: 1.83844231
# Max relative difference among violations: 1.64971102
#  ACTUAL: array([ 1.114403, -0.814852, -1.604975,  2.952845])
#  DESIRED: array([ 1.114403, -0.814852, -0.814852,  1.114403])

import io
import math

import numpy as np
import scipy.special

from numpile.fuzz.check import Inputs, check_program

G = 0.75                # a global the program reads; check_program changes it from call 4 on
_buf = io.StringIO()    # what the program prints


def _mix(u, v):
    return np.sin(u) * 0.5 + v


def _branchy(u, v):
    if u.mean() > v.mean():             # a data-dependent jump inside a callee
        return u - v
    return np.cos(u + v)


def _noisy(u, buf):
    print("noisy", u.shape, file=buf)   # a break inside a callee
    return u * 1.5


def f(x, y, n):
    if x.sum() > 0:
        np.add(x, x.reshape(-1)[::-1].reshape(x.shape), out=x)
    else:
        x = x
    return y


INPUTS = Inputs(shape=(4,), other=(2,), n1=1, n2=3, layout='C', seed=2890)


def test_compiled_equals_numpy_eager():
    check_program(f, INPUTS, backend='llvm')
