"""Conformance cases of the numerical helpers (ops/numerics.py): isclose, interp, convolve, correlate, diag,
trace, count_nonzero, ptp, trapezoid, polyval, digitize, isin, cross, kron, nan_to_num, select, gradient; and of the
reductions that leave NaN out (ops/nanfunctions.py)."""

from __future__ import annotations

from .specs import DTYPES, Arr, Case


def numerics_cases() -> list[Case]:
    cases = [Case("isclose", (Arr((3, 4), dt), Arr((3, 4), dt))) for dt in DTYPES]
    cases += [Case("isclose", (Arr((3, 4)), Arr((4,))), dict(atol=0.5)), Case("isclose", (Arr((3, 4)), 1.0), dict(rtol=0.3)),
              Case("isclose", (Arr((3, 4), special=True), Arr((3, 4), special=True)), dict(equal_nan=True)),
              Case("isclose", (Arr((3, 4), layout="T"), Arr((3, 4), "float32", layout="rev")))]
    cases += [Case("interp", (Arr((5,), dt), Arr((6,), increasing=True), Arr((6,)))) for dt in DTYPES]
    cases += [Case("interp", (Arr((2, 3)), Arr((6,), increasing=True), Arr((6,), "int32")), dict(left=-1.0, right=9.0)),
              Case("interp", (0.5, Arr((4,), increasing=True), Arr((4,)))),
              Case("interp", (Arr((5,)), Arr((6,), increasing=True), Arr((6,))), dict(period=3.0)),
              Case("interp", (Arr((3, 2), layout="T"), Arr((6,), increasing=True), Arr((6,), layout="rev")))]
    cases += [Case("convolve", (Arr((6,), dt), Arr((3,), dt))) for dt in DTYPES]
    cases += [Case("convolve", (Arr((6,)), Arr((3,), "int32")), dict(mode=m)) for m in ("same", "valid")]
    cases += [Case("convolve", (Arr((2,)), Arr((5,))), dict(mode="valid")), Case("convolve", (Arr((6,), layout="rev"), Arr((4,), layout="step")))]
    cases += [Case("correlate", (Arr((6,), dt), Arr((3,), dt))) for dt in DTYPES]
    cases += [Case("correlate", (Arr((6,)), Arr((3,), "int32")), dict(mode=m)) for m in ("same", "full")]
    cases += [Case("correlate", (Arr((6,), layout="rev", special=True), Arr((4,), layout="step")))]
    cases += [Case("diag", (Arr((4,), dt),)) for dt in DTYPES]
    cases += [Case("diag", (Arr((4,)), k)) for k in (1, -2)]
    cases += [Case("diag", (Arr((4, 5)), k)) for k in (0, 2, -3, 7)]
    cases += [Case("diag", (Arr((4, 5), layout="T"),)), Case("diag", (Arr((3, 3), layout="rev", special=True), -1))]
    cases += [Case("trace", (Arr((4, 5), dt),)) for dt in DTYPES]
    cases += [Case("trace", (Arr((4, 5)),), kw) for kw in (dict(offset=1), dict(offset=-2), dict(dtype="float32"))]
    cases += [Case("trace", (Arr((2, 3, 4)),), dict(axis1=1, axis2=2)), Case("trace", (Arr((4, 4), layout="T"),))]
    for name in ("nansum", "nanprod", "nanmean", "nanmax", "nanmin", "nanstd", "nanvar", "nanargmax", "nanargmin",
                 "nanmedian"):
        cases += [Case(name, (Arr((4, 5), dt),)) for dt in DTYPES if dt != "bool"]
        cases += [Case(name, (Arr((4, 5), special=True),), dict(axis=1)), Case(name, (Arr((4, 5), layout="T"),), dict(axis=0)),
                  Case(name, (Arr((6,), "float32", special=True),))]
        if not name.startswith("nanarg"):
            cases += [Case(name, (Arr((3, 4, 2)),), dict(axis=(0, 2), keepdims=True))]
    cases += [Case("nanstd", (Arr((4, 5)),), dict(ddof=1)), Case("nanvar", (Arr((4, 5), "int32"),), dict(dtype="float32")),
              Case("nansum", (Arr((4, 5), "int32"),), dict(dtype="int64"))]
    for name in ("count_nonzero", "ptp"):
        cases += [Case(name, (Arr((4, 5), dt),)) for dt in DTYPES if (name, dt) != ("ptp", "bool")]
        cases += [Case(name, (Arr((4, 5)),), kw) for kw in (dict(axis=0), dict(axis=1, keepdims=True), dict(axis=(0, 1)))]
        cases += [Case(name, (Arr((5, 4), layout="T", special=True),), dict(axis=0))]
    cases += [Case("trapezoid", (Arr((4, 5), dt),)) for dt in DTYPES if dt != "bool"]
    cases += [Case("trapezoid", (Arr((4, 5)),), kw) for kw in (dict(axis=0), dict(dx=0.5), dict(x=Arr((5,), increasing=True)))]
    cases += [Case("trapezoid", (Arr((5, 4), layout="rev"),), dict(axis=-2))]
    cases += [Case("polyval", (Arr((3,), dt), Arr((4,), dt))) for dt in DTYPES if dt != "bool"]
    cases += [Case("polyval", (Arr((3,)), 1.5)), Case("polyval", (Arr((2,), "int32"), Arr((2, 3)))),
              Case("polyval", (Arr((4,), layout="rev"), Arr((3, 2), layout="T")))]
    cases += [Case("digitize", (Arr((5,), dt), Arr((4,), increasing=True))) for dt in DTYPES]
    cases += [Case("digitize", (Arr((2, 3)), Arr((4,), increasing=True)), dict(right=True)),
              Case("digitize", (0.5, Arr((3,), increasing=True))), Case("digitize", (Arr((4, 2), layout="T", special=True), Arr((3,), increasing=True)))]
    cases += [Case("isin", (Arr((3, 4), dt, ilow=0, ihigh=5), Arr((3,), dt, ilow=0, ihigh=5))) for dt in DTYPES]
    cases += [Case("isin", (Arr((6,), "int64", ilow=0, ihigh=5), Arr((2, 2), "int64", ilow=0, ihigh=5)), dict(invert=True)),
              Case("isin", (Arr((2, 3), "int32", ilow=0, ihigh=3, layout="T"), Arr((3,), "int64", ilow=0, ihigh=3)))]
    cases += [Case("cross", (Arr((4, 3), dt), Arr((4, 3), dt))) for dt in DTYPES if dt != "bool"]
    cases += [Case("cross", (Arr((3,)), Arr((2, 3)))), Case("cross", (Arr((2, 3), layout="T"), Arr((3,), "int32"))),
              Case("cross", (Arr((4, 3), layout="rev", special=True), Arr((4, 3))))]
    cases += [Case("kron", (Arr((2, 3), dt), Arr((2, 2), dt))) for dt in DTYPES]
    cases += [Case("kron", (Arr((3,)), Arr((2, 2)))), Case("kron", (Arr((2, 2), layout="T"), Arr((3,), "int32"))),
              Case("kron", (Arr(()), Arr((2,))))]
    cases += [Case("nan_to_num", (Arr((3, 4), dt),)) for dt in DTYPES]
    cases += [Case("nan_to_num", (Arr((3, 4), special=True),), kw) for kw in ({}, dict(nan=-1.0, posinf=9.0, neginf=-9.0))]
    cases += [Case("nan_to_num", (Arr((3, 4), "float32", special=True, layout="T"),))]
    conds = (Arr((3, 4), "bool"), Arr((3, 4), "bool"))
    cases += [Case("select", (conds, (Arr((3, 4), dt), Arr((3, 4), dt)))) for dt in DTYPES]
    cases += [Case("select", (conds, (Arr((3, 4)), Arr((4,), "int32"))), dict(default=-1.5)),
              Case("select", ((Arr((3, 1), "bool"),), (Arr((1, 4), "float32"),)), dict(default=Arr((3, 4), "float32"))),
              Case("select", ((Arr((3, 4), "bool", layout="T"),), (Arr((3, 4), layout="rev", special=True),)))]
    cases += [Case("gradient", (Arr((4, 5), dt),)) for dt in DTYPES if dt != "bool"]
    cases += [Case("gradient", (Arr((6,)),)), Case("gradient", (Arr((4, 5)), 0.5), dict(axis=1)),
              Case("gradient", (Arr((5,)), Arr((5,), increasing=True))), Case("gradient", (Arr((4, 5)), 2.0, 0.5), dict(edge_order=2)),
              Case("gradient", (Arr((4, 5), "float32", layout="T"),), dict(axis=(1, 0))),
              Case("gradient", (Arr((4, 5), layout="rev", special=True),), dict(axis=-1))]
    return cases
