"""The op table of Triton codegen: each pointwise registry op as a Triton expression, per dtype
kind, with NumPy's exact semantics where Triton's own differ (integer floor division and modulo
signs, division by zero, shifts past the width, NaN in maximum/minimum, x86's results for
out-of-range float-to-int casts, bools as 0/1).

A ufunc's operands are first cast to the loop dtypes NumPy itself picks (`resolve_dtypes`, Python
scalars weak as NEP 50 says), so every value is computed in the type NumPy computes it in; Triton's
own promotion never decides a type. float16 loops compute in float32 and round each result, as
NumPy's half loops do. Ops and dtype combinations not in the tables raise `Unlowerable`, and the
kernel runs with NumPy instead.

Math functions: on the GPU through libdevice (the CUDA math library: within 1-4 ulp of the true
value, see README); in Triton's interpreter, which has no libdevice, the few that `tl` has (exp,
log, sin, cos, exp2, log2: NumPy's own functions there); the rest are Unlowerable in the interpreter.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from numpile.lowering import Const
from numpile.lowering import ufunc_loops


class Unlowerable(Exception):
    """Something a kernel needs that codegen cannot render yet: the kernel runs with NumPy."""


class Val(NamedTuple):
    """A value in a kernel body: a Triton expression (usually a temporary's name) and its NumPy dtype."""

    text: str
    dtype: np.dtype
    weak: bool = False   # a Python scalar (NEP 50 weak) loaded from a buffer


TL_TYPES = {
    np.dtype(np.bool_): "tl.int1",
    **{np.dtype(f"{k}{n}"): f"tl.{name}{8 * n}" for k, name in (("i", "int"), ("u", "uint")) for n in (1, 2, 4, 8)},
    np.dtype(np.float16): "tl.float16", np.dtype(np.float32): "tl.float32", np.dtype(np.float64): "tl.float64",
}
BOOL = np.dtype(np.bool_)
F32 = np.dtype(np.float32)


def tl_type(dtype) -> str:
    dtype = np.dtype(dtype)
    if not dtype.isnative:
        raise Unlowerable(f"dtype {dtype} is not in this machine's byte order")
    try:
        return TL_TYPES[dtype]
    except KeyError:
        raise Unlowerable(f"dtype {dtype} has no Triton lowering") from None


def _bits_type(dtype: np.dtype) -> np.dtype:
    return np.dtype(f"i{dtype.itemsize}")


def constant(value, dtype) -> str:
    """A scalar constant of `dtype`, converted as NumPy converts it (NaN, inf and -0.0 by their bits)."""
    dtype = np.dtype(dtype)
    ty = tl_type(dtype)
    if dtype.kind == "b":
        return f"tl.full([], {bool(value)}, {ty})"
    if dtype.kind in "iu":
        value = int(value)
        if dtype.kind == "u" and value >= 2 ** 63:   # beyond int64: its bits
            return f"tl.full([], {value - 2 ** 64}, tl.int64).to({ty}, bitcast=True)"
        return f"tl.full([], {value}, {ty})"
    cell = np.asarray(value).astype(dtype)
    if np.isfinite(cell) and not (cell == 0 and np.signbit(cell)):
        return f"tl.full([], {float(cell)!r}, {ty})"
    bits = _bits_type(dtype)
    return f"tl.full([], {int(cell.view(bits))}, {tl_type(bits)}).to({ty}, bitcast=True)"


# -- conversions ---------------------------------------------------------------------------------

def cast(em, v, dtype) -> Val:
    """v (a Val, or a Const operand) as `dtype`, converted as NumPy's astype converts."""
    dtype = np.dtype(dtype)
    if isinstance(v, Const):
        if np.ndim(v.value) != 0 or isinstance(v.value, (str, bytes)):
            raise Unlowerable(f"constant operand {v.value!r}")
        if v.dtype is None and isinstance(v.value, int) and not isinstance(v.value, bool) and dtype.kind in "iu":
            info = np.iinfo(dtype)
            if not info.min <= v.value <= info.max:
                raise Unlowerable(f"the Python int {v.value} in a {dtype} loop (NumPy raises)")
        return em.let(constant(v.value, dtype), dtype)
    src = v.dtype
    if src == dtype:
        return v
    if v.weak and src.kind == "i" and dtype.kind != "f":
        raise Unlowerable(f"a Python int in a {dtype} loop (NumPy raises when it does not fit)")
    ty = tl_type(dtype)
    if dtype.kind == "b":
        return em.let(f"{v.text} != {constant(0, src)}", dtype)
    if src.kind == "b":   # 0 or 1 whatever Triton's extension of an int1 is
        return em.let(f"tl.where({v.text}, {constant(1, dtype)}, {constant(0, dtype)})", dtype)
    if src.kind == "f" and dtype.kind in "iu":
        return _float_to_int(em, v, dtype)
    return em.let(f"{v.text}.to({ty})", dtype)


def _float_to_int(em, v: Val, dtype: np.dtype) -> Val:
    """x86's truncating conversion, as NumPy does it: a NaN or out-of-range value becomes the most
    negative int32 (int64 for 64-bit targets), then narrower targets keep its low bits."""
    if dtype.kind == "u" and dtype.itemsize >= 4:
        raise Unlowerable(f"float to {dtype} conversion (NumPy's result depends on its SIMD loop)")
    via = np.dtype(np.int64) if dtype.itemsize == 8 else np.dtype(np.int32)
    low = int(np.iinfo(via).min)
    fits = em.let(f"({v.text} >= {constant(float(low), v.dtype)}) & ({v.text} < {constant(-float(low), v.dtype)})", BOOL)
    inside = em.let(f"tl.where({fits.text}, {v.text}, {constant(0, v.dtype)}).to({tl_type(via)})", via)
    value = em.let(f"tl.where({fits.text}, {inside.text}, {constant(low, via)})", via)
    return value if via == dtype else em.let(f"{value.text}.to({tl_type(dtype)})", dtype)


def ufunc_loop(name: str, operands: list) -> tuple:
    """NumPy's loop dtypes for a ufunc on these operands (numpile.lowering's), Unlowerable where
    NumPy has none."""
    try:
        return ufunc_loops.ufunc_loop(name, operands)
    except (TypeError, ValueError) as e:
        raise Unlowerable(f"{name}: {e}") from None


# -- float ops -----------------------------------------------------------------------------------
# A table entry is a format string over the operands' texts ({0}, {1}; {z} a zero and {o} a one of
# the operands' dtype, {t} its Triton type) or a function (em, *operands) -> expression text.

def _fmod(em, a: Val, b: Val) -> str:
    """C's fmod: NaN for an infinite or NaN dividend, a zero or NaN divisor (the GPU's float `%`
    gives the dividend's inf back for inf % y)."""
    inf, nan = constant(math.inf, a.dtype), constant(math.nan, a.dtype)
    result = f"{a.text} % {b.text}"
    # nested selects, not `|`: the interpreter cannot or a scalar comparison into a block one
    for invalid in (f"{b.text} == {constant(0, a.dtype)}", f"{b.text} != {b.text}", f"tl.abs({a.text}) == {inf}",
                    f"{a.text} != {a.text}"):
        result = f"tl.where({invalid}, {nan}, {result})"
    return result


def _float_divmod(em, a: Val, b: Val) -> tuple[str, str]:
    """NumPy's npy_divmod: (floor quotient, remainder with the divisor's sign)."""
    z, one = constant(0, a.dtype), constant(1, a.dtype)
    mod = em.let(_fmod(em, a, b), a.dtype).text
    div = em.let(_divide(a.dtype, f"{a.text} - {mod}", b.text), a.dtype).text
    fix = em.let(f"({mod} != {z}) & (({b.text} < {z}) != ({mod} < {z}))", BOOL).text
    div = em.let(f"tl.where({fix}, {div} - {one}, {div})", a.dtype).text
    mod = em.let(f"tl.where({mod} != {z}, tl.where({fix}, {mod} + {b.text}, {mod}), {_copysign(em, Val(z, a.dtype), b)})",
                 a.dtype).text
    floor = em.let(f"tl.floor({div})", a.dtype).text
    floor = em.let(f"tl.where({div} - {floor} > {constant(0.5, a.dtype)}, {floor} + {one}, {floor})", a.dtype).text
    quotient = em.let(_divide(a.dtype, a.text, b.text), a.dtype).text
    floor = em.let(f"tl.where({div} != {z}, {floor}, {_copysign(em, Val(z, a.dtype), Val(quotient, a.dtype))})",
                   a.dtype).text
    b_zero = em.let(f"{b.text} == {z}", BOOL).text
    return f"tl.where({b_zero}, {quotient}, {floor})", mod


def _divide(dtype: np.dtype, a: str, b: str) -> str:
    """a / b correctly rounded (Triton's float32 `/` may be approximate on the GPU)."""
    return f"tl.div_rn({a}, {b})" if dtype == F32 else f"({a}) / ({b})"


def _copysign(em, a: Val, b: Val) -> str:
    """a's magnitude with b's sign bit."""
    bits = np.dtype(f"u{a.dtype.itemsize}")
    sign_bit = 2 ** (8 * a.dtype.itemsize - 1)
    magnitude = f"({a.text}.to({tl_type(bits)}, bitcast=True) & {constant(sign_bit - 1, bits)})"
    sign = f"({b.text}.to({tl_type(bits)}, bitcast=True) & {constant(sign_bit, bits)})"
    return f"({magnitude} | {sign}).to({tl_type(a.dtype)}, bitcast=True)"


def _rint(em, x: Val) -> str:
    """Round half to even from floor (portable: no libdevice), keeping the sign of zero."""
    z, one, half = constant(0, x.dtype), constant(1, x.dtype), constant(0.5, x.dtype)
    f = em.let(f"tl.floor({x.text})", x.dtype).text
    d = em.let(f"{x.text} - {f}", x.dtype).text
    even = f"{f} * {half} == tl.floor({f} * {half})"
    r = em.let(f"tl.where({d} > {half}, {f} + {one}, tl.where({d} < {half}, {f}, tl.where({even}, {f}, {f} + {one})))",
               x.dtype).text
    return f"tl.where({r} == {z}, {x.text} * {z}, {r})"


def _math(name: str, interpreted: str | None = None):
    """A libdevice function; `interpreted`: the tl function that stands for it in the interpreter."""
    def render(em, *args: Val) -> str:
        texts = ", ".join(a.text for a in args)
        if em.interpreting:
            if interpreted is None:
                raise Unlowerable(f"{name} (libdevice) has no implementation in Triton's interpreter")
            return f"{interpreted}({texts})"
        return f"libdevice.{name}({texts})"
    return render


def _sin_cos(which: int):
    """float32 sin (0) or cos (1): the two of one value share one argument reduction (`_sincos`,
    SINCOS below; the compiler drops the half a kernel does not use). libdevice's sinf and cosf
    reduce the argument each: the chain `sin(x) * cos(x) + ...` was compute-bound at 81% of the
    copy floor. Other float dtypes: libdevice's sin and cos."""
    name = ("sin", "cos")[which]

    def render(em, x: Val) -> str:
        if x.dtype != F32:
            return _math(name, f"tl.{name}")(em, x)
        return em.shared(("sincos", x.text), lambda: em.let_all(f"_sincos({x.text})", (F32, F32)))[which].text
    return render


# float32 sin and cos with libdevice's sinf/cosf algorithm (their Cody-Waite reduction by pi/2 and
# polynomials, constants read from libdevice.10.bc) for |x| < 105615, the reduction done once for
# both. A block holding a larger |x|, inf or NaN takes the library's functions, whose Payne-Hanek
# reduction this does not repeat: one test per block (the largest |x|'s bits), not a branch per
# element as libdevice has. On the H100 the chain's kernel is bound by instructions (about 1.5% of its
# time for each one per element): 222 us with libdevice's two reductions, 196 with this, 183 without the test.
SINCOS = '''@triton.jit
def _sincos(x):
    if tl.max((x.to(tl.int32, bitcast=True) & 0x7FFFFFFF) + tl.zeros([1], tl.int32)) >= 0x47CE4780:   # 105615.0
        s = {sin}(x)
        c = {cos}(x)
    else:
        {quadrant}
        qf = q.to(tl.float32)   # from the integer, as libdevice: +0 for x = -0 (rint(-0) is -0: sin(-0) would be +0)
        r = tl.fma(qf, -1.570796251296997, x)
        r = tl.fma(qf, -7.549789415861596e-08, r)
        r = tl.fma(qf, -5.390302953474238e-15, r)
        r2 = r * r
        r3 = tl.fma(r2, r, 0.0)   # as libdevice: +0 for r = -0, so that sin(-0) is -0
        sin_r = tl.fma(tl.fma(tl.fma(-0.00019574658654164523, r2, 0.00833270326256752), r2, -0.16666662693023682),
                       r3, r)
        cos_r = tl.fma(tl.fma(tl.fma(tl.fma(2.4279579520225525e-05, r2, -0.0013887860113754869), r2,
                                     0.041666727513074875), r2, -0.4999999701976776), r2, 1.0)
        odd = (q & 1) != 0
        s = tl.where(odd, cos_r, sin_r)
        c = tl.where(odd, sin_r, cos_r)
        s = tl.where((q & 2) != 0, -s, s)
        c = tl.where(((q + 1) & 2) != 0, -c, c)
    return s, c
'''
# the quadrant: libdevice rounds to nearest; the interpreter, which has no libdevice, rounds half up
# (another quadrant only for x * 2/pi within rounding of a half: a reduction as accurate)
_QUADRANT = {False: "q = libdevice.float2int_rn(x * 0.6366197466850281)",
             True: "q = tl.where(x == x, tl.floor(x * 0.6366197466850281 + 0.5), 0.0).to(tl.int32)   # (NaN: the interpreter warns)"}


def helpers(interpreting: bool) -> str:
    """The Triton functions the table's expressions call (`_sincos`), as a kernel module defines them."""
    library = "tl" if interpreting else "libdevice"
    return SINCOS.format(sin=f"{library}.sin", cos=f"{library}.cos", quadrant=_QUADRANT[interpreting])


FLOAT = {
    "add": "{0} + {1}", "subtract": "{0} - {1}", "multiply": "{0} * {1}",
    "divide": lambda em, a, b: _divide(a.dtype, a.text, b.text),
    "floor_divide": lambda em, a, b: _float_divmod(em, a, b)[0],
    "remainder": lambda em, a, b: _float_divmod(em, a, b)[1],
    "fmod": _fmod,
    "negative": "-{0}", "positive": "{0}", "conjugate": "{0}",
    "absolute": "tl.abs({0})", "fabs": "tl.abs({0})",
    "sign": "tl.where({0} > {z}, {o}, tl.where({0} < {z}, -{o}, {0}))",
    "reciprocal": lambda em, x: _divide(x.dtype, constant(1, x.dtype), x.text),
    "square": "{0} * {0}",
    "sqrt": lambda em, x: f"tl.sqrt_rn({x.text})" if x.dtype == F32 else f"tl.sqrt({x.text})",
    "exp": _math("exp", "tl.exp"), "exp2": _math("exp2", "tl.exp2"), "log": _math("log", "tl.log"),
    "log2": _math("log2", "tl.log2"), "sin": _sin_cos(0), "cos": _sin_cos(1),
    "expm1": _math("expm1"), "log10": _math("log10"), "log1p": _math("log1p"), "cbrt": _math("cbrt"),
    "tan": _math("tan"), "arcsin": _math("asin"), "arccos": _math("acos"), "arctan": _math("atan"),
    "arctan2": _math("atan2"), "hypot": _math("hypot"),
    "sinh": _math("sinh"), "cosh": _math("cosh"), "tanh": _math("tanh"),
    "arcsinh": _math("asinh"), "arccosh": _math("acosh"), "arctanh": _math("atanh"),
    "power": _math("pow"), "float_power": _math("pow"),
    "deg2rad": lambda em, x: f"{x.text} * {constant(math.pi / 180, x.dtype)}",
    "radians": lambda em, x: f"{x.text} * {constant(math.pi / 180, x.dtype)}",
    "rad2deg": lambda em, x: f"{x.text} * {constant(180 / math.pi, x.dtype)}",
    "degrees": lambda em, x: f"{x.text} * {constant(180 / math.pi, x.dtype)}",
    "floor": "tl.floor({0})", "ceil": "tl.ceil({0})",
    "trunc": "tl.where({0} < {z}, tl.ceil({0}), tl.floor({0}))",
    "rint": _rint,
    "copysign": _copysign,
    "signbit": lambda em, x: f"{x.text}.to({tl_type(_bits_type(x.dtype))}, bitcast=True) < 0",
    "isnan": "{0} != {0}", "isinf": lambda em, x: f"tl.abs({x.text}) == {constant(math.inf, x.dtype)}",
    "isfinite": lambda em, x: f"tl.abs({x.text}) < {constant(math.inf, x.dtype)}",
    "heaviside": "tl.where({0} != {0}, {0}, tl.where({0} == {z}, {1}, tl.where({0} < {z}, {z}, {o})))",
    "greater": "{0} > {1}", "greater_equal": "{0} >= {1}", "less": "{0} < {1}", "less_equal": "{0} <= {1}",
    "equal": "{0} == {1}", "not_equal": "{0} != {1}",
    "maximum": "tl.maximum({0}, {1}, propagate_nan=tl.PropagateNan.ALL)",
    "minimum": "tl.minimum({0}, {1}, propagate_nan=tl.PropagateNan.ALL)",
    # NaN only where both are (NumPy's fmax, fmin), spelled out: what tl.maximum does with a NaN
    # unasked is the target's (the H200's compiled kernels gave NaN, the interpreter the number)
    "fmax": "tl.where({0} != {0}, {1}, tl.where({1} != {1}, {0}, tl.maximum({0}, {1})))",
    "fmin": "tl.where({0} != {0}, {1}, tl.where({1} != {1}, {0}, tl.minimum({0}, {1})))",
    "logical_and": "({0} != {z}) & ({1} != {z})", "logical_or": "({0} != {z}) | ({1} != {z})",
    "logical_xor": "({0} != {z}) != ({1} != {z})", "logical_not": "{0} == {z}",
}

# -- integer ops ---------------------------------------------------------------------------------


def _safe_divisor(em, a: Val, b: Val) -> tuple[str, str]:
    """b with 0 (and MIN / -1 for signed types) replaced by 1, so the division is defined; and
    whether b was 0 (NumPy gives 0 then)."""
    z, one = constant(0, b.dtype), constant(1, b.dtype)
    zero = em.let(f"{b.text} == {z}", BOOL).text
    bad = zero
    if a.dtype.kind == "i":
        low = constant(int(np.iinfo(a.dtype).min), a.dtype)
        bad = f"{zero} | (({a.text} == {low}) & ({b.text} == {constant(-1, b.dtype)}))"
    return em.let(f"tl.where({bad}, {one}, {b.text})", b.dtype).text, zero


def _int_divmod(em, a: Val, b: Val, floor: bool) -> tuple[str, str]:
    """(floor quotient, remainder with the divisor's sign), or C's truncated remainder (fmod)
    when not `floor`; x // 0 and x % 0 are 0 and MIN // -1 wraps to MIN, as NumPy gives."""
    d, zero = _safe_divisor(em, a, b)
    z, one = constant(0, a.dtype), constant(1, a.dtype)
    q = em.let(f"{a.text} // {d}", a.dtype).text   # Triton's // and % truncate, as C does
    r = em.let(f"{a.text} % {d}", a.dtype).text
    if a.dtype.kind == "i" and floor:
        fix = em.let(f"({r} != {z}) & (({r} < {z}) != ({d} < {z}))", BOOL).text
        q, r = f"tl.where({fix}, {q} - {one}, {q})", f"tl.where({fix}, {r} + {d}, {r})"
    return f"tl.where({zero}, {z}, {q})", f"tl.where({zero}, {z}, {r})"


def _shift(em, a: Val, b: Val, left: bool) -> str:
    """NumPy's npy_lshift/npy_rshift: a shift by the width or more (or a negative one) gives 0,
    or -1 for a negative value shifted right."""
    unsigned = tl_type(np.dtype(f"u{b.dtype.itemsize}"))
    in_range = f"{b.text}.to({unsigned}, bitcast=True) < {8 * a.dtype.itemsize}"
    z = constant(0, a.dtype)
    if left:
        return f"tl.where({in_range}, {a.text} << tl.where({in_range}, {b.text}, {constant(0, b.dtype)}), {z})"
    beyond = f"tl.where({a.text} < {z}, {constant(-1, a.dtype)}, {z})" if a.dtype.kind == "i" else z
    return f"tl.where({in_range}, {a.text} >> tl.where({in_range}, {b.text}, {constant(0, b.dtype)}), {beyond})"


INT = {
    "add": "{0} + {1}", "subtract": "{0} - {1}", "multiply": "{0} * {1}",
    "floor_divide": lambda em, a, b: _int_divmod(em, a, b, floor=True)[0],
    "remainder": lambda em, a, b: _int_divmod(em, a, b, floor=True)[1],
    "fmod": lambda em, a, b: _int_divmod(em, a, b, floor=False)[1],
    "negative": "{z} - {0}", "positive": "{0}", "conjugate": "{0}",
    "absolute": lambda em, x: f"tl.where({x.text} < {constant(0, x.dtype)}, {constant(0, x.dtype)} - {x.text}, {x.text})"
                if x.dtype.kind == "i" else x.text,
    "sign": "tl.where({0} > {z}, {o}, tl.where({0} < {z}, {z} - {o}, {z}))",
    "square": "{0} * {0}",
    "floor": "{0}", "ceil": "{0}", "trunc": "{0}", "rint": "{0}",
    "isnan": "{0} != {0}", "isinf": "{0} != {0}", "isfinite": "{0} == {0}",
    "greater": "{0} > {1}", "greater_equal": "{0} >= {1}", "less": "{0} < {1}", "less_equal": "{0} <= {1}",
    "equal": "{0} == {1}", "not_equal": "{0} != {1}",
    "maximum": "tl.maximum({0}, {1})", "minimum": "tl.minimum({0}, {1})",
    "fmax": "tl.maximum({0}, {1})", "fmin": "tl.minimum({0}, {1})",
    "logical_and": "({0} != {z}) & ({1} != {z})", "logical_or": "({0} != {z}) | ({1} != {z})",
    "logical_xor": "({0} != {z}) != ({1} != {z})", "logical_not": "{0} == {z}",
    "bitwise_and": "{0} & {1}", "bitwise_or": "{0} | {1}", "bitwise_xor": "{0} ^ {1}", "invert": "~{0}",
    "left_shift": lambda em, a, b: _shift(em, a, b, left=True),
    "right_shift": lambda em, a, b: _shift(em, a, b, left=False),
}

def _bool_compare(operator: str):
    """A comparison of bools as 0 and 1 (whatever the signedness of Triton's int1)."""
    def render(em, a: Val, b: Val) -> str:
        u8 = np.dtype(np.uint8)
        return f"{cast(em, a, u8).text} {operator} {cast(em, b, u8).text}"
    return render


BOOLEAN = {
    "add": "{0} | {1}", "multiply": "{0} & {1}",
    "maximum": "{0} | {1}", "minimum": "{0} & {1}", "fmax": "{0} | {1}", "fmin": "{0} & {1}",
    "logical_and": "{0} & {1}", "logical_or": "{0} | {1}", "logical_xor": "{0} != {1}", "logical_not": "{0} == {z}",
    "bitwise_and": "{0} & {1}", "bitwise_or": "{0} | {1}", "bitwise_xor": "{0} != {1}", "invert": "{0} == {z}",
    "positive": "{0}", "absolute": "{0}", "conjugate": "{0}",
    **{name: _bool_compare(operator) for name, operator in (("greater", ">"), ("greater_equal", ">="), ("less", "<"),
                                                            ("less_equal", "<="), ("equal", "=="), ("not_equal", "!="))},
    "isnan": "{0} != {0}", "isinf": "{0} != {0}", "isfinite": "{0} == {0}",
}

_TABLES = {"f": FLOAT, "i": INT, "u": INT, "b": BOOLEAN}


# -- ops with their own operand handling ---------------------------------------------------------

def _power(em, operands, out):
    """x ** c for a constant c: NumPy's fast paths (square, sqrt, reciprocal) and, for integers,
    exact repeated multiplication; other exponents through pow (libdevice)."""
    (base_dtype, exp_dtype), _ = ufunc_loop("power", operands)
    base, exponent = operands
    if isinstance(exponent, Const) and np.ndim(exponent.value) == 0:
        c = exponent.value
        x = cast(em, base, base_dtype)
        if x.dtype.kind in "iu":
            c = int(c)
            if c < 0:
                raise Unlowerable("integer power with a negative exponent")
            result, square = constant(1, x.dtype), x.text
            while c:
                if c & 1:
                    result = em.let(f"{result} * {square}", x.dtype).text
                c >>= 1
                if c:
                    square = em.let(f"{square} * {square}", x.dtype).text
            return Val(result, x.dtype)
        fast = {2.0: "square", 1.0: "positive", 0.5: "sqrt", -1.0: "reciprocal"}
        if x.dtype.kind == "f" and float(c) in fast:
            return _ufunc(em, fast[float(c)], [x])
    if np.dtype(base_dtype).kind != "f":
        raise Unlowerable("integer power with an array exponent (NumPy raises for negative ones)")
    return _ufunc(em, "power", operands)


def _where(em, operands, out):
    cond, x, y = operands
    c, a, b = cast(em, cond, BOOL), cast(em, x, out), cast(em, y, out)
    return em.let(f"tl.where({c.text}, {a.text}, {b.text})", out)


def _clip(em, operands, out, a_min=None, a_max=None):
    value = cast(em, operands[0], out)
    for bound, name in ((a_min, "maximum"), (a_max, "minimum")):
        if bound is not None and not (isinstance(bound, Const) and bound.value is None):
            value = _apply(em, name, [value, cast(em, bound, out)], out, out)
    return value


def _round(em, operands, out, decimals=0):
    x = cast(em, operands[0], out)
    if out.kind in "iu" and decimals >= 0:
        return x
    if out.kind != "f":
        raise Unlowerable(f"round of {out} to {decimals} decimals")
    if decimals == 0:
        return _ufunc(em, "rint", [x])
    work = F32 if out == np.float16 else out
    x = cast(em, x, work)
    scale = constant(10.0 ** abs(decimals), work)
    scaled = em.let(f"{x.text} * {scale}" if decimals > 0 else _divide(work, x.text, scale), work)
    r = em.let(_rint(em, scaled), work)
    back = em.let(_divide(work, r.text, scale) if decimals > 0 else f"{r.text} * {scale}", work)
    return cast(em, back, out)


def _astype(em, operands, out, dtype=None):
    return cast(em, operands[0], out)


SPECIAL = {"power": _power, "where": _where, "clip": _clip, "round": _round, "astype": _astype}


def _apply(em, op: str, values: list, loop: np.dtype, out: np.dtype) -> Val:
    """Table op `op` on values already of the loop dtype; float16 computes in float32."""
    table = _TABLES.get(np.dtype(loop).kind)
    if table is None or op not in table:
        raise Unlowerable(f"no Triton lowering of {op} for {loop}")
    if loop == np.float16:
        values = [cast(em, v, F32) for v in values]
        work_out = F32 if out == np.float16 else out
        return cast(em, _apply(em, op, values, F32, work_out), out)
    entry = table[op]
    if callable(entry):
        text = entry(em, *values)
    else:
        text = entry.format(*(v.text for v in values), z=constant(0, loop), o=constant(1, loop))
    return em.let(text, out)


def _ufunc(em, op: str, operands: list) -> Val:
    loop_in, loop_out = ufunc_loop(op, operands)
    if len(set(loop_in)) > 1:
        raise Unlowerable(f"{op} with mixed loop dtypes {', '.join(map(str, loop_in))}")
    values = [cast(em, o, d) for o, d in zip(operands, loop_in)]
    return _apply(em, op, values, loop_in[0], loop_out)


def emit(em, op: str, operands: list, kwargs: dict, out) -> Val:
    """The value of registry op `op` on operands (Vals, or Consts kept weak until their loop dtype
    is known), of NumPy dtype `out`."""
    out = np.dtype(out)
    if op in SPECIAL:
        value = SPECIAL[op](em, operands, out, **kwargs)
    else:
        value = _ufunc(em, op, operands)
    return cast(em, value, out)
