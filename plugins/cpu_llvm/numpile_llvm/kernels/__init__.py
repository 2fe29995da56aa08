"""Kernels: a lowering Program's kernels (numpile.lowering's kernel IR) as native functions.

Owns how a kernel runs (plan.py), its LLVM function (function.py: entry, layout checks; body.py:
loops, reductions, scans; expressions.py: the kernel IR's expressions, gathers' bounds checks;
pairwise.py: NumPy's float sums to the bit; streams.py: non-temporal stores), its run-time step by input layout and thread split (step.py), runs of
small kernels as one call (chain.py), and a loop body's iterations as one call (iterations.py).

May import the package's shared modules (`..scalar`, `..irbuilder`, `..sizes`, `..ndarray`,
`..jit`, `..pycall`, `..team`, `..allocator`, ...) and numpile's toolkit; never `..nests`,
`..program` or `..runner`.
"""
