"""The op table of kernel codegen for complex64 and complex128 (scalar.py's, for dtype kind "c"):
each op computed on the real and imaginary parts (irbuilder's `parts` and `pack`) as NumPy's
loops and npy_math compute it: the product fused as NumPy's AVX2 loop has it (rounded twice by
its scalar math: SCALAR_MATH), Smith's division (scaled by the larger part of the divisor, a zero
divisor giving NumPy's infinities and NaNs), abs scaled by the larger part (libm's hypot on
scalars: hypot.py), exp as
e**re * (cos im + i sin im) with C99's special values, integer powers by repeated squaring as
npy_cpow takes them. NumPy's lexicographic comparisons and extrema, and the transcendental
functions not here, run with NumPy (Unlowerable).
"""

from __future__ import annotations

import math

import numpy as np

from numpile.lowering import Const

from .casts import cast
from .hypot import hypot
from .irbuilder import BOOL, Function, Unlowerable, V, literal, reg_type

# npy_cpow multiplies out integer exponents below this in magnitude; others go through clog/cexp
POWER_BY_SQUARING = 100


def _on_parts(rule):
    """A complex op from a rule on the operands' (real, imaginary) pairs giving a pair."""
    def op(fn: Function, *zs: V) -> V:
        re, im = rule(fn, *(fn.parts(z) for z in zs))
        return fn.pack(re, im, zs[0].dtype)
    return op


def _each(opcode):
    return _on_parts(lambda fn, a, b: (fn.binary(opcode, a[0], b[0]), fn.binary(opcode, a[1], b[1])))


def _neg(fn: Function, x: V) -> V:
    return fn.emit(f"fneg {reg_type(x.dtype)} {x.ref}", x.dtype)


def _multiply(fn, a, b):
    """npy_cpow's product: (ar br - ai bi) + i (ar bi + ai br)."""
    (ar, ai), (br, bi) = a, b
    return (fn.binary("fsub", fn.binary("fmul", ar, br), fn.binary("fmul", ai, bi)),
            fn.binary("fadd", fn.binary("fmul", ar, bi), fn.binary("fmul", ai, br)))


def _ufunc_multiply(fn, a, b):
    """np.multiply's (and np.square's) product: where NumPy's loop is its AVX2 one (FMA3 with
    it), each part is one fused multiply-add, ar br - (ai bi) and ar bi + (ai br), which gives
    other results than the product rounded twice (finite parts where it overflows)."""
    if not _fused(fn):
        return _multiply(fn, a, b)
    (ar, ai), (br, bi) = a, b
    return (fn.intrinsic("fma", [ar, br, _neg(fn, fn.binary("fmul", ai, bi))], ar.dtype),
            fn.intrinsic("fma", [ar, bi, fn.binary("fmul", ai, br)], ar.dtype))


def _fused(fn: Function) -> bool:
    """Whether NumPy's SIMD loops run their AVX2 (with FMA3) or AVX-512 version here: their
    multiply-adds are fused."""
    return {"avx2", "fma"} <= fn.module.cpu_features


def _reciprocal(fn, z):
    """NumPy's 1/z: with p the part of larger magnitude and q the other, r = q/p and
    d = p + q r; 1/d - i r/d, or r/d - i/d where the imaginary part is the larger."""
    re, im = z
    real_larger = fn.compare("fcmp", "ole", fn.intrinsic("fabs", [im], im.dtype), fn.intrinsic("fabs", [re], re.dtype))
    p, q = fn.select(real_larger, re, im), fn.select(real_larger, im, re)
    ratio = fn.binary("fdiv", q, p)
    d = fn.binary("fadd", p, fn.binary("fmul", q, ratio))
    one_over, ratio_over = fn.binary("fdiv", literal(1, d.dtype), d), fn.binary("fdiv", ratio, d)
    return fn.select(real_larger, one_over, ratio_over), _neg(fn, fn.select(real_larger, ratio_over, one_over))


def _divide(fn, a, b):
    """NumPy's division: with p the divisor's part of larger magnitude and q the other, the
    ratio q/p and the scale 1/(p + q*ratio) keep every step in range; both branches of NumPy's
    loop are one formula with the parts swapped, the imaginary part negated in the second.
    Division by zero divides each part by |0|, as NumPy does."""
    (ar, ai), (br, bi) = a, b
    abs_r, abs_i = fn.intrinsic("fabs", [br], br.dtype), fn.intrinsic("fabs", [bi], bi.dtype)
    real_larger = fn.compare("fcmp", "oge", abs_r, abs_i)   # false for a NaN: NumPy's else branch
    p, q = fn.select(real_larger, br, bi), fn.select(real_larger, bi, br)
    x, y = fn.select(real_larger, ar, ai), fn.select(real_larger, ai, ar)
    ratio = fn.binary("fdiv", q, p)
    scale = fn.binary("fdiv", literal(1, p.dtype), fn.binary("fadd", p, fn.binary("fmul", q, ratio)))
    re = fn.binary("fmul", fn.binary("fadd", x, fn.binary("fmul", y, ratio)), scale)
    im = fn.binary("fmul", fn.binary("fsub", y, fn.binary("fmul", x, ratio)), scale)
    im = fn.select(real_larger, im, _neg(fn, im))
    zero = fn.binary("and", fn.compare("fcmp", "oeq", abs_r, literal(0, br.dtype)),
                     fn.compare("fcmp", "oeq", abs_i, literal(0, bi.dtype)))
    return fn.select(zero, fn.binary("fdiv", ar, abs_r), re), fn.select(zero, fn.binary("fdiv", ai, abs_r), im)


def _exp(fn, z):
    """cexp: e**re (cos im + i sin im); a zero imaginary part kept exactly (exp(inf + 0j) is
    inf + 0j, not inf * sin(0) = NaN), and for an infinite or NaN imaginary part C99's values:
    zeros where re is -inf, (inf, NaN) where re is +inf."""
    re, im = z
    scale = fn.math("exp", [re], re.dtype)
    real = fn.binary("fmul", scale, fn.math("cos", [im], im.dtype))
    imag = fn.binary("fmul", scale, fn.math("sin", [im], im.dtype))
    inf, zero = literal(math.inf, re.dtype), literal(0, re.dtype)
    finite_im = fn.compare("fcmp", "olt", fn.intrinsic("fabs", [im], im.dtype), inf)
    minus_inf = fn.compare("fcmp", "oeq", re, literal(-math.inf, re.dtype))
    plus_inf = fn.compare("fcmp", "oeq", re, inf)
    nan = literal(math.nan, re.dtype)
    real = fn.select(finite_im, real, fn.select(minus_inf, zero, fn.select(plus_inf, inf, nan)))
    imag = fn.select(finite_im, imag, fn.select(minus_inf, zero, nan))
    im_zero = fn.compare("fcmp", "oeq", im, zero)
    return fn.select(im_zero, scale, real), fn.select(im_zero, im, imag)


def _absolute(fn: Function, z: V) -> V:
    """np.absolute's loop (NumPy's SIMD one, on every x86 target): with the larger part a and the
    smaller b, a * sqrt(r r + 1) of r = b / a (0 where a is 0 or b inf; r r + 1 fused where FMA3
    is), an infinite part giving inf and a NaN otherwise NaN."""
    re, im = (fn.intrinsic("fabs", [p], p.dtype) for p in fn.parts(z))
    dtype, inf = re.dtype, literal(math.inf, re.dtype)
    im = fn.select(fn.compare("fcmp", "oeq", re, inf), inf, im)
    re = fn.select(fn.compare("fcmp", "oeq", im, inf), inf, re)
    nan = literal(math.nan, dtype)
    im = fn.select(fn.compare("fcmp", "ord", re, re), im, nan)
    re = fn.select(fn.compare("fcmp", "ord", im, im), re, nan)
    larger = fn.select(fn.compare("fcmp", "ogt", re, im), re, im)
    smaller = fn.select(fn.compare("fcmp", "olt", im, re), im, re)
    divides = fn.binary("xor", fn.binary("or", fn.compare("fcmp", "oeq", larger, literal(0, dtype)),
                                         fn.compare("fcmp", "oeq", smaller, inf)), literal(True, BOOL))
    ratio = fn.select(divides, fn.binary("fdiv", smaller, larger), literal(0, dtype))
    one = literal(1, dtype)
    square = fn.intrinsic("fma", [ratio, ratio, one], dtype) if _fused(fn) else fn.binary("fadd", fn.binary("fmul", ratio, ratio), one)
    return fn.binary("fmul", fn.intrinsic("sqrt", [square], dtype), larger)


def _compare(predicate, join):
    """== and != of complex values: both parts equal, either part different."""
    def op(fn: Function, a: V, b: V) -> V:
        (ar, ai), (br, bi) = fn.parts(a), fn.parts(b)
        return fn.binary(join, fn.compare("fcmp", predicate, ar, br), fn.compare("fcmp", predicate, ai, bi))
    return op


def on_either(real_op, join: str):
    """A predicate of a complex value from the float one on its parts (isnan: either part's)."""
    def op(fn: Function, z: V) -> V:
        re, im = fn.parts(z)
        return fn.binary(join, real_op(fn, re), real_op(fn, im))
    return op


COMPLEX = {
    "add": _each("fadd"), "subtract": _each("fsub"),
    "multiply": _on_parts(_ufunc_multiply), "divide": _on_parts(_divide),
    "square": _on_parts(lambda fn, z: _ufunc_multiply(fn, z, z)), "reciprocal": _on_parts(_reciprocal),
    "negative": _on_parts(lambda fn, z: (_neg(fn, z[0]), _neg(fn, z[1]))),
    "positive": lambda fn, z: z,
    "conjugate": _on_parts(lambda fn, z: (z[0], _neg(fn, z[1]))),
    "absolute": _absolute,
    "exp": _on_parts(_exp),
    "equal": _compare("oeq", "and"), "not_equal": _compare("une", "or"),
}
# NumPy scalars' math (np.complex128 * np.complex128, abs of one): the product rounded twice,
# never fused; abs as libm's hypot (npy_cabs)
SCALAR_MATH = {"multiply": _on_parts(_multiply), "absolute": lambda fn, z: hypot(fn, *fn.parts(z))}


def integer_power(fn: Function, z: V, n: int) -> V:
    """z ** n for an integer n, as npy_cpow does: 1 for n = 0; for z = 0, 0 (n > 0) or NaN
    (n < 0); z, z*z, z*(z*z) for n = 1, 2, 3; else from 1 by repeated squaring, and the
    reciprocal (NumPy's division) for n < 0."""
    if not -POWER_BY_SQUARING < n < POWER_BY_SQUARING:
        raise Unlowerable(f"complex power with exponent {n} (NumPy's goes through clog and cexp)")
    if n == 0:
        return literal(1, z.dtype)
    multiply = SCALAR_MATH["multiply"]
    if n in (1, 2, 3):
        result = z if n == 1 else multiply(fn, z, z) if n == 2 else multiply(fn, z, multiply(fn, z, z))
    else:
        result, square, m = literal(1, z.dtype), z, abs(n)
        while True:
            if m & 1:
                result = multiply(fn, result, square)
            m >>= 1
            if not m:
                break
            square = multiply(fn, square, square)
        if n < 0:
            result = COMPLEX["divide"](fn, literal(1, z.dtype), result)
    zero = COMPLEX["equal"](fn, z, literal(0, z.dtype))
    return fn.select(zero, literal(0 if n > 0 else complex(math.nan, math.nan), z.dtype), result)


def power(fn: Function, z: V, exponent, fast: bool = True) -> V:
    """z ** c for an integer constant c (Unlowerable for others); where `fast`, `z ** 2` and
    `z ** -1` (a Python int) are np.square and np.reciprocal, as ndarray.__pow__ takes them (NumPy
    scalars' power is npy_cpow's for every exponent)."""
    c = exponent.value if isinstance(exponent, Const) and np.ndim(exponent.value) == 0 else None
    if c is None or np.imag(c) != 0 or not float(np.real(c)).is_integer():   # nor NaN nor inf
        raise Unlowerable("complex power with an exponent that is not an integer constant")
    if fast and type(c) is int and c in (2, -1):
        return COMPLEX["square" if c == 2 else "reciprocal"](fn, z)
    return integer_power(fn, z, int(np.real(c)))


def _part(fn: Function, x, k: int, out: np.dtype) -> V:
    """Part k (0 real, 1 imaginary) of x, of dtype out: a real x is its own real part, 0 its
    imaginary one."""
    if isinstance(x, Const):
        return literal((np.real, np.imag)[k](x.value), out)
    if x.dtype.kind != "c":
        return cast(fn, x, out) if k == 0 else literal(0, out)
    return cast(fn, fn.parts(x)[k], out)


def _angle(fn, operands, out, deg=False):
    """np.angle: arctan2(imag, real), in degrees where deg."""
    angle = fn.math("arctan2", [_part(fn, operands[0], k, out) for k in (1, 0)], out)
    return fn.binary("fmul", angle, literal(180 / math.pi, out)) if deg else angle


# ops with their own operand handling (scalar.SPECIAL's): a real array's parts too
SPECIAL = {"real": lambda fn, operands, out: _part(fn, operands[0], 0, out),
           "imag": lambda fn, operands, out: _part(fn, operands[0], 1, out), "angle": _angle}
