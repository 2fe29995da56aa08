"""Nests: a captured loop of element code compiled straight from its Graph as one native function.

Owns the walk of the loop body's Graph into LLVM IR (nest.py: loops, conds, while loops, element
loads and stores, carried scalars), slices inside a nest as loops (slices.py), Python numbers'
semantics there (pynumbers.py), and the entry Python calls (nestcall.py). Pointwise ops go
through the package's one scalar op table (`..scalar`).

May import the package's shared modules (`..scalar`, `..irbuilder`, `..sizes`, `..ndarray`,
`..jit`, `..pycall`, `..team`, ...) and numpile's toolkit; never `..kernels`, `..program` or
`..runner`.
"""
