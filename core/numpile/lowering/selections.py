"""Updates as selects: through a boolean mask (`x[m] *= -1`, `x[m] = y[m] + 1`, m of x's shape),
and of an array a creation filled (`z = np.zeros((n, n, 3)); z[:, :, 0] = x[:, None]; z[:, :, 1] = x`).

The tracer captures `x[m] op= v` as NumPy runs it: the mask's nonzero() positions, a gather of
x there, the op, a scatter back (sizes only the data knows, an extern to find them). Where the
value written is element-wise in gathers of arrays of x's shape at those same positions (and in
scalars), the update is `where(m, f(x, y, ...), x)`: the same elements, each selected once, with
no positions computed at all, one kernel that fuses with its neighbours. `prune` then drops the
positions and gathers nothing reads any more (they cannot raise: a mask's own positions are in
bounds).

An array np.zeros, np.ones or np.full made, updated at integers and whole slices, is
`where(positions, value, fill)`: each element written once, in one kernel with the creation and
every such update after it, where the updates in place wrote the array and then each part again
(numpy-benchmarks' create_grid, 15 MB: three passes and fresh pages each call, now one pass).
"""

from __future__ import annotations

import math

from .. import ops
from ..graph import Graph, Node, symbols_of
from .node_kinds import fill_value


CREATIONS = frozenset({"zeros", "ones", "full"})   # the filled arrays an update makes a select of
FILLED_PART = 8   # a creation's first update is a select where it writes at least 1/8 of it (a channel, a row of a few)


def update(emit, a, index, value):
    """setitem(a, index, value) as a select (filled_update, masked_update), or None (kept)."""
    return filled_update(emit, a, index, value) or masked_update(emit, a, index, value)


def filled_update(emit, a, index, value):
    """setitem(a, index, value) as `where(positions, value, a)` where a is a creation's filled
    array (or such a select) and index holds integers and whole slices; None otherwise."""
    filled = isinstance(a, Node) and (a.target in CREATIONS or a.meta.get("filled"))
    items = index if isinstance(index, tuple) else (index,)
    if not filled or len(items) > len(a.shape) \
            or not all(type(i) is int or i == slice(None) for i in items):
        return None
    ndim = len(a.shape)
    at = {d: i % a.shape[d] for d, i in enumerate(items) if type(i) is int}
    if not at or any(not isinstance(a.shape[d], int) for d in at) \
            or a.target in CREATIONS and math.prod(a.shape[d] for d in at) > FILLED_PART:
        return None   # a creation updated at few of its elements: NumPy's pages stay untouched, stores are cheaper
    positions = None
    for d, i in at.items():
        along = emit("getitem", emit("arange", a.shape[d]), tuple(slice(None) if j == d else None for j in range(ndim)))
        here = emit("equal", along, i)
        positions = here if positions is None else emit("logical_and", positions, here)
    if isinstance(value, Node):
        rest = tuple(n for d, n in enumerate(a.shape) if d not in at)
        value = emit("expand_dims", emit("broadcast_to", value, rest), tuple(at))
        value = value if value.dtype == a.dtype else emit("astype", value, a.dtype)
    else:   # a constant, cast as setitem casts it
        value = emit("full_like", a, value)
    constant = fill_value(a)   # np.full's may be a graph value: then the array itself
    fill = a if constant is None else constant
    result = emit("where", positions, value, fill)
    result.meta["filled"] = True   # a later update of it is a select too
    return result


# ufuncs that on complex values cost more than finding an element's position, gathering and
# scattering it: a select would compute them at every element, where NumPy computes them only where
# the mask selects (the numpy tutorials' Julia sets, `z[m] = np.tan(z[m] ** 2) + c` on complex128:
# 3.9x NumPy's time). On real values a select is the cheaper (NPBench's nbody, `r[r > 0] ** -1.5`)
DEAR = frozenset({"sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "sinh", "cosh", "tanh", "arcsinh",
                  "arccosh", "arctanh", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "power", "float_power"})


def masked_update(emit, a, index, value):
    """setitem(a, index, value) as a select where index is the nonzero() positions of a mask of
    a's shape and value element-wise in gathers at them, computing nothing DEAR on complex values;
    None (kept as it is) otherwise."""
    mask = _mask_of(a, index)
    if mask is None or _computes_dear(value):
        return None
    full = _at_full_shape(emit, value, index, a.shape)
    if full is None:
        return None
    if not isinstance(full, Node):   # a constant, cast as setitem casts it
        full = emit("full_like", a, full)
    elif full.dtype != a.dtype:
        full = emit("astype", full, a.dtype)
    return emit("where", mask, full, a)


def masked_total(emit, a):
    """For the sum or mean of all of `a`, a gather of x at the nonzero() positions of a mask m of
    x's shape (`x[m].mean()`): (where(m, x, 0), m), one pass over x and no positions; None for
    anything else. The sum adds the unselected zeros in between: the same value within rounding,
    as any other order of a float sum (not NumPy's to the bit, as its pairwise sum of x[m] is)."""
    if not isinstance(a, Node) or a.target != "index" or len(a.shape) != 1:
        return None
    x, index = a.args
    mask = _mask_of(x, index)
    if mask is None:
        return None
    return emit("where", mask, x, x.dtype.type(0)), mask   # x's own zero: no promotion


def _computes_dear(value) -> bool:
    """Whether a value computes a DEAR op of complex values from its gathers (which it stops at) on."""
    todo, seen = [value], set()
    while todo:
        n = todo.pop()
        if not isinstance(n, Node) or id(n) in seen or n.target == "index":
            continue
        seen.add(id(n))
        if n.target in DEAR and n.dtype.kind == "c" and not (n.target == "power" and isinstance(n.args[1], int)):
            return True   # (an integer power is products: `z[m] ** 2 + c` stays a select)
        todo.extend(n.inputs)
    return False


def _mask_of(a, index) -> Node | None:
    """The boolean mask of a's shape whose nonzero() positions `index` is, in order, else None."""
    if not isinstance(a, Node) or not isinstance(index, tuple) or len(index) != len(a.shape) or not index:
        return None
    sources = {id(i.args[0]) if isinstance(i, Node) and i.target == ops.TUPLE_GETITEM else None for i in index}
    if len(sources) != 1 or None in sources:
        return None
    positions = index[0].args[0]
    if not _is_nonzero(positions) or any(i.args[1] != k for k, i in enumerate(index)):
        return None
    mask = positions.args[0]
    return mask if isinstance(mask, Node) and mask.dtype.kind == "b" and tuple(mask.shape) == tuple(a.shape) else None


def _at_full_shape(emit, v, index, shape):
    """v, an element-wise expression of gathers at `index` of arrays of `shape` (and of scalars),
    made again on the whole arrays; None where it is anything else."""
    if not isinstance(v, Node) or v.shape == ():
        return v   # a constant or a 0-d value: the same for every element
    if v.target == "index" and len(v.args[1]) == len(index) and all(x is y for x, y in zip(v.args[1], index)):
        return v.args[0] if tuple(v.args[0].shape) == tuple(shape) else None
    if not _element_wise(v):
        return None
    args = [_at_full_shape(emit, x, index, shape) for x in v.args]
    if any(x is None and y is not None for x, y in zip(args, v.args)):
        return None
    return emit(v.target, *args, **v.kwargs)


def prune(graph: Graph) -> None:
    """Drop what nothing reads of the nonzero() positions, the gathers at them and the element-wise
    values of those gathers (what masked_update made again on whole arrays), and of creations (the
    np.zeros a filled_update no longer reads)."""
    while True:
        used = {id(i) for n in graph.nodes for i in (n.inputs if n.op != "output" else _outputs(n))}
        of_positions = _droppable(graph)
        # a node binding a size that something else uses (`len(np.nonzero(m)[0])` in arithmetic) stays
        sizes = symbols_of(n for n in graph.nodes if id(n) not in of_positions)
        used |= {id(graph.symbols[k][0]) for k in sizes if k < len(graph.symbols) and graph.symbols[k] is not None}
        dead = [n for n in graph.nodes if n.op == "call" and id(n) not in used and id(n) in of_positions]
        if not dead:
            break
        gone = {id(n) for n in dead}
        graph.nodes[:] = [n for n in graph.nodes if id(n) not in gone]
        graph.symbols = [s if s is None or id(s[0]) not in gone else None for s in graph.symbols]


def _outputs(n: Node) -> list:
    return [v for v in n.args[0] if isinstance(v, Node)]


def _droppable(graph: Graph) -> set:
    """The nodes that only creations, positions of masks, gathers at them and element-wise ops of
    those make (none of them raises: the positions are in bounds)."""
    found: set = set()
    for n in graph.nodes:
        if n.op != "call":
            continue
        if ops.get(n.target).kind == ops.CREATION and not n.inputs \
                or n.target == "nonzero" or n.target == ops.TUPLE_GETITEM and _is_nonzero(n.args[0]) \
                or n.target == "index" and isinstance(n.args[1], tuple) and all(id(i) in found for i in n.args[1]) \
                or _element_wise(n) and any(id(i) in found for i in n.inputs):
            found.add(id(n))
    return found


def _is_nonzero(n) -> bool:
    return isinstance(n, Node) and n.target == "nonzero"


def _element_wise(n: Node) -> bool:
    """A pointwise op that raises for no value (NumPy's integer power raises for negative exponents)."""
    return ops.get(n.target).kind == ops.POINTWISE and n.results is None and not (n.target == "power" and n.dtype.kind in "iu")
