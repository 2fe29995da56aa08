"""Graphs of bodies (a loop's, a branch side's) and the frame they are traced in: the frame's
arrays a body can reach, values of the enclosing graph lifted into it as inputs, its symbols
bound, numbers made graph values before it, and the frame's state to put back when no node comes
of a trace (fors.py, whiles.py, branches.py)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ... import ops
from ...graph import Graph, Node, map_nodes, symbols_of
from ...ops import ArrayMeta
from ...shapes import SymInt, lone_symbol
from ..variables import (
    ArrayIteratorVariable, ArrayVariable, CellVariable, ConstantVariable, DictVariable, ListVariable, TupleVariable,
)
from ..variables.stacked import Appending, Rows, items_seen

# Python numbers as graph values: NumPy's dtype for each (weak, NEP 50)
PYTHON_NUMBERS = {bool: np.dtype(bool), int: np.dtype(np.int64), float: np.dtype(np.float64)}



class OutputState(NamedTuple):
    """The OutputGraph's records a body's trace adds to, as they were before it."""
    mutated_arrays: list
    mutated: list
    attr_writes: dict
    nonzero: dict
    guards: list
    graph: Graph
    yields: int


class FrameState:
    """What tracing a body changes, to put back when no loop node comes of it."""

    def __init__(self, tx):
        self.tx, out = tx, tx.output
        self.locals, self.stack, self.ip, self.lineno = dict(tx.locals), list(tx.stack), tx.ip, tx.lineno
        self.return_value = tx.return_value   # None: a `return` in the body traced sets it
        self.arrays = [(v, v.node, v.version, v.base_version) for v in reachable_arrays(tx, views=True)]
        self.wrapped, self.wrapped_arrays = dict(out.wrapped), dict(out.wrapped_arrays)
        self.containers = [(c, _contents(c)) for c in _containers(tx)]
        self.cells = [(c, c.contents) for c in tx.locals.values() if isinstance(c, CellVariable)]
        self.out = OutputState(list(out.mutated_arrays), list(out.mutated), dict(out.attr_writes),
                               dict(out.data_indices.nonzero), list(out.shape_env.guards), out.graph, len(tx.yields))

    def restore(self) -> None:
        tx, out = self.tx, self.tx.output
        tx.locals.clear()
        tx.locals.update(self.locals)
        tx.stack[:], tx.ip, tx.lineno, tx.return_value = self.stack, self.ip, self.lineno, self.return_value
        for v, node, version, base_version in self.arrays:
            v.node, v.version, v.base_version = node, version, base_version
        # values first met in the body (a global `u += w`, a global list appended to) are wrapped afresh
        out.wrapped, out.wrapped_arrays = dict(self.wrapped), dict(self.wrapped_arrays)
        for c, items in self.containers:
            c.items = items
        for c, contents in self.cells:
            c.contents = contents
        (out.mutated_arrays[:], out.mutated[:], out.attr_writes, out.data_indices.nonzero, out.shape_env.guards[:], out.graph,
         yields) = self.out
        del tx.yields[yields:]

    def changed_containers(self) -> bool:
        return any(not _same_contents(_contents(c), items) for c, items in self.containers)

    def changed_cells(self) -> list:
        """The closures' variables (cells: `a` read by a lambda) bound to another value."""
        return [c for c, contents in self.cells if c.contents is not contents]


def number_before(tx, outer: Graph, value, meta):
    """A number a loop carries (`value`, a constant, or already a graph value) as a graph value of
    the enclosing graph `outer`, of the meta the body gives it."""
    if isinstance(value, ArrayVariable):
        return value
    out = tx.output
    saved, out.graph = out.graph, outer
    try:
        if isinstance(value.as_constant(), SymInt):   # an expression of enclosing loops' indices
            return out.control.index_value(value.as_constant())
        number = value.as_constant() if meta.weak else meta.dtype.type(value.as_constant())
        one = ConstantVariable(type(value.as_constant())(1) if meta.weak else meta.dtype.type(1))
        return out.call_op(ops.get("multiply"), (ConstantVariable(number), one), {}, weak=meta.weak)
    finally:
        out.graph = saved


def lift_outer(body: Graph, lifted: list) -> None:
    """Make each node of an enclosing graph that body's calls and output read an input of body,
    appending (that node, the input) to `lifted`."""
    made: dict = {}

    def lift(n: Node) -> Node:
        if n.graph is body:
            return n
        if n not in made:
            made[n] = body.input(n.name, n.array_meta)
            lifted.append((n, made[n]))
        return made[n]
    for b in list(body.nodes):
        if b.op in ("call", "output"):
            b.args, b.kwargs = map_nodes(b.args, lift), map_nodes(b.kwargs, lift)


def bind_symbols(body: Graph, env, fixed: dict, free_inits: list) -> None:
    """body.symbols: those `fixed` binds (a loop's index), and each other symbol the body uses as
    a dim of one of its inputs, or else as a scalar input of its own, appended to `free_inits`
    with the symbol whose value the enclosing graph passes."""
    body.symbols = [None] * len(env.symbols)
    for k, binding in fixed.items():
        body.symbols[k] = binding
    used = symbols_of(body.nodes)
    for k in sorted(used):
        if body.symbols[k] is not None:
            continue
        u = env.unbacked.get(k)
        if u is not None and u.node is not None and u.node.graph is body:
            body.symbols[k] = (u.node, u.dim)
            continue
        found = next(((n, d) for n in body.inputs if "shape" in n.meta
                      for d, size in enumerate(n.shape) if lone_symbol(size) == k), None)
        if found is None:
            node = body.input(f"s{k}", ArrayMeta((), np.dtype(np.int64), True, True))
            free_inits.append((SymInt(f"s{k}", env.hints[k]), node))
            found = (node, None)
        body.symbols[k] = found


def reachable_arrays(tx, views: bool) -> list[ArrayVariable]:
    """The ArrayVariables the frame (and the frames it was inlined from) can reach: its locals,
    cells, stack and the containers in them, the graph's inputs, the arrays stored into
    attributes; with `views`, views too, else
    their bases instead."""
    found: dict[int, ArrayVariable] = {}

    def visit(v) -> None:
        if isinstance(v, ArrayVariable):
            while v.base is not None and not views:
                v = v.base
            if id(v) not in found:
                found[id(v)] = v
                if v.base is not None:
                    visit(v.base)
        elif isinstance(v, (TupleVariable, ListVariable)):
            for item in items_seen(v):
                visit(item)
        elif isinstance(v, DictVariable):
            for item in v.items.values():
                visit(item)
        elif isinstance(v, CellVariable) and v.contents is not None:
            visit(v.contents)
        elif isinstance(v, ArrayIteratorVariable):   # an enclosing loop over an array's rows
            visit(v.array)
    frame = tx
    while frame is not None:
        for v in (*frame.locals.values(), *frame.stack):
            visit(v)
        frame = frame.parent
    for var in tx.output.input_arrays():
        visit(var)
    for _, _, value in tx.output.attr_writes.values():   # arrays the trace stored into attributes
        visit(value)
    return list(found.values())


def _containers(tx) -> list:
    found: dict[int, object] = {}

    def visit(v) -> None:
        if isinstance(v, (ListVariable, DictVariable)) and id(v) not in found:
            found[id(v)] = v
            for item in (items_seen(v) if isinstance(v, ListVariable) else v.items.values()):
                visit(item)
        elif isinstance(v, TupleVariable):
            for item in v.items:
                visit(item)
    out = tx.output   # and the caller's, which the frame may reach through an object only
    for v in (*tx.locals.values(), *tx.stack, *(value for _, _, value in out.attr_writes.values()),
              *out.wrapped_containers()):
        visit(v)
    return list(found.values())


def _contents(c):
    """A copy of a list's or dict's items (Variables), to put back and to compare by identity (a long
    StackedList's, which nothing changes, as they are)."""
    if isinstance(c.items, Rows):
        return c.items
    if isinstance(c.items, Appending):
        return Appending(c.items.values())
    return list(c.items) if isinstance(c, ListVariable) else dict(c.items)


def _same_contents(a, b) -> bool:
    if isinstance(a, Rows) or isinstance(b, Rows):
        return a is b
    if isinstance(a, Appending):
        a, b = a.values(), b.values() if isinstance(b, Appending) else b
    if isinstance(a, list):
        return len(a) == len(b) and all(x is y for x, y in zip(a, b))
    return a.keys() == b.keys() and all(a[k] is b[k] for k in a)


def same_constant(a, b) -> bool:
    return type(a) is type(b) and (a is b or not isinstance(a, SymInt) and a == b)


def reorder_inputs(body: Graph, order: list) -> None:
    """The body's inputs in `order` (index, carried, free), ahead of its other nodes."""
    rest = [n for n in body.nodes if n.op != "input"]
    body.nodes[:] = order + rest
