"""The op registry: one `OpDef` row per op.

A row says how NumPy spells the op (functions, ndarray methods and
properties, operators), its canonical signature (so every Graph node of it has
the same argument layout), its eager implementation, its meta rule (shape and
dtype of the result from the metas of the inputs, no data touched) and its
kind. The tracer, the Graph interpreter and the backends read only this table.

Canonical layout: parameters without a default are a node's positional
`args` (a `*args` parameter contributes its items, so `where(c, x, y)` keeps
NumPy's positional spelling); parameters with a default are its `kwargs`,
always all present (the defaults filled in). A row's `convert` hooks give
parameters one spelling each (dtypes as `np.dtype`, shapes as tuples of ints,
see params.py), so backends never see `float`, `"f4"` and `np.float32` as
three different things. Array operands appear as Nodes in a graph, as
`ArrayMeta` in meta rules and as arrays in eager implementations; everything
else is a plain Python constant.

Meta rules return the `ArrayMeta` NumPy's result would have (a tuple of them for an
op with several results, see results.py), raise NumPy's
own exception type for calls NumPy rejects, and raise NotImplementedError
saying what is unsupported for forms the row does not capture (`register`
prefixes the op's name); the tracer turns the latter into a graph break.
"""

from __future__ import annotations

import functools
import inspect
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

# Op kinds: what a scheduler or a backend needs to know about an op.
POINTWISE = "pointwise"      # elementwise with broadcasting (ufuncs, where, clip, astype)
REDUCTION = "reduction"      # reduces over axes (sum, max, argmax, mean, ...)
MATMUL = "matmul"            # matmul, dot
VIEW = "view"                # result is a view of its first input (transpose, basic getitem, ...)
SHAPE = "shape"              # rearranges data into a new array (concatenate, stack, ravel copies)
CREATION = "creation"        # makes a new array from constants (zeros, arange, eye, ...)
INDEXING = "indexing"        # indexing that is not a plain view
SCAN = "scan"                # running accumulation along an axis (cumsum, cumprod)
LINALG = "linalg"            # a library routine NumPy computes: LAPACK's (solve, inv, cholesky), interp, convolve, isclose
RESULT = "result"            # one result of an op with several (np.divmod(a, b)[0]), emitted by the tracer
CONTROL = "control"          # structured control flow whose body is a Graph (a loop), emitted by the tracer
KINDS = (POINTWISE, REDUCTION, MATMUL, VIEW, SHAPE, CREATION, INDEXING, SCAN, LINALG, RESULT, CONTROL)


def python_scalar_type(dtype: np.dtype) -> type:
    """The Python type NumPy hands back for an element of `dtype` (float64 -> float)."""
    return type(np.dtype(dtype).type(0).item())


@dataclass(frozen=True)
class ArrayMeta:
    """What is known of an array value without its data."""

    shape: tuple
    dtype: np.dtype
    scalar: bool = False  # NumPy hands back a NumPy scalar (np.generic), not a 0-d ndarray
    weak: bool = False    # a Python float, int or bool: NEP 50 weak in NumPy ops, handed back as Python

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def python_type(self) -> type:
        """The Python type of a weak value (float, int, bool)."""
        return python_scalar_type(self.dtype)

    @classmethod
    def of(cls, value) -> "ArrayMeta":
        """The meta of a real ndarray or NumPy scalar."""
        return cls(tuple(value.shape), value.dtype, isinstance(value, np.generic))

    def __str__(self) -> str:
        dims = ", ".join(str(d) for d in self.shape)
        if self.weak:
            return f"python {self.python_type.__name__}"
        return f"{self.dtype}[{dims}]" + (" scalar" if self.scalar else "")


@dataclass(frozen=True)
class OpDef:
    name: str
    kind: str
    impl: Callable[..., Any]
    meta: Callable[..., Any]
    signature: inspect.Signature
    numpy: tuple = ()                               # callables that map to this op: np.add, operator.add
    methods: dict = field(default_factory=dict)    # ndarray method name -> adapter (None: self is the first arg)
    properties: tuple = ()                          # ndarray properties that map to it: ("T",)
    doc: str = ""
    adapter: Callable | None = None                 # rewrites a function call's (args, kwargs) before binding,
                                                    # for NumPy spellings the signature lacks (np.clip's min=)
    convert: dict = field(default_factory=dict)    # parameter name -> its canonical spelling (params.py)
    same_as: dict = field(default_factory=dict)    # result index -> keyword parameter that NumPy returns
                                                    # itself there when it is an array (np.histogram's bins)
    updates: str | None = None                      # the parameter NumPy updates in place (the call returns
                                                    # None); the op's result is that array's new value

    def normalize(self, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        """Bind a call of a NumPy function (or property) to the canonical layout;
        raises TypeError naming the op on a call the row does not take."""
        return self._bind(self.adapter, args, kwargs)

    def normalize_method(self, method: str, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        """Canonical layout of `self_array.method(*args[1:], **kwargs)`, args[0] being the array."""
        return self._bind(self.methods[method], args, kwargs)

    def _bind(self, adapter, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
        try:
            if adapter is not None:
                args, kwargs = adapter(*args, **kwargs)
            bound = self.signature.bind(*args, **kwargs)
            bound.apply_defaults()
            for name, canonical in self.convert.items():
                bound.arguments[name] = canonical(bound.arguments[name])
        except TypeError as e:
            raise TypeError(f"{self.name}(): {e}") from None
        pos, kw = [], {}
        for name, p in self.signature.parameters.items():
            if p.kind is inspect.Parameter.VAR_POSITIONAL:
                pos.extend(bound.arguments[name])
            elif p.default is inspect.Parameter.empty:
                pos.append(bound.arguments[name])
            else:
                kw[name] = bound.arguments[name]
        return tuple(pos), kw


def reflected(a, b):
    """Method adapter of the reflected dunders: `x.__radd__(y)` is `add(y, x)`."""
    return (b, a), {}


REGISTRY: dict[str, OpDef] = {}
_BY_CALLABLE: dict[Any, OpDef] = {}
_BY_METHOD: dict[str, OpDef] = {}
_BY_PROPERTY: dict[str, OpDef] = {}


def register(name: str, kind: str, *, impl, meta, signature, numpy=(), methods=None,
             properties=(), doc: str = "", adapter=None, convert=None, same_as=None, updates=None) -> OpDef:
    """Add one row. `signature` is a function whose parameters are the canonical ones."""
    if name in REGISTRY:
        raise ValueError(f"op {name!r} is registered twice")
    if kind not in KINDS:
        raise ValueError(f"op {name!r}: unknown kind {kind!r}; expected one of {KINDS}")
    sig = signature if isinstance(signature, inspect.Signature) else inspect.signature(signature)
    unknown = set(convert or ()) - set(sig.parameters)
    if unknown:
        raise ValueError(f"op {name!r}: convert names parameters {sorted(unknown)} its signature lacks")
    keywords = {p for p, v in sig.parameters.items() if v.default is not inspect.Parameter.empty}
    if updates is not None and updates not in sig.parameters:
        raise ValueError(f"op {name!r}: updates names {updates!r}, not a parameter of its signature")
    if not set((same_as or {}).values()) <= keywords:
        raise ValueError(f"op {name!r}: same_as names parameters that are not keyword arguments of its signature")
    op = OpDef(name, kind, impl, _naming(name, meta), sig, tuple(numpy), dict(methods or {}), tuple(properties), doc,
               adapter, dict(convert or {}), dict(same_as or {}), updates)
    spellings = ((_BY_CALLABLE, op.numpy), (_BY_METHOD, op.methods), (_BY_PROPERTY, op.properties))
    for table, keys in spellings:
        for key in keys:
            if key in table:  # one spelling, one op: a second row would silently shadow the first
                raise ValueError(f"op {name!r}: {key!r} already maps to op {table[key].name!r}")
    REGISTRY[name] = op
    for table, keys in spellings:
        table.update(dict.fromkeys(keys, op))
    return op


def _naming(name: str, meta):
    """The meta rule, its NotImplementedError messages prefixed with the op's name (the graph
    break reason a user reads)."""
    @functools.wraps(meta)
    def named(*args, **kwargs):
        try:
            return meta(*args, **kwargs)
        except NotImplementedError as e:
            raise NotImplementedError(f"{name}: {e}") from None
    return named


def lookup_callable(fn) -> OpDef | None:
    """The op that a NumPy callable (or operator.* function) maps to, or None."""
    try:
        return _BY_CALLABLE.get(fn)
    except TypeError:  # unhashable callables are never ops
        return None


def lookup_method(name: str) -> OpDef | None:
    return _BY_METHOD.get(name)


def lookup_property(name: str) -> OpDef | None:
    return _BY_PROPERTY.get(name)


def get(name: str) -> OpDef:
    try:
        return REGISTRY[name]
    except KeyError:
        raise KeyError(f"no op named {name!r} in the registry") from None
