"""A program that backend 'llvm' compiles to something other than NumPy eager does.

Found by `python -m numpile.fuzz --backend llvm --seed 2127562172`; the test fails while the bug is there.
"""
# call 5 (shape (2,)): compiled raised BackendCompilerFailed: backend 'llvm' (numpile-llvm 0.1.0) failed to compile a graph of 2 ops: NewGuard: s1 == s0 is not guarded
# opcode  name      target         args                         kwargs  meta            source
# ------  --------  -------------  ---------------------------  ------  --------------  -------------------------------------------------
# input   x         x              ()                                   float64[s0]
# input   y         y              ()                                   float64[s1]
# input   n         n              ()                                   python int      <numpile-fuzz-program-488>:27 for k0 in range(n):
# call    loop      loop           (body, 0, n, 1, (x,), (y,))          (float64[s0],)  <numpile-fuzz-program-488>:28 for k1 in range(2):
# call    loop_0    tuple_getitem  (loop, 0)                            float64[s0]     <numpile-fuzz-program-488>:28 for k1 in range(2):
# output  output_1  output         ((loop_0,),)
# body of loop, inputs k0, x_1, y_1:
#     opcode  name        target    args                         kwargs  meta              source
#     ------  ----------  --------  ---------------------------  ------  ----------------  ------------------------------------------------------------------------
#     input   k0          k0        ()                                   python int
#     input   x_1         x         ()                                   float64[s0]
#     input   y_1         y         ()                                   float64[s1]
#     call    getitem     getitem   (x_1, (0 % s0,))                     float64[] scalar  <numpile-fuzz-program-488>:29 x[k1 % len(x)] = x[k1 % len(x)] * 0.5 + k1
#     call    multiply    multiply  (getitem, 0.5)                       float64[] scalar  <numpile-fuzz-program-488>:29 x[k1 % len(x)] = x[k1 % len(x)] * 0.5 + k1
#     call    add         add       (multiply, 0)                        float64[] scalar  <numpile-fuzz-program-488>:29 x[k1 % len(x)] = x[k1 % len(x)] * 0.5 + k1
#     call    setitem     setitem   (x_1, (0 % s0,), add)                float64[s0]       <numpile-fuzz-program-488>:29 x[k1 % len(x)] = x[k1 % len(x)] * 0.5 + k1
#     call    add_1       add       (setitem, y_1)                       float64[s0]       <numpile-fuzz-program-488>:31 a = (a + y)
# ... (6 more lines)

from numpile.fuzz.check import Inputs, check_program, make_function

# run after numpile.fuzz.check.PRELUDE (its helpers and the global G), as the fuzzer ran it
f = make_function('''\
def f(x, y, n):
    for k0 in range(n):
        for k1 in range(2):
            x[k1 % len(x)] = x[k1 % len(x)] * 0.5 + k1
            a = x
            a = (a + y)
    return x
''')

INPUTS = Inputs(shape=(1,), other=(2,), n1=0, n2=1, layout='C', seed=0)


def test_compiled_equals_numpy_eager():
    check_program(f, INPUTS, backend='llvm')
