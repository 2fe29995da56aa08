"""A program that backend 'eager' compiles to something other than NumPy eager does.

Found by `python -m numpile.fuzz --backend eager --seed 514248164`; the test fails while the bug is there.
"""
# call 5 (shape (4, 1)): result: values differ
# Not equal to tolerance rtol=1e-06, atol=1e-12
#
# Mismatched elements: 1 / 4 (25%)
# Mismatch at index:
#  [0, 0]: -0.38161732906061624 (ACTUAL), -0.25806160066387457 (DESIRED)
# Max absolute difference among violations: 0.12355573
# Max relative difference among violations: 0.47878386
#  ACTUAL: array([[-0.381617],
#        [-0.447499],
#        [-0.359141],
#        [ 0.135985]])
#  DESIRED: array([[-0.258062],
#        [-0.447499],
#        [-0.359141],
#        [ 0.135985]])

from numpile.fuzz.check import Inputs, check_program, make_function

# run after numpile.fuzz.check.PRELUDE (its helpers and the global G), as the fuzzer ran it
f = make_function('''\
def f(x, y, n):
    if n % 2 == 0:
        for c0 in x:
            c0 *= 0.5
            x = np.sin(np.tanh(x))
    else:
        x = x
    return x
''')

INPUTS = Inputs(shape=(1, 1), other=(4, 1), n1=0, n2=0, layout='C', seed=0)


def test_compiled_equals_numpy_eager():
    check_program(f, INPUTS, backend='eager')
