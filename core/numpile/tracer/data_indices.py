"""Indices only the data knows, as NumPy reads them (`OutputGraph.data_indices`, one per trace): a
boolean mask is its nonzero() index arrays, checked once against the dims it covers; a slice whose
bounds the graph computes (`x[a[i]:a[i + 1]]`) is the positions it picks (op slice_positions). The
same mask, or the same comparison of the same values, gives the same index arrays, so `x[m] += 1`
reads and writes one selection of one size; slices with the same bounds have one length.
"""

from __future__ import annotations

import numpy as np

from .. import ops
from ..exc import Unsupported
from ..graph import Node, map_nodes
from ..ops import ArrayMeta
from ..ops.indexing import check_masks, is_mask
from ..shapes import SymInt
from .variables import ArrayVariable, ConstantVariable, SliceVariable, TupleVariable, Variable
from .variables.objects import DynamicIntVariable


class DataIndices:
    """The index arrays and positions one trace has made, so that the same index is them again."""

    def __init__(self, output):
        self.output = output   # the OutputGraph whose ops the index arrays are
        self.positions: dict = {}  # the bounds of a slice computed in the graph (_typed) -> its positions
        self.nonzero: dict = {}    # a boolean mask's value (_value_key) -> the Variables of its nonzero() arrays

    def index(self, array: ArrayVariable, index: Variable) -> tuple[Variable, bool]:
        """`index` as NumPy reads it where the data decides what it picks: each boolean mask
        replaced by its nonzero() index arrays (once checked against the dims it covers), a slice
        whose bounds are computed in the graph by the positions it picks (ops slice_positions).
        Also whether the result stands for NumPy's view: every array in the index is an integer
        or such a slice (then updates through the result reach `array`). The same mask gives the
        same index arrays (so `x[m] += 1` reads and writes one selection of one size), and so does
        the same comparison of the same values (`x[x > 0] = x[x > 0] - 1`)."""
        out = self.output
        items = list(index.items) if isinstance(index, TupleVariable) and index.cls is tuple else [index]
        if any(isinstance(v, DynamicIntVariable) for v in items):   # an int that changed between calls: a graph value
            items = [v.graph_value(out) if isinstance(v, DynamicIntVariable) else v for v in items]
            index = TupleVariable(items) if len(items) > 1 or isinstance(index, TupleVariable) else items[0]
        metas = tuple(map_nodes(out.graph_arg(v), lambda n: n.array_meta) for v in items)
        sliced = [k for k, v in enumerate(items) if isinstance(v, SliceVariable)
                  and any(isinstance(b, ArrayVariable) for b in (v.start, v.stop, v.step))]
        if not any(map(is_mask, metas)) and not sliced:
            return index, self._int_items_only(metas)
        try:
            check_masks(array.node.array_meta, metas)
        except IndexError as e:  # NumPy raises its own message when the frame runs
            raise Unsupported(f"index raises IndexError in NumPy: {e}") from None
        if sliced:
            return self._positions_of_slice(array, items, metas, sliced), True
        expanded = []
        for var, meta in zip(items, metas):
            if not is_mask(meta):
                expanded.append(var)
            elif isinstance(meta, ArrayMeta):
                key = _value_key(var.node)
                if key not in self.nonzero:
                    self.nonzero[key] = out.call_op(ops.get("nonzero"), (var,), {}).items
                    # checked against each array it indexes: in bounds (lowering/in_place.py)
                    self.nonzero[key][0].node.args[0].meta["mask_positions"] = True
                expanded += self.nonzero[key]
            else:  # a constant mask: its index arrays are constants too
                expanded += [ConstantVariable(i) for i in np.nonzero(np.asarray(meta))]
        return TupleVariable(expanded), False

    @staticmethod
    def _int_items_only(metas: tuple) -> bool:
        arrays = [m for m in metas if isinstance(m, ArrayMeta) or isinstance(m, (list, np.ndarray))]
        return bool(arrays) and all(isinstance(m, ArrayMeta) and m.ndim == 0 for m in arrays)

    def _positions_of_slice(self, array: ArrayVariable, items: list, metas: tuple, sliced: list) -> Variable:
        """The index with its one slice of computed bounds replaced by the positions it picks, where
        that reads as the slice does: beside slices, None and Ellipsis only (an int or array
        beside it would move the advanced dims), and with a constant step."""
        out = self.output
        (k,) = sliced if len(sliced) == 1 else (None,)
        step = items[k].step if k is not None else None
        if k is None or not step.is_constant() or any(
                not (isinstance(m, slice) or m is None or m is Ellipsis) for i, m in enumerate(metas) if i != k):
            raise Unsupported("a slice with bounds computed in the graph is supported alone or beside slices, "
                              "None and Ellipsis, with a constant step")
        before = sum(m is not None for m in metas[:k])
        if Ellipsis in metas[:k]:
            before = array.node.array_meta.ndim - sum(m is not None and m is not Ellipsis for m in metas[k:])
        if before >= array.node.array_meta.ndim:
            raise Unsupported(f"index raises IndexError in NumPy: too many indices for array")
        size = ConstantVariable(array.node.array_meta.shape[before])
        bounds = (size, items[k].start, items[k].stop, step)
        # slices with the same bounds (A_col[A_row[i]:A_row[i + 1]] and A_val[...] of them) have one length
        key = (id(out.graph), _typed(tuple(out.graph_arg(b) for b in bounds)))
        positions = self.positions.get(key)
        if positions is None:
            positions = self.positions[key] = out.call_op(ops.get("slice_positions"), bounds, {})
            positions.spelled = items[k]   # generated code indexes the caller's array with the slice itself
        return TupleVariable(items[:k] + [positions] + items[k + 1:])


def _value_key(node: Node):
    """What identifies a node's value: the node, or for a pointwise op or an element read (which
    compute the same thing from the same operands: the graph is functional) the op and its
    operands' keys, constants with their types."""
    if node.op != "call" or node.results is not None or \
            ops.get(node.target).kind != ops.POINTWISE and node.target != "getitem":
        return node
    key = (node.target, node.dtype, _typed((node.args, tuple(sorted(node.kwargs.items())))))
    try:
        hash(key)
    except TypeError:   # an unhashable constant (a list): only this node is this value
        return node
    return key


def _typed(value):
    """Constants paired with their types (2 and 2.0 are different operands), Nodes by their values'
    keys, a symbolic size by its expression (a SymInt is not hashable), a slice by its bounds."""
    if isinstance(value, tuple):
        return tuple(map(_typed, value))
    if isinstance(value, Node):
        return _value_key(value)
    if isinstance(value, SymInt):
        return (SymInt, value.expr)
    if isinstance(value, slice):
        return (slice, _typed((value.start, value.stop, value.step)))
    return (type(value), value)
