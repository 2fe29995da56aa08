"""The dtypes NumPy computes a ufunc in, for operands of the kernel IR: shared by renderers."""

from __future__ import annotations

import numpy as np

from ..ops.registry import python_scalar_type
from .ir import Const


def ufunc_loop(name: str, operands: list) -> tuple:
    """NumPy's loop for ufunc `name` on these operands (Consts, or values with `dtype` and `weak`):
    (input dtypes, output dtype). A weak value or a Const without a dtype is a Python scalar
    (NEP 50). TypeError or ValueError where NumPy has no such loop."""
    def dtype_of(o):
        if isinstance(o, Const):
            if o.dtype is not None:
                return np.dtype(o.dtype)
            return np.dtype(bool) if isinstance(o.value, (bool, np.bool_)) else type(o.value)
        return python_scalar_type(o.dtype) if o.weak else o.dtype
    ufunc = getattr(np, name, None)
    if not isinstance(ufunc, np.ufunc):
        raise TypeError(f"{name} is not a NumPy ufunc")
    types = tuple(dtype_of(o) for o in operands)
    if not any(isinstance(t, np.dtype) for t in types):   # Python arithmetic (`i < j - 1`): Python's result
        types = tuple(map(np.dtype, types))                # is NumPy's on int64, float64, bool (the tracer bounds it)
    loop = ufunc.resolve_dtypes(types + (None,))
    return loop[:-1], loop[-1]
