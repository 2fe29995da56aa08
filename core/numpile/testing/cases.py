"""The conformance cases: every registry op called the ways NumPy users call it (dtypes,
broadcasting, 0-d, empty, non-contiguous and negative-stride inputs, NaN and inf, Python scalars),
one builder per family of ops."""

from __future__ import annotations

import functools
import math
from dataclasses import replace

import numpy as np

from ..ops.pointwise import UFUNCS
from ..ops.reductions import REDUCTIONS
from ..ops.results import TWO_OUTPUT_UFUNCS
from .complex_cases import complex_cases
from .loop_cases import cond_cases, loop_cases, while_cases
from .product_cases import matmul_cases, numpy_linalg_cases, product_cases
from .specs import DTYPES, Arr, Case, describe_case
from .numerics_cases import numerics_cases
from .ordering_cases import ordering_cases
from .spectral_cases import spectral_cases
from .tiling_cases import tiling_cases


@functools.cache
def _all_cases() -> tuple[Case, ...]:
    return tuple(replace(case, id=describe_case(case)) for build in _BUILDERS for case in build())


def conformance_cases(names=None) -> list[Case]:
    """The conformance cases, each with a readable unique `id` (also `str(case)`); only
    those of the ops in `names` if given."""
    return [c for c in _all_cases() if names is None or c.op in names]


# Value ranges that keep ufunc operands inside the function's domain and integers from
# overflowing (the defaults, [-4, 4], suit the rest): name -> one dict of Arr fields per operand.
_POSITIVE = dict(low=0.1, high=6.0, ilow=1, ihigh=6)
_UNIT = dict(low=-0.95, high=0.95, ilow=-1, ihigh=1)
_NONZERO = dict(nonzero=True)
UFUNC_DOMAINS = {
    "log": [_POSITIVE], "log2": [_POSITIVE], "log10": [_POSITIVE], "sqrt": [_POSITIVE],
    "log1p": [dict(low=-0.9, high=6.0, ilow=0, ihigh=6)],
    "arcsin": [_UNIT], "arccos": [_UNIT], "arctanh": [_UNIT],
    "arccosh": [dict(low=1.05, high=6.0, ilow=1, ihigh=6)],
    "tan": [dict(low=-1.4, high=1.4, ilow=-1, ihigh=1)],
    "reciprocal": [_NONZERO],
    "divide": [{}, _NONZERO], "floor_divide": [{}, _NONZERO], "remainder": [{}, _NONZERO], "divmod": [{}, _NONZERO],
    "fmod": [{}, _NONZERO],
    "power": [dict(low=0.1, high=3.0, ilow=-3, ihigh=3), dict(low=-2.0, high=2.0, ilow=0, ihigh=3)],
    "float_power": [dict(low=0.1, high=3.0, ilow=-3, ihigh=3), dict(low=-2.0, high=2.0, ilow=-2, ihigh=3)],
    "left_shift": [dict(ilow=-50, ihigh=50), dict(ilow=0, ihigh=5)],
    "right_shift": [dict(ilow=-50, ihigh=50), dict(ilow=0, ihigh=5)],
    "ldexp": [{}, dict(ilow=-3, ihigh=3)],
    "gcd": [dict(ilow=-20, ihigh=20), dict(ilow=-20, ihigh=20)],
    "lcm": [dict(ilow=-20, ihigh=20), dict(ilow=-20, ihigh=20)],
}


def _python_scalar(domain: dict, kind: type):
    """A Python scalar inside an operand's domain (operators with weak scalars: x + 2.5)."""
    if kind is bool:
        return True
    if kind is int:
        return domain.get("ihigh", math.floor(domain.get("high", 4.0))) or 1
    low, high = domain.get("low", -4.0), domain.get("high", 4.0)
    return round(low + 0.7 * (high - low), 2) or 0.5


def _ufunc_accepts(ufunc, operands) -> bool:
    """Whether NumPy has a loop for these operands (asked of the ufunc, not of a meta rule)."""
    def dtype_of(x):
        return np.dtype(x.dtype) if isinstance(x, Arr) else np.dtype(bool) if isinstance(x, bool) else type(x)
    try:
        ufunc.resolve_dtypes(tuple(map(dtype_of, operands)) + (None,) * ufunc.nout)
    except TypeError:
        return False
    return True


def _ufunc_cases() -> list[Case]:
    cases = []
    for ufunc in (*UFUNCS, *TWO_OUTPUT_UFUNCS):
        name, n = ufunc.__name__, ufunc.nin
        domains = UFUNC_DOMAINS.get(name, [{}] * n)

        def arrs(shapes, dtypes, **extra):
            return tuple(Arr(tuple(s), dt, **{**domains[i], **extra}) for i, (s, dt) in enumerate(zip(shapes, dtypes)))

        best = next(dt for dt in ("float64", "int64", "bool") if _ufunc_accepts(ufunc, arrs([()] * n, [dt] * n)))
        calls = [arrs([(3, 4)] * n, [dt] * n) for dt in DTYPES]
        calls += [arrs([()] * n, [best] * n),                                  # 0-d: a NumPy scalar result
                  arrs([(0, 3)] + [(3,)] * (n - 1), [best] * n)]               # empty
        calls += [arrs([(3, 4)] * n, [best] * n, layout=lay) for lay in ("T", "rev", "step")]
        calls += [arrs([(2, 3)] * n, [dt] * n, special=True) for dt in ("float32", "float64")]
        if n == 1:
            calls.append(arrs([()], [best], scalar=True))
        else:
            calls += [arrs([(2, 3, 4), (3, 1)], [best] * 2), arrs([(5,), ()], [best] * 2),
                      (Arr((), best, **domains[0], scalar=True), Arr((4,), best, **domains[1]))]
            calls += [arrs([(3, 4)] * 2, pair) for pair in (("int32", "float32"), ("float32", "float64"),
                                                           ("bool", "int64"), ("int32", "int64"),
                                                           ("float32", "int64"), ("float64", "int32"))]
            calls += [(arrs([(3, 4)], [dt])[0], _python_scalar(domains[1], kind))
                      for dt, kind in (("float32", float), ("int32", int), ("float32", int), ("int64", float),
                                       ("bool", bool), ("bool", int))]
            calls.append((_python_scalar(domains[0], float), arrs([(3, 4)] * 2, ["float32"] * 2)[1]))
        cases += [Case(name, call) for call in calls if _ufunc_accepts(ufunc, call)]
    return cases


def _pointwise_cases() -> list[Case]:
    a = Arr((3, 4))
    cond = Arr((3, 4), "bool")
    cases = [Case("where", (cond, a, Arr((3, 4), "float32"))),
             Case("where", (Arr((3, 1), "bool"), Arr((1, 4), "int32"), Arr((4,), "float32"))),
             Case("where", (cond, Arr((3, 4), "float32"), 0.5)),
             Case("where", (cond, 1, 2.5)),
             Case("where", (Arr((), "bool"), Arr(()), Arr(()))),
             Case("where", (Arr((3, 4)), a, Arr((4,), "int64"))),
             Case("where", (Arr((0, 4), "bool"), Arr((4,)), 0.0)),
             Case("where", (Arr((3, 4), "bool", layout="T"), Arr((3, 4), special=True), Arr((3, 4), layout="rev"))),
             Case("where", (Arr((), "bool", scalar=True), Arr((), scalar=True), Arr((), "int32", scalar=True)))]
    cases += [Case("where", (cond, Arr((3, 4), dt), Arr((3, 4), dt))) for dt in DTYPES]

    cases += [Case("clip", (a, -1.0, 1.0)), Case("clip", (Arr((3, 4), "int32"), 0, 2)),
              Case("clip", (Arr((3, 4), "float32"), None, 0.5)), Case("clip", (Arr((3, 4), "float32"), -0.5, None)),
              Case("clip", (a, Arr((4,), low=-2, high=-1), Arr((3, 1), low=1, high=2))),
              Case("clip", (Arr((3, 4), "int32"), 0, 1.5)), Case("clip", (Arr((3, 4), "int64"), -2, 2)),
              Case("clip", (Arr(()), 0, 1)), Case("clip", (Arr((), scalar=True), 0, 1)),
              Case("clip", (Arr((0, 3)), 0, 1)), Case("clip", (Arr((3, 4), special=True), -1.0, 1.0)),
              Case("clip", (Arr((3, 4), layout="T"), -1.0, 1.0)), Case("clip", (Arr((3, 4), layout="step"), -1.0, 1.0)),
              Case("clip", (Arr((3, 4), "float32"),), dict(min=-1.0, max=1.0))]

    cases += [Case("round", (Arr((3, 4), dt),)) for dt in DTYPES]
    cases += [Case("round", (Arr((3, 4), "float32"), 1)), Case("round", (Arr((3, 4), low=-400, high=400), -1)),
              Case("round", (Arr((3, 4), "int32", ilow=-400, ihigh=400), -1)), Case("round", (Arr((3, 4), "int64"), 2)),
              Case("round", (Arr(()),)), Case("round", (Arr((), "float32", scalar=True), 1)),
              Case("round", (Arr((2, 3), special=True), 2)), Case("round", (Arr((3, 4), layout="rev"),)),
              Case("round", (Arr((0, 2)),))]

    cases += [Case("astype", (Arr((3, 4), src), dst)) for src in DTYPES for dst in DTYPES]
    cases += [Case("python_int", (Arr((), dtype, scalar=True),)) for dtype in ("float64", "float32")]
    cases += [Case("python_int", (Arr((), "float16", scalar=True),)), Case("python_int", (Arr(()),))]
    cases += [Case("python_math", (Arr((), dtype, scalar=True, low=0.5, high=2.0), name))
              for dtype, name in (("float64", "exp"), ("float64", "sqrt"), ("float32", "log"), ("float64", "atan"))]
    cases += [Case("check", (Arr((), dtype, scalar=scalar, nonzero=True),))   # an assert that holds
              for dtype, scalar in (("bool", True), ("bool", False), ("float64", True), ("int32", False))]
    cases += [Case("random_bits", (Arr((), "uint64", scalar=True), Arr((), "int64", scalar=True))),
              Case("random_bits", (Arr((3, 4), "uint64"), Arr((4,), "int64"))), Case("random_bits", (Arr((5,), "uint64"), 7)),
              Case("random_bits", (Arr((), "uint64", scalar=True), Arr((2, 3), "int32", layout="T")))]
    cases += [Case("astype", (Arr((2, 3), special=True), "float32")), Case("astype", (Arr(()), "int32")),
              Case("astype", (Arr((), scalar=True), np.float32)), Case("astype", (Arr((0, 3), "int32"), float)),
              Case("astype", (Arr((3, 4), layout="T"), "int64")), Case("astype", (Arr((3, 4), "int32", layout="step"), "f4")),
              Case("astype", (Arr((3, 4), "float32"), "float16")), Case("astype", (Arr((3, 4), "int64"), "uint8"))]
    return cases


def _reduction_cases() -> list[Case]:
    cases = []
    for name, (fns, method, sig, convert, empty_error) in REDUCTIONS.items():
        domain = dict(low=-1.5, high=1.5, ilow=-2, ihigh=2, nonzero=True) if name == "prod" else {}
        A = functools.partial(Arr, **domain)
        one_axis = name in ("argmax", "argmin")
        cases += [Case(name, (A((3, 4, 5), dt),)) for dt in DTYPES]
        cases += [Case(name, (A((3, 4, 5), dt),), dict(axis=1)) for dt in DTYPES]
        axes = [0, -1, 2] + ([] if one_axis else [(0, 2), (), (-1, 0, 1)])
        cases += [Case(name, (A((3, 4, 5)),), dict(axis=ax)) for ax in axes]
        cases += [Case(name, (A((3, 4, 5)),), dict(axis=ax, keepdims=True)) for ax in (None, 1, *([] if one_axis else [(0, 2)]))]
        cases += [Case(name, (A(()),)), Case(name, (A((), "float32", scalar=True),)),
                  Case(name, (A((), "int32"),), dict(keepdims=True)), Case(name, (A((7,), "int32"),), dict(axis=0)),
                  Case(name, (A((0, 4)),), dict(axis=1)), Case(name, (A((4, 0), "int32"),), dict(axis=0)),
                  Case(name, (A((3, 4), special=True),), dict(axis=1)), Case(name, (A((2, 3), "float32", special=True),)),
                  Case(name, (A((3, 4, 5), layout="T"),), dict(axis=0)), Case(name, (A((3, 4), "int32", layout="rev"),)),
                  Case(name, (A((3, 4), layout="step"),), dict(axis=-1))]
        if empty_error is None:
            cases += [Case(name, (A((0, 4)),)), Case(name, (A((3, 0), "int64"),), dict(axis=1))]
        if "dtype" in convert:
            cases += [Case(name, (A((3, 4), "int32"),), dict(dtype="float32")),
                      Case(name, (A((3, 4), "float32"),), dict(axis=0, dtype=np.float64)),
                      Case(name, (A((3, 4), "bool"),), dict(dtype=int))]
    cases += [Case(name, (Arr((3, 4), dt),), dict(axis=ax, ddof=1)) for name in ("var", "std")
              for dt, ax in (("float64", None), ("float32", 0), ("int32", 1))]
    return cases


def _shape_cases() -> list[Case]:
    a = Arr((3, 4))
    cube = Arr((2, 3, 4))
    cases = [Case("reshape", (Arr((3, 4), dt), (4, 3))) for dt in DTYPES]
    cases += [Case("reshape", (a, shape)) for shape in ((2, -1), 12, -1, (2, 2, 3), (-1, 1, 2), [6, 2])]
    cases += [Case("reshape", (Arr(()), (1, 1))), Case("reshape", (Arr(()), ())), Case("reshape", (Arr((1,)), ())),
              Case("reshape", (Arr((), scalar=True), ())), Case("reshape", (Arr((), scalar=True), (1,))),
              Case("reshape", (Arr((0, 3)), (3, 0))), Case("reshape", (Arr((0, 3)), (-1, 5))),
              Case("reshape", (Arr((3, 4), layout="T"), (12,))), Case("reshape", (Arr((3, 4), layout="rev"), (2, 6))),
              Case("reshape", (Arr((3, 4), "int32", layout="step"), (6, -1)))]

    cases += [Case("transpose", (Arr((2, 3, 4), dt),)) for dt in DTYPES]
    cases += [Case("transpose", (cube, axes)) for axes in ((1, 0, 2), (-1, 0, 1), [2, 1, 0], (0, 1, 2))]
    cases += [Case("transpose", (Arr(()),)), Case("transpose", (Arr((), scalar=True),)), Case("transpose", (Arr((5,)),)),
              Case("transpose", (Arr((0, 3)),)), Case("transpose", (Arr((3, 4), layout="T"),)),
              Case("transpose", (Arr((2, 3, 4), "int32", layout="rev"), (1, 2, 0)))]

    cases += [Case("swapaxes", (Arr((2, 3, 4), dt), 0, 2)) for dt in DTYPES]
    cases += [Case("swapaxes", (cube, -1, 0)), Case("swapaxes", (Arr((3,)), 0, 0)),
              Case("swapaxes", (Arr((3, 4), layout="step"), 0, 1)), Case("swapaxes", (Arr((0, 3)), 0, 1))]

    cases += [Case("moveaxis", (Arr((2, 3, 4), dt), 0, -1)) for dt in DTYPES]
    cases += [Case("moveaxis", (cube, (0, 1), (-1, 0))), Case("moveaxis", (cube, [2], [0])),
              Case("moveaxis", (cube, (), ())), Case("moveaxis", (Arr((), scalar=True), (), ())),
              Case("moveaxis", (Arr((2, 3, 4), layout="T"), 1, 0))]

    cases += [Case("expand_dims", (Arr((3, 4), dt), 0)) for dt in DTYPES]
    cases += [Case("expand_dims", (a, ax)) for ax in (-1, 2, (0, 3), [1, -1])]
    cases += [Case("expand_dims", (Arr(()), 0)), Case("expand_dims", (Arr((), scalar=True), 0)),
              Case("expand_dims", (Arr((3, 4), layout="rev"), 1))]

    squeezable = Arr((1, 3, 1))
    cases += [Case("squeeze", (Arr((1, 3, 1), dt),)) for dt in DTYPES]
    cases += [Case("squeeze", (squeezable,), dict(axis=ax)) for ax in (0, -1, (0, 2), ())]
    cases += [Case("squeeze", (Arr(()),)), Case("squeeze", (Arr((1,)),)), Case("squeeze", (Arr((1, 1)),)),
              Case("squeeze", (Arr((), scalar=True),)), Case("squeeze", (Arr((1, 0, 1)),)),
              Case("squeeze", (Arr((3, 1), layout="T"),))]

    cases += [Case("broadcast_to", (Arr((3, 1), dt), (2, 3, 4))) for dt in DTYPES]
    cases += [Case("broadcast_to", (Arr(()), (3,))), Case("broadcast_to", (Arr((4,)), (0, 4))),
              Case("broadcast_to", (Arr((3,)), 3)), Case("broadcast_to", (Arr((), scalar=True), ())),
              Case("broadcast_to", (Arr((1, 4), layout="rev"), (3, 4)))]

    cases += [Case("ravel", (Arr((3, 4), dt),)) for dt in DTYPES]
    cases += [Case("ravel", (Arr((3, 4), layout=lay),)) for lay in ("T", "rev", "step")]
    cases += [Case("ravel", (Arr(()),)), Case("ravel", (Arr((), scalar=True),)), Case("ravel", (Arr((0, 3)),))]

    cases += [Case("concatenate", ((Arr((2, 3), dt), Arr((4, 3), dt)),)) for dt in DTYPES]
    cases += [Case("concatenate", ((Arr((2, 3)), Arr((2, 5), "int32")),), dict(axis=1)),
              Case("concatenate", ([Arr((2, 3)), Arr((2, 1)), Arr((2, 2), "float32")], -1)),
              Case("concatenate", ((Arr((2, 3)), Arr((5,), "int64")),), dict(axis=None)),
              Case("concatenate", ((Arr(()), Arr((), "int32")),), dict(axis=None)),
              Case("concatenate", ((Arr((0, 3)), Arr((2, 3), "bool")),)),
              Case("concatenate", ((Arr((3,)),),)),
              Case("concatenate", ((Arr((3, 4), layout="T"), Arr((3, 4), layout="rev")), 1))]

    cases += [Case("stack", ((Arr((2, 3), dt), Arr((2, 3), dt)),)) for dt in DTYPES]
    cases += [Case("stack", ((Arr((2, 3)), Arr((2, 3), "int32"), Arr((2, 3), "float32")),), dict(axis=ax))
              for ax in (1, 2, -1)]
    cases += [Case("stack", ([Arr(()), Arr((), scalar=True)],)), Case("stack", ((Arr((0, 2)), Arr((0, 2))), 1)),
              Case("stack", ((Arr((3, 4), layout="step"), Arr((3, 4), layout="T")),))]

    cases += [Case("flip", (Arr((2, 3, 4), dt),)) for dt in DTYPES]
    cases += [Case("flip", (cube, axis)) for axis in (0, -1, (0, 2), [1], (), None)]
    cases += [Case("flip", (Arr(()),)), Case("flip", (Arr((), scalar=True),)), Case("flip", (Arr((0, 3)), 1))]
    cases += [Case("flip", (Arr((3, 4), layout=lay), 0)) for lay in ("T", "rev", "step")]

    cases += [Case("roll", (Arr((3, 4), dt), 1, 0)) for dt in DTYPES]
    cases += [Case("roll", (cube, shift, axis)) for shift, axis in (
        (-1, -1), (5, 1), (-7, None), ((1, -2), (0, 2)), (1, (0, 1, 0)), ((2, 3), 1), (0, 2), (24, None))]
    cases += [Case("roll", (Arr((5,), "int8"), 2)), Case("roll", (Arr((0, 3)), 1, 0)), Case("roll", (Arr((3, 0)), 2, 1)),
              Case("roll", (Arr(()), 3)), Case("roll", (Arr((), "int32", scalar=True), 1)),
              Case("roll", (Arr((3, 4), special=True), (1, 1), (0, 1)))]
    cases += [Case("roll", (Arr((3, 4), layout=lay), -1, 1)) for lay in ("T", "rev", "step")]

    cases += [Case("diff", (Arr((3, 5), dt),)) for dt in DTYPES + ("int8", "uint8")]
    cases += [Case("diff", (cube,), kw) for kw in (dict(n=2), dict(axis=0), dict(n=3, axis=-2), dict(n=7),
                                                    dict(prepend=0.5), dict(append=Arr((2, 3, 2))),
                                                    dict(n=2, axis=1, prepend=Arr((2, 1, 4), "int32"), append=3))]
    cases += [Case("diff", (Arr((4,), "uint8"),), dict(prepend=Arr((2,), "uint8"))),
              Case("diff", (Arr((4,), "bool"), 2), dict(append=True)), Case("diff", (Arr((0, 3)), 1, 0)),
              Case("diff", (Arr((3, 4), special=True),)), Case("diff", (Arr((4,), "int32"),), dict(prepend=1.5))]
    cases += [Case("diff", (Arr((3, 4), layout=lay),), dict(axis=0)) for lay in ("T", "rev", "step")]

    cases += [Case("copy", (Arr((3, 4), dt),)) for dt in DTYPES]
    cases += [Case("copy", (Arr((3, 4), layout=lay), order)) for lay in ("T", "step") for order in "KACF"]
    cases += [Case("copy", (Arr(()),)), Case("copy", (Arr((), "int32", scalar=True),)), Case("copy", (Arr((0, 3)),)),
              Case("copy", (Arr((3, 4), special=True),), dict(order="F"))]
    return cases


_INDEXES = (1, -1, (1, 2), (1, 2, 3), (-1, -2, -3), slice(1, 3), slice(None, None, -1), slice(None, None, 2),
            slice(-1, 0, -2), (Ellipsis, 1), (None, 1), (slice(None), None, 0), (1, Ellipsis, slice(None, None, -1)),
            (), Ellipsis, slice(10, 20), (0, 0, Ellipsis), (slice(1, None), slice(None, 2), slice(None, None, 3)),
            (None, Ellipsis, None))


def _indexing_cases() -> list[Case]:
    cases = [Case("getitem", (Arr((4, 5, 6)), index)) for index in _INDEXES]
    cases += [Case("getitem", (Arr((4, 5, 6), dt), (1, slice(None, None, -1)))) for dt in DTYPES]
    cases += [Case("getitem", (Arr((4, 5, 6), "int32"), (2, 3, 4)))]
    cases += [Case("getitem", (Arr(()), index)) for index in ((), Ellipsis, None)]
    cases += [Case("getitem", (Arr((), scalar=True), index)) for index in ((), Ellipsis, None)]
    cases += [Case("getitem", (Arr((4, 5), layout=lay), (1, slice(None, None, -2)))) for lay in ("T", "rev", "step")]
    cases += [Case("getitem", (Arr((0, 3)), (slice(None), 1))), Case("getitem", (Arr((3,)), np.int64(2)))]
    # setitem: the functional `a[index] = value` that the tracer captures in-place updates as
    cases += [Case("setitem", (Arr((4, 5), dt), (1, slice(None, None, -2)), Arr((3,), dt))) for dt in DTYPES]
    cases += [Case("setitem", (Arr((4, 5)), index, 2.5)) for index in (1, (Ellipsis, 0), slice(None), (), (-1, -1))]
    cases += [Case("setitem", (Arr((4, 5), "int32"), (slice(1, 3),), Arr((2, 1)))),
              Case("setitem", (Arr((4, 5), "float32"), (None, 0), Arr((5,), "float64", special=True))),
              Case("setitem", (Arr((4, 5), "bool"), 2, 0)), Case("setitem", (Arr(()), (), 7)),
              Case("setitem", (Arr((0, 3)), (slice(None), 0), 1.0)),
              Case("setitem", (Arr((4, 5), layout="T"), (slice(None), 1), Arr((4,), layout="rev")))]
    # advanced indexing: integer arrays (any int dtype, negative indices) among the items
    idx = lambda shape, n, dt="int64": Arr(shape, dt, ilow=-n, ihigh=n - 1)  # noqa: E731
    cases += [Case("index", (Arr((4, 5, 6), dt), (idx((7,), 4),))) for dt in DTYPES]
    cases += [Case("index", (Arr((4, 5, 6)), index)) for index in (
        (slice(None), idx((2, 3), 5, "int32")), (Ellipsis, idx((3,), 6, "int16")),
        (idx((3, 1), 4), idx((2,), 5)), (idx((3,), 4), slice(None), idx((3,), 6)), (1, slice(None), idx((2,), 6)),
        (slice(None), 1, idx((2,), 6)), (None, idx((2,), 4)), ([0, -1, 2],), (slice(None, None, -1), [[1, 0], [4, 4]]))]
    cases += [Case("index", (Arr((4, 5), layout=lay), (slice(None), idx((3,), 5)))) for lay in ("T", "rev", "step")]
    cases += [Case("setitem", (Arr((4, 5), dt), (idx((6,), 4),), Arr((6, 5), dt))) for dt in DTYPES]
    cases += [Case("setitem", (Arr((4, 5)), (slice(None), idx((3,), 5)), 1.5)),
              Case("setitem", (Arr((4, 5), "int32"), (idx((3,), 4), idx((3,), 5)), Arr((3,), "int64"))),
              Case("setitem", (Arr((4, 5)), (Arr((4, 5), "bool"),), -2.0)),
              Case("setitem", (Arr((4, 5), "int8"), (Arr((4,), "bool"),), 3))]
    # fill_diagonal: `a.flat[:end:step] = val`, an array val repeated along the diagonal
    cases += [Case("fill_diagonal", (Arr((4, 4), dt), Arr((), dt, nonzero=True))) for dt in DTYPES]
    cases += [Case("fill_diagonal", (Arr(shape), val, wrap)) for shape, val, wrap in (
        ((3, 5), 2.5, False), ((7, 3), Arr((2,)), False), ((7, 3), Arr((2,)), True), ((8, 2), -1, True),
        ((3, 3, 3), Arr((2, 2), "int32"), False), ((2, 2, 2, 2), 7, False), ((4, 4), Arr((9,)), False),
        ((0, 0), 1.0, False), ((4, 4), Arr((0,)), False))]
    cases += [Case("fill_diagonal", (Arr((5, 5), "int8"), Arr((3,), "float64"))),
              Case("fill_diagonal", (Arr((3, 3), "bool"), False)), Case("fill_diagonal", (Arr((3, 3)), [1, 2])),
              Case("fill_diagonal", (Arr((3, 3), "float32"), Arr((), scalar=True)))]
    cases += [Case("fill_diagonal", (Arr((4, 5), layout=lay), Arr((3,), layout="rev"))) for lay in ("T", "rev", "step")]
    return cases


def _creation_cases() -> list[Case]:
    cases = []
    for name in ("zeros", "ones", "empty"):
        values = name != "empty"
        cases += [Case(name, (shape,), values=values) for shape in ((3, 4), 5, (), (0, 3), [2, 2])]
        cases += [Case(name, ((2, 3),), dict(dtype=dt), values=values) for dt in DTYPES]
        cases += [Case(name, ((2,), float), values=values)]
    for name in ("zeros_like", "ones_like", "empty_like"):
        values = name != "empty_like"
        cases += [Case(name, (Arr((3, 4), dt),), values=values) for dt in DTYPES]
        cases += [Case(name, (Arr((3, 4)),), dict(dtype="int32"), values=values),
                  Case(name, (Arr((3, 4), "float32"),), dict(shape=(2, 5)), values=values),
                  Case(name, (Arr((), scalar=True),), values=values),
                  Case(name, (Arr((3, 4), layout="T"),), values=values),
                  Case(name, (Arr((3, 4)),), dict(dtype=bool, shape=7), values=values)]
    cases += [Case("full", args) for args in (((3, 4), 2.5), ((3, 4), 7), ((2,), True), ((), 1.5),
                                               ((2, 3), Arr((3,), "float32")), ((2, 3), Arr((), "int32")),
                                               ((2, 3), np.float32(1.5)), ((0, 2), 1))]
    cases += [Case("full", ((3, 4), 2.5), dict(dtype=dt)) for dt in DTYPES]
    cases += [Case("full_like", args) for args in ((Arr((3, 4)), 2.5), (Arr((3, 4), "int32"), 2.7),
                                                    (Arr((3, 4)), Arr((4,), "int32")), (Arr((), scalar=True), 3),
                                                    (Arr((2, 2), "bool"), 1))]
    cases += [Case("full_like", (Arr((3, 4)), 3), dict(dtype="float32", shape=(2, 3)))]
    cases += [Case("arange", args) for args in ((5,), (1, 7, 2), (0.0, 1.0, 0.1), (5, 0), (10, 0, -3), (2.5,),
                                                 (-3.2, 4.1, 0.7), (0, 1, 1 / 3), (np.float32(0), np.float32(2)),
                                                 (True,), (0, 5, None))]
    cases += [Case("arange", (0, 5), dict(dtype=dt)) for dt in ("float32", "int32", "int64", "float64")]
    cases += [Case("linspace", args) for args in ((0, 1), (0, 1, 5), (0, 1, 5, False), (0, 1, 0), (0, 1, 1),
                                                   (np.float32(-1), 2, 4), (Arr((3,)), Arr((3,)), 4),
                                                   (Arr((2, 3), "float32"), 5.0, 3), (Arr((2,), "int32"), 9, 3))]
    cases += [Case("linspace", (-2, 3, 7), dict(dtype="int64")), Case("linspace", (0, Arr((2,)), 4), dict(axis=1)),
              Case("linspace", (Arr((2, 3)), 1.0, 3), dict(axis=-1)), Case("linspace", (1, 2, 5), dict(dtype="float32"))]
    cases += [Case(name, (m,)) for name in ("bartlett", "blackman", "hamming", "hanning") for m in (7, 1, 0, -2)]
    cases += [Case("eye", args) for args in ((3,), (3, 4), (3, 4, 1), (4, 3, -2), (0,), (3, None, 5))]
    cases += [Case("eye", (3,), dict(dtype=dt)) for dt in DTYPES]
    cases += [Case("identity", args) for args in ((3,), (4, "bool"), (0,), (2, np.int32))]
    cases += [Case("indices", ((2, 3),), dict(dtype=dt)) for dt in DTYPES[:4]]
    cases += [Case("indices", args, kw) for args, kw in (
        (((3, 4, 2),), {}), (((4,),), {}), (((),), {}), (((3, 0),), {}), (([2, 3],), dict(sparse=True)),
        (((2, 3, 4), "float32", True), {}), (((2, 2),), dict(dtype=bool)), (((2, 3),), dict(dtype=None)),
        (((2, 3),), dict(dtype=None, sparse=True)))]
    cases += [Case("ndarray", args, values=False) for args in (((3, 4),), (5,), ((),), ((0, 2),), ([2, 3], "int32"),
                                                                ((2,), bool))]
    cases += [Case("ndarray", ((2, 3),), dict(dtype=dt, order="F"), values=False) for dt in DTYPES]
    cases += [Case("mgrid", (key,)) for key in (
        slice(0, 5), slice(1, 7, 2), slice(-1, 1, 5j), slice(0.5, 3.3), slice(2, 1, 1j), slice(5, 0),
        (slice(0, 3), slice(0, 4)), (slice(0, 1, 5j), slice(-2, 2)), (slice(np.float32(0), np.float32(1), 0.25),),
        (slice(1, 5, 2), slice(3), slice(0, 1, 2j)), (slice(0, 0), slice(0, 2)))]
    return cases


def _scan_cases() -> list[Case]:
    cases = []
    for name in ("cumsum", "cumprod"):
        A = functools.partial(Arr, low=-1.5, high=1.5, ilow=-2, ihigh=2, nonzero=True) if name == "cumprod" else Arr
        cases += [Case(name, (A((3, 4, 5), dt),)) for dt in DTYPES + ("int8", "uint8", "float16")]
        cases += [Case(name, (A((3, 4, 5), dt),), dict(axis=ax)) for dt in DTYPES for ax in (0, 1, -1)]
        cases += [Case(name, (A((3, 4), "int32"),), dict(dtype="float32")),
                  Case(name, (A((3, 4), "float32"), 0, np.float64)), Case(name, (A((3, 4), "bool"),), dict(axis=1, dtype=int)),
                  Case(name, (A(()),)), Case(name, (A((), "int32"),), dict(axis=0)),
                  Case(name, (A((), "float32", scalar=True),)), Case(name, (A((0, 4)),)), Case(name, (A((4, 0), "int32"), 1)),
                  Case(name, (A((3, 4), special=True), 1)), Case(name, (A((3, 4), layout="T"), 0)),
                  Case(name, (A((3, 4), "int32", layout="rev"),)), Case(name, (A((3, 4), layout="step"), -1))]
    return cases


def _statistics_cases() -> list[Case]:
    cases = [Case("corrcoef", (Arr((3, 6), dt),)) for dt in DTYPES if dt != "bool"]
    cases += [Case("corrcoef", (Arr((6, 3)),), dict(rowvar=False)), Case("corrcoef", (Arr((2, 6)),), dict(y=Arr((6,)))),
              Case("corrcoef", (Arr((3, 6), "float32"),), dict(dtype="float32")), Case("corrcoef", (Arr((3, 6), layout="T"),))]
    cases += [Case("cov", (Arr((3, 6), dt),)) for dt in DTYPES]
    cases += [Case("cov", (Arr((6,)),)), Case("cov", (Arr((6,), "float32"),)), Case("cov", (Arr((1, 6)),)),
              Case("cov", (Arr((6, 3)),), dict(rowvar=False)), Case("cov", (Arr((1, 6)),), dict(rowvar=False)),
              Case("cov", (Arr((3, 6)),), dict(bias=True)), Case("cov", (Arr((3, 6)),), dict(ddof=2)),
              Case("cov", (Arr((3, 6), "float32"),), dict(dtype="float32")), Case("cov", (Arr((0, 4)),)),
              Case("cov", (Arr((3, 6), layout="T"),)), Case("cov", (Arr((3, 6), special=True),))]
    # arrays as keyword arguments (the only op with them)
    cases += [Case("cov", (Arr((2, 6)),), dict(y=Arr((6,)))),
              Case("cov", (Arr((3, 6)),), dict(fweights=Arr((6,), "int64", ilow=1, ihigh=4))),
              Case("cov", (Arr((3, 6), "float32"),), dict(aweights=Arr((6,), low=0.5, high=2.0), ddof=0))]
    return cases


def _results_cases() -> list[Case]:
    """Ops with several results: np.histogram, np.meshgrid (the two-output ufuncs are among the
    ufunc cases); and tuple_getitem on a tuple of inputs (in traced graphs it reads an op's results)."""
    pair = (Arr((3, 4)), Arr((2,), "int32"))
    cases = [Case("tuple_getitem", (pair, i)) for i in (0, 1, -1)]
    cases += [Case("tuple_getitem", ((Arr((), scalar=True), Arr((0, 2), "bool"), Arr((3,), "float32")), 0))]

    cases += [Case("histogram", (Arr((40,), dt),)) for dt in DTYPES]
    cases += [Case("histogram", (Arr((5, 8)), 7)), Case("histogram", (Arr((30,), "float32"), 3)),
              Case("histogram", (Arr((30,), "float16"),)), Case("histogram", (Arr((30,), "int8"), 4)),
              Case("histogram", (Arr((30,)), 1)), Case("histogram", (Arr(()),)), Case("histogram", (Arr((0,)), 5)),
              Case("histogram", (Arr((6, 5), layout="T"), 4)), Case("histogram", (Arr((6, 5), layout="rev"),)),
              Case("histogram", (Arr((30,)), [-3, -1, 0, 0.5, 2, 3.5])), Case("histogram", (Arr((30,)), [1.0])),
              Case("histogram", (Arr((30,), "int32"), (-2, 0, 2))),
              Case("histogram", (Arr((30,)), 5), dict(range=(-2, 2))),
              Case("histogram", (Arr((30,), "float32"), 5), dict(range=(-2.5, 2.5))),
              Case("histogram", (Arr((30,)), 5), dict(range=(1, 1))),
              Case("histogram", (Arr((30,)), 6), dict(density=True)),
              Case("histogram", (Arr((30,), "int32"), [-3, 0, 1, 4]), dict(density=True)),
              Case("histogram", (Arr((5, 6)), 6), dict(weights=Arr((5, 6), low=0.0, high=2.0))),
              Case("histogram", (Arr((30,)), 6), dict(weights=Arr((30,), "float32", low=0.0, high=2.0))),
              Case("histogram", (Arr((30,)), 6), dict(weights=Arr((30,), "int32", ilow=0, ihigh=3))),
              Case("histogram", (Arr((30,)), 6), dict(weights=Arr((30,), low=0.1, high=2.0), density=True)),
              Case("histogram", (Arr((30,), "int64"), 4), dict(range=(-1, 5), weights=Arr((30,), "bool")))]
    cases += [Case("histogram", (Arr((30,)),), dict(bins=Arr((6,), dt, low=-3, high=3, increasing=True)))
              for dt in ("float64", "float32", "int64")]
    cases += [Case("histogram", (Arr((30,), "float32"), Arr((4,), low=-1, high=1, increasing=True)),
                   dict(weights=Arr((30,), "float32"), density=True)),
              Case("histogram", (Arr((30,)),), dict(bins=Arr((1,)))),   # one edge: no bin
              Case("histogram", (Arr((30,)),), dict(bins=Arr((0,))))]
    cases += [Case("histogram_bin_edges", (Arr((30,), dt), 5)) for dt in ("float32", "float64", "int32", "bool")]
    cases += [Case("histogram_bin_edges", (Arr((30,)), [0, 1, 2])),
              Case("histogram_bin_edges", (Arr((30,)), 4), dict(range=(0, 2), weights=Arr((30,)))),
              Case("histogram_bin_edges", (Arr((0,)),))]

    cases += [Case("meshgrid", (Arr((4,), dt), Arr((3,), dt))) for dt in DTYPES]
    cases += [Case("meshgrid", xi, dict(indexing=ix, sparse=sparse))
              for xi in ((Arr((4,)),), (Arr((4,)), Arr((2, 3), "float32")), (Arr((2,)), Arr((3,), "int32"), Arr((5,))))
              for ix in ("xy", "ij") for sparse in (False, True)]
    cases += [Case("meshgrid", (Arr(()), Arr((3,)))), Case("meshgrid", (Arr((), "int32", scalar=True), Arr((2,)))),
              Case("meshgrid", (Arr((0,)), Arr((3,)))), Case("meshgrid", (Arr((4,), layout="rev"), Arr((3,), layout="step"))),
              Case("meshgrid", (Arr((4,)), [1, 2, 3])), Case("meshgrid", (Arr((3,), special=True), Arr((2,)))),
              Case("meshgrid", (Arr((2, 2), layout="T"), Arr((3,))), dict(copy=True))]
    return cases


def _selection_cases() -> list[Case]:
    """Ops whose result size only the data knows (ops/selection.py, slice_positions)."""
    cases = [Case(name, (Arr((30,), dt),)) for name in ("nonzero", "flatnonzero", "argwhere") for dt in DTYPES]
    for name in ("nonzero", "flatnonzero", "argwhere"):
        cases += [Case(name, (Arr((5, 6), "bool"),)), Case(name, (Arr((3, 4, 5), "int8", ilow=-1, ihigh=1),)),
                  Case(name, (Arr((0,)),)), Case(name, (Arr((6, 5), layout="T", special=True),)),
                  Case(name, (Arr((4, 6), "int32", layout="step", ilow=0, ihigh=2),))]
    cases += [Case("argwhere", (Arr((), "int32"),)), Case("flatnonzero", (Arr(()),))]
    cases += [Case("bincount", (Arr((40,), dt, ilow=0, ihigh=12),)) for dt in ("int64", "int32", "uint8", "int8", "bool")]
    cases += [Case("bincount", (Arr((40,), "int64", ilow=0, ihigh=9),), dict(minlength=15)),
              Case("bincount", (Arr((40,), "int64", ilow=0, ihigh=9),), dict(minlength=3)),
              Case("bincount", (Arr((40,), "int32", ilow=0, ihigh=9), Arr((40,)))),
              Case("bincount", (Arr((40,), "int64", ilow=0, ihigh=9),), dict(weights=Arr((40,), "float32"))),
              Case("bincount", (Arr((40,), "int64", ilow=0, ihigh=9),), dict(weights=Arr((40,), "int32"))),
              Case("bincount", (Arr((0,), "int64"),)), Case("bincount", (Arr((0,), "int64"),), dict(minlength=4)),
              Case("bincount", (Arr((20,), "int64", ilow=0, ihigh=5, layout="rev"),))]
    cases += [Case("unique", (Arr((30,), dt, low=-3, high=3),)) for dt in DTYPES]
    cases += [Case("unique", (Arr((5, 6), "int8", ilow=-3, ihigh=3),), dict(return_counts=True)),
              Case("unique", (Arr((5, 6), "int16", ilow=-3, ihigh=3),),
                   dict(return_index=True, return_inverse=True, return_counts=True)),
              Case("unique", (Arr((20,), special=True),)), Case("unique", (Arr((20,), special=True),), dict(equal_nan=False)),
              Case("unique", (Arr((0,)),), dict(return_inverse=True)), Case("unique", (Arr((6, 5), "int32", layout="T"),))]
    bound = Arr((), "int64", ilow=-14, ihigh=14)
    cases += [Case("slice_positions", (12, bound, None, None)), Case("slice_positions", (12, None, bound, 2)),
              Case("slice_positions", (12, bound, bound, -1)), Case("slice_positions", (12, bound, 5, -3)),
              Case("slice_positions", (0, bound, None, None)),
              Case("slice_positions", (12, Arr((), "uint8", scalar=True), None, None))]
    return cases


_BUILDERS = (_ufunc_cases, _pointwise_cases, _reduction_cases, _scan_cases, matmul_cases, product_cases,
             numpy_linalg_cases, _statistics_cases, _shape_cases, _indexing_cases, _creation_cases, _results_cases,
             _selection_cases, tiling_cases, ordering_cases, numerics_cases, spectral_cases,
             complex_cases, loop_cases, cond_cases, while_cases)
