"""Updates in place: which `setitem`s the scheduler stores straight into their base's buffer.

The graph is functional: `b[1:-1] = v` is a node `setitem(b, index, v)` whose result is a new
array, and the caller writes a mutated input back afterwards (`Graph.write_back`). Run as
written, that copies all of `b` for every update. Storing `v` into the base's own buffer at the
index instead gives the same result when the buffer is the program's to overwrite and nothing
reads the base's old value later:

- the base is an input the caller writes back (its final value replaces it anyway), with no
  step after the update that may raise (an extern, or a gather given an index out of bounds:
  a graph that raises has changed nothing; `np.nonzero` and `x[mask]`'s gather, whose mask the
  tracer checked against x, raise nothing); or
  a buffer the program made: a kernel's result, a creation (`zeros`, `copy`), or an earlier
  update done in place (`b[1:] = ...; b[:1] = ...` share one buffer). Not an extern's result
  otherwise, which may be a view of an input;
- the index is basic (ints, slices, None, Ellipsis), or has integer index arrays among those
  items (a scatter: stored through the index, in order, so the last of repeated positions wins
  as in NumPy), or is one boolean mask with a scalar value (`x[x < 0] = 0`: a select over the
  whole array) (setitem_form);
- every node that reads the base's old value, directly or through views and inlined pointwise
  ops, is placed before the update (graph order is placement order, after sink_updates has
  moved each update down to its first user). A small view read after
  the update (`prey = state[0]` used after `state[0] += ...`) is stored into a buffer of its own
  before it (early_reads), which makes that so.

Whether the value itself reads the base at other positions (`a[1:] = a[:-1]`) is the scheduler's
to see when it builds the store: it then computes the value first, as NumPy does.
"""

from __future__ import annotations

import numpy as np

from .. import ops
from ..graph import Graph, Node
from .ir import Affine

FRESH = frozenset({"copy"})  # externs that always return a new array, beside the creation ops
# externs that raise nothing once their meta rule passed (shapes, axes and dtypes checked when
# traced; no value read from data decides whether they raise)
NEVER_RAISE = frozenset({
    "nonzero", "reshape", "ravel", "transpose", "swapaxes", "moveaxis", "expand_dims", "squeeze", "flip",
    "broadcast_to", "copy", "astype", "empty", "zeros", "ones", "full", "empty_like", "zeros_like", "ones_like",
    "full_like", "mgrid", "concatenate", "stack", "matmul", "dot",
})


def in_place_setitems(graph: Graph, kind_of, materialized: set, users: dict, order: dict) -> set[Node]:
    """The setitem nodes of `graph` that may store into their base's buffer (`order`: placement)."""
    outputs = set(graph.outputs)
    written_back = {node for _, node in graph.write_back}
    raising = _may_raise(graph, kind_of, materialized, order)
    chosen: set[Node] = set()
    for s in graph.calls:   # in graph order: a base that is an update is decided before it
        if setitem_form(s) is None:
            continue
        base = update_parts(s)[0]
        if base.op == "input":
            owned = base in written_back and (graph.write_back_owned or not any(i > order[s] for i in raising))
        else:
            owned = base in chosen or _made_here(base, kind_of, materialized)
        if owned and base not in outputs and \
                all(order[r] < order[s] or order[r] == order[s] and r is not s
                    for r in _readers(base, s, kind_of, materialized, users, outputs)):
            chosen.add(s)   # (another reader at the same place is an update stored with s: its value is computed first)
    return chosen


def sink_updates(graph: Graph) -> None:
    """Move each update by views or a mask down to just before the first node that uses its
    result (graph order is placement order), updates keeping their order among themselves.
    Nodes that read the base's old value after the update in the trace (`uvv = u*v*v`, read by
    `v += ...` after `u += ...`) then come before it, so it stores in place with no early copy;
    updates that follow one another are stored together (schedule.py). A node reads an update's
    new value only through its result, so every node keeps what it reads."""
    order, pending = [], []
    for n in graph.nodes:
        if _update_by_views_or_mask(n):
            pending.append(n)
            continue
        read = {id(i) for i in n.inputs}
        last = len(pending) if n.op == "output" else \
            max((k + 1 for k, update in enumerate(pending) if id(update) in read), default=0)
        order += pending[:last]
        del pending[:last]
        order.append(n)
    graph.nodes[:] = order + pending


def placement(graph: Graph) -> dict[Node, int]:
    """Each node's place in graph order, except that updates by views or a mask that follow one
    another share the first one's: the scheduler computes all their values before it stores any
    (schedule._Scheduler._place_together), so each reads the arrays the others update at their old
    value. An update takes a place of its own where it reads one of those before it or updates
    the same base."""
    place: dict[Node, int] = {}
    members, bases, shared = set(), set(), None
    for k, n in enumerate(graph.nodes):
        if _update_by_views_or_mask(n):
            base = update_parts(n)[0]
            if shared is None or base in bases or any(i in members for i in n.inputs):
                members, bases, shared = set(), set(), k
            members.add(n)
            bases.add(base)
            place[n] = shared
        else:
            shared = None
            place[n] = k
    return place


def _update_by_views_or_mask(n: Node) -> bool:
    return n.op == "call" and setitem_form(n) in ("basic", "mask")


def early_reads(graph: Graph, kind_of, materialized: set, users: dict, order: dict) -> set[Node]:
    """Views of an array that an update changes, read after the update (`prey = state[0]` used
    after `state[0] += ...`): their values in the graph are the old elements, so computing them
    into buffers of their own before the update lets it store in place. Only views of fewer
    elements than their base, known sizes: a smaller copy than the update's whole one."""
    outputs = set(graph.outputs)
    found: set[Node] = set()
    for s in graph.calls:
        if setitem_form(s) is None:
            continue
        base = update_parts(s)[0]
        for v in users[base]:
            if v is not s and kind_of(v) == "view" and v not in materialized and order[v] < order[s] \
                    and _fewer(v, base) \
                    and any(order[r] > order[s] for r in _readers(v, s, kind_of, materialized, users, outputs)):
                found.add(v)
    return found


def _fewer(view: Node, base: Node) -> bool:
    sizes = [np.prod(n.shape, dtype=object) for n in (view, base)]
    return all(isinstance(size, int) for size in sizes) and sizes[0] < sizes[1]


def in_place_outputs(graph: Graph, kind_of, materialized: set, users: dict, in_place: set,
                     order: dict) -> dict[Node, Node]:
    """Outputs the caller writes back into an input (`x += y`, `np.add(x, y, out=x)`: a whole new
    value, no setitem) that may be computed in that input's buffer: output node -> input node.
    The same conditions as an update in place, the output being the update, and the values the
    buffer held before (the input, then each update stored in place into it) all read before."""
    outputs = graph.outputs
    raising = _may_raise(graph, kind_of, materialized, order)
    chosen = {}
    for k, x in graph.write_back:
        out = outputs[k]
        held = [x]   # the values x's buffer holds in turn
        for s in graph.calls:
            if s in in_place and update_parts(s)[0] in held:
                held.append(s)
        if kind_of(out) == "pointwise" and out in materialized and x not in outputs and out not in chosen \
                and not any(i > order[out] for i in raising) \
                and all(order[r] < order[out] for value in held
                        for r in _readers(value, out, kind_of, materialized, users, set(outputs))):
            chosen[out] = x
    return chosen


def _may_raise(graph: Graph, kind_of, materialized: set, order: dict) -> list[int]:
    """Where in graph order a step may raise: an extern (but NEVER_RAISE and a setitem of positions
    its meta rule checked: basic, mask, numpy), and a gather (an index out of bounds; not a mask's
    positions) where it is computed: its own place when it is stored, else wherever the values
    inlining it are. A scatter through the index arrays an earlier one stored through, into an
    array of the same shape (`N[xs, ys] = i; Z[xs, ys] = z`), raises nothing: the earlier one
    checked those positions."""
    found, inlined, stored = [], set(), set()
    for n in graph.calls:
        kind = kind_of(n)
        if setitem_form(n) == "scatter":
            positions = _position_key(n)
            if positions in stored:
                continue
            stored.add(positions)
        if kind == "extern" and setitem_form(n) not in ("basic", "mask", "numpy") and n.target not in NEVER_RAISE \
                or kind == "gather" and not _selects_by_mask(n) or inlined.intersection(n.inputs):
            found.append(order[n])
            if kind != "extern" and n not in materialized:
                inlined.add(n)
    return found


def _position_key(scatter: Node) -> tuple:
    """What decides whether a scatter's positions are in bounds: its index items (by what computes
    them: the tracer makes `Xi[I]` anew for each use) and its base's shape."""
    base, items, _ = update_parts(scatter)
    return tuple(map(_computed, items)), tuple(map(str, base.shape))   # a symbolic dim is no dict key: its expression is


def _computed(value):
    """A key equal for values computed alike: a call by its target and arguments, an input itself."""
    if isinstance(value, Node):
        if value.op != "call":
            return value
        return value.target, _computed(value.args), tuple((k, _computed(v)) for k, v in sorted(value.kwargs.items()))
    if isinstance(value, (tuple, list)):
        return tuple(map(_computed, value))
    return repr(value)


def _selects_by_mask(gather: Node) -> bool:
    """Whether a gather reads `x[mask]`'s elements: its index arrays the positions of a mask the
    tracer checked against x's dims (OutputGraph.data_index), in bounds whatever the data."""
    return all(mask_positions(item) for item in gather.args[1] if item != slice(None))


def mask_positions(item) -> bool:
    """Whether an index array is one of the positions of a mask the tracer checked against the
    dims of the array it selects from (OutputGraph.data_index): in bounds whatever the data."""
    return isinstance(item, Node) and item.target == ops.TUPLE_GETITEM and item.args[0].meta.get("mask_positions", False)


def disjoint(read: tuple, write: tuple, sizes: tuple) -> bool:
    """Whether the elements `read` addresses (an Affine per dim, loop var v over range(sizes[v]))
    and those `write` addresses can be told apart by a bounding box on some dim (`q[0] = q[-2]`).
    Symbolic sizes or offsets: not known, so not disjoint."""
    boxes = [[_bounds(a, sizes) for a in index] for index in (read, write)]
    return any(r is not None and w is not None and (r[1] < w[0] or w[1] < r[0]) for r, w in zip(*boxes))


def _bounds(a, sizes: tuple):
    if not isinstance(a, Affine):   # a position read from data (ir.Indirect): anywhere
        return None
    values = [a.const, *(c for _, c in a.terms), *sizes]
    if not all(isinstance(v, int) for v in values):
        return None
    low = high = a.const
    for v, c in a.terms:
        low, high = low + min(0, c * (sizes[v] - 1)), high + max(0, c * (sizes[v] - 1))
    return low, high


def setitem_form(n: Node) -> str | None:
    """How an update may be stored in place: "basic" (ints, slices, None, Ellipsis), "scatter"
    (integer index arrays among those), "mask" (one boolean mask over the leading dims, a scalar
    value), "accumulate" (ufunc.at: a read, the ufunc and a store at each position in order, so a
    repeated index applies again), "numpy" (constant index lists: NumPy's own assignment into the
    base's buffer, an extern whose output is its first argument); None: not an update, or one
    that stays NumPy's on a copy (a mask with other items, index lists beside arrays)."""
    parts = update_parts(n)
    if parts is None:
        return None
    _, items, value = parts
    if any(isinstance(item, (list, np.ndarray)) for item in items):   # NumPy's own assignment, in place
        return "numpy" if n.target == "setitem" and not any(isinstance(item, Node) for item in items) else None
    arrays = [item for item in items if isinstance(item, Node)]
    if n.target == "ufunc_at":
        return "accumulate" if all(a.dtype.kind in "iu" for a in arrays) else None
    if not arrays:
        return "basic"
    if all(a.dtype.kind in "iu" for a in arrays):
        return "scatter"
    if len(items) == 1 and arrays[0].dtype.kind == "b" and not (isinstance(value, Node) and value.shape):
        return "mask"
    return None


def update_parts(n: Node) -> tuple | None:
    """(base, index items, value) of an update: setitem(base, items, value), or
    ufunc_at(ufunc, base, items, b) (value: b, None for a unary ufunc); None for other nodes."""
    if n.op != "call":
        return None
    if n.target == "setitem":
        return n.args
    if n.target == "ufunc_at":
        items = n.args[2]
        return n.args[1], items if isinstance(items, tuple) else (items,), n.kwargs.get("b")
    return None


def _made_here(n: Node, kind_of, materialized: set) -> bool:
    """A buffer only this program holds: a kernel's result, or a fresh extern's."""
    kind = kind_of(n)
    if kind in ("pointwise", "gather", "reduction"):
        return n in materialized
    return kind == "extern" and _fresh(n)


def _fresh(n: Node) -> bool:
    return ops.get(n.target).kind == ops.CREATION or n.target in FRESH


def _views(n: Node) -> bool:
    """Whether n's result may be a view of its first argument: a view op placed as an extern
    (reshape, a view of an extern's result), or ravel, which views when the strides allow."""
    return ops.get(n.target).kind == ops.VIEW or n.target == "ravel"


def _readers(base: Node, update: Node, kind_of, materialized: set, users: dict, outputs: set) -> list[Node]:
    """The placed nodes that read `base`'s memory: directly or through views and inlined pointwise
    ops (`update` itself excepted: the scheduler sees where it reads), and through an extern's
    result that may be a view of it (`update` included: it would read what it overwrites). A value
    no placed node reads but the graph returns is read last."""
    found, seen, stack = [], {(base, True)}, [(base, True)]
    while stack:
        node, own = stack.pop()        # own: read through base's own buffer, where the scheduler looks
        for u in users[node]:          # a node reached both ways is walked both ways
            if (u, own) in seen or (u is update and own):
                continue
            seen.add((u, own))
            if u in materialized:
                found.append(u)
                if kind_of(u) == "extern" and _views(u) and u.args[0] is node:
                    stack.append((u, False))   # its result is (or may be) a view of base's memory
            else:                       # lazy: read wherever its users are placed
                if u in outputs:
                    found.append(u.graph.nodes[-1])   # an output view is made at the end
                stack.append((u, own))
    return found
