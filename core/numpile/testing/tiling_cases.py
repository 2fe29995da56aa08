"""Conformance cases of the long tail of NumPy functions (ops/tiling.py, np.average and the
stacks): tile, repeat, triu, tril, pad, hstack, vstack, column_stack, dstack, average."""

from __future__ import annotations

from .specs import DTYPES, Arr, Case

_COUNTS = dict(ilow=0, ihigh=3)


def tiling_cases() -> list[Case]:
    cases = [Case("tile", (Arr((2, 3), dt), (2, 1, 3))) for dt in DTYPES]
    cases += [Case("tile", (Arr(shape), reps)) for shape, reps in (
        ((5,), (4, 1)), ((5,), 3), ((2, 3), 2), ((2, 1), (1, 4)), ((1, 3), (3, 2)), ((3,), ()), ((), (2, 3)),
        ((0, 3), 2), ((2, 3), (2, 0)), ((2, 3), 1))]
    cases += [Case("tile", (Arr((), "int32", scalar=True), 3)), Case("tile", (Arr((3, 4), layout="T"), (2, 2))),
              Case("tile", (Arr((3, 4), layout="rev", special=True), (1, 2)))]

    cases += [Case("repeat", (Arr((2, 3), dt), 2)) for dt in DTYPES]
    cases += [Case("repeat", (Arr((2, 3)), *args)) for args in (
        (3, 1), (2, -1), (2, -2), ([1, 0, 2], 1), ([3, 1], 0), ([2], 1), (0,), (1, 0), ((0, 0), 0))]
    cases += [Case("repeat", (Arr((4,), "int32"), Arr((4,), "int64", **_COUNTS))),
              Case("repeat", (Arr((3, 2)), Arr((3,), "int32", **_COUNTS), 0)),
              Case("repeat", (Arr((3, 2)), Arr((), "int64", ilow=1, ihigh=3))),
              Case("repeat", (Arr(()), 4)), Case("repeat", (Arr(()), 2, -1)), Case("repeat", (Arr((), "bool", scalar=True, nonzero=True), 2)),
              Case("repeat", (Arr((0, 3)), 2, 0)), Case("repeat", (Arr((3, 4), layout="T"), 2, 1)),
              Case("repeat", (Arr((3, 4), layout="step", special=True), [1, 2, 0, 1], -1))]

    for name in ("triu", "tril"):
        cases += [Case(name, (Arr((4, 5), dt),)) for dt in DTYPES]
        cases += [Case(name, (Arr((4, 5)), k)) for k in (1, -2, 7, -9)]
        cases += [Case(name, (Arr((5,), "int32"), 1)), Case(name, (Arr((2, 3, 4)), -1)), Case(name, (Arr((0, 3)),)),
                  Case(name, (Arr((4, 4), layout="T"),)), Case(name, (Arr((3, 4), layout="rev", special=True), 1))]

    cases += [Case("pad", (Arr((3, 4), dt), 1)) for dt in DTYPES]
    cases += [Case("pad", (Arr((3, 4)), width), dict(mode=mode)) for width, mode in (
        (((1, 2), (0, 3)), "constant"), (2, "edge"), ((2, 1), "reflect"), (1, "wrap"), ((1, 3), "symmetric"),
        (((0, 0), (2, 2)), "linear_ramp"), (1, "mean"), (0, "edge"))]
    cases += [Case("pad", (Arr((5,)), (1, 2)), dict(constant_values=(-1.5, 2.5))),
              Case("pad", (Arr((3, 4), layout="T"), 1), dict(mode="edge")),
              Case("pad", (Arr((3, 4), layout="rev", special=True), 2), dict(mode="reflect", reflect_type="odd")),
              Case("pad", (Arr(()), 0)), Case("pad", (Arr((0, 3)), 1))]

    pairs = ((Arr((3,)), Arr((3,), "int32")), (Arr((2, 3)), Arr((2, 3), "float32")), (Arr(()), Arr((), "bool", nonzero=True)))
    for name in ("hstack", "vstack", "column_stack", "dstack"):
        cases += [Case(name, (pair,)) for pair in pairs]
        cases += [Case(name, ([Arr((3,), dt), Arr((3,), dt)],)) for dt in DTYPES]
        cases += [Case(name, ((Arr((3, 2), layout="T"), Arr((3, 2), layout="rev"), Arr((3, 2), special=True)),)),
                  Case(name, ((Arr((2,)),),)), Case(name, ((Arr((0,)), Arr((0,))),))]
    cases += [Case("hstack", ((Arr((2, 3)), Arr((2, 1), "int64")),)), Case("hstack", ((Arr((3,)), 1.5),)),
              Case("vstack", ((Arr((2, 3)), Arr((3,)), Arr((1, 3), "int32")),)),
              Case("column_stack", ((Arr((3,)), Arr((3, 2))),)),
              Case("dstack", ((Arr((2, 3)), Arr((2, 3, 2), "int32")),)), Case("dstack", ((Arr((4, 3, 2, 2)),) * 2,))]

    cases += [Case("average", (Arr((3, 4), dt),)) for dt in DTYPES]
    cases += [Case("average", (Arr((3, 4)),), kw) for kw in (
        dict(axis=0), dict(axis=-1, keepdims=True), dict(axis=(0, 1)), dict(returned=True), dict(axis=1, returned=True),
        dict(weights=Arr((3, 4), low=0.5)), dict(axis=1, weights=Arr((4,), "int32", ilow=1, ihigh=3)),
        dict(axis=0, weights=Arr((3,), "float32", low=0.5), returned=True),
        dict(weights=Arr((3, 4), "int64", ilow=1, ihigh=3), returned=True))]
    cases += [Case("average", (Arr((5,), "int32"),), dict(weights=Arr((5,), "bool", nonzero=True))),
              Case("average", (Arr(()),)), Case("average", (Arr((0, 3)),), dict(axis=0)),
              Case("average", (Arr((3, 4), layout="T", special=True),)), Case("average", (Arr((3, 4), "float32", layout="step"),), dict(axis=1))]
    return cases
