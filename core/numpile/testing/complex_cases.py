"""Conformance cases of complex data: the ufuncs on complex64 and complex128 arrays (alone, with
real arrays and Python scalars, as NEP 50 promotes them; NaN and inf among the parts), integer
powers, the parts (`.real`, `.imag`, np.angle), sums, products, means, variances (NumPy's are
real: |x - mean|**2) and running sums."""

from __future__ import annotations

from .specs import Arr, Case

COMPLEX = ("complex64", "complex128")
_UNARY = ("negative", "positive", "conjugate", "absolute", "square", "reciprocal", "exp", "isnan", "isinf",
          "isfinite", "real", "imag", "angle")
_BINARY = ("add", "subtract", "multiply", "divide", "equal", "not_equal")


def complex_cases() -> list[Case]:
    cases = []
    for dt in COMPLEX:
        z, w = Arr((3, 4), dt), Arr((3, 4), dt, nonzero=True)
        cases += [Case(name, (z,)) for name in _UNARY]
        cases += [Case(name, (z, w)) for name in _BINARY]
        cases += [Case(name, (Arr((2, 3), dt, special=True), Arr((2, 3), dt, special=True, layout="rev")))
                  for name in ("multiply", "divide", "equal")]
        cases += [Case(name, (Arr((2, 3), dt, special=True),)) for name in ("absolute", "exp", "isinf", "angle")]
        cases += [Case("power", (Arr((3, 4), dt, nonzero=True), n)) for n in (0, 1, 2, 3, 5, -1, -3, 2.0)]
        cases += [Case("sum", (Arr((3, 4, 5), dt),)), Case("sum", (Arr((3, 4, 5), dt),), dict(axis=1)),
                  Case("prod", (Arr((3, 4), dt, low=-1.2, high=1.2),), dict(axis=0)),
                  Case("mean", (Arr((3, 4), dt),), dict(axis=1)), Case("var", (Arr((3, 4, 5), dt),), dict(axis=1)),
                  Case("std", (Arr((3, 4), dt),)), Case("cumsum", (Arr((3, 4), dt),), dict(axis=1))]
    cases += [Case(name, (Arr((3, 4), dt),)) for name in ("real", "imag", "angle") for dt in ("float32", "int32")]
    cases += [Case("angle", (Arr((3, 4), "complex128"),), dict(deg=True)), Case("absolute", (Arr((), "complex128"),)),
              Case("absolute", (Arr((), "complex64", scalar=True),)), Case("real", (Arr((3, 4), "complex128", layout="T"),)),
              Case("multiply", (Arr((3, 4), "complex64"), Arr((3, 4), "float64"))),
              Case("add", (Arr((3, 4), "complex128"), Arr((4,), "int32"))),
              Case("multiply", (1j, Arr((4,), "float32"))), Case("multiply", (1j, Arr((4,), "float64"))),
              Case("add", (Arr((3, 4), "complex64"), 2.5)), Case("subtract", (Arr((3, 4), "complex64"), 2)),
              Case("divide", (Arr((3, 4), "float64"), Arr((3, 4), "complex128", nonzero=True))),
              Case("exp", (Arr((3, 4), "complex128", layout="step"),)),
              Case("clip", (Arr((3, 4), "complex128"), 0, 1)), Case("maximum", (Arr((3, 4), "complex64"), 1j)),
              Case("less", (Arr((3, 4), "complex128"), Arr((4,), "complex128"))), Case("sign", (Arr((3, 4), "complex128"),))]
    return cases
