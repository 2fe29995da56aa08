"""Python's math functions in a loop nest (the registry op python_math: math.exp(x) and its kin of
one graph value): the value of the NumPy ufunc that computes the same, and a stop where Python
raises instead (status OVERFLOW: the frame runs again as Python, which raises math domain error
or math range error itself). Each domain is a condition on the argument x and the result r
that holds where Python returns; NaN passes, as Python returns NaN for it."""

from __future__ import annotations

import numpy as np

from numpile.ops.pointwise import PYTHON_MATH

from . import scalar
from .irbuilder import Unlowerable, V, literal
from .nestcall import OVERFLOW

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
