"""hypot inline, as glibc (2.35 on) computes it: np.hypot and the abs of complex values to the bit
of NumPy's (npy_hypot is libm's), in instructions the loop vectoriser widens, where libmvec's
vector hypot is several times slower and a few ulp away.

float64 is Borges' algorithm ("An improved algorithm for hypot(a, b)", 2019): h = sqrt(a² + b²)
of the larger part a and the smaller b, corrected by one Newton step from the rounding errors of
a² + b², computed without fused multiply-adds; both scaled by 2**±600 where a² or b² would
overflow or lose bits to underflow (exact: powers of two), and a + b where b is below a's last
bit. float32 is sqrt(a² + b²) in float64, rounded once to float32. An infinite part gives inf,
NaN anywhere else NaN.
"""

from __future__ import annotations

import math

from .irbuilder import F64, Function, V, literal

_SCALE = 2.0 ** 600
_LARGE, _TINY = 2.0 ** 511, 2.0 ** -459   # past these, the parts are scaled first
_EPS = 2.0 ** -54                         # b at most a * EPS: a + b


def hypot(fn: Function, x: V, y: V) -> V:
    dtype = x.dtype
    ax, ay = (fn.intrinsic("fabs", [v], dtype) for v in (x, y))
    a = fn.select(fn.compare("fcmp", "olt", ax, ay), ay, ax)
    b = fn.select(fn.compare("fcmp", "olt", ax, ay), ax, ay)
    if dtype == F64:
        large = fn.compare("fcmp", "ogt", a, literal(_LARGE, F64))
        scale = fn.select(large, literal(1 / _SCALE, F64),
                          fn.select(fn.compare("fcmp", "olt", b, literal(_TINY, F64)), literal(_SCALE, F64), literal(1, F64)))
        h = fn.binary("fdiv", _corrected(fn, fn.binary("fmul", a, scale), fn.binary("fmul", b, scale)), scale)
        negligible = fn.select(large, fn.compare("fcmp", "ole", b, fn.binary("fmul", a, literal(_EPS, F64))),
                               fn.compare("fcmp", "oge", a, fn.binary("fdiv", b, literal(_EPS, F64))))
        h = fn.select(negligible, fn.binary("fadd", a, b), h)
    else:
        wide = [fn.convert("fpext", v, F64) for v in (a, b)]
        squares = fn.binary("fadd", *(fn.binary("fmul", v, v) for v in wide))
        h = fn.convert("fptrunc", fn.intrinsic("sqrt", [squares], F64), dtype)
    inf = literal(math.inf, dtype)
    h = fn.select(fn.compare("fcmp", "uno", a, b), fn.binary("fadd", x, y), h)
    infinite = fn.binary("or", *(fn.compare("fcmp", "oeq", v, inf) for v in (ax, ay)))
    return fn.select(infinite, inf, h)   # inf even beside a NaN


def _corrected(fn: Function, a: V, b: V) -> V:
    """sqrt(a² + b²) for a >= b >= 0 of moderate size, with Borges' correction."""
    def op(opcode, p, q):
        return fn.binary(opcode, p, q)

    def c(value):
        return literal(value, F64)
    h = fn.intrinsic("sqrt", [op("fadd", op("fmul", a, a), op("fmul", b, b))], F64)
    near = fn.compare("fcmp", "ole", h, op("fmul", c(2), b))   # h at most 2b: the parts are close
    d1, d2 = op("fsub", h, b), op("fsub", h, a)
    t1 = fn.select(near, op("fmul", a, op("fsub", op("fmul", c(2), d1), a)),
                   op("fmul", op("fmul", c(2), d2), op("fsub", a, op("fmul", c(2), b))))
    t2 = fn.select(near, op("fmul", op("fsub", d1, op("fmul", c(2), op("fsub", a, b))), d1),
                   op("fadd", op("fmul", op("fsub", op("fmul", c(4), d2), b), b), op("fmul", d2, d2)))
    return op("fsub", h, op("fdiv", op("fadd", t1, t2), op("fmul", c(2), h)))
