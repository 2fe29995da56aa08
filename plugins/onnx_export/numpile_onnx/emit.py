"""The ONNX graph under construction: values, constants, casts and symbolic sizes.

Converters (pointwise.py, reductions.py, ...) see graph operands as `Value`s (an ONNX value
name with the NumPy dtype and shape it holds) and Python constants as they are, and emit ONNX
nodes through an `Emitter`. Every value knows its NumPy dtype, so that NumPy's promotion is
written out as explicit `Cast`s: ONNX ops never promote.
"""

from __future__ import annotations

import ast
import itertools
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from numpile.shapes import SymInt

# The opset every model is written at (docs/onnx.md says why 18).
OPSET = 18

ONNX_DTYPE = {np.dtype(k): v for k, v in {
    "float16": TensorProto.FLOAT16, "float32": TensorProto.FLOAT, "float64": TensorProto.DOUBLE,
    "int8": TensorProto.INT8, "int16": TensorProto.INT16, "int32": TensorProto.INT32, "int64": TensorProto.INT64,
    "uint8": TensorProto.UINT8, "uint16": TensorProto.UINT16, "uint32": TensorProto.UINT32,
    "uint64": TensorProto.UINT64, "bool": TensorProto.BOOL}.items()}

_SIZE_OPS = {ast.Add: "Add", ast.Sub: "Sub", ast.Mult: "Mul", ast.FloorDiv: "Div", ast.Mod: "Mod"}

BOOL, INT64, FLOAT32, FLOAT64 = (np.dtype(t) for t in ("bool", "int64", "float32", "float64"))


class OnnxUnsupported(Exception):
    """What a converter cannot express; the exporter names the op, the user's line and the opset."""


@dataclass(frozen=True)
class Value:
    """An ONNX value: its name, and the NumPy dtype and shape (None: not tracked) it holds.
    `weak`: a Python scalar (NEP 50), which takes the dtype of what it meets."""

    name: str
    dtype: np.dtype
    shape: tuple | None = None
    weak: bool = False

    @property
    def ndim(self) -> int:
        return len(self.shape)


def onnx_dtype(dtype) -> int:
    try:
        return ONNX_DTYPE[np.dtype(dtype)]
    except KeyError:
        raise OnnxUnsupported(f"ONNX export has no {np.dtype(dtype)} tensors") from None


def loop_dtype(*operands) -> np.dtype:
    """The dtype NumPy computes a ufunc of these operands in: weak values and Python scalars
    count as Python scalars (NEP 50)."""
    def as_numpy(x):
        if isinstance(x, Value):
            return x.dtype.type(1).item() if x.weak else x.dtype
        return x
    return np.result_type(*map(as_numpy, operands))


def tensor_type(dtype, shape: list) -> onnx.TypeProto:
    """A tensor type whose shape is always given (a 0-d one too: helper leaves [] unranked)."""
    proto = helper.make_tensor_type_proto(onnx_dtype(dtype), shape)
    proto.tensor_type.shape.SetInParent()
    return proto


class Emitter:
    """Collects nodes and initializers; `symbol_sizes[k]` is (value name, dim) of an input whose
    dim is symbol s<k>, or (value name, None) of a scalar whose value it is (a loop's index), for
    sizes computed at run time."""

    def __init__(self, symbol_sizes: dict | None = None, reserved=(), counter=None):
        self.nodes: list = []
        self.initializers: list = []
        self.symbol_sizes = symbol_sizes or {}
        self._counter = counter or itertools.count(1)
        self.reserved = set(reserved)   # the inputs' and outputs' names: no node output takes one
        self._consts: dict = {}
        self.constants: dict[str, np.ndarray] = {}   # value name -> its array, for the constants

    def subgraph(self) -> "Emitter":
        """An emitter for a subgraph (a Loop's body): its own nodes and constants, names unique
        across the whole model (a subgraph sees the outer graph's values by name)."""
        return Emitter(reserved=self.reserved, counter=self._counter)

    def fresh(self, hint: str) -> str:
        name = f"{hint}_{next(self._counter)}"
        return name if name not in self.reserved else self.fresh(hint)

    def op(self, op_type: str, *inputs, dtype, shape=None, outputs: int = 1, **attrs):
        """Emit one node; returns its Value (a tuple of Values for several outputs, all of `dtype`
        unless `dtype` is a tuple). An input of None is an omitted optional input."""
        names = [self.fresh(op_type.lower()) for _ in range(outputs)]
        ins = ["" if v is None else v.name if isinstance(v, Value) else v for v in inputs]
        self.nodes.append(helper.make_node(op_type, ins, names, name=names[0], **attrs))
        dtypes = dtype if isinstance(dtype, tuple) else (dtype,) * outputs
        values = tuple(Value(n, np.dtype(d), shape) for n, d in zip(names, dtypes))
        return values[0] if outputs == 1 else values

    # -- constants ------------------------------------------------------------------------------
    def const(self, value, dtype=None) -> Value:
        """A constant tensor (emitted once per value and dtype)."""
        array = np.asarray(value, dtype=dtype)
        key = (array.dtype.str, array.shape, array.tobytes())
        if key not in self._consts:
            name = self.fresh("const")
            self.nodes.append(helper.make_node("Constant", [], [name], name=name,
                                               value=numpy_helper.from_array(array, name)))
            self._consts[key] = Value(name, array.dtype, array.shape)
            self.constants[name] = array
        return self._consts[key]

    def ints(self, values) -> Value:
        """A 1-D int64 tensor of sizes, axes or indices; symbolic sizes computed from input shapes."""
        values = list(values)
        if all(not isinstance(v, SymInt) for v in values):
            return self.const(np.array(values, dtype=np.int64).reshape(len(values)))
        parts = [self.size(v) for v in values]
        return self.op("Concat", *parts, dtype=INT64, axis=0)

    def size(self, d) -> Value:
        """A size as a 1-element int64 tensor: a constant, or for a SymInt its linear form over the
        dims of the inputs it was traced from."""
        if not isinstance(d, SymInt):
            return self.const(np.array([d], dtype=np.int64))
        return self._size_of(ast.parse(d.expr, mode="eval").body, d.expr)

    def scalar_size(self, d) -> Value:
        """A size or an index (an int or a SymInt) as a 0-d int64 tensor."""
        if not isinstance(d, SymInt):
            return self.const(np.array(d, dtype=np.int64))
        return self.op("Reshape", self.size(d), self.const(np.zeros(0, np.int64)), dtype=INT64, shape=())

    def _size_of(self, tree, text: str) -> Value:
        """A symbolic size's expression (`s0 * s1 // 2`) as int64 arithmetic on input dims; sizes are
        never negative, so ONNX's truncating Div is floor division here."""
        if isinstance(tree, ast.Constant) and type(tree.value) is int:
            return self.const(np.array([tree.value], dtype=np.int64))
        if isinstance(tree, ast.Name) and tree.id[1:].isdigit():
            k = int(tree.id[1:])
            if k not in self.symbol_sizes:
                raise OnnxUnsupported(f"the size {tree.id} is known only from the data")
            source, dim = self.symbol_sizes[k]
            if dim is None:   # the value of an int64 scalar: the loop's index
                return self.op("Reshape", source, self.const(np.array([1], np.int64)), dtype=INT64)
            return self.op("Shape", source, dtype=INT64, start=dim, end=dim + 1)
        if isinstance(tree, ast.UnaryOp) and isinstance(tree.op, ast.USub):
            return self.op("Neg", self._size_of(tree.operand, text), dtype=INT64)
        if isinstance(tree, ast.BinOp) and type(tree.op) in _SIZE_OPS:
            return self.op(_SIZE_OPS[type(tree.op)], self._size_of(tree.left, text), self._size_of(tree.right, text),
                           dtype=INT64)
        raise OnnxUnsupported(f"the symbolic size {text}")

    # -- dtypes -------------------------------------------------------------------------------------
    def cast(self, v, dtype) -> Value:
        """`v` (a Value or a Python/NumPy scalar) as `dtype`: a Cast node, or a constant."""
        dtype = np.dtype(dtype)
        if isinstance(v, SymInt):   # a loop's index stored into an array
            v = self.scalar_size(v)
        if not isinstance(v, Value):
            return self.const(np.asarray(v).astype(dtype) if isinstance(v, np.generic) else np.array(v, dtype=dtype))
        if v.dtype == dtype:
            return v
        return self.op("Cast", v, dtype=dtype, shape=v.shape, to=onnx_dtype(dtype))

    def operands(self, args, dtype) -> list[Value]:
        return [self.cast(a, dtype) for a in args]
