"""Python numbers in a loop nest (nest.py): Python int arithmetic, checked where its result would
leave int64; int() of a float; Python's math functions (the registry op python_math); and a Python
int meeting a NumPy integer of another dtype. Each computes what NumPy or Python would and stops
(status OVERFLOW: the frame runs again as Python, which raises) where Python or NumPy raises
instead: an int past int64, math domain error or math range error, a Python int that does not fit
the NumPy dtype it meets (NEP 50's OverflowError)."""

from __future__ import annotations

import numpy as np

from numpile.lowering import Const
from numpile.ops.pointwise import PYTHON_MATH

from .. import scalar
from ..irbuilder import BOOL, I64, Unlowerable, V, literal
from .nestcall import OVERFLOW


def python_operand(o):
    """An operand of Python arithmetic (a weak value or a Python constant) as the NumPy value
    Python's result agrees with: an int64, float64 or bool."""
    if isinstance(o, V):
        return V(o.ref, o.dtype)
    return Const(o.value, np.dtype(np.int64) if type(o.value) is int else np.dtype(type(o.value)))


def _int64(fn, o) -> V:
    return literal(o.value, I64) if isinstance(o, Const) else scalar.cast(fn, V(o.ref, o.dtype), I64)


def checked(nest, n, operands: list) -> V:
    """Python int arithmetic (scalar.PYTHON_INT): int64, stopping where Python's result would not fit."""
    fn = nest.fn
    a, b = ([literal(0, I64)] if n.target == "negative" else []) + [_int64(fn, o) for o in operands]
    value, overflow = scalar.python_int(fn, n.target, a, b)
    nest.check(fn.binary("xor", overflow, literal(True, BOOL)), OVERFLOW)
    return V(value.ref, I64, True)


def fitted(nest, operands: list) -> list:
    """Operands of a NumPy op where a Python int (a weak int64 value) meets NumPy integers of
    another dtype (`(crc & 1) ^ (byte & 1)` with byte a uint8): NEP 50 computes in theirs, raising
    where the Python int does not fit; here the int is range-checked and converted."""
    strong = [o.dtype for o in operands if isinstance(o, (V, Const)) and o.dtype is not None
              and not (isinstance(o, V) and o.weak)]
    if not strong or any(d.kind not in "iu" for d in strong):
        return operands
    dtype = np.result_type(*strong)
    if dtype == np.int64:
        return operands
    fn, info, out = nest.fn, np.iinfo(dtype), []
    for o in operands:
        if isinstance(o, V) and o.weak and o.dtype == np.int64:
            high = min(int(info.max), np.iinfo(np.int64).max)   # an int64 never passes uint64's top
            fits = fn.binary("and", fn.compare("icmp", "sge", o, literal(int(info.min), I64)),
                             fn.compare("icmp", "sle", o, literal(high, I64)))
            nest.check(fits, OVERFLOW)
            o = scalar.cast(fn, V(o.ref, o.dtype), dtype)
        out.append(o)
    return out


def python_int(nest, n, env: dict, sizes) -> V:
    """int() of a float: truncated, stopping where Python raises or the int leaves int64."""
    x = nest.operand(n.args[0], env, sizes)
    if not isinstance(x, V):
        raise Unlowerable("int() of a constant in a loop nest")
    fn = nest.fn
    # |x| < 2**63: one compare (false for NaN and inf); -2**63 itself stops too, and Python gets it right
    fits = fn.compare("fcmp", "olt", fn.intrinsic("fabs", [x], x.dtype), literal(2.0**63, x.dtype))
    nest.check(fits, OVERFLOW)
    return V(fn.convert("fptosi", x, I64).ref, I64, True)


# -- Python's math functions: each one's domain, a condition on x and the result r that holds where
# Python returns (NaN passes: Python returns NaN for it) ------------------------------------------
F64 = np.dtype(np.float64)


def _above(bound: float, inclusive: bool = False):
    """x > bound (x >= bound), or NaN."""
    return lambda fn, x, r: fn.compare("fcmp", "uge" if inclusive else "ugt", x, literal(bound, F64))


def _within_one(inclusive: bool):
    """|x| <= 1 (|x| < 1), or NaN."""
    return lambda fn, x, r: fn.compare("fcmp", "ule" if inclusive else "ult", fn.intrinsic("fabs", [x], F64), literal(1.0, F64))


def _no_overflow(fn, x, r):
    """A finite x gives a finite result (math range error), or x itself is not finite."""
    finite = lambda v: scalar.emit(fn, "isfinite", [v], {}, np.dtype(bool))  # noqa: E731
    return fn.binary("or", finite(r), fn.binary("xor", finite(x), literal(True, np.dtype(bool))))


def _finite(fn, x, r):
    """sin, cos, tan of an infinity: math domain error."""
    return fn.binary("xor", scalar.emit(fn, "isinf", [x], {}, np.dtype(bool)), literal(True, np.dtype(bool)))


DOMAINS = {
    "exp": _no_overflow, "expm1": _no_overflow, "sinh": _no_overflow, "cosh": _no_overflow,
    "log": _above(0.0), "log2": _above(0.0), "log10": _above(0.0), "log1p": _above(-1.0),
    "sqrt": _above(0.0, inclusive=True), "acosh": _above(1.0, inclusive=True),
    "sin": _finite, "cos": _finite, "tan": _finite,
    "asin": _within_one(inclusive=True), "acos": _within_one(inclusive=True), "atanh": _within_one(inclusive=False),
}


def python_math(nest, n, env: dict, sizes) -> V:
    x, name = nest.operand(n.args[0], env, sizes), n.args[1]
    if not isinstance(x, V):
        raise Unlowerable(f"math.{name}() of a constant in a loop nest")
    fn = nest.fn
    x = scalar.cast(fn, x, F64)
    r = scalar.emit(fn, PYTHON_MATH[name], [x], {}, F64)
    if name in DOMAINS:
        nest.check(DOMAINS[name](fn, x, r), OVERFLOW)
    return V(r.ref, F64, True)
