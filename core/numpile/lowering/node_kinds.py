"""How the scheduler (schedule.py) treats each node of a graph (`kind_of`): an input, a pointwise
value or a gather (computed element by element where it is used), a view (index arithmetic on its
base), a reduction or a scan (a stage of a kernel), an extern (NumPy's own function on buffers), or
one result of an op with several. An integer np.arange, and a creation filled with a constant
(`slope * np.ones_like(x)`), are pointwise values of no operands.
"""

from __future__ import annotations

import numpy as np

from .. import ops
from ..graph import Node
from ..ops.meta import normalize_axis_index
from ..ops.reductions import reduced_axes
from .views import VIEW_INDEX

REDUCTIONS = frozenset({"sum", "prod", "max", "min", "any", "all", "argmax", "argmin"})
COMPUTED = frozenset({"pointwise", "gather"})   # values computed element by element where they are used
SCANS = {"cumsum": "sum", "cumprod": "prod"}   # running accumulations, and the step each takes


def kind_of(node: Node) -> str:
    """How the scheduler treats a node: input, pointwise, view, gather, reduction, extern, or result
    (one result of an op with several, which is an extern filling a buffer per result)."""
    if node.op in ("input", "constant"):
        return "input"
    op = ops.get(node.target)
    if op.kind == ops.RESULT and isinstance(node.args[0], Node):
        return "result"
    if node.results is not None:
        return "extern"
    if op.kind == ops.POINTWISE or arange_steps(node) is not None or fill_value(node) is not None:
        return "pointwise"   # an integer arange and a filled creation too: values of no operands
    if node.target == "index" and not any(isinstance(i, (list, np.ndarray)) for i in node.args[1]):
        return "gather"      # index arrays in the graph (constant ones stay with NumPy's indexing)
    if node.target in VIEW_INDEX:
        return "view"
    if node.target in REDUCTIONS:
        return "reduction"
    if node.target in SCANS and node.args[0].shape and (node.kwargs.get("axis") is not None or len(node.args[0].shape) == 1):
        return "scan"         # along one axis of the source (a flattened scan of more dims stays NumPy's)
    return "extern"


def down_columns(n: Node) -> bool:
    """A reduction that leaves the source's last axis: each row value reads a column of it."""
    if kind_of(n) != "reduction":
        return False
    ndim = len(n.args[0].shape)
    return ndim >= 2 and ndim - 1 not in reduced_axes(n.kwargs.get("axis"), ndim)


# creations whose every element is one value: that value (np.full's may be a graph value)
FILLS = {"zeros": lambda n: 0, "ones": lambda n: 1, "full": lambda n: n.args[1],
         "zeros_like": lambda n: 0, "ones_like": lambda n: 1, "full_like": lambda n: n.args[1]}


def fill_value(node: Node):
    """The constant every element of a creation holds (np.zeros, np.ones_like, np.full of a number),
    in its dtype, as NumPy casts it; None for any other node."""
    if node.op != "call" or node.target not in FILLS:
        return None
    value = FILLS[node.target](node)
    if not isinstance(value, (bool, int, float, complex, np.generic)):
        return None
    return np.asarray(value).astype(node.dtype)[()]


def arange_steps(node: Node) -> tuple | None:
    """(start, step) of an np.arange of Python ints whose values its integer dtype holds (each is
    start + i * step, exactly); None for any other node."""
    if node.op != "call" or node.target != "arange" or node.dtype.kind not in "iu":
        return None
    first, stop, step = node.args[0], node.kwargs["stop"], node.kwargs["step"]
    start, step = (0 if stop is None else first), (1 if step is None else step)
    if not all(type(b) is int for b in (first, step, node.shape[0], 0 if stop is None else stop)):
        return None
    ends = (start, start + (node.shape[0] - 1) * step)
    limits = np.iinfo(node.dtype)
    return (start, step) if node.shape[0] == 0 or limits.min <= min(ends) and max(ends) <= limits.max else None


def scan_axis(n: Node) -> int:
    """The axis a scan node runs along (0 for a 1-d source without one)."""
    axis = n.kwargs.get("axis")
    return 0 if axis is None else normalize_axis_index(axis, len(n.shape))
