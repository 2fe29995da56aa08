"""A program that backend 'eager' compiles to something other than NumPy eager does.

Found by `python -m numpile.fuzz --backend eager --seed 3912452779`; the test fails while the bug is there.
"""
# call 1: compiled raised BackendCompilerFailed: backend 'eager' (numpile 0.1.0) failed to compile a graph of 3 ops: KeyError: add_2
# opcode  name          target         args                         kwargs  meta           source
# ------  ------------  -------------  ---------------------------  ------  -------------  -------------------------------------------------------------
# input   x             x              ()                                   float64[1]
# call    multiply_2    multiply       (0, 1)                               python int     <numpile-fuzz-program-706>:35 while (a.sum() > 0) and w0 < 3:
# call    while_loop    while_loop     (body, (multiply_2,), (x,))          (python int,)  <numpile-fuzz-program-706>:35 while (a.sum() > 0) and w0 < 3:
# call    while_loop_0  tuple_getitem  (while_loop, 0)                      python int     <numpile-fuzz-program-706>:35 while (a.sum() > 0) and w0 < 3:
# output  output_7      output         ((add_2,),)
# body of while_loop, inputs w0, x_2:
#     opcode  name       target         args                               kwargs                                      meta              source
#     ------  ---------  -------------  ---------------------------------  ------------------------------------------  ----------------  -------------------------------------------------------------
#     input   w0         w0             ()                                                                             python int
#     input   x_2        x              ()                                                                             float64[1]
#     call    add_1      add            (w0, 1)                                                                        python int        <numpile-fuzz-program-706>:36 w0 += 1
#     call    add_2      add            (x_2, x_2)                                                                     float64[1]        <numpile-fuzz-program-706>:38 a = (a + a)
#     call    sum_1      sum            (add_2,)                           {axis: None, dtype: None, keepdims: False}  float64[] scalar  <numpile-fuzz-program-706>:35 while (a.sum() > 0) and w0 < 3:
#     call    greater_1  greater        (sum_1, 0)                                                                     bool[] scalar     <numpile-fuzz-program-706>:35 while (a.sum() > 0) and w0 < 3:
#     call    cond_2     cond           (greater_1, body, body, (add_1,))                                              (python bool,)    <numpile-fuzz-program-706>:35 while (a.sum() > 0) and w0 < 3:
#     call    cond_2_0   tuple_getitem  (cond_2, 0)                                                                    python bool       <numpile-fuzz-program-706>:35 while (a.sum() > 0) and w0 < 3:
#     output  output_6   output         ((cond_2_0, add_1),)
# ... (24 more lines)

from numpile.fuzz.check import Inputs, check_program, make_function

# run after numpile.fuzz.check.PRELUDE (its helpers and the global G), as the fuzzer ran it
f = make_function('''\
def f(x, y, n):
    a = x
    h = lambda u, s=0.5: u * s + a
    a = h(a)
    a = h(a)
    x = a
    x = a
    x = a
    w0 = 0
    while (a.sum() > 0) and w0 < 3:
        w0 += 1
        x = a
        a = (a + a)
    return a
''')

INPUTS = Inputs(shape=(1,), other=(1,), n1=0, n2=0, layout='C', seed=0)


def test_compiled_equals_numpy_eager():
    check_program(f, INPUTS, backend='eager')
