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

from numpile.fuzz.check import Inputs, check_program, make_function

# run after numpile.fuzz.check.PRELUDE (its helpers and the global G), as the fuzzer ran it
f = make_function('''\
def f(x, y, n):
    if x.sum() > 0:
        np.add(x, x.reshape(-1)[::-1].reshape(x.shape), out=x)
    else:
        x = x
    return y
''')

INPUTS = Inputs(shape=(4,), other=(2,), n1=1, n2=3, layout='C', seed=2890)


def test_compiled_equals_numpy_eager():
    check_program(f, INPUTS, backend='llvm')
