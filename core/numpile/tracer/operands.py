"""Array operands given as Python sequences: `np.sum(pad)` of a tuple of ints, `np.exp((1., 2.))`,
`np.maximum(0, [1, -2, 3])`, `np.sum([a * np.cos(k * x) for k, a in enumerate(coefs)], axis=0)` of
arrays. NumPy makes an array of the sequence; so does the graph (a stack of the numbers and arrays,
NumPy's dtype for them), where the op's parameter takes an array. Shapes, axes and the like, which
are tuples too, stay tuples.
"""

from __future__ import annotations

import inspect

from .. import ops
from ..graph import Node
from .variables import ArrayVariable, ConstantVariable, TupleVariable

ARRAY_OPERANDS = frozenset({"a", "x", "x1", "x2"})   # the ops' parameters that take arrays


def sequences_as_arrays(out, op: ops.OpDef, gargs: tuple) -> tuple:
    """The canonical positional arguments `gargs` of `op` with its array operands given as
    sequences of numbers made arrays in `out`'s graph."""
    parameters = op.signature.parameters.values()
    if any(p.kind is inspect.Parameter.VAR_POSITIONAL for p in parameters):
        return gargs
    names = [p.name for p in parameters if p.default is inspect.Parameter.empty]
    return tuple(_array(out, v) if name in ARRAY_OPERANDS and _elements(v) else v for name, v in zip(names, gargs))


def _array(out, value) -> Node:
    items = [ArrayVariable(_array(out, v)) if isinstance(v, (tuple, list)) else
             ArrayVariable(v) if isinstance(v, Node) else ConstantVariable(v) for v in value]
    return out.call_op(ops.get("stack"), (TupleVariable(items),), {}).node


def _elements(value) -> bool:
    """A non-empty (nested) tuple or list of Python numbers and arrays (graph values)."""
    return isinstance(value, (tuple, list)) and bool(value) and all(
        _elements(v) if isinstance(v, (tuple, list)) else isinstance(v, Node) or type(v) in (bool, int, float)
        for v in value)
