"""Arrays and NumPy scalars: symbolic values, each a node of the graph. Their attributes are facts
of the meta (shape, dtype), op nodes (`x.T`) or methods that become op nodes when called;
indexing, iteration and in-place updates are graph ops too. Python never sees their data:
branching on it is a graph break."""

from __future__ import annotations

import dataclasses
import math
import operator
from dataclasses import dataclass

import numpy as np

from ... import config, ops
from ...exc import Unsupported
from ...graph import Node, map_nodes
from ...ops.indexing import is_advanced, is_mask
from ..sources import Source
from .base import Variable
from .containers import TupleVariable
from .iterators import ArrayIteratorVariable, ArrayItems
from .objects import ConstantVariable

# Array attributes that are facts of the meta, not ops.
_ARRAY_FACTS = {
    "shape": lambda m: m.shape,
    "ndim": lambda m: len(m.shape),
    "dtype": lambda m: m.dtype,
    "size": lambda m: math.prod(m.shape),
    "itemsize": lambda m: m.dtype.itemsize,
    "nbytes": lambda m: math.prod(m.shape) * m.dtype.itemsize,
}


@dataclass(eq=False)
class ArrayVariable(Variable):
    """An ndarray or NumPy scalar computed by (or fed into) the graph.

    The graph is functional, so an in-place update gives the Variable a new `node` and bumps its
    `version`. A view (`base` set) remembers how it was made from its base (`view_op`, the op and
    its other arguments) and is made again from the base's newest value when the base changed.
    """

    node: Node
    source: Source | None = None      # set for the caller's arrays: they are written back if updated
    base: "ArrayVariable | None" = None
    view_op: tuple = ()               # (op, args after the base, kwargs, method name or None)
    base_version: int = 0
    version: int = 0
    spelled: "Variable | None" = None  # the index item the user wrote, where this array stands for it
                                       # (a slice with bounds computed in the graph): generated code uses it
    numpy_views: bool = True          # NumPy's view functions make views of the caller's array (not of a tensor)
    # a top-level cond's result that may be an array held apart (a copy of it), and such an array:
    # the branch's (code, offset), retraced as a break where the one array matters (tracer/control/branches.py)
    stands_in_for: tuple | None = None
    held_apart_by: tuple | None = None
    # max()/min() of Python numbers and NumPy scalars (`max(1.0, np.max(x))`): Python hands back a
    # Python float or a np.float64 as the data decides; the (code, offset) of that call, retraced as
    # a break where the difference shows (OutputGraph.check_python_or_numpy)
    python_or_numpy: tuple | None = None
    viewed: bool = False              # a view of it was made (set_shape)

    def describe(self) -> str:
        if self.node.meta["weak"]:
            return f"Python {self.node.array_meta.python_type.__name__} {self.node.name} (a graph value: it changes between calls)"
        kind = "NumPy scalar" if self.node.meta["scalar"] else "array"
        return f"{kind} {self.node.name} ({self.node.array_meta})"

    def set_shape(self, output, shape: Variable) -> None:
        """`a.shape = shape`: NumPy gives the array object the shape in place, its memory the same.
        For an array made in the frame of which no view was made, the variable becomes that
        reshape: a view of what it was where it was a view (`Xi, Yi = np.mgrid[...]`), else the
        array itself. A caller's array, or one with views (made again from it after an update
        with its old shape in mind), is not reshaped by the trace."""
        if self.source is not None or self.viewed:
            raise Unsupported(f"setting attribute 'shape' of {self.describe()}: "
                              + ("the caller's array" if self.source is not None else "an array with views"))
        output.refresh(self)
        before = dataclasses.replace(self)   # the array as it was
        reshaped = output.call_op(ops.get("reshape"), (before, shape), {})
        self.node = reshaped.node
        if self.base is not None:
            self.base, self.view_op, self.base_version = before, reshaped.view_op, before.version
        self.version += 1

    def python_type(self) -> type:
        meta = self.node.array_meta
        return meta.python_type if meta.weak else meta.dtype.type if meta.scalar else np.ndarray

    def getattr(self, tx, name: str) -> Variable:
        if name in _ARRAY_FACTS:
            tx.output.check_python_or_numpy(self, f"its .{name} read")
            value = tx.output.read_size(_ARRAY_FACTS[name](self.node.array_meta), f"{self.node.name}.{name}")
            if isinstance(value, tuple):
                return TupleVariable([ConstantVariable(d) for d in value])
            return ConstantVariable(value)
        if name == "flat":   # iterated: its elements in C order (a.flat[i] and writes break at them)
            return ArrayItems(tx, self, with_index=False)
        if name == "real" and self.node.dtype.kind != "c":   # NumPy's x.real of a real x is x itself
            return self
        op = ops.lookup_property(name)
        if op is not None:
            return tx.output.call_op(op, (self,), {}, method=None)
        if ops.lookup_method(name) is not None or name in SPELLED_METHODS or callable(getattr(np.ndarray, name, None)):
            # a method numpile lacks breaks at its call, with the array and arguments rebuilt, not here
            return ArrayMethodVariable(self, name)
        raise Unsupported(f"ndarray.{name} is not supported by numpile yet")

    def truth(self, tx) -> bool:
        raise Unsupported(f"data-dependent jump: branching on the value of {self.describe()} needs its data")

    def iterate(self, tx, what: str) -> "ArrayIteratorVariable":
        """iter(x): its rows are made as they are taken."""
        shape = self.node.shape
        if not shape:
            raise Unsupported(f"{what} over a 0-d array")
        if shape[0] > config.unroll_limit and not tx.output.control.loops:   # else a loop node, or a break at FOR_ITER
            raise Unsupported(f"{what} over {shape[0]} rows of an array (more than config.unroll_limit={config.unroll_limit})")
        getitem = ops.lookup_callable(operator.getitem)
        return ArrayIteratorVariable(self, operator.index(shape[0]),
                                     lambda i: tx.output.call_op(getitem, (self, ConstantVariable(i)), {}))

    def length(self, tx) -> int:
        if not self.node.shape:
            raise Unsupported("len() of a 0-d array (TypeError)")
        return tx.output.read_size(self.node.shape[0], f"len({self.node.name})")

    def apply_inplace(self, tx, fn, other: Variable) -> Variable:
        if self.node.meta["scalar"]:  # NumPy scalars are immutable
            return super().apply_inplace(tx, fn, other)
        self.update(tx, tx.apply_operator(fn, [self, other]), fn.__name__)
        return self  # the same array, updated

    def known_items(self, tx, what: str) -> list[Variable]:
        raise Unsupported(f"{what} over {self.describe()}")

    def as_key(self, container: Variable):
        raise Unsupported(f"indexing {container.describe()} with an array")

    def getitem(self, tx, index: Variable) -> Variable:
        index, view = tx.output.data_indices.index(self, index)
        if _advanced(tx, index):  # a new array (a view only where NumPy's is one): its own op
            result = tx.output.call_op(ops.get("index"), (self, index), {})
            if view:
                tx.output.mark_view(result, self, index)
            return result
        return tx.apply_operator(operator.getitem, [self, index])

    def setitem(self, tx, index: Variable, value: Variable) -> None:
        if not _one_mask_and_scalar(index, value):  # that one is a select: no count needed
            index, _ = tx.output.data_indices.index(self, index)
        tx.output.mutate(self, tx.output.call_op(ops.get("setitem"), (self, index, value), {}))

    def update(self, tx, result: "ArrayVariable", what: str) -> None:
        """Write `result` into this array, as NumPy does for an in-place op or `out=` (`what` names
        it in errors): same shape, cast to this array's dtype under "same_kind" casting."""
        have, want = result.node.array_meta, self.node.array_meta
        if have.shape != want.shape:
            raise Unsupported(f"{what} into an array of shape {want.shape} from shape {have.shape} "
                              "(NumPy raises: non-broadcastable output operand)")
        if have.dtype != want.dtype:
            if not np.can_cast(have.dtype, want.dtype, "same_kind"):
                raise Unsupported(f"{what}: NumPy cannot cast the result from {have.dtype} to {want.dtype} "
                                  "with casting rule 'same_kind' (UFuncTypeError)")
            result = tx.output.call_op(ops.get("astype"), (result, ConstantVariable(want.dtype)), {})
        if have.scalar and not want.scalar:   # a 0-d array updated stays one (np.copy of a scalar is)
            result = tx.output.call_op(ops.get("copy"), (result,), {})
        tx.output.mutate(self, result)


def _one_mask_and_scalar(index, value) -> bool:
    value_is_scalar = not isinstance(value, ArrayVariable) or not value.node.array_meta.ndim
    return value_is_scalar and isinstance(index, ArrayVariable) and is_mask(index.node.array_meta)


def _advanced(tx, index) -> bool:
    arg = tx.output.graph_arg(index)
    return is_advanced(map_nodes(arg if isinstance(arg, tuple) else (arg,), lambda n: n.array_meta))


def _fill(tx, arr: ArrayVariable, args, kwargs) -> Variable:
    (value,) = args
    arr.update(tx, tx.output.call_op(ops.get("full_like"), (arr, value), {}), "ndarray.fill")
    return ConstantVariable(None)


def take(tx, arr: ArrayVariable, args, kwargs) -> Variable:
    """`a.take(indices, axis=None)` (np.take): a's elements at indices along axis, of a flattened a
    where axis is None: NumPy's integer indexing of that axis (mode "raise", its default)."""
    names = ("indices", "axis", "out", "mode")
    bound = dict(zip(names, args), **kwargs)
    out, mode = (bound.get(k, ConstantVariable(default)) for k, default in (("out", None), ("mode", "raise")))
    if set(bound) - set(names) or not (out.is_constant() and out.as_constant() is None
                                       and mode.is_constant() and mode.as_constant() == "raise"):
        raise Unsupported("np.take with out= or another mode than 'raise' is not supported yet")
    axis = bound.get("axis", ConstantVariable(None)).as_constant()
    if axis is None:
        arr, axis = tx.output.call_op(ops.get("ravel"), (arr,), {}), 0
    axis = operator.index(axis) % max(arr.node.array_meta.ndim, 1)
    full = ConstantVariable(slice(None))
    return arr.getitem(tx, TupleVariable([full] * axis + [bound["indices"]]))


# ndarray methods spelled with other ops (some update the array in place): name -> handler(tx, array, args, kwargs)
SPELLED_METHODS = {"fill": _fill, "take": take}


@dataclass(eq=False)
class ArrayMethodVariable(Variable):
    """`x.sum` for an array x: becomes an op node when called."""

    array: ArrayVariable
    name: str

    def describe(self) -> str:
        return f"ndarray.{self.name}"

    def call(self, tx, args: list, kwargs: dict) -> Variable:
        if self.name in SPELLED_METHODS:
            return SPELLED_METHODS[self.name](tx, self.array, args, kwargs)
        op = ops.lookup_method(self.name)
        if op is None:
            raise Unsupported(f"ndarray.{self.name}() is not supported by numpile yet")
        return tx.output.call_op(op, (self.array, *args), kwargs, method=self.name)

    def truth(self, tx) -> bool:
        return True


def base_array(v: ArrayVariable) -> ArrayVariable:
    """The array at the end of v's chain of views (v itself if it is none)."""
    while v.base is not None:
        v = v.base
    return v
