"""What a loop nest's walk holds for an array (nest.py, calls.py): `NestArray`, one version of a
root array, as its data pointer, dims and strides; and an integer value as the i64 index every
element address and loop bound is computed in (`as_index`). A scalar is a register (irbuilder's
V) or a constant (Const), a slice expression slices.py's Lazy.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from numpile.lowering import Const

from .. import scalar
from ..irbuilder import I64, Function, Unlowerable, V, literal


@dataclass(frozen=True)
class NestArray:
    """An array of the nest: its data pointer, dims and strides (bytes), and which root it is."""
    root: int
    data: V
    dims: tuple
    strides: tuple
    dtype: np.dtype


def as_index(fn: Function, value) -> V:
    """An integer value as an i64 index."""
    if isinstance(value, Const):
        value = literal(value.value, I64)
    if not isinstance(value, V) or value.dtype.kind not in "iub":
        raise Unlowerable("an index that is not an integer")
    return scalar.cast(fn, V(value.ref, value.dtype), I64)
