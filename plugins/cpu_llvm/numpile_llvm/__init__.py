"""numpile-llvm: the numpile backend "llvm" (see plugin.py for what numpile loads).

Two compilers share this package's LLVM tooling; program.py decides which runs each step:

- kernels/: the kernel IR of numpile.lowering's schedule to native functions (fused pointwise
  code, reductions, scans, gathers), one per kernel, threaded when large;
- nests/: a captured loop whose body is element code, straight from its Graph to one native
  function (its loops, branches and scalars native; Numba's ground).

Shared by both, at this level: the one scalar op table (scalar.py, with casts.py, complexes.py,
hypot.py, randoms.py, mathlib.py), the IR builder (irbuilder.py), symbolic sizes (sizes.py),
the ndarray object's fields (ndarray.py), the JIT (jit.py), calls from Python (pycall.py), the
thread team (team.py) and the allocator (allocator.py). backend.py is the plugin class;
program.py the driver; runner.py the Python that runs a program.

Imports: the shared modules import only each other and numpile's public toolkit; kernels/ and
nests/ import the shared modules, never each other; program.py and runner.py import both.
"""
