"""A program that backend 'llvm' compiles to something other than NumPy eager does.

Found by `python -m numpile.fuzz --backend llvm --seed 1008366479`; the test fails while the bug is there.
"""
# call 5 (shape (2,)): result: values differ
# Not equal to tolerance rtol=1e-06, atol=1e-12
#
# Mismatched elements: 1 / 2 (50%)
# Mismatch at index:
#  [1]: -9.407469769504285 (ACTUAL), -3.5383134137060903 (DESIRED)
# Max absolute difference among violations: 5.86915636
# Max relative difference among violations: 1.65874406
#  ACTUAL: array([-3.538313, -9.40747 ])
#  DESIRED: array([-3.538313, -3.538313])

from numpile.fuzz.check import Inputs, check_program, make_function

# run after numpile.fuzz.check.PRELUDE (its helpers and the global G), as the fuzzer ran it
f = make_function('''\
def f(x, y, n):
    try:
        np.add(x, x.reshape(-1)[::-1].reshape(x.shape), out=x)
        x += x
    except ZeroDivisionError:
        pass
    return x
''')

INPUTS = Inputs(shape=(1,), other=(2,), n1=0, n2=0, layout='C', seed=0)


def test_compiled_equals_numpy_eager():
    check_program(f, INPUTS, backend='llvm')
