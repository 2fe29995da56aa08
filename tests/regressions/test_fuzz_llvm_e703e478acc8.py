"""A program that backend 'llvm' compiles to something other than NumPy eager does.

Found by `python -m numpile.fuzz --backend llvm --seed 1`; the test fails while the bug is there.
"""
# call 6 (y is x): result: values differ
# Not equal to tolerance rtol=1e-06, atol=1e-12
#
# Mismatched elements: 3 / 3 (100%)
# Mismatch at indices:
#  [0, 0]: 0.0 (ACTUAL), -16.0 (DESIRED)
#  [1, 0]: 0.0 (ACTUAL), 23.0 (DESIRED)
#  [2, 0]: 0.0 (ACTUAL), 17.0 (DESIRED)
# Max absolute difference among violations: 23.
# Max relative difference among violations: 1.
#  ACTUAL: array([[0.],
#        [0.],
#        [0.]])
#  DESIRED: array([[-16.],
#        [ 23.],
#        [ 17.]])

from numpile.fuzz.check import Inputs, check_program, make_function

# run after numpile.fuzz.check.PRELUDE (its helpers and the global G), as the fuzzer ran it
f = make_function('''\
def f(x, y, n):
    for k0 in range(n):
        y[k0 % len(y)] = y[k0 % len(y)] * 0.5 + k0
        for c1 in [1.5, 0.25]:
            a = x
            a = (a + a)
            x = a
        y -= y
        if k0 % 2 == 1:
            return np.floor(x)
    a = x
    a = a.reshape(-1)[::-1].reshape(x.shape)[:, ::-1]
    a, a = ((x * np.tanh(np.dot(y.ravel(), y.ravel()))), a)[::-1]
    a *= 0.25
    for c2 in (0.5, -1.0, 2.0):
        if len(y) >= 3:
            break
    a = (lambda u: u * 0.5 + 1.0)((a * G))
    return {'p': x, 'q': a}
''')

INPUTS = Inputs(shape=(3, 1), other=(3, 1), n1=3, n2=0, layout='C', seed=93630)


def test_compiled_equals_numpy_eager():
    check_program(f, INPUTS, backend='llvm')
