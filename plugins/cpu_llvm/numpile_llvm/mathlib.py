"""Math functions for kernels: scalar libm, and glibc's vector math library (libmvec) for loops.

LLVM cannot vectorise a loop that calls `sinf` by itself: it turns the call into the
`llvm.sin` intrinsic, which the x86 backend then splits back into one libm call per lane.
So kernels call math functions under names of their own (`numpile_sinf`, bound to libm's
`sinf`), which LLVM knows nothing about, and tell the loop vectoriser through the
`vector-function-abi-variant` call attribute which libmvec function computes 16 (or 8, 4)
of them at once. libmvec is accurate to 4 ulp and handles NaN and infinities as libm does.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import cache

import numpy as np

# NumPy op -> (C math function, arity)
FUNCTIONS = {
    "sin": ("sin", 1), "cos": ("cos", 1), "tan": ("tan", 1),
    "arcsin": ("asin", 1), "arccos": ("acos", 1), "arctan": ("atan", 1), "arctan2": ("atan2", 2),
    "sinh": ("sinh", 1), "cosh": ("cosh", 1), "tanh": ("tanh", 1),
    "arcsinh": ("asinh", 1), "arccosh": ("acosh", 1), "arctanh": ("atanh", 1),
    "exp": ("exp", 1), "exp2": ("exp2", 1), "expm1": ("expm1", 1),
    "log": ("log", 1), "log2": ("log2", 1), "log10": ("log10", 1), "log1p": ("log1p", 1),
    "cbrt": ("cbrt", 1), "power": ("pow", 2), "nextafter": ("nextafter", 2),
}
# libmvec's instruction sets, widest first: (CPU feature, ABI letter, register bits)
_VECTOR_ISAS = (("avx512f", "e", 512), ("avx2", "d", 256), ("sse4.1", "b", 128))


def c_name(function: str, dtype: np.dtype) -> str:
    return function + ("f" if dtype == np.float32 else "")


def symbol(function: str, dtype: np.dtype) -> str:
    """The name kernels call: LLVM does not recognise it as a library function."""
    return "numpile_" + c_name(function, dtype)


@cache
def _libraries():
    libm = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
    try:
        libmvec = ctypes.CDLL(ctypes.util.find_library("mvec") or "libmvec.so.1")
    except OSError:  # not glibc: loops with math calls stay scalar
        libmvec = None
    return libm, libmvec


def register_symbols(llvm) -> None:
    """Bind every `numpile_*` name to libm's function and make libmvec's functions resolvable."""
    libm, libmvec = _libraries()
    if libmvec is not None:
        llvm.load_library_permanently(libmvec._name)
    for function, _ in FUNCTIONS.values():
        for dtype in (np.dtype(np.float32), np.dtype(np.float64)):
            llvm.add_symbol(symbol(function, dtype), ctypes.cast(getattr(libm, c_name(function, dtype)), ctypes.c_void_p).value)


def vector_variants(function: str, arity: int, dtype: np.dtype, features: frozenset) -> list[tuple[int, str]]:
    """(lanes, libmvec name) of every vector version of a function this CPU can run."""
    _, libmvec = _libraries()
    if libmvec is None:
        return []
    found = []
    for feature, letter, bits in _VECTOR_ISAS:
        if feature not in features:
            continue
        lanes = bits // (8 * dtype.itemsize)
        name = f"_ZGV{letter}N{lanes}{'v' * arity}_{c_name(function, dtype)}"
        if hasattr(libmvec, name):
            found.append((lanes, name))
    return found
