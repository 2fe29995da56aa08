"""A program that backend 'llvm' compiles to something other than NumPy eager does.

Found by `python -m numpile.fuzz --backend llvm --seed 1785577802`; the test fails while the bug is there.
"""
# call 1: result[0]: values differ
# Not equal to tolerance rtol=1e-06, atol=1e-12
#
# Mismatched elements: 8 / 8 (100%)
# First 5 mismatches are at indices:
#  [0, 0]: -0.3880099548471587 (ACTUAL), -0.10682425693858927 (DESIRED)
#  [0, 1]: 0.048652393451618314 (ACTUAL), 0.35589936728783433 (DESIRED)
#  [0, 2]: -2.0826173040828166 (ACTUAL), -3.9066400277810356 (DESIRED)
#  [0, 3]: -1.502082743541943 (ACTUAL), -2.3349698343281577 (DESIRED)
#  [1, 0]: 2.5484018228946614 (ACTUAL), 2.6186982473718037 (DESIRED)
# Max absolute difference among violations: 1.82402272
# Max relative difference among violations: 2.63222704
#  ACTUAL: array([[-0.38801 ,  0.048652, -2.082617, -1.502083],
#        [ 2.548402,  2.958763,  1.149203,  1.408216]])
#  DESIRED: array([[-0.106824,  0.355899, -3.90664 , -2.33497 ],
#        [ 2.618698,  3.035574,  0.693198,  1.199994]])

from numpile.fuzz.check import Inputs, check_program, make_function

# run after numpile.fuzz.check.PRELUDE (its helpers and the global G), as the fuzzer ran it
f = make_function('''\
def f(x, y, n):
    acc = []
    a = x[:, ::-1]
    if n > 2:
        x = np.squeeze(np.expand_dims(a.reshape(-1)[::-1].reshape(x.shape), 0), 0)
    else:
        a.fill(0.5)
        for c0 in a:
            c0 *= 0.5
            a = (a * 2 ** -1)
        w1 = 0
        while (a.sum() > 1e-9) and w1 < 3:
            w1 += 1
            a, a = a, a
    with np.errstate(all='ignore'):
        for k2 in range(n):
            a[k2 % len(a)] = a[k2 % len(a)] * 0.5 + k2
            a = (a + x)[::-1]
            b = _mix((a > x).astype(np.float64), x)
            b = b
    x = a
    return x, float(x.sum())
''')

INPUTS = Inputs(shape=(2, 4), other=(1, 5), n1=3, n2=2, layout='rev', seed=8388608)


def test_compiled_equals_numpy_eager():
    check_program(f, INPUTS, backend='llvm')
