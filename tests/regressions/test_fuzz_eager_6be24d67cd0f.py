"""A program that backend 'eager' compiles to something other than NumPy eager does.

Found by `python -m numpile.fuzz --backend eager --seed 11`; the test fails while the bug is there.
"""
# call 1: compiled raised NameError: name '__o' is not defined, NumPy eager returned

from numpile.fuzz.check import Inputs, check_program, make_function

# run after numpile.fuzz.check.PRELUDE (its helpers and the global G), as the fuzzer ran it
f = make_function('''\
def f(x, y, n):
    for k0 in range(n):
        if n > 2:
            x = x
            y = (x + x)
        else:
            a = x
        if n > 2:
            return y
    return x
''')

INPUTS = Inputs(shape=(1,), other=(1,), n1=4, n2=0, layout='C', seed=0)


def test_compiled_equals_numpy_eager():
    check_program(f, INPUTS, backend='eager')
