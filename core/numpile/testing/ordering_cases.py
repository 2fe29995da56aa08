"""Conformance cases of orderings and order statistics (ops/ordering.py): sort, argsort,
partition, argpartition, searchsorted, take_along_axis, median, percentile, quantile."""

from __future__ import annotations

from .specs import DTYPES, Arr, Case


def ordering_cases() -> list[Case]:
    cases = []
    for name in ("sort", "argsort"):
        cases += [Case(name, (Arr((3, 5), dt),), dict(kind="stable")) for dt in DTYPES]
        cases += [Case(name, (Arr((3, 5)),), kw) for kw in (dict(axis=0), dict(axis=None), dict(axis=-1, kind="mergesort"))]
        cases += [Case(name, (Arr((6,), "int32"),)), Case(name, (Arr((4, 3), layout="T"),)),
                  Case(name, (Arr((3, 4), layout="rev", special=True),)), Case(name, (Arr((0, 3)),), dict(axis=0))]
    cases += [Case("searchsorted", (Arr((6,), dt, increasing=True), Arr((4,), dt))) for dt in DTYPES if dt != "bool"]
    cases += [Case("searchsorted", (Arr((6,), increasing=True), Arr((2, 3))), dict(side="right")),
              Case("searchsorted", (Arr((6,), increasing=True), 0.5)),
              Case("searchsorted", (Arr((6,), increasing=True), Arr((3, 2), layout="T")))]
    cases += [Case("median", (Arr((4, 5), dt),)) for dt in DTYPES]
    cases += [Case("median", (Arr((4, 5)),), kw) for kw in (dict(axis=0), dict(axis=-1, keepdims=True), dict(axis=(0, 1)))]
    cases += [Case("median", (Arr((5, 4), layout="T", special=True),), dict(axis=1)), Case("median", (Arr((7,), "int32"),))]
    for name, q in (("percentile", 30.0), ("quantile", 0.3)):
        cases += [Case(name, (Arr((4, 5), dt), q)) for dt in DTYPES if dt != "bool"]
        cases += [Case(name, (Arr((4, 5)), [q, q / 3]), dict(axis=0)), Case(name, (Arr((4, 5)), q), dict(axis=1, keepdims=True)),
                  Case(name, (Arr((6,)), q), dict(method="nearest")), Case(name, (Arr((4, 5), layout="rev"), q), dict(axis=-1))]
    for name in ("partition", "argpartition"):
        cases += [Case(name, (Arr((3, 6), dt), 2)) for dt in DTYPES if dt != "bool"]
        cases += [Case(name, (Arr((3, 6)), kth), kw) for kth, kw in ((1, dict(axis=0)), (4, dict(axis=None)), ([0, 5], {}), (-1, {}))]
        cases += [Case(name, (Arr((6, 3), layout="T", special=True), 1), dict(axis=0))]
    cases += [Case("take_along_axis", (Arr((3, 5), dt), Arr((3, 2), "int64", ilow=0, ihigh=4)), dict(axis=1)) for dt in DTYPES]
    cases += [Case("take_along_axis", (Arr((3, 5)), Arr((1, 5), "int32", ilow=-3, ihigh=2)), dict(axis=0)),
              Case("take_along_axis", (Arr((6,)), Arr((4,), "int64", ilow=0, ihigh=5)), dict(axis=None)),
              Case("take_along_axis", (Arr((4, 3), layout="T"), Arr((4, 1), "int64", ilow=0, ihigh=2)), dict(axis=-1))]
    return cases
