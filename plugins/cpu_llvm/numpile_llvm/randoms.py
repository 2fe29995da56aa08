"""random_bits inline (ops/draws.py): splitmix64's finaliser in i64 arithmetic, which wraps as
NumPy's uint64 does."""

from __future__ import annotations

import numpy as np

from numpile.ops.draws import FINAL, GOLDEN, MIX

from .casts import cast
from .irbuilder import Function, V, literal

_U64 = np.dtype(np.uint64)


def random_bits(fn: Function, operands: list, out: np.dtype) -> V:
    key, counter = (cast(fn, v, _U64) for v in operands)
    z = fn.binary("add", key, fn.binary("mul", fn.binary("add", counter, literal(1, _U64)), literal(GOLDEN, _U64)))
    for shift, multiplier in MIX:
        z = fn.binary("mul", fn.binary("xor", z, fn.binary("lshr", z, literal(shift, _U64))), literal(multiplier, _U64))
    return fn.binary("xor", z, fn.binary("lshr", z, literal(FINAL, _U64)))
