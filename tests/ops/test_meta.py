"""Meta rules against NumPy: the ArrayMeta of NumPy's result, or NumPy's exception type, for
calls the conformance suite cannot make (refused calls, randomized shapes and indices);
NotImplementedError for the forms rows do not capture; no allocation for huge shapes."""

import operator
import re
import warnings

import numpy as np
import pytest

from numpile import ops
from numpile.ops import ArrayMeta
from numpile.testing import metas_of

RNG = np.random.default_rng(1)


def _public(exc_type):
    """The exception type a user catches: NumPy's private subclasses (UFuncNoLoopError) count
    as their first public base."""
    for cls in exc_type.__mro__:
        if cls.__module__ in ("builtins", "numpy.exceptions"):
            return cls
    raise AssertionError(exc_type)


def meta_of(name, args, kwargs=None, method=None):
    op = ops.get(name)
    canon = op.normalize_method(method, args, kwargs or {}) if method else op.normalize(args, kwargs or {})
    return op.meta(*metas_of(canon[0]), **metas_of(canon[1]))


def agrees(name, args, kwargs=None, fn=None):
    """meta(normalize(call)) equals the ArrayMeta of NumPy's result, or raises NumPy's exception type."""
    kwargs = kwargs or {}
    fn = fn or ops.get(name).numpy[0]
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # var of too few values, mean of nothing
            want = fn(*args, **kwargs)
    except Exception as e:  # noqa: BLE001 - whatever NumPy raises, the meta rule must raise too
        expected = _public(type(e))
        with pytest.raises(expected):
            meta_of(name, args, kwargs)
        return expected
    assert meta_of(name, args, kwargs) == ArrayMeta.of(want), f"{name}{args}{kwargs}"
    return None


def a(*shape, dtype="float64"):
    return np.ones(shape, dtype)


# -- refused calls: NumPy's exception type ----------------------------------------------------

REFUSED = [
    ("add", (a(3), a(4))), ("add", (a(2, 3), a(3, 2))), ("add", (a(3), a(3, dtype="U1"))),
    ("add", (a(3, dtype="int8"), 300)), ("subtract", (a(3, dtype="uint8"), -1)),
    ("negative", (a(3, dtype=bool),)), ("subtract", (a(3, dtype=bool), a(3, dtype=bool))),
    ("bitwise_and", (a(3), a(3))), ("invert", (a(3),)), ("left_shift", (a(3), 1)),
    ("gcd", (a(3), a(3))), ("ldexp", (a(3), a(3))), ("isnan", (a(3, dtype="U1"),)),
    ("power", (a(3, dtype="int64"), -1)), ("power", (a(3, dtype="int8"), -2)),
    ("arctan2", (a(2, 3), a(3, 3))), ("logical_and", (a(3), a(2))),
    ("where", (a(3) > 0, a(3))), ("where", (a(3) > 0, a(4), a(3))),
    ("clip", (a(3), a(4), 1)), ("round", (a(3, dtype="U1"),)),
    ("astype", (3, np.float32)), ("astype", (a(3), "not a dtype")),
    ("sum", (a(2, 3),), {"axis": 2}), ("sum", (a(2, 3),), {"axis": -3}), ("sum", (a(2, 3),), {"axis": (0, 0)}),
    ("sum", (a(2, 3),), {"axis": (0, -2)}), ("mean", (a(2, 3),), {"axis": (1, 5)}),
    ("max", (a(0, 3),)), ("max", (a(0, 3),), {"axis": 0}), ("min", (a(3, 0),), {"axis": 1}),
    ("max", (a(0, 0),), {"axis": 0}), ("argmax", (a(0, 3),), {"axis": 0}), ("argmin", (a(0),)),
    ("argmax", (a(2, 3),), {"axis": 2}), ("argmax", (a(2, 3),), {"axis": (0,)}),
    ("any", (a(2, 3),), {"axis": 3}), ("std", (a(2, 3),), {"dtype": "U1"}),
    ("sum", (a(3, dtype="U1"),)),
    ("matmul", (a(3), 2)), ("matmul", (a(3), a(4))), ("matmul", (a(2, 3), a(4))), ("matmul", (a(3), a(4, 5))),
    ("matmul", (a(2, 2, 3), a(4, 3, 5))), ("matmul", (a(), a(3))), ("matmul", (a(3, dtype="U1"), a(3))),
    ("dot", (a(2, 3), a(4))), ("dot", (a(3), a(4))), ("dot", (a(2, 3), a(5, 2, 4))), ("dot", (a(3), a(4, 2))),
    ("reshape", (a(2, 3), (5,))), ("reshape", (a(2, 3), (-1, -1))), ("reshape", (a(2, 3), (-1, 4))),
    ("reshape", (a(0, 3), (-1, 0))), ("reshape", (a(0, 3), (0, -1, 2))), ("reshape", (a(0, 3), (0, 2, -1))),
    ("reshape", (a(2, 3), (-2, 4))),
    ("transpose", (a(2, 3), (1, 1))), ("transpose", (a(2, 3), (1,))), ("transpose", (a(2, 3), (1, 2))),
    ("transpose", (a(2, 3), (0, 1, 2))),
    ("swapaxes", (a(2, 3), 2, 0)), ("swapaxes", (a(2, 3), 0, -3)), ("swapaxes", (np.float64(1), 0, 0)),
    ("moveaxis", (a(2, 3, 4), 3, 0)), ("moveaxis", (a(2, 3, 4), 0, 3)), ("moveaxis", (a(2, 3, 4), [0, 1], [0])),
    ("moveaxis", (a(2, 3, 4), [0, 0], [1, 2])),
    ("expand_dims", (a(3), 2)), ("expand_dims", (a(3), (0, 3))), ("expand_dims", (a(3), (0, 0))),
    ("expand_dims", (a(3), -3)),
    ("squeeze", (a(1, 3, 1),), {"axis": 1}), ("squeeze", (a(1, 3),), {"axis": 2}), ("squeeze", (a(1, 1),), {"axis": (0, 0)}),
    ("broadcast_to", (a(3), (2, 2))), ("broadcast_to", (a(3), (-1,))), ("broadcast_to", (a(2, 3), (3,))),
    ("broadcast_to", (a(3), ())),
    ("concatenate", ([],)), ("concatenate", ([a(), a()],)), ("concatenate", ([a(2, 3), a(2, 4)],)),
    ("concatenate", ([a(2, 3), a(2)],)), ("concatenate", ([a(2, 3), a(2, 3)], 2)),
    ("concatenate", ([a(2, 3), a(2, 3)], -3)), ("concatenate", ([[[1, 2]], a(1, 3)],)),
    ("stack", ([],)), ("stack", ([a(2, 3), a(3, 2)],)), ("stack", ([a(2, 3), a(2)],)), ("stack", ([a(2), a(2)], 2)),
    ("stack", ([a(2), a(2)], -3)), ("stack", ([[1, 2], a(3)],)),
    ("getitem", (a(3), 5)), ("getitem", (a(3), -4)), ("getitem", (a(3), (1, 2))), ("getitem", (a(3), (Ellipsis, Ellipsis))),
    ("getitem", (a(3), slice(None, None, 0))), ("getitem", (a(3), 1.0)), ("getitem", (a(3), slice(1, 2.0))),
    ("getitem", (a(2, 3), (None, 1, 3))), ("getitem", (a(), 0)), ("getitem", (np.float64(1), 0)),
    ("getitem", (a(3), "a")),
    ("zeros", (-1,)), ("ones", ((2, -3),)), ("empty", ((-1,),)), ("full", ((2, 3), a(2))), ("full", (3, 300, np.int8)),
    ("full", ((-2,), 1)), ("full", ((), a(2))),
    ("zeros_like", (a(3),), {"shape": (-1,)}), ("full_like", (a(3, dtype="int8"), 300)),
    ("full_like", (a(3), a(2, 3))), ("full_like", (a(3), a(2)), {"shape": (2, 3)}),
    ("arange", (0, 5, 0)), ("arange", ("a",)),
    ("linspace", (0, 1, -1)), ("linspace", (a(2), 1, 3), {"axis": 2}), ("linspace", (a(2), a(3), 3)),
    ("eye", (-1,)), ("eye", (3, -1)), ("identity", (-2,)),
    ("ndarray", ((-1,),)), ("ndarray", ((2,), "not a dtype")),
    ("flip", (a(2, 3), 2)), ("flip", (a(2, 3), (0, 0))), ("flip", (a(), 0)), ("copy", (a(3), "X")),
    ("cumsum", (a(2, 3), 2)), ("cumprod", (a(3, dtype="U1"),)), ("cumsum", (a(), 1)), ("cumsum", (a(2, 3), (0, 1))),
    ("outer", (a(3), a(3, dtype="U1"))), ("ufunc_outer", (np.subtract, a(3, dtype=bool), a(2, dtype=bool))),
    ("einsum", ("ij,jk", a(2, 3), a(4, 5))), ("einsum", ("ij", a(3))), ("einsum", ("i->j", a(3))),
    ("einsum", ("ij,jk->ik", a(2, 3))), ("einsum", ("i,i", a(3), a(2))), ("einsum", ("ii", a(2, 3))),
    ("einsum", ("...i,...i", a(2, 3), a(4, 3))),
    ("solve", (a(3), a(3))), ("solve", (a(2, 3), a(2))), ("solve", (a(3, 3), a(4))), ("solve", (a(3, 3), a(4, 2))),
    ("solve", (a(2, 3, 3), a(4, 3, 1))), ("solve", (a(3, 3, dtype="U1"), a(3))),
    ("inv", (a(3),)), ("inv", (a(2, 3),)), ("cholesky", (a(4, 3),)), ("cholesky", (a(3, 3, dtype="U1"),)),
    ("norm", (a(3), "fro")), ("norm", (a(2, 3, 4), 2)), ("norm", (a(2, 3), None, (0, 0))), ("norm", (a(3), None, 1)),
    ("norm", (a(2, 3), "bad")), ("norm", (a(2, 3, 4), None, (0, 1, 2))), ("norm", (a(2, 3), 3, (0, 1))),
    ("cov", (a(2, 3, 4),)), ("cov", (a(3, 4), a(2, 5))), ("cov", (a(3, 4), a(2, 3, 4))),
    ("cov", (a(3, 4),), {"fweights": a(5)}), ("cov", (a(3, 4),), {"aweights": a(2, 4)}),
    ("nonzero", (a(),)), ("bincount", (a(3),)), ("bincount", (a(2, 3, dtype="int64"),)), ("bincount", (a(dtype="int64"),)),
    ("bincount", (a(3, dtype="int64"),), {"minlength": -1}), ("bincount", (a(3, dtype="int64"), a(2))),
    ("tile", (a(3), -1)), ("tile", (a(3), (2, -1))), ("repeat", (a(3), -1)), ("repeat", (a(3), [1, 2])),
    ("repeat", (a(3), [1, -1, 2])), ("repeat", (a(3), [[1, 2, 3]])), ("repeat", (a(3), 2, 1)), ("repeat", (a(), 2, 1)),
    ("repeat", (a(3), a(3))), ("repeat", (a(3), a(3) * 1.5)), ("triu", (a(),)), ("tril", (np.float64(1), 1)),
    ("hstack", ((),)), ("vstack", ((a(2), a(3)),)), ("column_stack", ((a(2), a(3)),)), ("hstack", ((a(2, 3), a(3)),)),
    ("average", (a(3, 4),), {"weights": a(4)}), ("average", (a(3, 4),), {"weights": a(3), "axis": 1}),
    ("average", (a(3, 4),), {"weights": a(3, 1), "axis": 0}), ("average", (a(3),), {"axis": 1}),
]


@pytest.mark.parametrize("call", REFUSED, ids=lambda c: f"{c[0]}{metas_of(c[1])}{c[2] if len(c) > 2 else ''}")
def test_refused_like_numpy(call):
    name, args, kwargs = call[0], call[1], call[2] if len(call) > 2 else {}
    assert agrees(name, args, kwargs) is not None, "NumPy accepts this call: move it to ACCEPTED"


# Calls NumPy accepts that the conformance cases do not make (constants where arrays go,
# value-dependent dtypes of Python scalars, corner shapes).
ACCEPTED = [
    ("add", (a(3, dtype="int8"), 100)), ("add", (a(3, dtype="uint8"), 255)), ("equal", (a(3, dtype="uint8"), -1)),
    ("less", (a(3, dtype="int8"), 1000)), ("add", (a(3, dtype="float16"), 1e10)), ("multiply", (a(3), 1j)),
    ("add", (a(3), [1, 2, 3])), ("add", (np.float32(1), 2.5)), ("add", (1, 2)), ("add", (a(3, dtype="int32"), np.int64(1))),
    ("sin", (a(3, dtype="float16"),)), ("sin", (a(3, dtype="int8"),)), ("sqrt", (a(3, dtype="complex64"),)),
    ("power", (a(3, dtype="int64"), 2)), ("left_shift", (a(3, dtype="uint8"), 3)), ("invert", (np.bool_(True),)),
    ("where", (True, a(3, dtype="float32"), 2)), ("where", (a(3) > 0, [1, 2, 3], 0.5)),
    ("clip", (a(3, dtype="int8"), 0, 1.5)), ("clip", (a(3),)), ("clip", (a(3, dtype="uint8"), -1, 300), None),
    ("clip", (a(3, dtype="int8"), 0, 1000)), ("std", (a(2, 3),), {"dtype": "int32"}),
    ("round", (a(3, dtype="int8"), -5)), ("round", (np.float16(1.5),)), ("round", (a(3, dtype="complex128"), 1)),
    ("astype", (a(3), "complex64")), ("astype", (np.int8(3), "float16")),
    ("sum", ([1, 2, 3],)), ("sum", (3.5,)), ("sum", (a(3, dtype="uint8"),)), ("sum", (a(3, dtype="int8"),), {"dtype": "int8"}),
    ("prod", (a(3, dtype="uint16"),)), ("mean", (a(3, dtype="float16"),)), ("mean", (a(3, dtype="int8"),)),
    ("var", (a(2, 3, dtype="complex64"),)), ("std", (a(3, dtype=bool),)), ("max", (a(3, dtype="uint8"),)),
    ("max", (a(0, 3),), {"axis": 1}), ("max", (a(0),), {"axis": ()}), ("argmax", (a(0, 3),), {"axis": 1}),
    ("argmin", (a(3, 0),), {"axis": 0}), ("any", (a(0, 2),)), ("all", (a(2, 3, dtype="int8"),), {"axis": (0, 1)}),
    ("matmul", (a(3, dtype="int8"), a(3, dtype="int8"))), ("matmul", (a(3, dtype=bool), a(3, dtype="float16"))),
    ("matmul", ([1.0, 2.0], a(2, 3))), ("matmul", (a(1, 2, 3), a(4, 3, 5)),), ("matmul", (a(5, 1, 2, 3), a(4, 3, 2))),
    ("dot", (2, 3)), ("dot", (a(3, dtype="float32"), 2)), ("dot", (a(3, dtype="int8"), a(3, dtype="int8"))),
    ("dot", (a(), a()),), ("dot", (np.float32(2), a(2, 2))), ("dot", (a(2, 3, 4), a(3, 4, 5))),
    ("reshape", ([1, 2, 3, 4], (2, 2))), ("reshape", (np.float64(1), (1, 1))), 
    ("reshape", (a(2, 3), (-2, 3))), ("reshape", (a(2, 3), (2, -3))),
    ("transpose", (np.float64(1),)), ("transpose", ([[1, 2]],)), ("transpose", (a(2, 3), (-1, -2))),
    ("moveaxis", (np.float32(1), (), ())), ("expand_dims", (np.float64(1), ())), ("expand_dims", (a(2), [])),
    ("squeeze", (np.float64(1),)), ("squeeze", (a(1, 1),), {"axis": ()}), ("broadcast_to", (5, (3,))),
    ("broadcast_to", (np.float64(1), ())), ("ravel", (3,)), ("ravel", ([[1, 2], [3, 4]],)),
    ("concatenate", ([[1, 2], a(3)],)), ("concatenate", ([a(2, dtype="int8"), a(2, dtype="uint8")],)),
    ("concatenate", ([a(2, 3), a(2, 3, dtype="complex64")], None)), ("stack", ([1, 2.5],)),
    ("concatenate", ([a(2, 3), a(3, dtype="U1")], None)), ("concatenate", ([[[1, 2]], a(3, 2)],)),
    ("concatenate", ([[[1], [2]], a(2, 3)], 1)), ("stack", ([[1, 2], a(2)],)), ("dot", ([1, 2], a(2, 3))),
    ("stack", ([a(2, dtype="int8"), np.uint8(3) * a(2, dtype="uint8")], -1)),
    ("getitem", (a(3), np.int64(1))), ("getitem", (np.float64(1), None)), ("getitem", (np.float64(1), Ellipsis)),
    ("getitem", (a(2, 3), (None, Ellipsis, 1, None))), ("getitem", (a(0, 3), slice(5, 1, -1))),
    ("zeros", ((2, 3), "U5")), ("ones", (np.int64(2),)), ("full", (3, 2.5, np.int8)), ("full", (2, np.float16(1))),
    ("full", ((2, 3), [1, 2, 3])), ("full", (2, 1j)), ("full_like", (a(3, dtype="int8"), 2.7)),
    ("full_like", (np.float32(1), 2)), ("zeros_like", (3,)), ("zeros_like", ([1.0, 2.0],), {"dtype": "int8"}),
    ("empty_like", (a(2, 3),), {"shape": ()}), ("ones_like", (a(2, 3, dtype="float16"),)),
    ("arange", (5, 0)), ("arange", (True,)), ("arange", (0, 5, None)), ("arange", (-3, 3, 0.25)),
    ("arange", (0, 1, 0.1)), ("arange", (1.0, 2.0, 0.1)), ("arange", (300,), {"dtype": np.int8}),
    ("arange", (2**40, 2**40 + 3)), ("arange", (0, 10, 3), {"dtype": "float32"}),
    ("linspace", (0, 1, 5), {"dtype": int}), ("linspace", (a(2, dtype="int32"), 1, 3)),
    ("linspace", (0, [1, 2], 3), {"axis": -1}), ("linspace", (np.float32(0), 1, 3)), ("linspace", (0j, 1, 3)),
    ("eye", (3, 0)), ("eye", (2, 5, 7)), ("identity", (0,)),
    ("repeat", (a(3), 1.5)), ("repeat", (a(3), [1.0, 2.5, 0])),
    ("tile", (np.int8(3), (2, 2))), ("tile", (a(2, 3), ())), ("triu", ([[1, 2], [3, 4]],)), ("hstack", ((1, a(2)),)),
    ("average", (a(3, 4, dtype="int8"),), {"weights": a(4, dtype="float32"), "axis": -1}),
]


@pytest.mark.parametrize("call", ACCEPTED, ids=lambda c: f"{c[0]}{metas_of(c[1])}{c[2] if len(c) > 2 and c[2] else ''}")
def test_accepted_like_numpy(call):
    name, args, kwargs = call[0], call[1], (call[2] if len(call) > 2 else None) or {}
    assert agrees(name, args, kwargs) is None


# -- randomized shapes, axes and indices ------------------------------------------------------

def _shape(max_ndim=4, max_dim=4):
    return tuple(int(d) for d in RNG.integers(0, max_dim + 1, size=RNG.integers(0, max_ndim + 1)))


def _maybe_one(shape):
    return tuple(1 if RNG.random() < 0.3 else d for d in shape)


def test_random_broadcasting():
    for _ in range(300):
        x = _shape()
        y = tuple(RNG.choice([1, d]) if RNG.random() < 0.8 else int(RNG.integers(0, 4)) for d in x[RNG.integers(0, len(x) + 1):])
        agrees("add", (a(*_maybe_one(x)), a(*y, dtype="int32")))
        agrees("where", (a(*y, dtype=bool), a(*_maybe_one(x)), 1))


def test_random_reductions():
    names = list(ops.reductions.REDUCTIONS)
    for _ in range(300):
        shape = _shape()
        name = names[RNG.integers(len(names))]
        ndim = len(shape)
        choices = [None, int(RNG.integers(-ndim - 1, ndim + 1))]
        if name not in ("argmax", "argmin"):
            choices.append(tuple(int(i) for i in RNG.integers(-ndim - 1, ndim + 1, size=RNG.integers(0, 3))))
        axis = choices[RNG.integers(len(choices))]
        agrees(name, (a(*shape, dtype=["float32", "int32", "bool"][RNG.integers(3)]),),
               {"axis": axis, "keepdims": bool(RNG.integers(2))})


def test_random_products():
    for _ in range(300):
        x, y = _shape(4, 3), _shape(4, 3)
        if RNG.random() < 0.6 and x and y:  # mostly aligned inner dims
            y = y[:-2] + (x[-1],) + y[-1:] if len(y) > 1 else (x[-1],)
        agrees("matmul", (a(*x), a(*y, dtype="float32")))
        agrees("dot", (a(*x), a(*y, dtype="int32")))


def test_random_reshapes():
    for _ in range(300):
        shape = _shape(3, 4)
        target = list(_shape(3, 4))
        if target and RNG.random() < 0.5:
            target[RNG.integers(len(target))] = -1
        agrees("reshape", (a(*shape), tuple(target)))


def test_random_axis_permutations():
    for _ in range(200):
        shape = _shape(4, 3)
        n = len(shape)
        perm = tuple(int(i) for i in RNG.permutation(n) - n * RNG.integers(0, 2, size=n))
        agrees("transpose", (a(*shape), perm if RNG.random() < 0.9 else perm[:-1]))
        src = tuple(int(i) for i in RNG.choice(range(-n, n + 1), size=RNG.integers(0, n + 1), replace=False)) if n else ()
        dst = tuple(int(i) for i in RNG.choice(range(-n, n), size=len(src), replace=False)) if n >= len(src) and n else ()
        agrees("moveaxis", (a(*shape), src, dst))
        agrees("swapaxes", (a(*shape), int(RNG.integers(-n - 1, n + 1)), int(RNG.integers(-n - 1, n + 1))))
        agrees("expand_dims", (a(*shape), tuple(int(i) for i in RNG.integers(-n - 2, n + 2, size=RNG.integers(1, 3)))))
        agrees("squeeze", (a(*_maybe_one(shape)),), {"axis": None if RNG.random() < 0.3 else int(RNG.integers(-n - 1, n + 1))})


def test_random_concatenate_and_stack():
    for _ in range(200):
        shape = _shape(3, 3)
        parts = [tuple(int(RNG.integers(0, 4)) if RNG.random() < 0.3 else d for d in shape)
                 for _ in range(RNG.integers(1, 4))]
        axis = None if RNG.random() < 0.2 else int(RNG.integers(-len(shape) - 1, len(shape) + 1))
        agrees("concatenate", ([a(*p) for p in parts],), {"axis": axis})
        agrees("stack", ([a(*p, dtype="int8") for p in parts],), {"axis": axis or 0})


def _random_item(dim):
    r = RNG.random()
    if r < 0.3:
        return int(RNG.integers(-dim - 1, dim + 1))
    if r < 0.8:
        bound = lambda: None if RNG.random() < 0.3 else int(RNG.integers(-dim - 2, dim + 3))
        step = [None, 1, 2, -1, -2, 3][RNG.integers(6)]
        return slice(bound(), bound(), step)
    return None if r < 0.9 else Ellipsis


def test_random_basic_indexing():
    for _ in range(500):
        shape = _shape(4, 5)
        index = tuple(_random_item(shape[i] if i < len(shape) else 3) for i in range(RNG.integers(0, len(shape) + 2)))
        base = a(*shape) if RNG.random() < 0.9 or shape else np.float64(1)
        agrees("getitem", (base, index if len(index) != 1 or RNG.random() < 0.5 else index[0]), fn=operator.getitem)


def test_random_arange_lengths():
    for _ in range(300):
        start, stop = (round(float(v), int(RNG.integers(0, 4))) for v in RNG.uniform(-20, 20, size=2))
        step = round(float(RNG.choice([-1, 1]) * RNG.uniform(0.05, 5)), int(RNG.integers(1, 4)))
        agrees("arange", (start, stop, step))
        agrees("arange", (int(start), int(stop), int(step) or 1))


# -- forms the rows do not capture ------------------------------------------------------------

NOT_IMPLEMENTED = [
    ("getitem", (a(3), [0, 1]), "getitem: advanced indexing"),
    ("getitem", (a(3), (a(2, dtype="int64"),)), "getitem: advanced indexing"),
    ("getitem", (a(3), a(3) > 0), "getitem: advanced indexing"),
    ("getitem", (a(3, 4), (slice(None), [1, 2])), "getitem: advanced indexing"),
    ("getitem", (a(3), True), "getitem: advanced indexing"),
    ("getitem", (a(3), np.array(1)), "getitem: advanced indexing"),
    ("getitem", (a(3), slice(np.array(1), None)), "getitem: a slice with bounds computed in the graph beside"),
    ("unique", (a(4, 4), False, False, False, 0), "unique: np.unique with axis="),
    ("index", (a(3), (a(3) > 0,)), "index: a boolean mask index selects as many elements as the data says"),
    ("setitem", (a(3, 4), (a(3) > 0,), a(2)), "setitem: a[mask] = array"),
    ("setitem", (a(3, 4), (a(3) > 0, 1), 1.0), "setitem: a boolean mask combined with other index items"),
    ("where", (a(3) > 0,), "where: the one-argument form where(condition)"),
    ("concatenate", (a(2, 3),), "concatenate: an array as the sequence of arrays"),
    ("stack", (a(2, 3),), "stack: an array as the sequence of arrays"),
    ("concatenate", ([[a(2), a(2)], a(2, 2)],), "concatenate: a list or tuple of arrays as one operand"),
    ("arange", (np.int64(5),), "arange: array-valued"),
    ("arange", (0, a()), "arange: array-valued"),
    ("arange", (1j,), "arange: complex"),
    ("astype", (a(3), str), "astype: casting to <U0"),
    ("add", (a(3), [a(), 1.0, 2.0]), "add: a list or tuple of arrays as one operand"),
    ("sum", ([a(3), a(3)],), "sum: a list or tuple of arrays as one operand"),
    ("where", (a(3) > 0, (a(), 1, 2), 0), "where: a list or tuple of arrays"),
    ("reshape", ([a(2), a(2)], (4,)), "reshape: a list or tuple of arrays"),
    ("full", ((2,), [a(), a()]), "full: a list or tuple of arrays"),
    ("ndarray", ((2,), float, bytes(16)), "ndarray: buffer= and strides="),
    ("mgrid", (slice(0, np.int64(3)),), "mgrid: array-valued slice bounds"),
    ("mgrid", ((slice(0, 3), 1),), "mgrid: np.mgrid takes slices"),
    ("einsum", (a(3), [0], a(3), [0]), "einsum: the interleaved form"),
    ("einsum", ("ij->ji", a(2, 3)), "einsum: 'ij->ji' sums nothing"),
    ("einsum", ("ii->i", a(3, 3)), "einsum: 'ii->i' sums nothing"),
]


@pytest.mark.parametrize("name, args, message", NOT_IMPLEMENTED, ids=lambda v: v if isinstance(v, str) else "")
def test_not_implemented(name, args, message):
    with pytest.raises(NotImplementedError, match=re.escape(message)):
        meta_of(name, args)


# -- metas never allocate their inputs' size --------------------------------------------------

BIG = ArrayMeta((10**6, 10**6), np.dtype("float64"))  # 8 TB, were anything allocated
BIG3 = ArrayMeta((10**4, 10**4, 10**4), np.dtype("float32"))


@pytest.mark.parametrize("name, args, kwargs, shape", [
    ("add", (BIG, BIG3.__class__((10**6,), np.dtype("float32"))), {}, (10**6, 10**6)),
    ("sin", (BIG,), {}, (10**6, 10**6)),
    ("where", (BIG, BIG, 0.0), {}, (10**6, 10**6)),
    ("clip", (BIG, 0, 1), {}, (10**6, 10**6)),
    ("astype", (BIG, np.dtype("float32")), {}, (10**6, 10**6)),
    ("sum", (BIG,), {"axis": 0}, (10**6,)),
    ("var", (BIG3,), {"axis": (0, 2), "keepdims": True}, (1, 10**4, 1)),
    ("argmax", (BIG,), {"axis": -1}, (10**6,)),
    ("matmul", (BIG, BIG), {}, (10**6, 10**6)),
    ("dot", (BIG3, ArrayMeta((10**4, 5), np.dtype("float64"))), {}, (10**4, 10**4, 5)),
    ("reshape", (BIG, (-1,)), {}, (10**12,)),
    ("transpose", (BIG3, (2, 0, 1)), {}, (10**4,) * 3),
    ("moveaxis", (BIG3, 0, -1), {}, (10**4,) * 3),
    ("broadcast_to", (BIG, (7, 10**6, 10**6)), {}, (7, 10**6, 10**6)),
    ("ravel", (BIG,), {}, (10**12,)),
    ("concatenate", ((BIG, BIG),), {"axis": None}, (2 * 10**12,)),
    ("stack", ((BIG, BIG),), {}, (2, 10**6, 10**6)),
    ("getitem", (BIG, (slice(None, None, -3), 5)), {}, (333334,)),
    ("zeros", ((10**6, 10**6),), {}, (10**6, 10**6)),
    ("full", ((10**6, 10**6), 2.5), {}, (10**6, 10**6)),
    ("full_like", (BIG, 1), {}, (10**6, 10**6)),
    ("arange", (10**13,), {}, (10**13,)),
    ("linspace", (0, 1, 10**12), {}, (10**12,)),
    ("eye", (10**7,), {}, (10**7, 10**7)),
    ("ndarray", ((10**6, 10**6),), {}, (10**6, 10**6)),
    ("mgrid", ((slice(0, 10**6), slice(0, 1, 10**6 * 1j)),), {}, (2, 10**6, 10**6)),
    ("flip", (BIG, 0), {}, (10**6, 10**6)),
    ("copy", (BIG,), {}, (10**6, 10**6)),
    ("cumsum", (BIG,), {}, (10**12,)),
    ("cumprod", (BIG3,), {"axis": 1}, (10**4,) * 3),
    ("outer", (BIG, BIG), {}, (10**12, 10**12)),
    ("ufunc_outer", (np.add, BIG, BIG3), {}, (10**6, 10**6) + (10**4,) * 3),
    ("einsum", ("ij,jk->ik", BIG, BIG), {}, (10**6, 10**6)),
    ("einsum", ("ij,jk", BIG, BIG), {"optimize": True}, (10**6, 10**6)),
    ("solve", (BIG, BIG), {}, (10**6, 10**6)),
    ("inv", (BIG,), {}, (10**6, 10**6)),
    ("cholesky", (BIG3.__class__((10**4, 10**4), np.dtype("float32")),), {}, (10**4, 10**4)),
    ("norm", (BIG,), {"axis": 1}, (10**6,)),
    ("cov", (BIG,), {}, (10**6, 10**6)),
    ("tile", (BIG, (3, 1, 2)), {}, (3, 10**6, 2 * 10**6)),
    ("repeat", (BIG, 3), {}, (3 * 10**12,)),
    ("repeat", (BIG, 2, 1), {}, (10**6, 2 * 10**6)),
    ("triu", (BIG, 1), {}, (10**6, 10**6)),
    ("tril", (ArrayMeta((10**6,), np.dtype("int8")),), {}, (10**6, 10**6)),
    ("hstack", ((BIG, BIG),), {}, (10**6, 2 * 10**6)),
    ("column_stack", ((ArrayMeta((10**6,), np.dtype("int8")), BIG),), {}, (10**6, 10**6 + 1)),
    ("average", (BIG,), {"axis": 0, "weights": BIG, "returned": True}, None),
])
def test_huge_shapes(name, args, kwargs, shape):
    op = ops.get(name)
    canon = op.normalize(args, kwargs)
    meta = op.meta(*canon[0], **canon[1])
    if shape is not None:
        assert meta.shape == shape
