"""Conversions between the dtypes of kernel values, as NumPy's astype converts: integer
truncation and extension, the x86 results of out-of-range float-to-int casts, a real value as a
complex one's real part. Used by the op tables (scalar.py, complexes.py) and wherever a value
is stored or carried in another dtype.
"""

from __future__ import annotations

import numpy as np

from numpile.lowering import Const

from .irbuilder import BOOL, Function, Unlowerable, V, int_limits, literal, part_dtype, reg_type


def cast(fn: Function, v, dtype) -> V:
    """v (a V, a Const operand, or a number a nest hands over as it is: np.clip's bounds) as
    `dtype`, converted as NumPy's astype converts."""
    dtype = np.dtype(dtype)
    if isinstance(v, Const):
        return literal(v.value, dtype)
    if isinstance(v, (bool, int, float, complex, np.generic)):
        return literal(v, dtype)
    src = v.dtype
    if src == dtype:
        return v
    if v.weak and src.kind == "i" and dtype.kind not in "fc":
        raise Unlowerable(f"a Python int in a {dtype} loop (NumPy raises when it does not fit)")
    reg_type(dtype)
    if dtype.kind == "c":   # a real value is the real part; complex to complex part by part
        part = part_dtype(dtype)
        re, im = (cast(fn, p, part) for p in fn.parts(v)) if src.kind == "c" else (cast(fn, v, part), literal(0, part))
        return fn.pack(re, im, dtype)
    if src.kind == "c":
        if dtype.kind != "b":
            raise Unlowerable(f"{src} to {dtype} conversion (NumPy drops the imaginary part, with a ComplexWarning)")
        return fn.binary("or", *(cast(fn, p, BOOL) for p in fn.parts(v)))
    if dtype.kind == "b":
        return fn.compare("fcmp", "une", v, literal(0, src)) if src.kind == "f" else fn.compare("icmp", "ne", v, literal(0, src))
    if src.kind == "b":
        return fn.convert("uitofp" if dtype.kind == "f" else "zext", v, dtype)
    if src.kind in "iu" and dtype.kind in "iu":
        if dtype.itemsize == src.itemsize:
            return V(v.ref, dtype)
        return fn.convert("trunc" if dtype.itemsize < src.itemsize else "sext" if src.kind == "i" else "zext", v, dtype)
    if src.kind in "iu":
        return fn.convert("sitofp" if src.kind == "i" else "uitofp", v, dtype)
    if dtype.kind == "f":
        return fn.convert("fpext" if dtype.itemsize > src.itemsize else "fptrunc", v, dtype)
    return _float_to_int(fn, v, dtype)


def _float_to_int(fn: Function, v: V, dtype: np.dtype) -> V:
    """x86's truncating conversion, as NumPy does it: a NaN or out-of-range value becomes the
    most negative int32 (int64 for 64-bit targets), then narrower targets keep its low bits."""
    if dtype.kind == "u" and dtype.itemsize >= 4:
        raise Unlowerable(f"float to {dtype} conversion (NumPy's result depends on its SIMD loop)")
    via = np.dtype(np.int64) if dtype.itemsize == 8 else np.dtype(np.int32)
    low, _ = int_limits(via)
    fits = fn.binary("and", fn.compare("fcmp", "oge", v, literal(float(low), v.dtype)),
                     fn.compare("fcmp", "olt", v, literal(-float(low), v.dtype)))
    value = fn.select(fits, fn.convert("fptosi", v, via), literal(low, via))
    return cast(fn, value, dtype)
