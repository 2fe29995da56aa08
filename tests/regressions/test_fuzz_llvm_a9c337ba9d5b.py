"""A program that backend 'llvm' compiles to something other than NumPy eager does.

Found by `python -m numpile.fuzz --backend llvm --seed 474309399`; the test fails while the bug is there.
"""
# call 1: result: values differ
# Not equal to tolerance rtol=1e-06, atol=1e-12
#
# Mismatched elements: 6 / 6 (100%)
# First 5 mismatches are at indices:
#  [0, 0]: 0.9813131022073036 (ACTUAL), 0.25783508438469516 (DESIRED)
#  [0, 1]: 0.5854812463645919 (ACTUAL), 0.5355225332902424 (DESIRED)
#  [0, 2]: 0.9996639483364147 (ACTUAL), -0.8972644280705957 (DESIRED)
#  [1, 0]: 0.9813131022073036 (ACTUAL), -0.25783508438469516 (DESIRED)
#  [1, 1]: 0.5854812463645919 (ACTUAL), -0.5355225332902424 (DESIRED)
# Max absolute difference among violations: 1.89692838
# Max relative difference among violations: 4.80597196
#  ACTUAL: array([[0.981313, 0.585481, 0.999664],
#        [0.981313, 0.585481, 0.999664]])
#  DESIRED: array([[ 0.257835,  0.535523, -0.897264],
#        [-0.257835, -0.535523,  0.897264]])

from numpile.fuzz.check import Inputs, check_program, make_function

# run after numpile.fuzz.check.PRELUDE (its helpers and the global G), as the fuzzer ran it
f = make_function('''\
def f(x, y, n):
    a = _branchy(x, x[::-1])
    return a
''')

INPUTS = Inputs(shape=(2, 3), other=(1, 1), n1=0, n2=0, layout='T', seed=0)


def test_compiled_equals_numpy_eager():
    check_program(f, INPUTS, backend='llvm')
