"""A program that backend 'llvm' compiles to something other than NumPy eager does.

Found by `python -m numpile.fuzz --backend llvm --seed 1`; the test fails while the bug is there.
"""
# call 6 (y is x): result[0]: values differ
# Not equal to tolerance rtol=1e-06, atol=1e-12
#
# Mismatched elements: 2 / 8 (25%)
# Mismatch at indices:
#  [1, 2]: 2.723593488599418 (ACTUAL), 2.74361501802192 (DESIRED)
#  [1, 3]: -0.8928811919423691 (ACTUAL), -0.2012248859199049 (DESIRED)
# Max absolute difference among violations: 0.69165631
# Max relative difference among violations: 3.43723045
#  ACTUAL: array([[-1.421629,  1.704488,  0.706893,  1.991766],
#        [ 0.201225, -2.743615,  2.723593, -0.892881]])
#  DESIRED: array([[-1.421629,  1.704488,  0.706893,  1.991766],
#        [ 0.201225, -2.743615,  2.743615, -0.201225]])

from numpile.fuzz.check import Inputs, check_program, make_function

# run after numpile.fuzz.check.PRELUDE (its helpers and the global G), as the fuzzer ran it
f = make_function('''\
def f(x, y, n):
    acc = []
    w0 = 0
    while (x[::-1].mean() > x[:, ::-1].mean() or n > 2) and w0 < 3:
        w0 += 1
        if n > 2:
            break
        a = ((x * 2 ** -1) * 2 ** -1)
        a = a
    try:
        x += x
    except ZeroDivisionError:
        pass
    w1 = 0
    while w1 < n:
        w1 += 1
        acc.append(np.fmax(x, y).sum())
    b = y
    try:
        y[-1] -= x.reshape(-1)[::-1].reshape(x.shape)[0]
    except ZeroDivisionError:
        pass
    return b, acc
''')

INPUTS = Inputs(shape=(2, 4), other=(1, 4), n1=0, n2=3, layout='C', seed=1)


def test_compiled_equals_numpy_eager():
    check_program(f, INPUTS, backend='llvm')
