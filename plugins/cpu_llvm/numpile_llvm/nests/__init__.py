"""Nests: a captured loop of element code compiled straight from its Graph as one native function.

Owns the walk of the loop body's Graph into LLVM IR (nest.py: the walk, native loops, element
addresses, carried scalars; calls.py: what each op becomes, conds and while loops; values.py: the
nest's arrays and indices), slices inside a nest as loops (slices.py), Python numbers'
semantics there (pynumbers.py), and the entry Python calls (nestcall.py). Pointwise ops go
through the package's one scalar op table (`..scalar`).

May import the package's shared modules (`..scalar`, `..irbuilder`, `..sizes`, `..ndarray`,
`..jit`, `..pycall`, `..team`, ...) and numpile's toolkit; never `..kernels`, `..program` or
`..runner`.
"""
