"""Complex values in Triton kernels, as (real, imaginary) pairs of floats.

[Note: complex kernels as real ones] Triton has no complex type. A kernel that reads or writes
complex buffers is rewritten before it is rendered into one over floats: a complex buffer of shape S
is read as the float buffer of shape S + (2,) that its memory is (complex64: float32 pairs,
complex128: float64), each complex expression becomes two float expressions built from registry
ops, a complex store two stores (the real parts, then the imaginary ones) and a complex sum two
sums. The formulas are NumPy's loops' own (numpy/_core/src/umath/loops.c.src): a real operand is
made complex first (r + 0j) and the full complex formula applied, so signs of zero, infinities and
NaNs come out as NumPy's; `multiply` is (ac - bd, ad + bc) with the infinities of NumPy's fused
SIMD loop (see `_multiply`); `divide` is Smith's method with NumPy's branches; `absolute` is hypot
with a scaled square root (within 2 ulp of C's hypot, the same on the GPU and in the interpreter,
which has no libdevice); `power` by the constant 2 is one multiplication, as NumPy's `npy_cpow`
does it. What has no formula here (exp, log, sqrt of complex values, complex max/min/prod and
arg reductions, scans, comparisons other than == and !=) raises Unlowerable: the kernel runs
through the reference renderer, said under `perf`.

A stage that stores into a complex buffer it also reads (`z *= w`) would read its real parts back
already updated when it computes the imaginary ones: it stores the imaginary parts into a
temporary first, then the real parts, then copies the imaginary parts over.
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import NamedTuple

import numpy as np

from numpile.lowering import Affine, Buffer, Call, Const, Expr, Indirect, Kernel, Load, LoopIndex, Program, RowValue, Stage

from .rewrite import mapped
from .scalar import BOOL, Unlowerable


class Pair(NamedTuple):
    re: Expr
    im: Expr


def part(dtype) -> np.dtype:
    """The float dtype of a complex dtype's parts."""
    return np.dtype(f"f{np.dtype(dtype).itemsize // 2}")


def is_complex(dtype) -> bool:
    return dtype is not None and np.dtype(dtype).kind == "c"


class _Overlay(MutableMapping):
    """A program's buffers with the complex ones seen as floats; new buffers (a split reduction's
    partials, the temporaries above) go into the program's own table, which the runner allocates."""

    def __init__(self, base: dict, seen: dict):
        self.base, self.seen = base, seen

    def __getitem__(self, name):
        return self.seen[name] if name in self.seen else self.base[name]

    def __setitem__(self, name, buffer):
        self.base[name] = buffer

    def __delitem__(self, name):
        del self.base[name]

    def __iter__(self):
        return iter(self.base)

    def __len__(self):
        return len(self.base)


def real_form(kernel: Kernel, program: Program) -> tuple[Kernel, Program]:
    """`kernel` over floats and the program as its renderer sees it (the note above); both as they
    are when the kernel touches no complex value."""
    complex_buffers = {n for n in (*kernel.inputs, *kernel.outputs) if is_complex(program.buffers[n].dtype)}
    if not complex_buffers and not any(is_complex(e.dtype) for s in kernel.stages for e in _exprs(s.value)):
        return kernel, program
    seen = {n: Buffer(n, (*b.shape, 2), part(b.dtype), b.kind, b.scalar)
            for n in complex_buffers for b in [program.buffers[n]]}
    view = Program(_Overlay(program.buffers, seen), program.inputs, program.steps, program.outputs, program.symbols)
    return _PairKernel(kernel.name, kernel.outer, _Pairs(complex_buffers, view, kernel).stages()), view


class _PairKernel(Kernel):
    """A kernel whose stages may store into one buffer twice (its real parts, then its imaginary
    ones): each buffer named once among its outputs."""

    @property
    def outputs(self) -> list[str]:
        return list(dict.fromkeys(Kernel.outputs.fget(self)))


def _exprs(expr) -> list:
    found = []
    mapped(expr, lambda e: found.append(e))
    return found


class _Pairs:
    def __init__(self, complex_buffers: set, program: Program, kernel: Kernel):
        self.complex, self.program, self.kernel = complex_buffers, program, kernel
        self.rows: dict[str, Pair] = {}   # a complex reduce stage's row value, as its two parts' row values

    def stages(self) -> list[Stage]:
        out = []
        for k, stage in enumerate(self.kernel.stages):
            if stage.scan:
                if self.complex & {stage.output} or is_complex(stage.dtype):
                    raise Unlowerable("a running sum or product of complex values")
                out.append(stage)
                continue
            value = self.value(stage.value)
            if stage.reduce:
                out.extend(self.reduction(stage, value))
            elif stage.output in self.complex:
                out.extend(self.store(stage, self.pair(value, self.program.buffers[stage.output].dtype), k))
            elif isinstance(value, Pair):
                raise Unlowerable("a complex value stored into a real buffer")
            else:
                out.append(_with(stage, value))
        return out

    def reduction(self, stage: Stage, value) -> list[Stage]:
        if not isinstance(value, Pair):
            if stage.output in self.complex:
                raise Unlowerable("a real reduction stored into a complex buffer")
            return [_with(stage, value)]
        if stage.reduce != "sum":
            raise Unlowerable(f"the reduction {stage.reduce} of complex values")
        dtype = part(stage.dtype)
        names = (f"{stage.row_name}_re", f"{stage.row_name}_im")
        self.rows[stage.row_name] = Pair(*(RowValue(n, dtype) for n in names))
        stored = stage.output is not None
        if stored and stage.output not in self.complex:
            raise Unlowerable("a complex sum stored into a real buffer")
        return [Stage(stage.inner, v, "sum", n, stage.output if stored else None,
                      (*stage.output_index, Affine.constant(j)) if stored else (), dtype, stage.trailing)
                for j, (n, v) in enumerate(zip(names, value))]

    def store(self, stage: Stage, value: Pair, k: int) -> list[Stage]:
        index = stage.output_index
        re, im = ((*index, Affine.constant(j)) for j in (0, 1))
        seen = self.program.buffers[stage.output]   # the float pairs (S + (2,))
        if not any(isinstance(e, Load) and e.buffer == stage.output for e in _exprs(self.kernel.stages[k].value)):
            return [_with(stage, value.re, re), _with(stage, value.im, im)]
        temp = f"{self.kernel.name}_imag{k}"   # an update in place: see the module's note
        self.program.buffers[temp] = Buffer(temp, tuple(seen.shape[:-1]), seen.dtype, "temp")
        return [_with(stage, value.im, index, temp), _with(stage, value.re, re),
                _with(stage, Load(temp, index, seen.dtype), im)]

    # -- expressions -------------------------------------------------------------------------

    def value(self, e):
        """`e` as a real Expr, or a Pair where it is complex."""
        if isinstance(e, Load):
            index = tuple(Indirect(self.real(i.value), i.size, i.scale, i.shift) if isinstance(i, Indirect) else i
                          for i in e.index)
            if e.buffer not in self.complex:
                return Load(e.buffer, index, e.dtype, e.weak)
            dtype = part(e.dtype)
            return Pair(*(Load(e.buffer, (*index, Affine.constant(j)), dtype, e.weak) for j in (0, 1)))
        if isinstance(e, Const):
            value = e.value
            if isinstance(value, (complex, np.complexfloating)):
                dtype = None if e.dtype is None else part(e.dtype)
                return Pair(Const(float(value.real), dtype), Const(float(value.imag), dtype))
            return e
        if isinstance(e, RowValue):
            return self.rows[e.name] if e.name in self.rows else e
        if isinstance(e, LoopIndex) or not isinstance(e, Call):
            if is_complex(e.dtype):
                raise Unlowerable(f"a complex {type(e).__name__}")
            return e
        args = [self.value(a) if isinstance(a, Expr) else a for a in e.args]
        kwargs = tuple((k, self.value(v) if isinstance(v, Expr) else v) for k, v in e.kwargs)
        if not is_complex(e.dtype) and not any(isinstance(a, Pair) for a in (*args, *(v for _, v in kwargs))):
            return Call(e.op, tuple(args), kwargs, e.dtype, e.weak)
        if any(isinstance(v, Pair) for _, v in kwargs) or e.op not in OPS:
            raise Unlowerable(f"{e.op} of complex values")
        dtype = part(e.dtype) if is_complex(e.dtype) else _pair_dtype(args)
        return OPS[e.op](_Build(dtype, self), e, *args)

    def real(self, e) -> Expr:
        v = self.value(e)
        if isinstance(v, Pair):
            raise Unlowerable("a complex index")
        return v

    @staticmethod
    def pair(v, dtype) -> Pair:
        """A real value made complex (r + 0j), as NumPy converts one."""
        return v if isinstance(v, Pair) else Pair(v, Const(0.0, None if getattr(v, "weak", False) else dtype))


def _pair_dtype(args) -> np.dtype:
    dtypes = [a.re.dtype for a in args if isinstance(a, Pair) and a.re.dtype is not None]
    return np.result_type(*dtypes) if dtypes else np.dtype(np.float64)


def _with(stage: Stage, value, index=None, output=None) -> Stage:
    dtype = part(stage.dtype) if is_complex(stage.dtype) else stage.dtype
    return Stage(stage.inner, value, stage.reduce, stage.row_name, output or stage.output,
                 stage.output_index if index is None else index, dtype, stage.trailing, stage.scan)


# ops on constants alone are computed here (Triton's interpreter cannot combine a constant's bool with a block's)
_FOLDED = {"isinf", "isfinite", "isnan", "equal", "not_equal", "absolute", "multiply", "negative", "logical_and",
           "logical_or"}


class _Build:
    """Registry-op expressions of one float dtype (the complex operation's parts)."""

    def __init__(self, dtype: np.dtype, pairs: _Pairs):
        self.dtype, self.pairs = dtype, pairs

    def __getattr__(self, op):
        def call(*args, dtype=None):
            args = tuple(a if isinstance(a, Expr) else Const(a, None) for a in args)
            dtype = dtype or self.dtype
            if op in _FOLDED and all(isinstance(a, Const) for a in args):   # the 0j of a real operand's pair
                return Const(getattr(np, op)(*(np.asarray(a.value, self.dtype) for a in args)).astype(dtype)[()], dtype)
            return Call(op, args, (), dtype)
        return call

    def pair(self, v) -> Pair:
        return _Pairs.pair(v, self.dtype)


def _add(b, e, x, y):
    x, y = b.pair(x), b.pair(y)
    return Pair(b.add(x.re, y.re), b.add(x.im, y.im))


def _subtract(b, e, x, y):
    x, y = b.pair(x), b.pair(y)
    return Pair(b.subtract(x.re, y.re), b.subtract(x.im, y.im))


def _multiply(b, e, x, y):
    """(a + ci)(d + fi) as NumPy's SIMD loop computes it on x86 with FMA: re = fma(a, d, -cf),
    im = fma(a, f, cd). Unfused here (no fma in the registry): the same within rounding, and where
    the fused one differs beyond it, an overflowed cf or cd beside a finite product (inf - inf is
    NaN unfused, the infinity fused), the infinity is taken."""
    (a, c), (d, f) = b.pair(x), b.pair(y)
    cf, cd = b.multiply(c, f), b.multiply(c, d)
    fused = lambda t, p, q: b.logical_and(b.isinf(t, dtype=BOOL), b.logical_and(b.isfinite(p, dtype=BOOL),  # noqa: E731
                                                                                b.isfinite(q, dtype=BOOL), dtype=BOOL), dtype=BOOL)
    return Pair(b.where(fused(cf, a, d), b.negative(cf), b.subtract(b.multiply(a, d), cf)),
                b.where(fused(cd, a, f), cd, b.add(b.multiply(a, f), cd)))


def _divide(b, e, x, y):
    """Smith's method with NumPy's branches (its complex divide loop)."""
    if not isinstance(y, Pair):
        return _divide_by_real(b, b.pair(x), y)
    if all(isinstance(v, Const) for v in y):
        raise Unlowerable("a division by a complex constant")
    (a, c), (d, f) = b.pair(x), y   # (a + ci) / (d + fi)
    ad, af = b.absolute(d), b.absolute(f)
    wide = b.greater_equal(ad, af, dtype=BOOL)
    zero = b.logical_and(b.equal(ad, 0.0, dtype=BOOL), b.equal(af, 0.0, dtype=BOOL), dtype=BOOL)
    rat1 = b.divide(f, b.where(zero, 1.0, d))
    scl1 = b.divide(1.0, b.add(d, b.multiply(f, rat1)))
    rat2 = b.divide(d, f)
    scl2 = b.divide(1.0, b.add(f, b.multiply(d, rat2)))
    re = b.where(wide, b.where(zero, b.divide(a, ad), b.multiply(b.add(a, b.multiply(c, rat1)), scl1)),
                 b.multiply(b.add(b.multiply(a, rat2), c), scl2))
    im = b.where(wide, b.where(zero, b.divide(c, ad), b.multiply(b.subtract(c, b.multiply(a, rat1)), scl1)),
                 b.multiply(b.subtract(b.multiply(c, rat2), a), scl2))
    return Pair(re, im)


def _divide_by_real(b, x: Pair, d):
    """Smith's method for the divisor d + 0j, as NumPy runs it: a NaN d gives NaN parts through
    `scl`, so only the zero branch (dividing by |d|) and the main one remain."""
    a, c = x
    ad = b.absolute(d)
    zero = b.equal(ad, 0.0, dtype=BOOL)
    rat = b.divide(0.0, b.where(zero, 1.0, d))
    scl = b.divide(1.0, b.add(d, b.multiply(0.0, rat)))
    return Pair(b.where(zero, b.divide(a, ad), b.multiply(b.add(a, b.multiply(c, rat)), scl)),
                b.where(zero, b.divide(c, ad), b.multiply(b.subtract(c, b.multiply(a, rat)), scl)))


def _absolute(b, e, x):
    """hypot(re, im): max * sqrt(1 + (min / max)**2); inf where either part is inf (NaN's too)."""
    if not isinstance(x, Pair):
        return b.absolute(x)
    big = b.maximum(b.absolute(x.re), b.absolute(x.im))
    small = b.minimum(b.absolute(x.re), b.absolute(x.im))
    ratio = b.divide(small, b.where(b.equal(big, 0.0, dtype=BOOL), 1.0, big))
    h = b.multiply(big, b.sqrt(b.add(1.0, b.multiply(ratio, ratio))))
    infinite = b.logical_or(b.isinf(x.re, dtype=BOOL), b.isinf(x.im, dtype=BOOL), dtype=BOOL)
    return b.where(infinite, float("inf"), h)


def _power(b, e, x, y):
    exponent = y.value if isinstance(y, Const) else None
    if not isinstance(x, Pair) or isinstance(exponent, bool) or exponent != 2:
        raise Unlowerable("a complex power other than z ** 2")
    return _multiply(b, e, x, x)


def _where(b, e, c, x, y):
    if isinstance(c, Pair):
        raise Unlowerable("a complex condition")
    x, y = b.pair(x), b.pair(y)
    return Pair(b.where(c, x.re, y.re), b.where(c, x.im, y.im))


def _equal(b, e, x, y, negated=False):
    x, y = b.pair(x), b.pair(y)
    if negated:
        return b.logical_or(b.not_equal(x.re, y.re, dtype=BOOL), b.not_equal(x.im, y.im, dtype=BOOL), dtype=BOOL)
    return b.logical_and(b.equal(x.re, y.re, dtype=BOOL), b.equal(x.im, y.im, dtype=BOOL), dtype=BOOL)


def _astype(b, e, x, target):
    dtype = e.dtype
    if not is_complex(dtype):   # NumPy keeps the real part (ComplexWarning)
        return b.astype(x.re, Const(dtype, None), dtype=dtype)
    x = b.pair(x)
    return Pair(*(b.astype(v, Const(part(dtype), None), dtype=part(dtype)) for v in x))


def _real_part(b, e, x):
    if not isinstance(x, Pair):
        return x
    return x.re


def _imag_part(b, e, x):
    if not isinstance(x, Pair):
        raise Unlowerable("the imaginary part of a real value")
    return x.im


# registry op -> its complex form: (builder, the Call, its operands as Exprs or Pairs) -> Pair or Expr
OPS = {
    "add": _add, "subtract": _subtract, "multiply": _multiply, "divide": _divide, "true_divide": _divide,
    "conjugate": lambda b, e, x: Pair(x.re, b.negative(x.im)) if isinstance(x, Pair) else x,
    "negative": lambda b, e, x: Pair(b.negative(x.re), b.negative(x.im)),
    "positive": lambda b, e, x: x,
    "absolute": _absolute, "power": _power, "where": _where, "astype": _astype,
    "equal": _equal, "not_equal": lambda b, e, x, y: _equal(b, e, x, y, negated=True),
    "real": _real_part, "imag": _imag_part,
    "square": lambda b, e, x: _multiply(b, e, x, x),
    # NumPy's: NaN where either part is; infinite where either part is; finite where both are
    "isnan": lambda b, e, x: b.logical_or(b.isnan(x.re, dtype=BOOL), b.isnan(x.im, dtype=BOOL), dtype=BOOL),
    "isinf": lambda b, e, x: b.logical_or(b.isinf(x.re, dtype=BOOL), b.isinf(x.im, dtype=BOOL), dtype=BOOL),
    "isfinite": lambda b, e, x: b.logical_and(b.isfinite(x.re, dtype=BOOL), b.isfinite(x.im, dtype=BOOL), dtype=BOOL),
}
