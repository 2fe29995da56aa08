"""A program that backend 'llvm' compiles to something other than NumPy eager does.

Found by `python -m numpile.fuzz --backend llvm --seed 3630001503`; the test fails while the bug is there.
"""
# call 1: compiled raised BackendCompilerFailed: backend 'llvm' (numpile-llvm 0.1.0) failed to compile a graph of 4 ops: TypeError: 'NoneType' object is not subscriptable
# opcode  name       target         args            kwargs  meta          source
# ------  ---------  -------------  --------------  ------  ------------  ---------------------------------------------------------------------
# input   x          x              ()                      float64[1]
# call    greater    greater        (x, 0)                  bool[1]       <numpile-fuzz-program-112>:27 a = x * (len(np.nonzero(x > 0)[0]) + 1)
# call    nonzero    nonzero        (greater,)              (int64[s0],)  <numpile-fuzz-program-112>:27 a = x * (len(np.nonzero(x > 0)[0]) + 1)
# call    nonzero_0  tuple_getitem  (nonzero, 0)            int64[s0]     <numpile-fuzz-program-112>:27 a = x * (len(np.nonzero(x > 0)[0]) + 1)
# call    multiply   multiply       (x, s0 + 1)             float64[1]    <numpile-fuzz-program-112>:27 a = x * (len(np.nonzero(x > 0)[0]) + 1)
# output  output     output         ((multiply,),), NumPy eager returned

from numpile.fuzz.check import Inputs, check_program, make_function

# run after numpile.fuzz.check.PRELUDE (its helpers and the global G), as the fuzzer ran it
f = make_function('''\
def f(x, y, n):
    a = x * (len(np.nonzero(x > 0)[0]) + 1)
    return a
''')

INPUTS = Inputs(shape=(1,), other=(1,), n1=0, n2=0, layout='C', seed=0)


def test_compiled_equals_numpy_eager():
    check_program(f, INPUTS, backend='llvm')
