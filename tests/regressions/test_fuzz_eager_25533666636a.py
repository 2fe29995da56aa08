"""A program that backend 'eager' compiles to something other than NumPy eager does.

Found by `python -m numpile.fuzz --backend eager --seed 514248164`; the test fails while the bug is there.
"""
# call 1: result: values differ
# Not equal to tolerance rtol=1e-06, atol=1e-12
#
# Mismatched elements: 4 / 4 (100%)
# Mismatch at indices:
#  [0]: 3.611683537494293 (ACTUAL), 57.786936599908685 (DESIRED)
#  [1]: -0.5136778126608301 (ACTUAL), -8.218845002573282 (DESIRED)
#  [2]: 11.846762407092513 (ACTUAL), 189.5481985134802 (DESIRED)
#  [3]: 3.2784018744486354 (ACTUAL), 52.454429991178166 (DESIRED)
# Max absolute difference among violations: 177.70143611
# Max relative difference among violations: 0.9375
#  ACTUAL: array([ 3.611684, -0.513678, 11.846762,  3.278402])
#  DESIRED: array([ 57.786937,  -8.218845, 189.548199,  52.45443 ])

from numpile.fuzz.check import Inputs, check_program, make_function

# run after numpile.fuzz.check.PRELUDE (its helpers and the global G), as the fuzzer ran it
f = make_function('''\
def f(x, y, n):
    if x.sum() > 0:
        x = x
        for c0 in x:
            c0 *= 0.5
            x = (x + x)[::-1]
            x += x
    else:
        x = x
    return x
''')

INPUTS = Inputs(shape=(4,), other=(1,), n1=0, n2=0, layout='C', seed=0)


def test_compiled_equals_numpy_eager():
    check_program(f, INPUTS, backend='eager')
