"""Conformance cases of products and linear algebra (ops/products.py, ops/einsum.py,
ops/numpy_linalg.py): matmul and dot, outer, ufunc.at and ufunc.outer, einsum, np.linalg."""

from __future__ import annotations

import numpy as np

from .specs import DTYPES, Arr, Case

_PRODUCT_SHAPES = [((4,), (4, 5)), ((3, 4), (4,)), ((4,), (4,)),
                   ((2, 3, 4), (4, 5)), ((0, 4), (4, 3)), ((3, 0), (0, 4))]


def matmul_cases() -> list[Case]:
    """matmul and dot: NumPy's shape rules, dtypes mixed, layouts."""
    cases = []
    for name, extra in (("matmul", [((2, 1, 3, 4), (5, 4, 2)), ((4,), (2, 4, 3)), ((2, 3, 4), (4,))]),
                        ("dot", [((2, 3, 4), (5, 4, 6)), ((4,), (2, 4, 3)), ((3,), ())])):
        cases += [Case(name, (Arr(a), Arr(b))) for a, b in _PRODUCT_SHAPES + extra]
        cases += [Case(name, (Arr((3, 4), dt), Arr((4, 5), dt))) for dt in DTYPES]
        cases += [Case(name, (Arr((3, 4), x), Arr((4, 2), y)))
                  for x, y in (("float32", "int32"), ("int64", "float32"), ("bool", "int32"), ("float32", "float64"))]
        cases += [Case(name, (Arr((3, 4), layout="T"), Arr((4, 5), layout="T"))),
                  Case(name, (Arr((3, 4), layout="rev"), Arr((4, 5), layout="step"))),
                  Case(name, (Arr((3, 4), "int32", layout="step"), Arr((4,), "int32", layout="rev"))),
                  Case(name, (Arr((2, 3), special=True), Arr((3, 2)))),
                  Case(name, (Arr((16, 32), "float32"), Arr((32, 8), "float32")))]
    cases += [Case("dot", (Arr(()), Arr((3, 4)))), Case("dot", (2.5, Arr((3,), "float32"))),
              Case("dot", (Arr((3, 4), "int32"), 2)), Case("dot", (Arr((), scalar=True), Arr((), scalar=True)))]
    return cases




def product_cases() -> list[Case]:
    """np.outer, ufunc.at and ufunc.outer, np.einsum."""
    cases = [Case("outer", (Arr(a, dt), Arr(b, dt))) for dt in DTYPES for a, b in (((3,), (4,)), ((2, 3), (2, 2)))]
    cases += [Case("outer", (Arr((3,), "float32"), Arr((4,), "int64"))), Case("outer", (2.5, Arr((3,), "float32"))),
              Case("outer", (Arr(()), Arr((0,)))), Case("outer", (Arr((), scalar=True), Arr((3,), layout="rev"))),
              Case("outer", (Arr((3, 4), layout="T"), Arr((5,), layout="step")))]

    index = Arr((7,), "int64", ilow=-5, ihigh=4)   # repeats and negatives: every one applies (unbuffered)
    cases += [Case("ufunc_at", (u, Arr((5, 3), dt), index, Arr((7, 3), dt)))
              for u in (np.add, np.multiply, np.maximum, np.subtract) for dt in ("float64", "int32")]
    cases += [Case("ufunc_at", (np.negative, Arr((5,), "float32"), index)),
              Case("ufunc_at", (np.add, Arr((5, 3), "int8"), index, 100)),
              Case("ufunc_at", (np.add, Arr((5, 3), layout="T"), (index, Arr((7,), "int64", ilow=0, ihigh=2)), 1.5))]
    cases += [Case("ufunc_outer", (u, Arr((3,), dt), Arr((2, 4), dt)))
              for u in (np.add, np.multiply, np.subtract, np.maximum, np.greater) for dt in ("float64", "int32")]
    cases += [Case("ufunc_outer", (np.logical_and, Arr((3,), "bool"), Arr((4,), "bool"))),
              Case("ufunc_outer", (np.power, Arr((3,), low=0.5, high=2), Arr((2,), "float32"))),
              Case("ufunc_outer", (np.add, Arr((3,), "float32"), 2)), Case("ufunc_outer", (np.add, Arr(()), Arr(()))),
              Case("ufunc_outer", (np.multiply, Arr((), scalar=True), Arr((), "float32", scalar=True))),
              Case("ufunc_outer", (np.divide, Arr((2, 3), layout="T"), Arr((0,)))),
              Case("ufunc_outer", (np.arctan2, Arr((3,), special=True), Arr((2,), layout="rev")))]

    e = "einsum"
    cases += [Case(e, ("ij,jk->ik", Arr((3, 4), dt), Arr((4, 5), dt))) for dt in DTYPES]
    cases += [Case(e, ("i,i", Arr((5,), dt), Arr((5,), dt))) for dt in ("float32", "int8", "bool")]
    cases += [Case(e, (spec, *(Arr(s) for s in shapes))) for spec, shapes in (
        ("ij,jk", ((3, 4), (4, 5))), ("bij,bjk->bik", ((2, 3, 4), (2, 4, 5))), ("ij->", ((3, 4),)),
        ("ii", ((4, 4),)), ("ij->i", ((3, 4),)), ("ij,ij->ij", ((3, 4), (3, 4))), ("i,j->ij", ((3,), (4,))),
        ("Ba,bA", ((2, 3), (4, 5))), ("...ij,...jk->...ik", ((2, 1, 3, 4), (5, 4, 2))), ("...i,i...", ((2, 3), (3, 2))),
        ("i,i->i", ((3,), (1,))), ("ij,jk,kl->il", ((2, 3), (3, 4), (4, 5))), ("i->", ((0,),)),
        (" ij , jk -> ki ", ((3, 4), (4, 5))), ("ijk,jk->i", ((2, 3, 4), (3, 4))))]
    cases += [Case(e, ("ij,jk,kl->il", Arr((2, 3)), Arr((3, 4)), Arr((4, 5))), dict(optimize=opt))
              for opt in (True, "greedy", "optimal")]
    cases += [Case(e, ("ij,ij->", Arr((3, 4)), Arr((3, 4))), dict(optimize=True)),
              Case(e, ("ij,->ij", Arr((3, 4), "int32"), 2.0)), Case(e, ("i,i", Arr((4,), "int32"), Arr((4,), "int32")),
                                                                  dict(dtype="float32", casting="unsafe")),
              Case(e, ("ij,jk", Arr((3, 4), layout="T"), Arr((4, 2), layout="rev"))),
              Case(e, ("ij,j->i", Arr((3, 4), special=True), Arr((4,), layout="step")))]
    return cases


def numpy_linalg_cases() -> list[Case]:
    """np.linalg: solve, inv, cholesky, eigh, slogdet, qr, svd, norm, det, matrix_power."""
    cases = [Case("solve", (Arr(a, spd=True), Arr(b))) for a, b in (
        ((3, 3), (3,)), ((3, 3), (3, 2)), ((2, 3, 3), (2, 3, 1)), ((2, 3, 3), (3,)), ((4, 1, 3, 3), (2, 3, 4)),
        ((3, 3), (2, 3, 5)), ((0, 2, 2), (0, 2, 1)), ((2, 2), (2, 0)))]
    cases += [Case("solve", (Arr((3, 3), dt, spd=True), Arr((3,), dt))) for dt in ("float32", "int32", "int64")]
    cases += [Case("solve", (Arr((3, 3), spd=True, layout="T"), Arr((3, 2), layout="rev")))]
    for name in ("inv", "cholesky"):
        cases += [Case(name, (Arr(s, spd=True),)) for s in ((3, 3), (1, 1), (2, 4, 4), (0, 2, 2), (2, 0, 0))]
        cases += [Case(name, (Arr((3, 3), dt, spd=True),)) for dt in ("float32", "int32", "int64")]
        cases += [Case(name, (Arr((4, 4), spd=True, layout="T"),))]
    cases += [Case("cholesky", (Arr((3, 3), spd=True),), dict(upper=True))]
    # several results, in NumPy's named tuples
    for name in ("eigh", "slogdet"):
        cases += [Case(name, (Arr(s, spd=True),)) for s in ((3, 3), (1, 1), (2, 4, 4), (0, 2, 2))]
        cases += [Case(name, (Arr((3, 3), dt, spd=True),)) for dt in ("float32", "int64")]
    cases += [Case("eigh", (Arr((3, 3), spd=True, layout="T"),), dict(UPLO="U")), Case("slogdet", (Arr((3, 3)),))]
    cases += [Case("qr", (Arr(s),), dict(mode=mode)) for s in ((4, 3), (3, 4), (2, 3, 3))
              for mode in ("reduced", "complete", "r", "raw")]
    cases += [Case("qr", (Arr((4, 3), "float32"),)), Case("qr", (Arr((3, 2), "int32", layout="T"),))]
    cases += [Case("svd", (Arr(s),), dict(full_matrices=full)) for s in ((4, 3), (3, 4), (2, 3, 2)) for full in (True, False)]
    cases += [Case("svd", (Arr((3, 4), "float32"),), dict(compute_uv=False)),
              Case("svd", (Arr((3, 3), spd=True),), dict(hermitian=True)), Case("svd", (Arr((3, 3), "int64", layout="rev"),))]

    x, m, cube = Arr((5,)), Arr((3, 4)), Arr((2, 3, 4))
    cases += [Case("norm", (Arr((3, 4), dt),)) for dt in DTYPES]
    cases += [Case("norm", (x, ord)) for ord in (None, 1, 2, np.inf, -np.inf, 0, 3, -1, 0.5)]
    cases += [Case("norm", (m, ord)) for ord in (None, "fro", "nuc", 1, -1, 2, -2, np.inf, -np.inf)]
    cases += [Case("norm", (m,), dict(axis=ax)) for ax in (0, -1, (0, 1), (1, 0))]
    cases += [Case("norm", (cube,), dict(axis=ax, ord=ord)) for ax, ord in ((2, None), ((0, 2), "fro"), ((1, 2), 1), (0, 3))]
    cases += [Case("norm", (cube,), dict(keepdims=True)), Case("norm", (m, 2), dict(keepdims=True)),
              Case("norm", (m,), dict(axis=1, keepdims=True)), Case("norm", (Arr((3,), "float32"),)),
              Case("norm", (Arr(()),)), Case("norm", (Arr((), scalar=True),)), Case("norm", (Arr((0, 3)),)),
              Case("norm", (Arr((3, 4), special=True),), dict(axis=1)), Case("norm", (Arr((3, 4), layout="T"), "fro")),
              Case("norm", (Arr((3, 4), "int32", layout="rev"), np.inf))]
    cases += [Case("det", (Arr(s, dt, spd=True),)) for s in ((3, 3), (2, 4, 4)) for dt in ("float64", "float32", "int64")]
    cases += [Case("det", (Arr((3, 3), layout="T"),)), Case("det", (Arr((1, 1)),)), Case("det", (Arr((0, 2, 2)),))]
    cases += [Case("matrix_power", (Arr((3, 3), dt, spd=True), n)) for dt in ("float64", "float32", "int64") for n in (0, 3)]
    cases += [Case("matrix_power", (Arr((3, 3), spd=True), -2)), Case("matrix_power", (Arr((2, 3, 3), layout="rev"), 2)),
              Case("matrix_power", (Arr((4, 4), "bool"), 2))]
    return cases
