"""Elementwise ops: NumPy's ufuncs, with broadcasting and NumPy 2 promotion (NEP 50)."""

from __future__ import annotations

import operator

import numpy as np

from .registry import POINTWISE, ArrayMeta, register


def operand_dtype(x):
    """The dtype a ufunc sees for an operand: arrays and NumPy scalars are strong,
    Python scalars are weak (NEP 50) and are passed as their type."""
    if isinstance(x, (ArrayMeta, np.generic, np.ndarray)):
        return x.dtype
    if isinstance(x, bool):  # bool is the lowest kind, so weak and strong agree
        return np.dtype(bool)
    return type(x)


def broadcast_meta_shape(*operands) -> tuple:
    return np.broadcast_shapes(*(tuple(o.shape) for o in operands if isinstance(o, (ArrayMeta, np.generic, np.ndarray))))


def ufunc_meta(ufunc):
    def meta(*operands):
        shape = broadcast_meta_shape(*operands)
        dtypes = tuple(operand_dtype(o) for o in operands) + (None,) * ufunc.nout
        out = ufunc.resolve_dtypes(dtypes)[ufunc.nin:]
        metas = tuple(ArrayMeta(shape, dt, scalar=not shape) for dt in out)
        return metas[0] if ufunc.nout == 1 else metas
    return meta


_UNARY_SIG = {1: lambda x: None, 2: lambda x1, x2: None}


def register_ufunc(ufunc, *, name=None, operators=(), methods=None, doc=""):
    """One row for a ufunc: np.<name>, plus the operator functions and dunder methods that mean it."""
    return register(
        name or ufunc.__name__, POINTWISE,
        impl=ufunc, meta=ufunc_meta(ufunc), signature=_UNARY_SIG[ufunc.nin],
        numpy=(ufunc, *operators), methods=methods, doc=doc or f"np.{ufunc.__name__}",
    )


def _reflected(a, b):
    """Adapter for ndarray.__radd__ and friends: `x.__radd__(y)` is `add(y, x)`."""
    return (b, a), {}


# A few rows; the families are completed in the rest of this module.
register_ufunc(np.add, operators=(operator.add,), methods={"__add__": None, "__radd__": _reflected})
register_ufunc(np.sin)
register_ufunc(np.cos)
