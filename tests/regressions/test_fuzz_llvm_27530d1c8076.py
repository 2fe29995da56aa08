"""A program that backend 'llvm' compiles to something other than NumPy eager does.

Found by `python -m numpile.fuzz --backend llvm --seed 1`; the test fails while the bug is there.
"""
# call 5 (shape (2,)): result: values differ
# Not equal to tolerance rtol=1e-06, atol=1e-12
#
# Mismatched elements: 1 / 2 (50%)
# Mismatch at index:
#  [1]: -1.7271077062851123 (ACTUAL), -0.5616862352390598 (DESIRED)
# Max absolute difference among violations: 1.16542147
# Max relative difference among violations: 2.07486208
#  ACTUAL: array([ 0.561686, -1.727108])
#  DESIRED: array([ 0.561686, -0.561686])

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
    x = x
    x -= x.reshape(-1)[::-1].reshape(x.shape)
    return x


INPUTS = Inputs(shape=(1,), other=(2,), n1=0, n2=0, layout='C', seed=0)


def test_compiled_equals_numpy_eager():
    check_program(f, INPUTS, backend='llvm')
