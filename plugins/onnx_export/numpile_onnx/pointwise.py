"""Pointwise ops: ufuncs, where, clip, round, astype.

NEP 50 promotion is explicit: each operand is cast to the dtype NumPy computes in (the result's
for arithmetic, the operands' common dtype for comparisons), then one ONNX op runs. Integers
narrower than onnxruntime's kernels (int8, int16, unsigned) compute in int64 and float16 in
float32, then are cast back: wrap-around and rounding are the same as NumPy's.
"""

from __future__ import annotations

import math

import numpy as np

from . import numerics
from .emit import BOOL, INT64, Emitter, OnnxUnsupported, Value, loop_dtype

# the dtype onnxruntime computes a dtype's arithmetic in
WIDE = {np.dtype(k): np.dtype(v) for k, v in {
    "int8": "int64", "int16": "int64", "uint8": "int64", "uint16": "int64", "uint32": "int64",
    "float16": "float32"}.items()}
# float64 functions onnxruntime's CPU kernels lack (written with the ones it has, or refused)
NO_FLOAT64 = {"Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh", "Atanh"}


def wide(dtype) -> np.dtype:
    return WIDE.get(np.dtype(dtype), np.dtype(dtype))


def _computed(cx: Emitter, node, fn, *args, dtype=None):
    """fn(cx, *operands) with the operands in the (widened) dtype `dtype` (default: the
    result's), cast back to the result's dtype."""
    dt = np.dtype(dtype or node.dtype)
    values = cx.operands(args, wide(dt))
    return cx.cast(fn(cx, *values), node.dtype)


def _op(onnx_op, **attrs):
    return lambda cx, *xs: cx.op(onnx_op, *xs, dtype=xs[0].dtype, **attrs)


def arithmetic(onnx_op, boolean=None):
    """A ufunc computed in its result dtype by one ONNX op; `boolean` the op for bool results
    (NumPy's add of bools is or, multiply is and)."""
    def convert(cx, node, *args):
        if node.dtype == BOOL:
            if boolean is None:
                raise OnnxUnsupported(f"{node.target} of booleans")
            return cx.op(boolean, *cx.operands(args, BOOL), dtype=BOOL)
        return _computed(cx, node, _op(onnx_op), *args)
    return convert


def float_fn(fn):
    """A function of floats: computed in the result's dtype (float16 in float32)."""
    def convert(cx, node, *args):
        if node.dtype.kind != "f":
            raise OnnxUnsupported(f"{node.target} giving {node.dtype}")
        return _computed(cx, node, fn, *args)
    return convert


def unary(onnx_op, composed=None):
    """An ONNX float function; `composed(cx, x)` writes it for float64 where onnxruntime lacks it."""
    def fn(cx, x):
        if x.dtype == np.float64 and onnx_op in NO_FLOAT64:
            if composed is None:
                raise OnnxUnsupported(f"{onnx_op} of float64 (onnxruntime has no float64 kernel for it)")
            return composed(cx, x)
        return cx.op(onnx_op, x, dtype=x.dtype)
    return float_fn(fn)


def _c(cx, value, like: Value) -> Value:
    return cx.const(np.array(value, dtype=like.dtype))


def _mul(cx, a, b):
    return cx.op("Mul", a, b, dtype=a.dtype)


def _scaled(onnx_op, factor):
    return lambda cx, x: _mul(cx, cx.op(onnx_op, x, dtype=x.dtype), _c(cx, factor, x))


# -- float64 forms of the functions onnxruntime has only for float32 ------------------------------

def _tan(cx, x):
    return cx.op("Div", cx.op("Sin", x, dtype=x.dtype), cx.op("Cos", x, dtype=x.dtype), dtype=x.dtype)


def _sinh(cx, x):  # (expm1(x) - expm1(-x)) / 2: no cancellation near 0
    neg = cx.op("Neg", x, dtype=x.dtype)
    diff = cx.op("Sub", numerics.expm1(cx, x), numerics.expm1(cx, neg), dtype=x.dtype)
    return _mul(cx, diff, _c(cx, 0.5, x))


def _cosh(cx, x):
    both = cx.op("Add", cx.op("Exp", x, dtype=x.dtype), cx.op("Exp", cx.op("Neg", x, dtype=x.dtype), dtype=x.dtype),
                 dtype=x.dtype)
    return _mul(cx, both, _c(cx, 0.5, x))


def _atanh(cx, x):  # log1p(2x / (1 - x)) / 2
    ratio = cx.op("Div", _mul(cx, x, _c(cx, 2.0, x)), cx.op("Sub", _c(cx, 1.0, x), x, dtype=x.dtype), dtype=x.dtype)
    return _mul(cx, numerics.log1p(cx, ratio), _c(cx, 0.5, x))


def _asinh(cx, x):  # sign(x) log1p(|x| + x^2 / (1 + sqrt(1 + x^2))); log(2|x|) past 1e150
    dt = x.dtype
    a = cx.op("Abs", x, dtype=dt)
    sq = _mul(cx, a, a)
    one = _c(cx, 1.0, x)
    root = cx.op("Add", one, cx.op("Sqrt", cx.op("Add", one, sq, dtype=dt), dtype=dt), dtype=dt)
    small = numerics.log1p(cx, cx.op("Add", a, cx.op("Div", sq, root, dtype=dt), dtype=dt))
    large = cx.op("Add", cx.op("Log", a, dtype=dt), _c(cx, math.log(2.0), x), dtype=dt)
    mag = numerics.where(cx, numerics.cmp(cx, "Greater", a, 1e150), large, small)
    return numerics.with_sign(cx, numerics.negative_sign(cx, x), mag)


def _acosh(cx, x):  # log1p(t + sqrt(t (x + 1))), t = x - 1; log(2x) past 1e150
    dt = x.dtype
    t = cx.op("Sub", x, _c(cx, 1.0, x), dtype=dt)
    root = cx.op("Sqrt", _mul(cx, t, cx.op("Add", x, _c(cx, 1.0, x), dtype=dt)), dtype=dt)
    small = numerics.log1p(cx, cx.op("Add", t, root, dtype=dt))
    large = cx.op("Add", cx.op("Log", x, dtype=dt), _c(cx, math.log(2.0), x), dtype=dt)
    return numerics.where(cx, numerics.cmp(cx, "Greater", x, 1e150), large, small)


# -- converters with more than one ONNX op --------------------------------------------------------

def _divide_family(part):
    """floor_divide (part 0), remainder (1), fmod ("fmod"): NumPy's signs and division by zero."""
    def fn(cx, a, b):
        if a.dtype.kind == "f":
            if part == "fmod":
                return cx.op("Mod", a, b, dtype=a.dtype, fmod=1)
            return numerics.float_divmod(cx, a, b)[part]
        if a.dtype.kind == "u":  # no negative quotients: C's division and % are NumPy's, but for 0
            return numerics.int_divmod(cx, a, b)[1 if part == "fmod" else part]
        return numerics.int_divmod(cx, a, b, floor=part != "fmod")[1 if part == "fmod" else part]

    def convert(cx, node, x1, x2):
        if node.dtype == BOOL:
            raise OnnxUnsupported(f"{node.target} of booleans")
        return _computed(cx, node, fn, x1, x2)
    return convert


def _divmod(cx, node, x1, x2):
    out = node.results[0].dtype
    if out.kind == "b":
        raise OnnxUnsupported("divmod of booleans")
    values = cx.operands((x1, x2), wide(out))
    if out.kind == "f":
        q, r = numerics.float_divmod(cx, *values)
    else:
        q, r = numerics.int_divmod(cx, *values)
    return cx.cast(q, out), cx.cast(r, node.results[1].dtype)


def _max_like(onnx_op, propagate, boolean):
    def convert(cx, node, x1, x2):
        if node.dtype == BOOL:
            return cx.op(boolean, *cx.operands((x1, x2), BOOL), dtype=BOOL)
        return _computed(cx, node, lambda cx, a, b: numerics.nan_max(cx, onnx_op, a, b, propagate), x1, x2)
    return convert


def _power(cx, node, x1, x2):
    if node.dtype == BOOL:
        raise OnnxUnsupported("power of booleans")
    if node.dtype.kind in "iu" and isinstance(x2, Value) and x2.dtype.kind == "i":
        raise OnnxUnsupported("integer power by a signed integer array: NumPy raises for a negative exponent, "
                              "and an ONNX model cannot raise")
    # unsigned 64-bit powers wrap the same in int64
    dtype = INT64 if node.dtype == np.uint64 else node.dtype
    return _computed(cx, node, _op("Pow"), x1, x2, dtype=dtype)


def _compare(onnx_op, negate=False):
    def convert(cx, node, x1, x2):
        dt = loop_dtype(x1, x2)
        dt = np.dtype(np.int32) if dt == BOOL and onnx_op != "Equal" else wide(dt)
        out = cx.op(onnx_op, *cx.operands((x1, x2), dt), dtype=BOOL)
        return cx.op("Not", out, dtype=BOOL) if negate else out
    return convert


def _logical(onnx_op):
    return lambda cx, node, *args: cx.op(onnx_op, *cx.operands(args, BOOL), dtype=BOOL)


def _bitwise(int_op, bool_op):
    def convert(cx, node, *args):
        if node.dtype == BOOL:
            return cx.op(bool_op, *cx.operands(args, BOOL), dtype=BOOL)
        return cx.op(int_op, *cx.operands(args, node.dtype), dtype=node.dtype)
    return convert


def _shift(direction):
    """NumPy's shifts: 0 (left, or right of a non-negative) or -1 (right of a negative) once the
    count reaches the width or is negative; right shifts of signed values are arithmetic
    (a floor division by 2**count)."""
    def convert(cx, node, x1, x2):
        dt = node.dtype
        width = dt.itemsize * 8
        x, n = cx.operands((x1, x2), INT64 if dt != np.uint64 else dt)
        if dt == np.uint64:
            n64 = n
        else:
            n64 = cx.cast(numerics.where(cx, numerics.cmp(cx, "Less", n, 0), _c(cx, 0, n),
                                         cx.op("Min", n, _c(cx, 63, n), dtype=INT64)), np.uint64)
        outside = numerics.cmp(cx, "GreaterOrEqual", n, width)
        if n.dtype.kind == "i":
            outside = cx.op("Or", outside, numerics.cmp(cx, "Less", n, 0), dtype=BOOL)
        if direction == "LEFT" or dt.kind == "u":
            bits = cx.cast(x, np.uint64)
            shifted = cx.cast(cx.op("BitShift", bits, n64, dtype=bits.dtype, direction=direction), x.dtype)
            spill = _c(cx, 0, x)
        else:
            power = cx.cast(cx.op("BitShift", cx.const(np.array(1, np.uint64)), n64, dtype=np.dtype(np.uint64),
                                  direction="LEFT"), INT64)
            shifted = numerics.int_divmod(cx, x, power)[0]
            spill = numerics.where(cx, numerics.cmp(cx, "Less", x, 0), _c(cx, -1, x), _c(cx, 0, x))
        return cx.cast(numerics.where(cx, outside, spill, shifted), dt)
    return convert


def _identity(cx, node, x):
    return cx.cast(x, node.dtype)


def _negative(cx, node, x):
    if node.dtype == BOOL:
        raise OnnxUnsupported("negative of booleans")
    return _computed(cx, node, lambda cx, v: numerics.negate(cx, v), x)


def _absolute(cx, node, x):
    if node.dtype == BOOL or node.dtype.kind == "u":
        return cx.cast(x, node.dtype)
    return _computed(cx, node, _op("Abs"), x)


def _sign(cx, node, x):
    if node.dtype == BOOL:
        raise OnnxUnsupported("sign of booleans")

    def fn(cx, v):
        s = cx.op("Sign", v, dtype=v.dtype)
        return numerics.where(cx, cx.op("IsNaN", v, dtype=BOOL), v, s) if v.dtype.kind == "f" else s
    return _computed(cx, node, fn, x)


def _reciprocal(cx, node, x):
    if node.dtype.kind != "f":
        raise OnnxUnsupported(f"reciprocal of {node.dtype} (C integer division; NumPy's value for 0 is the platform's)")
    return _computed(cx, node, _op("Reciprocal"), x)


def _square(cx, node, x):
    if node.dtype == BOOL:
        return cx.op("And", *cx.operands((x, x), BOOL), dtype=BOOL)
    return _computed(cx, node, lambda cx, v: _mul(cx, v, v), x)


def _cbrt(cx, x):
    dt = x.dtype
    mag = cx.op("Pow", cx.op("Abs", x, dtype=dt), _c(cx, 1.0 / 3.0, x), dtype=dt)
    return numerics.with_sign(cx, numerics.negative_sign(cx, x), mag)


def _trunc(cx, x):
    return numerics.where(cx, numerics.cmp(cx, "Less", x, 0.0), cx.op("Ceil", x, dtype=x.dtype),
                          cx.op("Floor", x, dtype=x.dtype))


def _rounding(onnx_op):
    """floor, ceil, trunc, rint: of integers and booleans NumPy returns the value itself."""
    fn = _trunc if onnx_op == "Trunc" else _op(onnx_op)

    def convert(cx, node, x):
        if node.dtype.kind != "f":
            return cx.cast(x, node.dtype)
        return _computed(cx, node, fn, x)
    return convert


def _float_test(kind):
    """isnan, isinf, isfinite: of integers and booleans a constant answer of the input's shape."""
    def convert(cx, node, x):
        if not isinstance(x, Value) or x.dtype.kind != "f":
            same = cx.op("Equal", *([cx.cast(x, INT64)] * 2), dtype=BOOL)   # all True, x's shape
            return same if kind == "isfinite" else cx.op("Not", same, dtype=BOOL)
        v = cx.cast(x, wide(x.dtype))
        nan, inf = cx.op("IsNaN", v, dtype=BOOL), cx.op("IsInf", v, dtype=BOOL)
        if kind == "isfinite":
            return cx.op("Not", cx.op("Or", nan, inf, dtype=BOOL), dtype=BOOL)
        return nan if kind == "isnan" else inf
    return convert


def _heaviside(cx, x, h):
    zero = _c(cx, 0.0, x)
    inner = numerics.where(cx, numerics.cmp(cx, "Greater", x, zero), _c(cx, 1.0, x), h)
    inner = numerics.where(cx, numerics.cmp(cx, "Less", x, zero), zero, inner)
    return numerics.where(cx, cx.op("IsNaN", x, dtype=BOOL), x, inner)


def _logaddexp(base2):
    """NumPy's: a + log(2) where a == b (infinities too), else max + log1p(exp(-|a - b|))."""
    def fn(cx, a, b):
        dt = a.dtype
        diff = cx.op("Abs", cx.op("Sub", a, b, dtype=dt), dtype=dt)
        top = cx.op("Max", a, b, dtype=dt)
        if base2:
            small = cx.op("Pow", _c(cx, 2.0, a), cx.op("Neg", diff, dtype=dt), dtype=dt)
            tail = _mul(cx, numerics.log1p(cx, small), _c(cx, 1 / math.log(2.0), a))
            same = cx.op("Add", a, _c(cx, 1.0, a), dtype=dt)
        else:
            tail = numerics.log1p(cx, cx.op("Exp", cx.op("Neg", diff, dtype=dt), dtype=dt))
            same = cx.op("Add", a, _c(cx, math.log(2.0), a), dtype=dt)
        out = cx.op("Add", top, tail, dtype=dt)
        nan = cx.op("Or", cx.op("IsNaN", a, dtype=BOOL), cx.op("IsNaN", b, dtype=BOOL), dtype=BOOL)
        out = numerics.where(cx, nan, cx.op("Add", a, b, dtype=dt), out)
        return numerics.where(cx, numerics.cmp(cx, "Equal", a, b), same, out)
    return float_fn(fn)


def _modf(cx, node, x):
    out = node.results[0].dtype
    if out.kind != "f":
        raise OnnxUnsupported(f"modf giving {out}")
    v = cx.cast(x, wide(out))
    whole = _trunc(cx, v)
    frac = cx.op("Sub", v, whole, dtype=v.dtype)
    frac = numerics.where(cx, cx.op("IsInf", v, dtype=BOOL), _c(cx, 0.0, v), frac)
    return cx.cast(frac, out), cx.cast(whole, out)


def _where(cx, node, condition, *xy):
    if len(xy) != 2:
        raise OnnxUnsupported("where with one argument (np.nonzero)")
    cond = cx.cast(condition, BOOL)
    x, y = cx.operands(xy, node.dtype)
    return numerics.where(cx, cond, x, y)


def _clip(cx, node, a, a_min=None, a_max=None):
    """NumPy's clip is minimum(maximum(a, a_min), a_max): NaNs propagate."""
    dt = node.dtype
    value = cx.cast(a, wide(dt))
    if a_min is not None:
        value = numerics.nan_max(cx, "Max", value, cx.cast(a_min, wide(dt)))
    if a_max is not None:
        value = numerics.nan_max(cx, "Min", value, cx.cast(a_max, wide(dt)))
    return cx.cast(value, dt)


def _round(cx, node, a, decimals=0):
    """NumPy's around: rint(a * 10**d) / 10**d, or rint(a / 10**-d) * 10**-d."""
    if node.dtype.kind != "f":
        if decimals >= 0:
            return cx.cast(a, node.dtype)
        raise OnnxUnsupported(f"round of {node.dtype} to {decimals} decimals")

    def fn(cx, v):
        if decimals == 0:
            return cx.op("Round", v, dtype=v.dtype)
        f = _c(cx, 10.0 ** abs(decimals), v)
        inner, outer = ("Mul", "Div") if decimals > 0 else ("Div", "Mul")
        return cx.op(outer, cx.op("Round", cx.op(inner, v, f, dtype=v.dtype), dtype=v.dtype), f, dtype=v.dtype)
    return _computed(cx, node, fn, a)


def _astype(cx, node, x, dtype):
    return cx.cast(x, node.dtype)


def _bitwise_invert(cx, node, x):
    if node.dtype == BOOL:
        return cx.op("Not", cx.cast(x, BOOL), dtype=BOOL)
    return cx.op("BitwiseNot", cx.cast(x, node.dtype), dtype=node.dtype)


_LN2, _LN10 = math.log(2.0), math.log(10.0)

ROWS = {
    "add": arithmetic("Add", boolean="Or"),
    "subtract": arithmetic("Sub"),
    "multiply": arithmetic("Mul", boolean="And"),
    "divide": float_fn(_op("Div")),
    "floor_divide": _divide_family(0),
    "remainder": _divide_family(1),
    "fmod": _divide_family("fmod"),
    "divmod": _divmod,
    "power": _power,
    "float_power": float_fn(_op("Pow")),
    "negative": _negative,
    "positive": _identity,
    "conjugate": _identity,
    "absolute": _absolute,
    "fabs": float_fn(_op("Abs")),
    "sign": _sign,
    "reciprocal": _reciprocal,
    "square": _square,
    "sqrt": unary("Sqrt"),
    "cbrt": float_fn(_cbrt),
    "exp": unary("Exp"),
    "exp2": float_fn(lambda cx, x: cx.op("Pow", _c(cx, 2.0, x), x, dtype=x.dtype)),
    "expm1": float_fn(numerics.expm1),
    "log": unary("Log"),
    "log2": float_fn(_scaled("Log", 1 / _LN2)),
    "log10": float_fn(_scaled("Log", 1 / _LN10)),
    "log1p": float_fn(numerics.log1p),
    "logaddexp": _logaddexp(False),
    "logaddexp2": _logaddexp(True),
    "sin": unary("Sin"),
    "cos": unary("Cos"),
    "tan": unary("Tan", _tan),
    "arcsin": unary("Asin", numerics.asin),
    "arccos": unary("Acos", numerics.acos),
    "arctan": unary("Atan", numerics.atan),
    "sinh": unary("Sinh", _sinh),
    "cosh": unary("Cosh", _cosh),
    "tanh": unary("Tanh"),
    "arcsinh": unary("Asinh", _asinh),
    "arccosh": unary("Acosh", _acosh),
    "arctanh": unary("Atanh", _atanh),
    "deg2rad": float_fn(lambda cx, x: _mul(cx, x, _c(cx, math.pi / 180.0, x))),
    "radians": float_fn(lambda cx, x: _mul(cx, x, _c(cx, math.pi / 180.0, x))),
    "rad2deg": float_fn(lambda cx, x: _mul(cx, x, _c(cx, 180.0 / math.pi, x))),
    "degrees": float_fn(lambda cx, x: _mul(cx, x, _c(cx, 180.0 / math.pi, x))),
    "heaviside": float_fn(_heaviside),
    "arctan2": float_fn(lambda cx, y, x: numerics.atan2(cx, y, x, numerics.atan if y.dtype == np.float64 else None)),
    "hypot": float_fn(numerics.hypot),
    "floor": _rounding("Floor"),
    "ceil": _rounding("Ceil"),
    "trunc": _rounding("Trunc"),
    "rint": _rounding("Round"),
    "modf": _modf,
    "isnan": _float_test("isnan"),
    "isinf": _float_test("isinf"),
    "isfinite": _float_test("isfinite"),
    "greater": _compare("Greater"),
    "greater_equal": _compare("GreaterOrEqual"),
    "less": _compare("Less"),
    "less_equal": _compare("LessOrEqual"),
    "equal": _compare("Equal"),
    "not_equal": _compare("Equal", negate=True),
    "maximum": _max_like("Max", True, "Or"),
    "minimum": _max_like("Min", True, "And"),
    "fmax": _max_like("Max", False, "Or"),
    "fmin": _max_like("Min", False, "And"),
    "logical_and": _logical("And"),
    "logical_or": _logical("Or"),
    "logical_xor": _logical("Xor"),
    "logical_not": _logical("Not"),
    "bitwise_and": _bitwise("BitwiseAnd", "And"),
    "bitwise_or": _bitwise("BitwiseOr", "Or"),
    "bitwise_xor": _bitwise("BitwiseXor", "Xor"),
    "invert": _bitwise_invert,
    "left_shift": _shift("LEFT"),
    "right_shift": _shift("RIGHT"),
    "where": _where,
    "clip": _clip,
    "round": _round,
    "astype": _astype,
}

# what reading a float's bits needs (BitCast is opset 26), or a loop
UNSUPPORTED = {
    **dict.fromkeys(("real", "imag", "angle"), "the parts of complex values: ONNX export has no complex tensors"),
    "copysign": "reading a float's sign bit (NaN's too) needs BitCast, which is opset 26",
    "signbit": "reading a float's sign bit (NaN's too) needs BitCast, which is opset 26",
    "nextafter": "stepping to the next float needs BitCast, which is opset 26",
    "spacing": "stepping to the next float needs BitCast, which is opset 26",
    "frexp": "splitting a float into mantissa and exponent needs BitCast, which is opset 26",
    "ldexp": "x * 2**n overflows 2**n where NumPy's ldexp does not; exact scaling needs BitCast (opset 26)",
    "gcd": "Euclid's algorithm is a data-dependent loop",
    "lcm": "Euclid's algorithm is a data-dependent loop",
    "bitwise_count": "ONNX has no population count",
}
