"""NumPy's numerics where ONNX's ops differ: integer floor division and modulo signs (and
division by zero, which NumPy answers with 0 and ONNX leaves undefined), NumPy's float divmod,
NaN-propagating maximum, and the accurate `expm1`/`log1p` that ONNX lacks.

Each function takes an Emitter and Values already in the dtype the computation runs in.
"""

from __future__ import annotations

import numpy as np

from .emit import BOOL, Emitter, Value


def _c(cx: Emitter, value, like: Value) -> Value:
    return cx.const(np.array(value, dtype=like.dtype))


def where(cx: Emitter, cond: Value, a: Value, b: Value) -> Value:
    if a.dtype == BOOL:   # onnxruntime has no boolean Where
        pick = cx.op("And", cond, a, dtype=BOOL)
        other = cx.op("And", cx.op("Not", cond, dtype=BOOL), b, dtype=BOOL)
        return cx.op("Or", pick, other, dtype=BOOL)
    return cx.op("Where", cond, a, b, dtype=a.dtype)


def negate(cx: Emitter, v: Value) -> Value:
    """-v with the sign of zero flipped too (onnxruntime's Neg of 0.0 is 0.0)."""
    return cx.op("Mul", v, _c(cx, -1, v), dtype=v.dtype)


def with_sign(cx: Emitter, negative: Value, magnitude: Value) -> Value:
    """magnitude, negated where `negative`: a product with +-1, since onnxruntime's Where hands back
    -0.0 as 0.0."""
    sign = cx.op("Where", negative, _c(cx, -1.0, magnitude), _c(cx, 1.0, magnitude), dtype=magnitude.dtype)
    return cx.op("Mul", magnitude, sign, dtype=magnitude.dtype)


def cmp(cx: Emitter, op: str, a: Value, b) -> Value:
    return cx.op(op, a, b if isinstance(b, Value) else _c(cx, b, a), dtype=BOOL)


# -- integers -----------------------------------------------------------------------------------

def int_divmod(cx: Emitter, a: Value, b: Value, floor: bool = True) -> tuple[Value, Value]:
    """(quotient, remainder) of integers, as NumPy gives them: floor division with the remainder's
    sign the divisor's (`floor`) or truncation with the dividend's (fmod); both 0 where b == 0.
    Division by -1 is a negation: INT_MIN / -1 traps in C, and wraps in NumPy."""
    dt = a.dtype
    zero, one = _c(cx, 0, a), _c(cx, 1, a)
    by_zero = cmp(cx, "Equal", b, zero)
    safe = where(cx, by_zero, one, b)
    signed = dt.kind == "i"
    if signed:
        by_minus_one = cmp(cx, "Equal", safe, -1)
        safe = where(cx, by_minus_one, one, safe)
    q = cx.op("Div", a, safe, dtype=dt)           # truncates toward zero
    if signed:
        q = where(cx, by_minus_one, cx.op("Sub", zero, a, dtype=dt), q)
        safe = where(cx, by_minus_one, _c(cx, -1, a), safe)
    r = cx.op("Sub", a, cx.op("Mul", q, safe, dtype=dt), dtype=dt)
    if floor and signed:   # a remainder whose sign differs from the divisor's: one step down
        differ = cx.op("Xor", cmp(cx, "Less", r, zero), cmp(cx, "Less", safe, zero), dtype=BOOL)
        step = cx.op("And", cx.op("Not", cmp(cx, "Equal", r, zero), dtype=BOOL), differ, dtype=BOOL)
        q = where(cx, step, cx.op("Sub", q, one, dtype=dt), q)
        r = where(cx, step, cx.op("Add", r, safe, dtype=dt), r)
    return where(cx, by_zero, zero, q), where(cx, by_zero, zero, r)


# -- floats ---------------------------------------------------------------------------------------

def float_divmod(cx: Emitter, a: Value, b: Value) -> tuple[Value, Value]:
    """NumPy's npy_divmod: mod = fmod(a, b) moved to the divisor's sign, div = (a - mod) / b
    rounded to the nearest integer below; where b == 0, (a / b, fmod(a, b))."""
    dt = a.dtype
    zero = _c(cx, 0.0, a)
    fmod = cx.op("Mod", a, b, dtype=dt, fmod=1)
    div = cx.op("Div", cx.op("Sub", a, fmod, dtype=dt), b, dtype=dt)
    nonzero = cx.op("Not", cmp(cx, "Equal", fmod, zero), dtype=BOOL)
    differ = cx.op("Xor", cmp(cx, "Less", b, zero), cmp(cx, "Less", fmod, zero), dtype=BOOL)
    step = cx.op("And", nonzero, differ, dtype=BOOL)
    mod = where(cx, step, cx.op("Add", fmod, b, dtype=dt), fmod)
    div = where(cx, step, cx.op("Sub", div, _c(cx, 1.0, a), dtype=dt), div)
    signed_zero_b = where(cx, cmp(cx, "Less", b, zero), _c(cx, -0.0, a), zero)
    mod = where(cx, cmp(cx, "Equal", mod, zero), signed_zero_b, mod)
    floor = cx.op("Floor", div, dtype=dt)
    up = cmp(cx, "Greater", cx.op("Sub", div, floor, dtype=dt), _c(cx, 0.5, a))
    floor = where(cx, up, cx.op("Add", floor, _c(cx, 1.0, a), dtype=dt), floor)
    quotient = cx.op("Div", a, b, dtype=dt)
    signed_zero_q = where(cx, cmp(cx, "Less", quotient, zero), _c(cx, -0.0, a), zero)
    floor = where(cx, cmp(cx, "Equal", div, zero), signed_zero_q, floor)
    by_zero = cmp(cx, "Equal", b, zero)
    return where(cx, by_zero, quotient, floor), where(cx, by_zero, fmod, mod)


def nan_max(cx: Emitter, op: str, a: Value, b: Value, propagate: bool = True) -> Value:
    """Max/Min with NumPy's NaNs: maximum returns a NaN operand (`propagate`), fmax the other."""
    plain = cx.op(op, a, b, dtype=a.dtype)
    if a.dtype.kind != "f":
        return plain
    out = plain
    for x, other in ((b, a), (a, b)):   # a constant without NaNs needs no test
        known = cx.constants.get(x.name)
        if known is None or np.isnan(known).any():
            out = where(cx, cx.op("IsNaN", x, dtype=BOOL), x if propagate else other, out)
    return out


def expm1(cx: Emitter, x: Value) -> Value:
    """Kahan's expm1: u = exp(x); (u - 1) * x / log(u), x where u rounds to 1, -1 where u - 1 does."""
    dt = x.dtype
    one = _c(cx, 1.0, x)
    u = cx.op("Exp", x, dtype=dt)
    um1 = cx.op("Sub", u, one, dtype=dt)
    scaled = cx.op("Div", cx.op("Mul", um1, x, dtype=dt), cx.op("Log", u, dtype=dt), dtype=dt)
    big = cmp(cx, "Equal", u, np.inf)   # exp overflowed: inf, not inf * x / inf
    scaled = where(cx, big, u, scaled)
    scaled = where(cx, cmp(cx, "Equal", um1, -1.0), um1, scaled)
    return where(cx, cmp(cx, "Equal", u, one), x, scaled)


def log1p(cx: Emitter, x: Value) -> Value:
    """Goldberg's log1p: u = 1 + x; log(u) * x / (u - 1), x where u rounds to 1."""
    dt = x.dtype
    one = _c(cx, 1.0, x)
    u = cx.op("Add", x, one, dtype=dt)
    scaled = cx.op("Div", cx.op("Mul", cx.op("Log", u, dtype=dt), x, dtype=dt),
                   cx.op("Sub", u, one, dtype=dt), dtype=dt)
    scaled = where(cx, cmp(cx, "Equal", u, np.inf), u, scaled)   # log(inf) * inf / inf is NaN
    return where(cx, cmp(cx, "Equal", u, one), x, scaled)


# Cephes' atan (Moshier): reduce |x| to [0, 0.66] with tan(3pi/8) and tan(pi/4), then a rational
# approximation of degree 4/5 in x^2; accurate to about one ulp in float64.
_ATAN_P = (-8.750608600031904122785e-1, -1.615753718733365076637e1, -7.500855792314704667340e1,
           -1.228866684490136173410e2, -6.485021904942025371773e1)
_ATAN_Q = (1.0, 2.485846490142306297962e1, 1.650270098316988542046e2, 4.328810604912902668951e2,
           4.853903996359136964868e2, 1.945506571482613964425e2)
_MOREBITS = 6.123233995736765886130e-17   # pi/2 - its double


def _poly(cx: Emitter, z: Value, coefficients) -> Value:
    acc = _c(cx, coefficients[0], z)
    for c in coefficients[1:]:
        acc = cx.op("Add", cx.op("Mul", acc, z, dtype=z.dtype), _c(cx, c, z), dtype=z.dtype)
    return acc


def atan(cx: Emitter, x: Value) -> Value:
    """arctan of float64, which onnxruntime has no kernel for."""
    dt = x.dtype
    a = cx.op("Abs", x, dtype=dt)
    one = _c(cx, 1.0, x)
    big = cmp(cx, "Greater", a, 2.41421356237309504880)
    mid = cx.op("And", cx.op("Not", big, dtype=BOOL), cmp(cx, "Greater", a, 0.66), dtype=BOOL)
    reduced = where(cx, big, cx.op("Neg", cx.op("Div", one, a, dtype=dt), dtype=dt),
                    where(cx, mid, cx.op("Div", cx.op("Sub", a, one, dtype=dt), cx.op("Add", a, one, dtype=dt), dtype=dt), a))
    base = where(cx, big, _c(cx, np.pi / 2, x), where(cx, mid, _c(cx, np.pi / 4, x), _c(cx, 0.0, x)))
    extra = where(cx, big, _c(cx, _MOREBITS, x), where(cx, mid, _c(cx, 0.5 * _MOREBITS, x), _c(cx, 0.0, x)))
    z = cx.op("Mul", reduced, reduced, dtype=dt)
    ratio = cx.op("Div", cx.op("Mul", z, _poly(cx, z, _ATAN_P), dtype=dt), _poly(cx, z, _ATAN_Q), dtype=dt)
    value = cx.op("Add", cx.op("Mul", reduced, ratio, dtype=dt), reduced, dtype=dt)
    value = cx.op("Add", base, cx.op("Add", value, extra, dtype=dt), dtype=dt)
    return with_sign(cx, negative_sign(cx, x), value)


def asin(cx: Emitter, x: Value) -> Value:
    """arcsin(x) = atan(x / sqrt((1 - x)(1 + x))): 1 - x is exact near 1; NaN outside [-1, 1]."""
    one = _c(cx, 1.0, x)
    root = cx.op("Sqrt", cx.op("Mul", cx.op("Sub", one, x, dtype=x.dtype), cx.op("Add", one, x, dtype=x.dtype),
                               dtype=x.dtype), dtype=x.dtype)
    return atan(cx, cx.op("Div", x, root, dtype=x.dtype))


def acos(cx: Emitter, x: Value) -> Value:
    """arccos(x) = 2 atan(sqrt((1 - x) / (1 + x))): no cancellation near 1."""
    one = _c(cx, 1.0, x)
    ratio = cx.op("Div", cx.op("Sub", one, x, dtype=x.dtype), cx.op("Add", one, x, dtype=x.dtype), dtype=x.dtype)
    return cx.op("Mul", atan(cx, cx.op("Sqrt", ratio, dtype=x.dtype)), _c(cx, 2.0, x), dtype=x.dtype)


def negative_sign(cx: Emitter, v: Value) -> Value:
    """v's sign bit for every value but NaN: v < 0, or v a zero whose reciprocal is -inf (-0.0)."""
    zero = _c(cx, 0.0, v)
    minus_zero = cx.op("And", cmp(cx, "Equal", v, zero),
                       cmp(cx, "Less", cx.op("Div", _c(cx, 1.0, v), v, dtype=v.dtype), zero), dtype=BOOL)
    return cx.op("Or", cmp(cx, "Less", v, zero), minus_zero, dtype=BOOL)


def atan2(cx: Emitter, y: Value, x: Value, atan=None) -> Value:
    """C's atan2, special cases included: the quadrant from the signs (of zeros too), the angles
    of infinities, NaN where either is NaN. `atan` is the arctan to use (Atan, or ours for float64)."""
    dt = y.dtype
    atan = atan or (lambda cx, v: cx.op("Atan", v, dtype=dt))

    def c(value):
        return _c(cx, value, y)

    def signed(magnitude: Value) -> Value:   # magnitude with y's sign
        return with_sign(cx, y_neg, magnitude)
    y_neg, x_neg = negative_sign(cx, y), negative_sign(cx, x)
    ay, ax = cx.op("Abs", y, dtype=dt), cx.op("Abs", x, dtype=dt)
    # |angle| for finite, nonzero x: atan(|y| / |x|), folded to the left half-plane where x < 0
    core = atan(cx, cx.op("Div", ay, ax, dtype=dt))
    angle = where(cx, x_neg, cx.op("Sub", c(np.pi), core, dtype=dt), core)
    # x zero: pi/2 (y nonzero), else 0 or pi by x's sign
    angle = where(cx, cmp(cx, "Equal", ax, 0.0),
                  where(cx, cmp(cx, "Equal", ay, 0.0), where(cx, x_neg, c(np.pi), c(0.0)), c(np.pi / 2)), angle)
    # infinities: y infinite -> pi/2, or pi/4 / 3pi/4 with x infinite too; x infinite alone -> 0 or pi
    y_inf, x_inf = cmp(cx, "Equal", ay, np.inf), cmp(cx, "Equal", ax, np.inf)
    both = where(cx, x_neg, c(3 * np.pi / 4), c(np.pi / 4))
    angle = where(cx, y_inf, where(cx, x_inf, both, c(np.pi / 2)),
                  where(cx, x_inf, where(cx, x_neg, c(np.pi), c(0.0)), angle))
    nan = cx.op("Or", cx.op("IsNaN", y, dtype=BOOL), cx.op("IsNaN", x, dtype=BOOL), dtype=BOOL)
    return where(cx, nan, cx.op("Add", y, x, dtype=dt), signed(angle))


def hypot(cx: Emitter, x: Value, y: Value) -> Value:
    """C's hypot: big * sqrt(1 + (small / big)^2), no overflow; inf if either is infinite (NaN too)."""
    dt = x.dtype
    ax, ay = cx.op("Abs", x, dtype=dt), cx.op("Abs", y, dtype=dt)
    big, small = cx.op("Max", ax, ay, dtype=dt), cx.op("Min", ax, ay, dtype=dt)
    ratio = cx.op("Div", small, where(cx, cmp(cx, "Equal", big, 0.0), _c(cx, 1.0, x), big), dtype=dt)
    r = cx.op("Mul", big, cx.op("Sqrt", cx.op("Add", _c(cx, 1.0, x), cx.op("Mul", ratio, ratio, dtype=dt), dtype=dt),
                                 dtype=dt), dtype=dt)
    nan = cx.op("Or", cx.op("IsNaN", x, dtype=BOOL), cx.op("IsNaN", y, dtype=BOOL), dtype=BOOL)
    r = where(cx, nan, cx.op("Add", x, y, dtype=dt), r)
    inf = cx.op("Or", cmp(cx, "Equal", ax, np.inf), cmp(cx, "Equal", ay, np.inf), dtype=BOOL)
    return where(cx, inf, _c(cx, np.inf, x), r)
