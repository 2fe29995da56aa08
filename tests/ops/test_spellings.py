"""How NumPy users spell each op, and the canonical layout those spellings normalize to.

Each spelling is checked differentially: the real NumPy call (function, method, dunder,
operator, property) on real arrays against the op's impl on the normalized call, and the
op's meta rule against the real result.
"""

import builtins
import operator

import numpy as np
import pytest

from numpile import ops
from numpile.graph import Graph
from numpile.ops import ArrayMeta
from numpile.ops.pointwise import UFUNCS
from numpile.testing import assert_same_result
from numpile.testing import metas_of

RNG = np.random.default_rng(0)


def arr(*shape, dtype="float64"):
    values = RNG.uniform(0.5, 4.0, size=shape)
    return values.astype(dtype)


def check_equivalent(op, canonical, want):
    """op.impl on the canonical call gives NumPy's result `want` (a tuple of them for an op with
    several results), and op.meta predicts it."""
    args, kwargs = canonical
    with np.errstate(all="ignore"):
        got = op.impl(*args, **kwargs)
    several = isinstance(want, tuple)
    for g, w in zip(*((got, want) if several else ((got,), (want,)))):
        assert_same_result(g, w, what=op.name)
    metas = tuple(map(ArrayMeta.of, want)) if several else ArrayMeta.of(want)
    assert op.meta(*metas_of(args), **metas_of(kwargs)) == metas


# -- ndarray methods: x.method(...) -----------------------------------------------------------

X = arr(3, 4)
CUBE = arr(2, 3, 4)
INTS = (arr(3, 4) * 3).astype("int64")
SQ = arr(1, 3, 1)
B = arr(4, 2)
MASK = X > 2

# (array, method, args, kwargs, the same call spelled as np.<function>(array, *args, **kwargs))
METHOD_CALLS = [
    (X, "reshape", (4, 3), {}, (np.reshape, (X, (4, 3)), {})),
    (X, "reshape", ((4, 3),), {}, (np.reshape, (X, (4, 3)), {})),
    (X, "reshape", ([2, 6],), {}, (np.reshape, (X, (2, 6)), {})),
    (X, "reshape", (-1,), {}, (np.reshape, (X, -1), {})),
    (X, "reshape", (2, -1, 3), {}, (np.reshape, (X, (2, -1, 3)), {})),
    (X, "transpose", (), {}, (np.transpose, (X,), {})),
    (CUBE, "transpose", (1, 0, 2), {}, (np.transpose, (CUBE, (1, 0, 2)), {})),
    (CUBE, "transpose", ((2, 0, 1),), {}, (np.transpose, (CUBE, (2, 0, 1)), {})),
    (CUBE, "transpose", ([2, 0, 1],), {}, (np.transpose, (CUBE,), {"axes": (2, 0, 1)})),
    (CUBE, "transpose", (None,), {}, (np.transpose, (CUBE, None), {})),
    (CUBE, "swapaxes", (0, 2), {}, (np.swapaxes, (CUBE, 0, 2), {})),
    (SQ, "squeeze", (), {}, (np.squeeze, (SQ,), {})),
    (SQ, "squeeze", (0,), {}, (np.squeeze, (SQ, 0), {})),
    (SQ, "squeeze", (), {"axis": (0, 2)}, (np.squeeze, (SQ,), {"axis": (0, 2)})),
    (X, "ravel", (), {}, (np.ravel, (X,), {})),
    (X, "flatten", (), {}, (np.ravel, (X,), {})),
    (X, "astype", (np.float32,), {}, (np.astype, (X, np.float32), {})),
    (X, "astype", ("int32",), {}, (np.astype, (X, np.dtype("int32")), {})),
    (X, "astype", (int,), {}, (np.astype, (X, "int64"), {})),
    (X, "round", (), {}, (np.round, (X,), {})),
    (X, "round", (1,), {}, (np.around, (X, 1), {})),
    (X, "round", (), {"decimals": 2}, (np.round, (X, 2), {})),
    (X, "clip", (1.0, 2.0), {}, (np.clip, (X, 1.0, 2.0), {})),
    (X, "clip", (), {"min": 1.0}, (np.clip, (X, 1.0, None), {})),
    (X, "clip", (), {"max": 2.0}, (np.clip, (X,), {"a_max": 2.0, "a_min": None})),
    (X, "clip", (None, 2.0), {}, (np.clip, (X,), {"max": 2.0})),
    (X, "clip", (1.0,), {"max": 2.0}, (np.clip, (X,), {"min": 1.0, "max": 2.0})),
    (X, "dot", (B,), {}, (np.dot, (X, B), {})),
    (X, "conj", (), {}, (np.conjugate, (X,), {})),
    (X, "conjugate", (), {}, (np.conj, (X,), {})),
    (X, "__getitem__", ((1, slice(None, None, -1)),), {}, (operator.getitem, (X, (1, slice(None, None, -1))), {})),
    (X, "__getitem__", (np.int64(2),), {}, (operator.getitem, (X, 2), {})),
    (X, "__getitem__", (slice(np.int64(1), None),), {}, (operator.getitem, (X, (slice(1, None),)), {})),
]
for _name in ("sum", "prod", "max", "min", "mean", "var", "std", "any", "all", "argmax", "argmin"):
    _fn = getattr(np, _name)
    METHOD_CALLS += [
        (CUBE, _name, (), {}, (_fn, (CUBE,), {})),
        (CUBE, _name, (1,), {}, (_fn, (CUBE,), {"axis": 1})),
        (CUBE, _name, (), {"axis": -1, "keepdims": True}, (_fn, (CUBE, -1), {"keepdims": True})),
    ]
    if _name not in ("argmax", "argmin"):
        METHOD_CALLS.append((CUBE, _name, ((0, 2),), {}, (_fn, (CUBE, (0, 2)), {})))
METHOD_CALLS += [
    (INTS, "sum", (0, np.float32), {}, (np.sum, (INTS,), {"axis": 0, "dtype": "float32"})),
    (INTS, "mean", (), {"dtype": "f4"}, (np.mean, (INTS, None, np.float32), {})),
    (CUBE, "var", (1,), {"ddof": 1}, (np.var, (CUBE, 1), {"ddof": 1})),
    (CUBE, "std", (None, np.float32), {"ddof": 2}, (np.std, (CUBE,), {"dtype": "float32", "ddof": 2})),
    (X, "max", (np.int64(0),), {}, (np.amax, (X, 0), {})),
    (X, "copy", (), {}, (np.copy, (X, "C"), {})),
    (CUBE, "copy", ("K",), {}, (np.copy, (CUBE,), {})),
    (X, "cumsum", (), {}, (np.cumsum, (X,), {})),
    (INTS, "cumsum", (1, np.float32), {}, (np.cumsum, (INTS,), {"axis": 1, "dtype": "f4"})),
    (X, "cumprod", (), {"axis": -1}, (np.cumprod, (X, -1), {})),
]


def _id(call):
    _, method, args, kwargs, _ = call
    args = tuple(f"<{a.shape}>" if isinstance(a, np.ndarray) else a for a in args)
    return f"{method}{args}{kwargs or ''}"


@pytest.mark.parametrize("call", METHOD_CALLS, ids=[_id(c) for c in METHOD_CALLS])
def test_method_spelling(call):
    array, method, args, kwargs, (fn, fn_args, fn_kwargs) = call
    op = ops.lookup_method(method)
    assert op is not None, f"ndarray.{method} maps to no op"
    assert ops.lookup_callable(fn) is op, f"{fn} and ndarray.{method} map to different ops"
    canonical = op.normalize_method(method, (array, *args), kwargs)
    assert canonical == op.normalize(fn_args, fn_kwargs)
    check_equivalent(op, canonical, getattr(array, method)(*args, **kwargs))


def test_transpose_property():
    op = ops.lookup_property("T")
    assert op is ops.get("transpose")
    check_equivalent(op, op.normalize((CUBE,), {}), CUBE.T)


# -- dunders and the operator module ----------------------------------------------------------

def _dunder_operands(op_name):
    if op_name in ("left_shift", "right_shift"):
        return INTS, np.arange(12).reshape(3, 4) % 4
    if op_name.startswith("bitwise_") or op_name == "invert":
        return INTS, INTS[::-1]
    if op_name == "matmul":
        return X, arr(4, 3)
    return X, arr(4)


DUNDERS = sorted(m for op in ops.REGISTRY.values() for m in op.methods if m.startswith("__") and m != "__getitem__")


@pytest.mark.parametrize("dunder", DUNDERS)
def test_dunder(dunder):
    op = ops.lookup_method(dunder)
    a, b = _dunder_operands(op.name)
    if op.name == "matmul" and dunder == "__rmatmul__":
        a, b = arr(4, 3), X  # a.__rmatmul__(b) is b @ a
    args = (a,) if len(op.signature.parameters) == 1 else (a, b)
    with np.errstate(all="ignore"):
        want = getattr(a, dunder)(*args[1:])
    check_equivalent(op, op.normalize_method(dunder, args, {}), want)


OPERATORS = {
    operator.add: "add", operator.sub: "subtract", operator.mul: "multiply", operator.truediv: "divide",
    operator.floordiv: "floor_divide", operator.mod: "remainder", operator.pow: "power",
    operator.matmul: "matmul", operator.neg: "negative", operator.pos: "positive",
    operator.invert: "invert", operator.inv: "invert", operator.and_: "bitwise_and",
    operator.or_: "bitwise_or", operator.xor: "bitwise_xor", operator.lshift: "left_shift",
    operator.rshift: "right_shift", operator.lt: "less", operator.le: "less_equal",
    operator.eq: "equal", operator.ne: "not_equal", operator.gt: "greater",
    operator.ge: "greater_equal", operator.abs: "absolute", builtins.abs: "absolute",
    operator.getitem: "getitem",
}


@pytest.mark.parametrize("fn", OPERATORS, ids=lambda fn: fn.__name__)
def test_operator(fn):
    op = ops.lookup_callable(fn)
    assert op is ops.get(OPERATORS[fn])
    a, b = _dunder_operands(op.name)
    if op.name == "getitem":
        b = (slice(None, None, -1), 2)
    args = (-a,) if fn in (abs, operator.abs) else (a,) if len(op.signature.parameters) == 1 else (a, b)
    with np.errstate(all="ignore"):
        want = fn(*args)
    check_equivalent(op, op.normalize(args, {}), want)


def test_weak_python_scalars_through_operators():
    x = arr(3, dtype="float32")
    for fn, args in ((operator.add, (x, 2)), (operator.mul, (2.5, x)), (operator.truediv, (x, 3)),
                     (operator.pow, (x, 2)), (operator.lt, (x, 1))):
        op = ops.lookup_callable(fn)
        check_equivalent(op, op.normalize(args, {}), fn(*args))


# -- NumPy's functions and their aliases ------------------------------------------------------

ALIASES = {
    np.abs: "absolute", np.absolute: "absolute", np.conj: "conjugate", np.true_divide: "divide",
    np.mod: "remainder", np.bitwise_not: "invert", np.bitwise_invert: "invert", np.acos: "arccos",
    np.asin: "arcsin", np.atan: "arctan", np.atan2: "arctan2", np.acosh: "arccosh", np.asinh: "arcsinh",
    np.atanh: "arctanh", np.pow: "power", np.bitwise_left_shift: "left_shift",
    np.bitwise_right_shift: "right_shift", np.around: "round", np.round: "round", np.amax: "max",
    np.max: "max", np.amin: "min", np.min: "min", np.degrees: "degrees", np.rad2deg: "rad2deg",
    np.astype: "astype", np.where: "where", np.clip: "clip", np.matmul: "matmul", np.dot: "dot",
}


@pytest.mark.parametrize("fn", ALIASES, ids=lambda fn: ALIASES[fn] + ":" + fn.__name__)
def test_numpy_aliases(fn):
    assert ops.lookup_callable(fn) is ops.get(ALIASES[fn])


TWO_OUTPUT_UFUNCS = {"divmod", "modf", "frexp"}    # rows of ops/results.py
EXCLUDED_UFUNCS = {"isnat",                         # datetimes only
                   "matmul", "vecdot", "matvec", "vecmat"}  # generalized ufuncs (matmul is its own row)


def test_every_ufunc_is_registered():
    ufuncs = {getattr(np, n) for n in dir(np) if isinstance(getattr(np, n), np.ufunc)}
    missing = sorted(u.__name__ for u in ufuncs
                     if u.__name__ not in EXCLUDED_UFUNCS and ops.lookup_callable(u) is None)
    assert not missing
    for u in ufuncs:
        op = ops.lookup_callable(u)
        if u.__name__ in EXCLUDED_UFUNCS - {"matmul"}:
            assert op is None, f"{u.__name__} is out of scope but registered"
        elif op is not None and u.__name__ != "matmul":
            assert op.impl is u and op.name == u.__name__ and op.kind == ops.POINTWISE
    assert set(UFUNCS) == {u for u in ufuncs if u.__name__ not in EXCLUDED_UFUNCS | TWO_OUTPUT_UFUNCS}
    assert {u.__name__ for u in ufuncs if u.nout > 1} == TWO_OUTPUT_UFUNCS


EXPECTED_FUNCTIONS = {
    "sum", "prod", "max", "min", "mean", "var", "std", "argmax", "argmin", "any", "all", "matmul", "dot",
    "reshape", "transpose", "swapaxes", "moveaxis", "expand_dims", "squeeze", "broadcast_to", "ravel",
    "concatenate", "stack", "zeros", "ones", "full", "empty", "arange", "linspace", "eye", "identity",
    "zeros_like", "ones_like", "full_like", "empty_like", "where", "clip", "round", "astype",
    "flip", "copy", "cumsum", "cumprod", "outer", "einsum", "cov", "ndarray",
}


@pytest.mark.parametrize("name", sorted(EXPECTED_FUNCTIONS))
def test_numpy_function_lookup(name):
    op = ops.lookup_callable(getattr(np, name))
    assert op is not None and op.name == name
    assert op.impl is getattr(np, name)  # generated code then reads np.<name>(...)


@pytest.mark.parametrize("name", ["solve", "inv", "cholesky", "norm"])
def test_numpy_linalg_lookup(name):
    op = ops.lookup_callable(getattr(np.linalg, name))
    assert op is ops.get(name) and op.impl is getattr(np.linalg, name)


def test_ufunc_outer_and_mgrid_spellings():
    # np.add.outer(a, b) is the method descriptor np.ufunc.outer called with np.add first
    op = ops.lookup_callable(np.ufunc.outer)
    assert op is ops.get("ufunc_outer")
    a, b = arr(3), arr(2, 4)
    check_equivalent(op, op.normalize((np.add, a, b), {}), np.add.outer(a, b))
    assert op.normalize((np.maximum, a, b), {})[0][0] == "maximum"  # generated code names the ufunc
    assert ops.lookup_callable(np.mgrid.__getitem__) is ops.get("mgrid")
    assert ops.lookup_callable(np.ogrid.__getitem__) is None  # a tuple of arrays: not captured


# Ops the tracer emits itself, which no NumPy spelling maps to.
# the functional `a[index] = value`; a[index] with index arrays; one result of an op with several
INTERNAL_OPS = {"setitem", "index", "tuple_getitem", "slice_positions", "loop", "cond", "python_int", "python_math", "while_loop", "random_bits", "check"}


@pytest.mark.parametrize("name", sorted(ops.REGISTRY))
def test_row_is_consistent(name):
    op = ops.get(name)
    assert op.kind in ops.KINDS
    reachable = bool(op.numpy or op.methods or op.properties)
    assert reachable != (name in INTERNAL_OPS), f"{name}: reachable from NumPy spellings: {reachable}"
    for fn in op.numpy:
        assert ops.lookup_callable(fn) is op
    for method in op.methods:
        assert hasattr(np.ndarray, method), f"{name}: ndarray has no method {method}"
        assert ops.lookup_method(method) is op
    for prop in op.properties:
        assert isinstance(getattr(np.ndarray, prop), property) or hasattr(np.ndarray, prop)
        assert ops.lookup_property(prop) is op


def test_unknown_spellings():
    assert ops.lookup_callable(np.isnat) is None
    assert ops.lookup_callable(len) is None
    assert ops.lookup_callable([]) is None  # unhashable: never an op
    assert ops.lookup_method("tolist") is None
    assert ops.lookup_property("shape") is None and ops.lookup_property("ndim") is None
    assert ops.lookup_property("dtype") is None and ops.lookup_property("size") is None


# -- canonical layout -------------------------------------------------------------------------

@pytest.mark.parametrize("spelling", [float, "f8", "float64", np.float64, np.dtype("float64")], ids=str)
def test_dtype_spellings_are_one(spelling):
    for name, args in (("sum", (X,)), ("zeros", ((2,),)), ("full", ((2,), 1)), ("arange", (3,)),
                       ("zeros_like", (X,)), ("mean", (X,)), ("eye", (2,)), ("linspace", (0, 1))):
        _, kwargs = ops.get(name).normalize(args, {"dtype": spelling})
        assert type(kwargs["dtype"]) is type(np.dtype("float64")) and kwargs["dtype"] == np.float64
    assert ops.get("astype").normalize((X, spelling), {}) == ((X, np.dtype("float64")), {})


def test_canonical_layouts():
    norm = lambda name, *args, **kwargs: ops.get(name).normalize(args, kwargs)
    assert norm("sum", X, 0) == ((X,), {"axis": 0, "dtype": None, "keepdims": False})
    assert norm("sum", X, axis=(np.int64(0),)) == ((X,), {"axis": (0,), "dtype": None, "keepdims": False})
    assert norm("var", X) == ((X,), {"axis": None, "dtype": None, "ddof": 0, "keepdims": False})
    assert norm("zeros", 3) == (((3,),), {"dtype": np.dtype("float64")})
    assert norm("zeros", [2, np.int64(3)]) == (((2, 3),), {"dtype": np.dtype("float64")})
    assert norm("eye", 3) == ((3,), {"M": None, "k": 0, "dtype": np.dtype("float64")})
    assert norm("identity", 2, "int32") == ((2,), {"dtype": np.dtype("int32")})
    assert norm("reshape", X, 12) == ((X, (12,)), {})
    assert norm("reshape", X, shape=[3, 4]) == ((X, (3, 4)), {})
    assert norm("transpose", X, [1, 0]) == ((X,), {"axes": (1, 0)})
    assert norm("moveaxis", CUBE, [0, 1], 2) == ((CUBE, (0, 1), 2), {})
    assert norm("concatenate", [X, X]) == (((X, X),), {"axis": 0})
    assert norm("stack", (X, X), np.int64(1)) == (((X, X),), {"axis": 1})
    assert norm("getitem", X, 1) == ((X, (1,)), {})
    assert norm("getitem", X, (np.int64(1), slice(np.int32(0), None, -1))) == ((X, (1, slice(0, None, -1))), {})
    assert norm("getitem", X, True) == ((X, (True,)), {})
    assert norm("where", MASK, X, 0.0) == ((MASK, X, 0.0), {})
    assert norm("where", MASK) == ((MASK,), {})
    assert norm("clip", X, min=1) == ((X,), {"a_min": 1, "a_max": None})
    assert norm("arange", 5) == ((5,), {"stop": None, "step": 1, "dtype": None})
    assert norm("linspace", 0, 1, np.int64(5)) == ((0, 1), {"num": 5, "endpoint": True, "dtype": None, "axis": 0})
    assert norm("full_like", X, 2, shape=4) == ((X, 2), {"dtype": None, "shape": (4,)})


@pytest.mark.parametrize("name, args, kwargs", [
    ("sum", (X,), {"out": X}),                  # out= is never captured: graphs are functional
    ("sum", (X, 0, None, X), {}),               # out given positionally is not taken for keepdims
    ("sum", (X,), {"where": X > 1}),
    ("max", (X,), {"initial": 0}),
    ("add", (X, X, X), {}),
    ("add", (X, X), {"dtype": "f4"}),
    ("reshape", (X, (4, 3), "F"), {}),
    ("zeros", ((2,), float, "F"), {}),
    ("sum", (X,), {"axis": [0]}),               # NumPy refuses a list axis too
    ("reshape", (X, (2.0, 6)), {}),
    ("zeros", ("3",), {}),
    ("astype", (X,), {}),
    ("clip", (X, 1), {}),                       # NumPy: a_min without a_max is a TypeError
    ("clip", (X, 1, 2), {"min": 0}),            # NumPy: both spellings at once is refused
    ("linspace", (0, 1, 5, True, True), {}),    # retstep=True returns two values
    ("ufunc_outer", (np.sin, X, X), {}),        # outer of a one-operand ufunc: NumPy raises ValueError
    ("ufunc_outer", (np.divmod, X, X), {}),     # two outputs
    ("norm", (X,), {"axis": [0]}),              # NumPy refuses a list axis
    ("copy", (X,), {"subok": True}),
])
def test_normalize_refuses(name, args, kwargs):
    with pytest.raises(TypeError, match=name):
        ops.get(name).normalize(args, kwargs)


@pytest.mark.parametrize("method, args, kwargs", [
    ("reshape", (X, 3, 4), {"order": "F"}), ("transpose", (X, 1, 0), {"axes": None}),
    ("astype", (X, "f4"), {"copy": False}), ("clip", (X, 1), {"min": 2}), ("flatten", (X, "F"), {}),
    ("sum", (X,), {"out": None}), ("argmax", (X, None, None), {}),
    ("copy", (np.float64(1.5),), {}),  # a NumPy scalar's copy() is a scalar, np.copy's a 0-d array
])
def test_normalize_method_refuses(method, args, kwargs):
    with pytest.raises(TypeError):
        ops.lookup_method(method).normalize_method(method, args, kwargs)


def test_generated_code_reads_numpy():
    g = Graph()
    x = g.input("x", ArrayMeta((3, 4), np.dtype("float64")))
    op = ops.get("sum")
    args, kwargs = op.normalize((x,), {"axis": 0, "dtype": "f4"})
    s = g.call("sum", args, kwargs, op.meta(ArrayMeta((3, 4), np.dtype("float64")), **kwargs))
    op = ops.get("getitem")
    args, kwargs = op.normalize((s, slice(None, None, -1)), {})
    t = g.call("getitem", args, kwargs, op.meta(ArrayMeta((4,), np.dtype("float32")), *args[1:]))
    g.output([t])
    code = g.python_code()
    # the sum is used once, so it is written inside the indexing, with NumPy's own [] operator
    assert "(np.sum(x, axis=0, dtype=np.dtype('float32'), keepdims=False))[(slice(None, None, -1),)]" in code
    x_val = arr(3, 4)
    assert_same_result(g.compile_python()(x_val)[0], np.sum(x_val, axis=0, dtype="f4")[::-1])


# -- the registry's own rules -----------------------------------------------------------------

def test_register_refuses_duplicates_without_side_effects():
    before = dict(ops.REGISTRY)
    with pytest.raises(ValueError, match="registered twice"):
        ops.register("add", ops.POINTWISE, impl=np.add, meta=None, signature=lambda x1, x2: None)
    with pytest.raises(ValueError, match="already maps to op 'add'"):
        ops.register("my_add", ops.POINTWISE, impl=np.add, meta=None, signature=lambda x1, x2: None,
                     numpy=(np.add,))
    with pytest.raises(ValueError, match="already maps to op 'transpose'"):
        ops.register("my_t", ops.VIEW, impl=np.transpose, meta=None, signature=lambda a: None, properties=("T",))
    with pytest.raises(ValueError, match="lacks"):
        ops.register("my_op", ops.POINTWISE, impl=np.add, meta=None, signature=lambda x: None,
                     convert={"dtype": np.dtype})
    with pytest.raises(ValueError, match="unknown kind"):
        ops.register("my_op", "elementwise", impl=np.add, meta=None, signature=lambda x: None)
    assert ops.REGISTRY == before
    assert ops.lookup_callable(np.add) is ops.get("add")
