"""Elementwise ops: NumPy's single-output ufuncs, and where, clip, round, astype.

Results broadcast their operands. Dtypes follow NumPy 2 promotion (NEP 50: Python
scalars are weak), read off the same NumPy function applied to probes (meta.py), so
NumPy's value-based refusals (an out-of-range Python int, an integer to a negative
integer power) are raised at trace time too.
"""

from __future__ import annotations

import operator

import numpy as np

from .meta import as_meta, broadcast_shapes, probe_call, shape_of
from .registry import POINTWISE, ArrayMeta, reflected, register

# The single-output elementwise ufuncs. Not here: the two-output divmod, modf, frexp (rows
# of results.py), isnat (datetimes only), and the generalized ufuncs matmul (a row of
# products.py), vecdot, matvec, vecmat.
UFUNCS = (
    # arithmetic
    np.add, np.subtract, np.multiply, np.divide, np.floor_divide, np.remainder, np.fmod,
    np.power, np.float_power, np.negative, np.positive, np.absolute, np.fabs, np.sign,
    np.reciprocal, np.square, np.sqrt, np.cbrt, np.conjugate, np.heaviside, np.gcd, np.lcm,
    # exponents and logarithms
    np.exp, np.exp2, np.expm1, np.log, np.log2, np.log10, np.log1p, np.logaddexp,
    np.logaddexp2, np.ldexp,
    # trigonometric and angles
    np.sin, np.cos, np.tan, np.arcsin, np.arccos, np.arctan, np.arctan2, np.hypot,
    np.deg2rad, np.rad2deg, np.degrees, np.radians,
    # hyperbolic
    np.sinh, np.cosh, np.tanh, np.arcsinh, np.arccosh, np.arctanh,
    # rounding
    np.floor, np.ceil, np.trunc, np.rint,
    # floating-point inspection and manipulation
    np.copysign, np.nextafter, np.spacing, np.signbit, np.isnan, np.isinf, np.isfinite,
    # comparison, and elementwise extrema
    np.greater, np.greater_equal, np.less, np.less_equal, np.equal, np.not_equal,
    np.maximum, np.minimum, np.fmax, np.fmin,
    # logical
    np.logical_and, np.logical_or, np.logical_xor, np.logical_not,
    # bitwise
    np.bitwise_and, np.bitwise_or, np.bitwise_xor, np.invert, np.left_shift, np.right_shift,
    np.bitwise_count,
)

# Binary operators: ufunc -> (operator functions, dunder stem); ndarray has __<stem>__
# and the reflected __r<stem>__. Builtin pow(x, y) of arrays is x ** y (with a modulus, Python's).
BINARY_OPERATORS = {
    np.add: ((operator.add,), "add"), np.subtract: ((operator.sub,), "sub"),
    np.multiply: ((operator.mul,), "mul"), np.divide: ((operator.truediv,), "truediv"),
    np.floor_divide: ((operator.floordiv,), "floordiv"), np.remainder: ((operator.mod,), "mod"),
    np.power: ((operator.pow, pow), "pow"), np.bitwise_and: ((operator.and_,), "and"),
    np.bitwise_or: ((operator.or_,), "or"), np.bitwise_xor: ((operator.xor,), "xor"),
    np.left_shift: ((operator.lshift,), "lshift"), np.right_shift: ((operator.rshift,), "rshift"),
}
# Comparisons have no reflected dunders: Python itself turns `2 < x` into `x > 2`.
COMPARISONS = {
    np.less: (operator.lt, "lt"), np.less_equal: (operator.le, "le"),
    np.equal: (operator.eq, "eq"), np.not_equal: (operator.ne, "ne"),
    np.greater: (operator.gt, "gt"), np.greater_equal: (operator.ge, "ge"),
}
UNARY_OPERATORS = {
    np.negative: ((operator.neg,), "neg"), np.positive: ((operator.pos,), "pos"),
    np.invert: ((operator.invert, operator.inv), "invert"),
    np.absolute: ((operator.abs, abs), "abs"),
}
# ufunc -> (operator functions, ndarray methods) that mean it
SPELLINGS = {
    **{u: (fns, {f"__{stem}__": None, f"__r{stem}__": reflected}) for u, (fns, stem) in BINARY_OPERATORS.items()},
    **{u: ((fn,), {f"__{stem}__": None}) for u, (fn, stem) in COMPARISONS.items()},
    **{u: (fns, {f"__{stem}__": None}) for u, (fns, stem) in UNARY_OPERATORS.items()},
    np.conjugate: ((), {"conj": None, "conjugate": None}),
}


def elementwise_meta(fn, *, scalar: bool = True):
    """Meta of an elementwise NumPy function: the dtype (or NumPy's refusal) of fn on probes,
    the broadcast shape of every operand; a NumPy scalar for a 0-d result where `scalar`."""
    def meta(*args, **kwargs):
        dtype = probe_call(fn, *args, **kwargs).dtype
        shape = broadcast_shapes(*(shape_of(v) for v in (*args, *kwargs.values())))
        return ArrayMeta(shape, dtype, scalar=scalar and not shape)
    return meta


_SIGNATURES = {1: lambda x: None, 2: lambda x1, x2: None}


def register_ufunc(ufunc, *, name=None, operators=(), methods=None, doc=""):
    """One row for a ufunc: np.<name>, plus the operator functions and dunder methods that mean it."""
    return register(
        name or ufunc.__name__, POINTWISE,
        impl=ufunc, meta=elementwise_meta(ufunc), signature=_SIGNATURES[ufunc.nin],
        numpy=(ufunc, *operators), methods=methods, doc=doc or f"np.{ufunc.__name__}",
    )


for _ufunc in UFUNCS:
    _operators, _methods = SPELLINGS.get(_ufunc, ((), {}))
    register_ufunc(_ufunc, operators=_operators, methods=_methods)


# -- where ---------------------------------------------------------------------------------

def _where_sig(condition, *xy): ...


_where_values = elementwise_meta(np.where, scalar=False)  # np.where always returns an ndarray


def _where_meta(condition, *xy):
    if not xy:
        raise NotImplementedError("the one-argument form where(condition) (the indices of nonzero "
                                  "elements: a data-dependent shape) is not supported; use where(condition, x, y)")
    return _where_values(condition, *xy)


register("where", POINTWISE, impl=np.where, meta=_where_meta, signature=_where_sig,
         numpy=(np.where,), doc="np.where(condition, x, y)")


# -- clip ----------------------------------------------------------------------------------

def _clip_sig(a, a_min=None, a_max=None): ...


_ABSENT = object()  # tells "not passed" from an explicit None, as np.clip's own _NoValue does


def _clip_call(a, a_min=_ABSENT, a_max=_ABSENT, *, min=_ABSENT, max=_ABSENT):
    """np.clip(a, min=.., max=..) (NumPy 2.1's array-API names) as np.clip(a, a_min, a_max).
    The mixes NumPy refuses (a_min without a_max, a_min with min=) are refused here too."""
    if a_min is _ABSENT and a_max is _ABSENT:
        return (a, None if min is _ABSENT else min, None if max is _ABSENT else max), {}
    if a_min is _ABSENT or a_max is _ABSENT or min is not _ABSENT or max is not _ABSENT:
        raise TypeError("clip() takes both a_min and a_max, or min= and max=")
    return (a, a_min, a_max), {}


def _clip_method(a, min=None, max=None):
    return (a, min, max), {}


register("clip", POINTWISE, impl=np.clip, meta=elementwise_meta(np.clip), signature=_clip_sig,
         numpy=(np.clip,), methods={"clip": _clip_method}, adapter=_clip_call, doc="np.clip")


# -- round ---------------------------------------------------------------------------------

def _round_sig(a, decimals=0): ...


register("round", POINTWISE, impl=np.round, meta=elementwise_meta(np.round), signature=_round_sig,
         numpy=(np.round, np.around), methods={"round": None}, doc="np.round")


# -- astype --------------------------------------------------------------------------------

_NUMERIC_KINDS = "biufc"  # other targets (str, bytes, object) have data-dependent itemsizes or values


def _astype_sig(x, dtype): ...


def _astype_meta(x, dtype):
    probe_call(np.astype, x, dtype)  # NumPy's refusals: np.astype takes arrays and NumPy scalars only
    if dtype.kind not in _NUMERIC_KINDS:
        raise NotImplementedError(f"casting to {dtype} (not a bool, integer, float or complex dtype) is not supported")
    x = as_meta(x)
    return ArrayMeta(x.shape, dtype, scalar=x.scalar)  # a NumPy scalar stays a scalar


def _python_int(x):
    """int(x) of one float as an int64 (a weak one: the graph hands it back as Python's int),
    raising where Python raises (NaN, inf) or where Python's int would not fit (OverflowError:
    the frame then runs as Python)."""
    return np.int64(int(x))


def _python_int_sig(x): ...


def _python_int_meta(x):
    x = as_meta(x)
    if x.shape != () or x.dtype.kind != "f":
        raise NotImplementedError(f"int() of {x} (of one float: an integer's is an astype to int64)")
    return ArrayMeta((), np.dtype(np.int64), scalar=True)   # the tracer marks it weak


register("python_int", POINTWISE, impl=_python_int, meta=_python_int_meta, signature=_python_int_sig,
         doc="int(x) of one float, in a loop body: a Python int (emitted by the tracer)")


def _astype_method(x, dtype):
    return (x, dtype), {}


register("astype", POINTWISE, impl=np.astype, meta=_astype_meta, signature=_astype_sig,
         numpy=(np.astype,), methods={"astype": _astype_method},
         convert={"dtype": np.dtype}, doc="x.astype(dtype), np.astype")


# Python's math functions of one float, on one graph value (math.exp(-0.5 * d * d) in a loop): the
# NumPy ufunc each computes the same value with, where Python raises nothing (tracer/variables/
# builtins.py makes the call; a backend that computes it with the ufunc checks the domain itself,
# as the llvm nest does, and stops where Python would raise)
PYTHON_MATH = {
    "exp": "exp", "expm1": "expm1", "log": "log", "log2": "log2", "log10": "log10", "log1p": "log1p",
    "sqrt": "sqrt", "sin": "sin", "cos": "cos", "tan": "tan", "asin": "arcsin", "acos": "arccos",
    "atan": "arctan", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "asinh": "arcsinh",
    "acosh": "arccosh", "atanh": "arctanh", "fabs": "absolute", "cbrt": "cbrt",
}


def _python_math(x, name):
    """math.<name>(x) as Python computes it: its errors (math domain error, math range error)
    where Python raises them; a float64 the graph hands back as Python's float."""
    import math
    return np.float64(getattr(math, name)(float(x)))


def _python_math_sig(x, name): ...


def _python_math_meta(x, name):
    x = as_meta(x)
    if x.shape != () or x.dtype.kind not in "biuf" or name not in PYTHON_MATH:
        raise NotImplementedError(f"math.{name}() of {x} (of one real number)")
    return ArrayMeta((), np.dtype(np.float64), scalar=True)   # the tracer marks it weak


register("python_math", POINTWISE, impl=_python_math, meta=_python_math_meta, signature=_python_math_sig,
         doc="math.exp(x) and its kin of one real graph value: a Python float (emitted by the tracer)")


# -- complex parts -------------------------------------------------------------------------
# x.real and x.imag view a complex array's parts (for a real x, x.real is x itself: the tracer
# hands back x; x.imag read-only zeros); np.angle is the arctan2 of them.

def _part_sig(val): ...


def _part_meta(fn):
    def meta(val):
        x = as_meta(val)
        return ArrayMeta(x.shape, probe_call(fn, x).dtype, scalar=x.scalar)   # a view: a 0-d array stays one
    return meta


def _angle_sig(z, deg=False): ...


register("real", POINTWISE, impl=np.real, meta=_part_meta(np.real), signature=_part_sig,
         numpy=(np.real,), properties=("real",), doc="x.real, np.real (a view of a complex array's real parts)")
register("imag", POINTWISE, impl=np.imag, meta=_part_meta(np.imag), signature=_part_sig,
         numpy=(np.imag,), properties=("imag",), doc="x.imag, np.imag (a view of a complex array's imaginary parts)")
register("angle", POINTWISE, impl=np.angle, meta=elementwise_meta(np.angle), signature=_angle_sig,
         numpy=(np.angle,), doc="np.angle")
