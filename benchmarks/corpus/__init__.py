"""The kernel corpus of benchmarks/corpus.py: scientific programs in plain NumPy, each with a loop
version for Numba and inputs in two sizes. One module per family; each lists its KERNELS.

Loaded by path (benchmarks/corpus.py's load_kernels), never as `import corpus`: that name is the runner's.
"""

from . import data_mining, deep_learning, elementwise, linear_algebra, medley, physics, solvers, stencils

KERNELS = [k for family in (linear_algebra, solvers, data_mining, medley, stencils, physics, deep_learning,
                                          elementwise)
           for k in family.KERNELS]
