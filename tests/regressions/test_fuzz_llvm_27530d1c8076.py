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

from numpile.fuzz.check import Inputs, check_program, make_function

# run after numpile.fuzz.check.PRELUDE (its helpers and the global G), as the fuzzer ran it
f = make_function('''\
def f(x, y, n):
    x = x
    x -= x.reshape(-1)[::-1].reshape(x.shape)
    return x
''')

INPUTS = Inputs(shape=(1,), other=(2,), n1=0, n2=0, layout='C', seed=0)


def test_compiled_equals_numpy_eager():
    check_program(f, INPUTS, backend='llvm')
