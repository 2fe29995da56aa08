"""A program that backend 'llvm' compiles to something other than NumPy eager does.

Found by `python -m numpile.fuzz --backend llvm --seed 7`; the test fails while the bug is there.
"""
# call 3 (n=4): compiled raised BackendCompilerFailed: backend 'llvm' (numpile-llvm 0.1.0) failed to compile a graph of 3 ops: AttributeError: 'float' object has no attribute 'dtype'
# opcode  name       target         args                         kwargs  meta           source
# ------  ---------  -------------  ---------------------------  ------  -------------  -------------------------------------------------
# input   x          x              ()                                   float64[5]
# input   n          n              ()                                   python int     <numpile-fuzz-program-244>:27 for k0 in range(n):
# call    loop       loop           (body, 0, n, 1, (x,), (n,))          (float64[5],)  <numpile-fuzz-program-244>:29 while w1 < n:
# call    loop_0     tuple_getitem  (loop, 0)                            float64[5]     <numpile-fuzz-program-244>:29 while w1 < n:
# call    greater_2  greater        (n, 2)                               python bool    <numpile-fuzz-program-244>:34 if n > 2:
# output  output_12  output         ((loop_0, greater_2),)
# body of loop, inputs k0, x_1, n_4:
#     opcode  name       target         args                            kwargs  meta                      source
#     ------  ---------  -------------  ------------------------------  ------  ------------------------  -------------------------------------------
#     input   k0         k0             ()                                      python int
#     input   x_1        x              ()                                      float64[5]
#     input   n_4        n              ()                                      python int
#     call    less       less           (0, n_4)                                python bool               <numpile-fuzz-program-244>:29 while w1 < n:
#     call    cond_4     cond           (less, body, body, (x_1, n_4))          (python int, float64[5])  <numpile-fuzz-program-244>:29 while w1 < n:
#     call    cond_4_0   tuple_getitem  (cond_4, 0)                             python int                <numpile-fuzz-program-244>:29 while w1 < n:
#     call    cond_4_1   tuple_getitem  (cond_4, 1)                             float64[5]                <numpile-fuzz-program-244>:29 while w1 < n:
#     output  output_11  output         ((cond_4_1,),)
# ... (64 more lines)

from numpile.fuzz.check import Inputs, check_program, make_function

# run after numpile.fuzz.check.PRELUDE (its helpers and the global G), as the fuzzer ran it
f = make_function('''\
def f(x, y, n):
    for k0 in range(n):
        w1 = 0
        while w1 < n:
            w1 += 1
            x[::2] = x[::2]
            a = (x * 0.5)
            a = _branchy((a + a), np.clip(a, -1.0, 1.0))
    if n > 2:
        return {'p': np.clip(x, -1.0, 0.5), 'q': y}
    b = x.T.T
    return (np.zeros(x.shape) + x), float(x.sum())
''')

INPUTS = Inputs(shape=(5,), other=(5,), n1=2, n2=4, layout='C', seed=5791)


def test_compiled_equals_numpy_eager():
    check_program(f, INPUTS, backend='llvm')
