"""The one op table of both compilers (kernels/ and nests/): each pointwise registry op as LLVM
instructions, per dtype kind, with NumPy's exact semantics (integer wraparound, floor division and
modulo signs, division by zero, NaN propagation, the x86 results of out-of-range float-to-int casts).

A ufunc's operands are first cast to the loop dtypes NumPy itself picks
(`ufunc.resolve_dtypes`, Python scalars weak as NEP 50 says), so every value is computed in
the type NumPy computes it in. Ops or dtype combinations not in the tables raise
`Unlowerable`, and the kernel runs with NumPy instead. Python int arithmetic (a loop nest's
Python ints) has its own small table, checked against int64 overflow (`PYTHON_INT`).
"""

from __future__ import annotations

import math

import numpy as np

from numpile.lowering import Const
from numpile.lowering import ufunc_loops

from . import complexes, mathlib
from .hypot import hypot
from .randoms import random_bits
from .casts import cast
from .irbuilder import BOOL, I64, Function, Unlowerable, V, int_limits, literal, reg_type

def ufunc_loop(name: str, operands: list) -> tuple:
    """NumPy's loop dtypes for a ufunc on these operands (numpile.lowering's), Unlowerable where
    NumPy has none."""
    try:
        return ufunc_loops.ufunc_loop(name, operands)
    except (TypeError, ValueError) as e:
        raise Unlowerable(f"{name}: {e}") from None


# -- float ops -----------------------------------------------------------------------------------

def _zero(v):
    return literal(0, v.dtype)


def _one(v):
    return literal(1, v.dtype)


def _float_divmod(fn: Function, a: V, b: V) -> tuple[V, V]:
    """NumPy's npy_divmod: (floor quotient, remainder with the divisor's sign)."""
    mod = fn.binary("frem", a, b)
    div = fn.binary("fdiv", fn.binary("fsub", a, mod), b)
    fix = fn.binary("and", fn.compare("fcmp", "une", mod, _zero(mod)),
                    fn.binary("xor", fn.compare("fcmp", "olt", b, _zero(b)), fn.compare("fcmp", "olt", mod, _zero(mod))))
    mod_fixed = fn.select(fix, fn.binary("fadd", mod, b), mod)
    div = fn.select(fix, fn.binary("fsub", div, _one(div)), div)
    mod = fn.select(fn.compare("fcmp", "une", mod, _zero(mod)), mod_fixed, fn.intrinsic("copysign", [_zero(b), b], b.dtype))
    floor = fn.intrinsic("floor", [div], div.dtype)
    floor = fn.select(fn.compare("fcmp", "ogt", fn.binary("fsub", div, floor), literal(0.5, div.dtype)),
                      fn.binary("fadd", floor, _one(floor)), floor)
    quotient = fn.binary("fdiv", a, b)
    floor = fn.select(fn.compare("fcmp", "une", div, _zero(div)), floor,
                      fn.intrinsic("copysign", [_zero(div), quotient], div.dtype))
    b_is_zero = fn.compare("fcmp", "oeq", b, _zero(b))
    return fn.select(b_is_zero, quotient, floor), fn.select(b_is_zero, fn.binary("frem", a, b), mod)


def _sign_float(fn, x):
    positive = fn.compare("fcmp", "ogt", x, _zero(x))
    negative = fn.compare("fcmp", "olt", x, _zero(x))
    return fn.select(positive, _one(x), fn.select(negative, literal(-1, x.dtype), x))


def _heaviside(fn, x, h):
    nan = fn.compare("fcmp", "uno", x, x)
    zero = fn.compare("fcmp", "oeq", x, _zero(x))
    negative = fn.compare("fcmp", "olt", x, _zero(x))
    step = fn.select(negative, _zero(x), _one(x))
    return fn.select(nan, x, fn.select(zero, h, step))


def _logaddexp(fn, x, y, *, base2: bool):
    """NumPy's npy_logaddexp(2): exact for equal arguments (infinities), NaN in, NaN out."""
    exp, log1p = ("exp2", "log1p") if base2 else ("exp", "log1p")
    scale = (1 / math.log(2)) if base2 else 1.0
    same = fn.compare("fcmp", "oeq", x, y)
    tmp = fn.binary("fsub", x, y)

    def softplus(big, negative_gap):
        e = fn.math(exp, [negative_gap], x.dtype)
        term = fn.math(log1p, [e], x.dtype)
        if base2:
            term = fn.binary("fmul", term, literal(scale, x.dtype))
        return fn.binary("fadd", big, term)
    when_x = softplus(x, fn.emit(f"fneg {reg_type(x.dtype)} {tmp.ref}", x.dtype))
    when_y = softplus(y, tmp)
    result = fn.select(fn.compare("fcmp", "ogt", tmp, _zero(tmp)), when_x,
                       fn.select(fn.compare("fcmp", "ole", tmp, _zero(tmp)), when_y, tmp))
    exact = fn.binary("fadd", x, literal(1.0 if base2 else math.log(2), x.dtype))
    return fn.select(same, exact, result)


# e**r on [-ln(2)/2, ln(2)/2]: 1 + r + r**2 (c2 + c3 r + ... + c6 r**4), fitted for the least
# maximum relative error (4e-9 with these float32 coefficients; the degree-7 Taylor polynomial: 5e-9)
_EXP_POLYNOMIAL = (1.0, 1.0, 0.4999999403953552, 0.1666652113199234, 0.04166838899254799,
                   0.008368710987269878, 0.001381460577249527)


def _exp(fn, x):
    """exp; float32 inline (libmvec's expf is a call with slow paths for special cases): e**x =
    2**n * e**r with n = rint(x / ln 2) and |r| <= ln(2)/2, e**r by a degree-6 polynomial. The
    scaling by 2**n rounds once, so subnormal results are exact: AVX-512's vscalef (llvm.ldexp)
    does it in one instruction, over- and underflow included; elsewhere ldexp is a libm call per
    lane, so 2**n is built as two normal powers of two. Within 1 ulp of the true value, as
    tests/test_llvm.py checks."""
    if x.dtype != np.float32:
        return fn.math("exp", [x], x.dtype)
    f, i32 = x.dtype, np.dtype(np.int32)
    high, low = 88.72283935546875, -103.97208404541016   # beyond: inf, 0
    scalef = "avx512f" in fn.module.cpu_features
    if scalef:   # clamped just past both limits: vscalef overflows to inf and underflows to 0 itself
        xc = fn.select(fn.compare("fcmp", "olt", x, literal(89.0, f)), x, literal(89.0, f))
        xc = fn.select(fn.compare("fcmp", "ogt", xc, literal(-104.0, f)), xc, literal(-104.0, f))
    else:
        inside = fn.binary("and", fn.compare("fcmp", "ole", x, literal(high, f)), fn.compare("fcmp", "oge", x, literal(low, f)))
        xc = fn.select(inside, x, _zero(x))
    n = fn.intrinsic("rint", [fn.binary("fmul", xc, literal(1 / math.log(2), f))], f)
    minus_n = fn.emit(f"fneg float {n.ref}", f)
    r = fn.intrinsic("fma", [minus_n, literal(0.693145751953125, f), xc], f)
    r = fn.intrinsic("fma", [minus_n, literal(1.428606765330187045e-06, f), r], f)
    p = literal(_EXP_POLYNOMIAL[-1], f)
    for c in reversed(_EXP_POLYNOMIAL[:-1]):
        p = fn.intrinsic("fma", [p, r, literal(c, f)], f)
    ni = fn.convert("fptosi", n, i32)
    if scalef:
        fn.module.declare("llvm.ldexp.f32.i32", "declare float @llvm.ldexp.f32.i32(float, i32)")
        result = fn.call("llvm.ldexp.f32.i32", [p, ni], f)
        return fn.select(fn.compare("fcmp", "uno", x, x), x, result)
    half = fn.binary("ashr", ni, literal(1, i32))
    for part in (half, fn.binary("sub", ni, half)):
        bits = fn.binary("shl", fn.binary("add", part, literal(127, i32)), literal(23, i32))
        p = fn.binary("fmul", p, fn.convert("bitcast", bits, f))
    beyond = fn.select(fn.compare("fcmp", "ogt", x, literal(high, f)), literal(math.inf, f), _zero(x))
    return fn.select(inside, p, fn.select(fn.compare("fcmp", "uno", x, x), x, beyond))


def _isinf(fn, x):
    return fn.compare("fcmp", "oeq", fn.intrinsic("fabs", [x], x.dtype), literal(math.inf, x.dtype))


def _isfinite(fn, x):
    return fn.compare("fcmp", "olt", fn.intrinsic("fabs", [x], x.dtype), literal(math.inf, x.dtype))


def _signbit(fn, x):
    bits = np.dtype(f"i{x.dtype.itemsize}")
    return fn.compare("icmp", "slt", fn.convert("bitcast", x, bits), literal(0, bits))


def _to_bool(fn, x):
    return cast(fn, x, BOOL)


def _logical(opcode):
    return lambda fn, a, b: fn.binary(opcode, _to_bool(fn, a), _to_bool(fn, b))


def _logical_not(fn, x):
    return fn.binary("xor", _to_bool(fn, x), literal(True, BOOL))


def _math(function):
    return lambda fn, *args: fn.math(function, list(args), args[0].dtype)


def _scaled(factor):
    return lambda fn, x: fn.binary("fmul", x, literal(factor, x.dtype))


def _fcmp(predicate):
    return lambda fn, a, b: fn.compare("fcmp", predicate, a, b)


def _intrinsic(name):
    return lambda fn, *args: fn.intrinsic(name, list(args), args[0].dtype)


def _binary(opcode):
    return lambda fn, a, b: fn.binary(opcode, a, b)


def _identity(fn, x):
    return x


FLOAT = {
    "add": _binary("fadd"), "subtract": _binary("fsub"), "multiply": _binary("fmul"), "divide": _binary("fdiv"),
    "floor_divide": lambda fn, a, b: _float_divmod(fn, a, b)[0],
    "remainder": lambda fn, a, b: _float_divmod(fn, a, b)[1],
    "fmod": _binary("frem"),
    "power": _math("power"), "float_power": _math("power"),
    "negative": lambda fn, x: fn.emit(f"fneg {reg_type(x.dtype)} {x.ref}", x.dtype),
    "positive": _identity, "conjugate": _identity,
    "absolute": _intrinsic("fabs"), "fabs": _intrinsic("fabs"),
    "sign": _sign_float,
    "reciprocal": lambda fn, x: fn.binary("fdiv", _one(x), x),
    "square": lambda fn, x: fn.binary("fmul", x, x),
    "sqrt": _intrinsic("sqrt"),
    "heaviside": _heaviside,
    "logaddexp": lambda fn, x, y: _logaddexp(fn, x, y, base2=False),
    "logaddexp2": lambda fn, x, y: _logaddexp(fn, x, y, base2=True),
    **{name: _math(name) for name in mathlib.FUNCTIONS if name != "power"},
    "exp": _exp, "hypot": hypot,
    "deg2rad": _scaled(math.pi / 180), "radians": _scaled(math.pi / 180),
    "rad2deg": _scaled(180 / math.pi), "degrees": _scaled(180 / math.pi),
    "floor": _intrinsic("floor"), "ceil": _intrinsic("ceil"), "trunc": _intrinsic("trunc"), "rint": _intrinsic("rint"),
    "copysign": _intrinsic("copysign"),
    "signbit": _signbit,
    "isnan": lambda fn, x: fn.compare("fcmp", "uno", x, x),
    "isinf": _isinf, "isfinite": _isfinite,
    "greater": _fcmp("ogt"), "greater_equal": _fcmp("oge"), "less": _fcmp("olt"), "less_equal": _fcmp("ole"),
    "equal": _fcmp("oeq"), "not_equal": _fcmp("une"),
    "maximum": _intrinsic("maximum"), "minimum": _intrinsic("minimum"),
    "fmax": _intrinsic("maxnum"), "fmin": _intrinsic("minnum"),
    "logical_and": _logical("and"), "logical_or": _logical("or"), "logical_xor": _logical("xor"),
    "logical_not": _logical_not,
}

# -- integer ops ---------------------------------------------------------------------------------


def _signed(x: V) -> bool:
    return x.dtype.kind == "i"


def _safe_divisor(fn, a, b):
    """b, with 0 (and MIN / -1 for signed types) replaced by 1 so LLVM's division is defined;
    and whether b was 0."""
    zero = fn.compare("icmp", "eq", b, _zero(b))
    bad = zero
    if _signed(a):
        low, _ = int_limits(a.dtype)
        overflow = fn.binary("and", fn.compare("icmp", "eq", a, literal(low, a.dtype)),
                             fn.compare("icmp", "eq", b, literal(-1, b.dtype)))
        bad = fn.binary("or", zero, overflow)
    return fn.select(bad, _one(b), b), zero


def _int_floor_divide(fn, a, b):
    """Python's floor division; x // 0 is 0 and MIN // -1 wraps to MIN, as NumPy gives."""
    d, zero = _safe_divisor(fn, a, b)
    if not _signed(a):
        return fn.select(zero, _zero(a), fn.binary("udiv", a, d))
    q = fn.binary("sdiv", a, d)
    r = fn.binary("srem", a, d)
    adjust = fn.binary("and", fn.compare("icmp", "ne", r, _zero(r)),
                       fn.binary("xor", fn.compare("icmp", "slt", r, _zero(r)), fn.compare("icmp", "slt", d, _zero(d))))
    q = fn.select(adjust, fn.binary("sub", q, _one(q)), q)
    # MIN // -1: d was made 1, so q is MIN already
    return fn.select(zero, _zero(a), q)


def _int_remainder(fn, a, b, *, floor: bool):
    """Python's modulo (the divisor's sign) or C's fmod (the dividend's); x % 0 is 0."""
    d, zero = _safe_divisor(fn, a, b)
    if not _signed(a):
        return fn.select(zero, _zero(a), fn.binary("urem", a, d))
    r = fn.binary("srem", a, d)
    if floor:
        adjust = fn.binary("and", fn.compare("icmp", "ne", r, _zero(r)),
                           fn.binary("xor", fn.compare("icmp", "slt", r, _zero(r)), fn.compare("icmp", "slt", d, _zero(d))))
        r = fn.select(adjust, fn.binary("add", r, d), r)
    # MIN % -1 is 0, which srem of MIN by 1 gives
    return fn.select(zero, _zero(a), r)


def _int_abs(fn, x):
    if not _signed(x):
        return x
    return fn.select(fn.compare("icmp", "slt", x, _zero(x)), fn.binary("sub", _zero(x), x), x)


def _int_sign(fn, x):
    positive = fn.compare("icmp", "sgt" if _signed(x) else "ugt", x, _zero(x))
    result = cast(fn, positive, x.dtype)
    if _signed(x):
        negative = cast(fn, fn.compare("icmp", "slt", x, _zero(x)), x.dtype)
        result = fn.binary("sub", result, negative)
    return result


def _shift(fn, a, b, *, left: bool):
    """NumPy's npy_lshift/npy_rshift: a shift by the width or more (or a negative one) gives 0,
    or -1 for a negative value shifted right."""
    bits = literal(8 * a.dtype.itemsize, b.dtype)
    in_range = fn.compare("icmp", "ult", b, bits)
    if left:
        return fn.select(in_range, fn.binary("shl", a, b), _zero(a))
    shifted = fn.binary("ashr" if _signed(a) else "lshr", a, b)
    beyond = _zero(a)
    if _signed(a):
        beyond = fn.select(fn.compare("icmp", "slt", a, _zero(a)), literal(-1, a.dtype), _zero(a))
    return fn.select(in_range, shifted, beyond)


def _icmp(signed_predicate, unsigned_predicate=None):
    unsigned_predicate = unsigned_predicate or signed_predicate
    return lambda fn, a, b: fn.compare("icmp", signed_predicate if _signed(a) else unsigned_predicate, a, b)


def _int_extremum(stem):
    return lambda fn, a, b: fn.intrinsic(("s" if _signed(a) else "u") + stem, [a, b], a.dtype)


def _bitwise_count(fn, x):
    count = fn.intrinsic("ctpop", [_int_abs(fn, x)], x.dtype)
    return cast(fn, count, np.dtype(np.uint8))


def _constant(value):
    return lambda fn, x: literal(value, BOOL)


INT = {
    "add": _binary("add"), "subtract": _binary("sub"), "multiply": _binary("mul"),
    "floor_divide": _int_floor_divide,
    "remainder": lambda fn, a, b: _int_remainder(fn, a, b, floor=True),
    "fmod": lambda fn, a, b: _int_remainder(fn, a, b, floor=False),
    "negative": lambda fn, x: fn.binary("sub", _zero(x), x),
    "positive": _identity, "conjugate": _identity,
    "absolute": _int_abs, "sign": _int_sign,
    "square": lambda fn, x: fn.binary("mul", x, x),
    "floor": _identity, "ceil": _identity, "trunc": _identity, "rint": _identity,
    "isnan": _constant(False), "isinf": _constant(False), "isfinite": _constant(True),
    "greater": _icmp("sgt", "ugt"), "greater_equal": _icmp("sge", "uge"),
    "less": _icmp("slt", "ult"), "less_equal": _icmp("sle", "ule"),
    "equal": _icmp("eq"), "not_equal": _icmp("ne"),
    "maximum": _int_extremum("max"), "minimum": _int_extremum("min"),
    "fmax": _int_extremum("max"), "fmin": _int_extremum("min"),
    "logical_and": _logical("and"), "logical_or": _logical("or"), "logical_xor": _logical("xor"),
    "logical_not": _logical_not,
    "bitwise_and": _binary("and"), "bitwise_or": _binary("or"), "bitwise_xor": _binary("xor"),
    "invert": lambda fn, x: fn.binary("xor", x, literal(-1, x.dtype)),
    "left_shift": lambda fn, a, b: _shift(fn, a, b, left=True),
    "right_shift": lambda fn, a, b: _shift(fn, a, b, left=False),
    "bitwise_count": _bitwise_count,
}

BOOLEAN = {
    "add": _binary("or"), "multiply": _binary("and"),
    "maximum": _binary("or"), "minimum": _binary("and"), "fmax": _binary("or"), "fmin": _binary("and"),
    "logical_and": _binary("and"), "logical_or": _binary("or"), "logical_xor": _binary("xor"),
    "logical_not": lambda fn, x: fn.binary("xor", x, literal(True, BOOL)),
    "bitwise_and": _binary("and"), "bitwise_or": _binary("or"), "bitwise_xor": _binary("xor"),
    "invert": lambda fn, x: fn.binary("xor", x, literal(True, BOOL)),
    "positive": _identity, "absolute": _identity, "conjugate": _identity,
    "greater": _icmp("ugt"), "greater_equal": _icmp("uge"), "less": _icmp("ult"), "less_equal": _icmp("ule"),
    "equal": _icmp("eq"), "not_equal": _icmp("ne"),
    "isnan": _constant(False), "isinf": _constant(False), "isfinite": _constant(True),
}

COMPLEX = {**complexes.COMPLEX, "isnan": complexes.on_either(FLOAT["isnan"], "or"),
           "isinf": complexes.on_either(FLOAT["isinf"], "or"), "isfinite": complexes.on_either(FLOAT["isfinite"], "and")}

_TABLES = {"f": FLOAT, "i": INT, "u": INT, "b": BOOLEAN, "c": COMPLEX}
# NumPy scalars' math (element code), where it differs from the array loops': the complex product
_SCALAR_TABLES = {**_TABLES, "c": {**COMPLEX, **complexes.SCALAR_MATH}}

# Python int arithmetic (a loop nest's Python ints, nests/pynumbers.py): LLVM's overflow-checked
# intrinsic per op (negative: 0 - x); None where LLVM has none (a left shift may leave int64)
PYTHON_INT = {"add": "sadd", "subtract": "ssub", "multiply": "smul", "negative": "ssub", "left_shift": None}


def python_int(fn: Function, op: str, a: V, b: V) -> tuple[V, V]:
    """Python int op `op` on int64 a and b: (its int64 result, whether Python's would leave int64)."""
    if PYTHON_INT[op] is None:
        raise Unlowerable("a Python int shifted left in a loop nest (it may leave int64)")
    symbol = f"llvm.{PYTHON_INT[op]}.with.overflow.i64"
    fn.module.declare(symbol, f"declare {{i64, i1}} @{symbol}(i64, i64)")
    pair = fn.emit(f"call {{i64, i1}} @{symbol}(i64 {a.ref}, i64 {b.ref})", I64)
    return fn.emit(f"extractvalue {{i64, i1}} {pair.ref}, 0", I64), fn.emit(f"extractvalue {{i64, i1}} {pair.ref}, 1", BOOL)


# -- ops with their own operand handling ---------------------------------------------------------

def _power(fn, operands, out, scalars=False, nonnegative=False):
    """x ** c for a constant c: NumPy's fast paths (square, sqrt, reciprocal) and, for integers,
    exact repeated multiplication; other exponents go to pow. `scalars`: of NumPy scalars, whose
    complex power is npy_cpow's for every exponent. An integer power of an array exponent where
    no exponent can be negative (`nonnegative`: the kernel knows, `2 ** np.arange(8)`; or
    unsigned) squares over the exponent's bits: NumPy raises for a negative one."""
    (base_dtype, exp_dtype), _ = ufunc_loop("power", operands)
    base, exponent = operands
    x = cast(fn, base, base_dtype)
    if x.dtype.kind == "c":
        return complexes.power(fn, x, exponent, fast=not scalars)
    if isinstance(exponent, Const) and np.ndim(exponent.value) == 0:
        c = exponent.value
        if x.dtype.kind in "iu":
            c = int(c)
            if c < 0:
                raise Unlowerable("integer power with a negative exponent")
            result, square = _one(x), x
            while c:
                if c & 1:
                    result = fn.binary("mul", result, square)
                c >>= 1
                if c:
                    square = fn.binary("mul", square, square)
            return result
        fast = {2: lambda: fn.binary("fmul", x, x), 1: lambda: x, 0.5: lambda: fn.intrinsic("sqrt", [x], x.dtype),
                -1: lambda: fn.binary("fdiv", _one(x), x)}
        if float(c) in fast and x.dtype.kind == "f":
            return fast[float(c)]()
    if x.dtype.kind != "f" and (nonnegative or exp_dtype.kind == "u"):
        return _integer_power(fn, x, cast(fn, exponent, exp_dtype))
    if x.dtype.kind != "f":
        raise Unlowerable("integer power with an array exponent (NumPy raises for negative ones)")
    return fn.math("power", [x, cast(fn, exponent, exp_dtype)], x.dtype)


def _integer_power(fn, x: V, exponent: V) -> V:
    """x ** e for an integer e >= 0 (or unsigned) by squaring, one step a bit of e: the product
    NumPy's loop makes, wrapping alike."""
    bits = cast(fn, exponent, I64)   # uint64's bits as they are
    steps = fn.binary("sub", literal(64, I64), fn.intrinsic("ctlz", [bits, literal(False, BOOL)], I64))

    def step(k: V, carried: list) -> list:
        result, square = carried
        odd = fn.compare("icmp", "ne", fn.binary("and", fn.binary("lshr", bits, k), literal(1, I64)), literal(0, I64))
        return [fn.select(odd, fn.binary("mul", result, square), result), fn.binary("mul", square, square)]
    return fn.loop(literal(0, I64), steps, [_one(x), x], step)[0]


def _where(fn, operands, out):
    cond, x, y = operands
    return fn.select(cast(fn, cond, BOOL), cast(fn, x, out), cast(fn, y, out))


def _clip(fn, operands, out, a_min=None, a_max=None):
    value = cast(fn, operands[0], out)
    extremum = table(out)
    for bound, name in ((a_min, "maximum"), (a_max, "minimum")):
        if bound is not None and not (isinstance(bound, Const) and bound.value is None):
            if name not in extremum:
                raise Unlowerable(f"clip of {out} (NumPy orders complex values lexicographically)")
            value = extremum[name](fn, value, cast(fn, bound, out))
    return value


def _round(fn, operands, out, decimals=0):
    x = cast(fn, operands[0], out)
    if out.kind in "iu" and decimals >= 0:
        return x
    if out.kind != "f":
        raise Unlowerable(f"round of {out} to {decimals} decimals")
    if decimals == 0:
        return fn.intrinsic("rint", [x], out)
    scale = literal(10.0 ** abs(decimals), out)
    into, back = ("fmul", "fdiv") if decimals > 0 else ("fdiv", "fmul")
    return fn.binary(back, fn.intrinsic("rint", [fn.binary(into, x, scale)], out), scale)


def _astype(fn, operands, out, dtype=None):
    return cast(fn, operands[0], out)


SPECIAL = {"power": _power, "where": _where, "clip": _clip, "round": _round, "astype": _astype,
           "random_bits": random_bits, **complexes.SPECIAL}
_SCALAR_SPECIAL = {**SPECIAL, "power": lambda fn, operands, out: _power(fn, operands, out, scalars=True)}


def table(dtype: np.dtype, scalars: bool = False) -> dict:
    """The op table of a dtype's kind (`scalars`: as NumPy computes on NumPy scalars)."""
    try:
        return (_SCALAR_TABLES if scalars else _TABLES)[np.dtype(dtype).kind]
    except KeyError:
        raise Unlowerable(f"dtype {dtype} has no LLVM lowering") from None


def emit(fn: Function, op: str, operands: list, kwargs: dict, out: np.dtype, scalars: bool = False) -> V:
    """The value of registry op `op` on operands (Vs, or Consts kept weak until their loop dtype
    is known), of dtype `out`; `scalars`: the operands are NumPy scalars (a loop nest's element
    code), computed by NumPy's scalar math where it differs from its array loops."""
    special = _SCALAR_SPECIAL if scalars else SPECIAL
    if op in special:
        value = special[op](fn, operands, np.dtype(out), **kwargs)
    else:
        loop_in, loop_out = ufunc_loop(op, operands)
        if len(set(loop_in)) > 1:
            raise Unlowerable(f"{op} with mixed loop dtypes {', '.join(map(str, loop_in))}")
        rules = table(loop_in[0], scalars)
        if op not in rules:
            raise Unlowerable(f"no LLVM lowering of {op} for {loop_in[0]}")
        value = rules[op](fn, *(cast(fn, o, d) for o, d in zip(operands, loop_in)))
        value = cast(fn, value, loop_out)
    if value.dtype != np.dtype(out):
        value = cast(fn, value, out)
    return value

