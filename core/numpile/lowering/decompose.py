"""Decompositions: composite ops rewritten into the primitives the scheduler fuses.

`decompose(graph)` returns a new Graph in which every op with a row in
`DECOMPOSITIONS` is replaced by the primitives its function emits, with the
same results as NumPy's own implementation (mean is a sum in NumPy's
accumulator dtype divided by the count; var is the mean of squared deviations);
a decomposition that returns None leaves its node as it is.
The decomposition of an op with several results returns a node per result, which
its tuple_getitem nodes become (np.divmod is floor_divide and remainder: two
pointwise ops, which fuse into one kernel storing both). Some rows are other modules' functions:
products.py's (matmul, dot, outer), einsum.py's, selections.py's (updates through a mask).
"""

from __future__ import annotations

import math

import numpy as np

from .. import ops
from ..graph import Graph, Node, map_nodes
from ..ops.indexing import diagonal_positions
from ..ops.meta import normalize_axis_index
from ..ops.reductions import reduced_axes
from ..ops.shape import STACKS, diff_end, meshgrid_axis, roll_offsets, stack_layout
from ..ops.tiling import repeat_count, repeat_counts, tile_layout
from ..shapes import replaying, sym_max
from .einsum import einsum
from .products import dot, matmul, outer
from .selections import masked_total, prune, update


class Emitter:
    """Adds primitive calls to the graph under construction, with metas from the op table."""

    def __init__(self, graph: Graph, loc, meta=None):
        self.graph, self.loc = graph, loc
        self.meta = meta   # the decomposed node's: its results' sizes, where only the data knows them

    def __call__(self, target: str, *args, **kwargs) -> Node:
        op = ops.get(target)
        args, kwargs = op.normalize(args, kwargs)
        metas = map_nodes((args, kwargs), lambda n: n.array_meta)
        return self.graph.call(target, args, kwargs, op.meta(*metas[0], **metas[1]), self.loc)

    def again(self, target: str, *args) -> Node:
        """The decomposed op itself on other operands, with its results (sizes named by the trace)."""
        return self.graph.call(target, args, {}, self.meta, self.loc)


def _count(a: Node, axis) -> int:
    return math.prod(a.shape[i] for i in reduced_axes(axis, len(a.shape)))


def _accumulator(a: Node, dtype):
    """The dtype NumPy's mean and var sum in: float64 for integers and booleans."""
    if dtype is not None:
        return dtype
    return np.dtype(np.float64) if a.dtype.kind in "biu" else None


def _cast_back(emit: Emitter, value, dtype):
    """value in `dtype` (an astype where it has another). NumPy's mean, var and std write each step
    into the array of the step before (out=, unsafe casting): an integer dtype= truncates."""
    return value if value.dtype == dtype else emit("astype", value, dtype)


def _average(emit: Emitter, total, count: int):
    return _cast_back(emit, emit("divide", total, count), total.dtype)


def _mean(emit: Emitter, a, axis=None, dtype=None, keepdims=False):
    # NumPy's mean of float16 sums and divides in float32, then rounds to float16 (sum would overflow)
    half = a.dtype == np.float16 and dtype is None
    acc = np.dtype(np.float32) if half else _accumulator(a, dtype)
    masked = masked_total(emit, a) if axis in (None, 0) else None   # x[m].mean(): where m holds
    if masked is not None:
        selected, mask = masked
        mean = _average(emit, emit("sum", selected, dtype=acc, keepdims=keepdims), emit("sum", mask))
    else:
        mean = _average(emit, emit("sum", a, axis=axis, dtype=acc, keepdims=keepdims), _count(a, axis))
    return _cast_back(emit, mean, a.dtype) if half else mean


def _sum(emit: Emitter, a, axis=None, dtype=None, keepdims=False):
    """x[m].sum(): where m holds, without its positions; any other sum stays as it is."""
    masked = masked_total(emit, a) if axis in (None, 0) else None
    return None if masked is None else emit("sum", masked[0], dtype=dtype, keepdims=keepdims)


def _var(emit: Emitter, a, axis=None, dtype=None, ddof=0, keepdims=False):
    acc = _accumulator(a, dtype)
    mean = _average(emit, emit("sum", a, axis=axis, dtype=acc, keepdims=True), _count(a, axis))
    deviation = emit("subtract", a, mean)
    if deviation.dtype.kind == "c":   # |d|**2 as NumPy takes it: re * re + im * im, a float
        parts = [emit(part, deviation) for part in ("real", "imag")]
        squares = emit("add", *(emit("multiply", p, p) for p in parts))
    else:
        squares = emit("multiply", deviation, deviation)
    total = emit("sum", squares, axis=axis, dtype=acc, keepdims=keepdims)
    return _average(emit, total, sym_max(_count(a, axis) - ddof, 0))


def _std(emit: Emitter, a, axis=None, dtype=None, ddof=0, keepdims=False):
    var = _var(emit, a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims)
    return _cast_back(emit, emit("sqrt", var), var.dtype)


def _divmod(emit: Emitter, x1, x2):
    # NumPy computes both with one npy_divmod; floor_divide and remainder each compute its half
    return emit("floor_divide", x1, x2), emit("remainder", x1, x2)


def _meshgrid(emit: Emitter, *xi, copy=True, sparse=False, indexing="xy"):
    """Each input flattened, set along its axis of the grid (a view), broadcast to the grid unless
    sparse, and copied (an astype to its own dtype: a kernel, or inlined into its consumers').
    Inputs given as constants (lists) stay a NumPy call."""
    if not all(isinstance(x, Node) for x in xi):
        return None
    ndim = len(xi)
    axes = [meshgrid_axis(i, ndim, indexing) for i in range(ndim)]
    grid = [0] * ndim
    for x, axis in zip(xi, axes):
        grid[axis] = math.prod(x.shape)
    results = []
    for x, axis in zip(xi, axes):
        flat = x if len(x.shape) == 1 else emit("ravel", x)
        placed = emit("getitem", flat, tuple(slice(None) if k == axis else None for k in range(ndim)))
        if not sparse:
            placed = emit("broadcast_to", placed, tuple(grid))
        results.append(emit("astype", placed, x.dtype))
    return tuple(results)


def _static(x) -> bool:
    """A value in the graph whose sizes are known now (not a constant, no symbolic dim)."""
    return isinstance(x, Node) and all(type(d) is int for d in x.shape)


def _roll(emit: Emitter, a, shift, axis=None):
    """Along each axis np.roll moves by s (in [1, n)), a gather at positions arange(n) - s: a
    negative position counts from the end, which is the wrap. The gather is computed where it is
    used, so a stencil of rolls is one kernel. Nothing moved: a copy. The flattened roll of more
    than one dim (a reshape of a ravel, both copies) stays NumPy's."""
    if not _static(a) or axis is None and len(a.shape) != 1:
        return None
    rolled = a
    for ax, offset in roll_offsets(a.shape, shift, axis).items():
        positions = emit("subtract", emit("arange", a.shape[ax]), offset)
        rolled = emit("index", rolled, (slice(None),) * ax + (positions,))
    return emit("astype", a, a.dtype) if rolled is a else rolled


def _nonzero(emit: Emitter, a):
    """The positions of a's true elements: NumPy's nonzero of a bool array is several times faster
    than of any other dtype (np.where(diff) of int64: 1 ms against 0.1 ms for 500,000), and the
    cast to bool (a kernel fusing what computes a) is truthiness, as nonzero reads it (NaN true,
    -0.0 false)."""
    if a.dtype == np.bool_ or not a.shape:
        return None
    return emit.again("nonzero", emit("astype", a, np.dtype(np.bool_)))


def _diff(emit: Emitter, a, n=1, axis=-1, prepend=None, append=None):
    """NumPy's own steps: the ends concatenated to a (a 0-d end broadcast along the axis), then n
    times a[1:] - a[:-1] along the axis (not_equal for booleans): slices of one another, one
    kernel."""
    if not isinstance(a, Node):
        return None
    axis = normalize_axis_index(axis, len(a.shape))
    if prepend is not None or append is not None:
        pieces = [_placed_end(emit, end, a.shape, axis) for end in (prepend, append)]
        pieces = tuple(p for p in (pieces[0], a, pieces[1]) if p is not None)
        a = _concatenate(emit, pieces, axis) or emit("concatenate", pieces, axis=axis)
    op = "not_equal" if a.dtype == np.bool_ else "subtract"
    later, earlier = ((slice(None),) * axis + (s,) for s in (slice(1, None), slice(None, -1)))
    for _ in range(n):
        a = emit(op, emit("getitem", a, later), emit("getitem", a, earlier))
    return a


def _placed_end(emit: Emitter, end, shape: tuple, axis: int):
    """A prepend= or append= value as np.diff concatenates it (None: not given)."""
    if end is None:
        return None
    placed = diff_end(end.array_meta if isinstance(end, Node) else end, shape, axis).shape
    if isinstance(end, Node):
        return end if tuple(end.shape) == placed else emit("broadcast_to", end, placed)
    return np.broadcast_to(np.asanyarray(end), placed)


def _fill_diagonal(emit: Emitter, a, val, wrap=False):
    """A scatter of the value into a at the diagonal's positions, each an arange of flat positions
    unravelled (floor_divide and remainder by the C-order strides, computed where they are
    stored); an array value is gathered cyclically, as NumPy's flat assignment repeats it. A
    constant value other than a scalar, and an empty value or diagonal, stay NumPy's."""
    positions = diagonal_positions(a.shape, wrap) if _static(a) else range(0)
    if not positions or not (_static(val) and math.prod(val.shape) or np.ndim(val) == 0 and not isinstance(val, Node)):
        return None
    index = _unravelled(emit, emit("arange", positions.start, positions.stop, positions.step), a.shape)
    if isinstance(val, Node) and val.shape:
        values = val if len(val.shape) == 1 else emit("ravel", val)
        val = emit("index", values, (emit("remainder", emit("arange", len(positions)), math.prod(val.shape)),))
    return emit("setitem", a, index, val)


def _unravelled(emit: Emitter, flat, shape: tuple) -> tuple:
    """Flat positions in an array of `shape` as an index of it: floor_divide and remainder by the
    C-order strides (by constants: multiplies, computed where they are read)."""
    strides = [math.prod(shape[k + 1:]) for k in range(len(shape))]
    return tuple(emit("remainder", emit("floor_divide", flat, stride), size) for stride, size in zip(strides, shape))


def _indices(emit: Emitter, dimensions, dtype=int, sparse=False):
    """Grid k is an arange of dim k (the loop index, in a kernel) set along axis k, broadcast to the
    grid unless sparse; stacked, element [k, ...] is grid k's (a where per grid, on the index along
    the first axis), then cast to NumPy's dtype. No dims, or dims known only at run time: NumPy's."""
    if not dimensions or not all(type(d) is int for d in dimensions):
        return None
    metas = ops.get("indices").meta(dimensions, dtype, sparse)
    ndim = len(dimensions)
    grids = [emit("getitem", emit("arange", d), tuple(slice(None) if j == k else None for j in range(ndim)))
             for k, d in enumerate(dimensions)]
    if sparse:
        return tuple(emit("astype", grid, meta.dtype) for grid, meta in zip(grids, metas))
    stacked = _by_position(emit, [emit("getitem", grid, (None,)) for grid in grids], 0, ndim + 1)
    return emit("astype", stacked, metas.dtype)


def _by_position(emit: Emitter, pieces: list, axis: int, ndim: int):
    """Element k along `axis` (of ndim dims) taken from pieces[k], each of length 1 there: a where
    per piece on the index along the axis (how np.indices and np.stack stack, in one kernel)."""
    which = emit("getitem", emit("arange", len(pieces)), tuple(slice(None) if j == axis else None for j in range(ndim)))
    stacked = pieces[-1]
    for k in reversed(range(len(pieces) - 1)):
        stacked = emit("where", emit("equal", which, k), pieces[k], stacked)
    return stacked


def _concatenate(emit: Emitter, arrays, axis=0):
    """np.concatenate of arrays of known sizes as one kernel: along the axis, position p takes piece
    k's element p - start_k (each piece gathered at that position, clipped into its range, and a
    where on p choosing among them), fused with what reads it (diff's prepend= and append=: a
    loop body of such steps is a native loop); a large one stored piece by piece (`_stored`). A
    constant piece is one value repeated (diff's ends, `[1]`), or NumPy's concatenate stays; so do
    axis=None and pieces of symbolic size."""
    if not isinstance(arrays, (tuple, list)) or len(arrays) < 2 or axis is None:
        return None
    arrays = [a if isinstance(a, Node) else np.asarray(a) for a in arrays]   # a constant list: its array
    pieces = []
    for a in arrays:
        if _static(a):
            pieces.append(a)
        elif isinstance(a, np.ndarray) and a.size and np.all(a == a.flat[0]):
            pieces.append(a.dtype.type(a.flat[0]))   # strong: promotes as the array would
        else:
            return None
    shapes = [tuple(a.shape) for a in arrays]
    if not all(math.prod(shape) for shape in shapes):   # an empty piece has no element to gather
        return None
    axis = normalize_axis_index(axis, len(shapes[0]))
    starts = np.cumsum([0] + [shape[axis] for shape in shapes]).tolist()
    dtype = np.result_type(*(a.dtype for a in arrays))
    if math.prod(shapes[0]) // shapes[0][axis] * starts[-1] >= LARGE_CONCATENATE:
        return _stored(emit, pieces, shapes[0][:axis] + (starts[-1],) + shapes[0][axis + 1:], starts, axis, dtype)
    along = (slice(None),) * axis
    where_along = (None,) * axis + (slice(None),) + (None,) * (len(shapes[0]) - axis - 1)
    p = emit("arange", starts[-1])
    chosen = None
    for k in reversed(range(len(pieces))):
        piece = pieces[k]
        if isinstance(piece, Node):
            at = emit("clip", emit("subtract", p, starts[k]), 0, shapes[k][axis] - 1)
            piece = emit("index", piece, along + (at,))
        chosen = piece if chosen is None else emit("where", emit("less", emit("getitem", p, where_along), starts[k + 1]),
                                                   piece, chosen)
    return _cast_back(emit, chosen, dtype)


# from this many elements a concatenate is stored piece by piece: its gathers at clipped positions
# and choices cost more per element than a store at affine positions and a load where it is read
LARGE_CONCATENATE = 1 << 15


def _stored(emit: Emitter, pieces: list, shape: tuple, starts: list, axis: int, dtype):
    """np.concatenate as NumPy copies it: a new array, each piece stored into its slice along the
    axis (a kernel writing in place, fused with what computes the piece)."""
    out = emit("empty", shape, dtype)
    for piece, start, stop in zip(pieces, starts, starts[1:]):
        out = emit("setitem", out, (slice(None),) * axis + (slice(start, stop),), piece)
    return out


def _stack(emit: Emitter, arrays, axis=0):
    """np.stack as `_indices` stacks its grids: each array given the new axis, and element k along
    it taken from array k (_by_position): one kernel, fused with what reads it (a loop body of such
    steps is a native loop), where NumPy's copies each array in. One array (a copy, not the view
    this would be), or operands that are not graph arrays: NumPy's."""
    if not isinstance(arrays, (tuple, list)) or len(arrays) < 2 or not all(isinstance(a, Node) for a in arrays):
        return None
    ndim = len(arrays[0].shape) + 1
    axis = normalize_axis_index(axis, ndim)
    spread = tuple(None if j == axis else slice(None) for j in range(ndim))
    stacked = _by_position(emit, [emit("getitem", a, spread) for a in arrays], axis, ndim)
    return _cast_back(emit, stacked, np.result_type(*(a.dtype for a in arrays)))


def _stacks(fn):
    """np.hstack, vstack, column_stack and dstack: each operand reshaped to the dims the function gives it
    (a view, or a constant), then concatenated (one kernel where `_concatenate` takes the pieces)."""
    def decomposition(emit: Emitter, tup):
        if not isinstance(tup, (tuple, list)):
            return None
        shapes, axis = stack_layout(fn, [x.shape if isinstance(x, Node) else np.shape(x) for x in tup])
        pieces = tuple(_with_ones(emit, x, shape) for x, shape in zip(tup, shapes))
        return _concatenate(emit, pieces, axis) or emit("concatenate", pieces, axis=axis)
    return decomposition


def _with_ones(emit: Emitter, x, shape: tuple):
    """x given `shape`, its own with 1s around it: a view (getitem with None items), not a
    reshape, which kernels do not read through."""
    if not isinstance(x, Node):
        return np.reshape(x, shape)
    n, extra = len(x.shape), len(shape) - len(x.shape)
    if not extra:
        return x
    before = next(k for k in range(extra + 1) if tuple(shape[k:k + n]) == tuple(x.shape))
    return emit("getitem", x, (None,) * before + (slice(None),) * n + (None,) * (extra - before))


def _tile(emit: Emitter, A, reps):
    """np.tile as one broadcast copy: along an axis where A has one element, that element
    broadcast to r; where it has n > 1, a new axis of r before the n, the two then merged by a
    reshape (a view of the new array). With no such axis it stays a broadcast copy, which fuses
    with what reads it. Sizes known only at run time, and empty results: NumPy's."""
    if not _static(A) or 0 in ops.get("tile").meta(A.array_meta, reps).shape:
        return None
    shape, reps = tile_layout(A.shape, reps)
    lead = len(shape) - len(A.shape)
    items, spread = [None] * lead, list(reps[:lead])
    for n, r in zip(shape[lead:], reps[lead:]):
        items += [None, slice(None)] if n > 1 and r > 1 else [slice(None)]
        spread += [r, n] if n > 1 and r > 1 else [n * r]
    copies = emit("astype", emit("broadcast_to", emit("getitem", A, tuple(items)), tuple(spread)), A.dtype)
    final = tuple(n * r for n, r in zip(shape, reps))
    return copies if tuple(copies.shape) == final else emit("reshape", copies, final)


def _repeat(emit: Emitter, a, repeats, axis=None):
    """np.repeat of one count r: a new axis after the repeated one (the last, for the flattened
    a), broadcast to r and copied (one kernel writing each element r times, no positions
    computed), reshaped to NumPy's shape (a view of that new array). Counts given as constants: a
    gather at the constant positions np.repeat(arange(n), repeats). Counts computed in the graph (a
    length only the data knows), and empty results: NumPy's."""
    meta = ops.get("repeat").meta(a.array_meta, repeats, axis) if _static(a) and not isinstance(repeats, Node) else None
    if meta is None or not math.prod(meta.shape):
        return None
    if not a.shape:     # NumPy repeats a 0-d a as 1-D
        a = emit("getitem", a, (None,))
    flat = axis is None     # along the flattened a
    axis = len(a.shape) - 1 if flat else normalize_axis_index(axis, len(a.shape))
    counts = repeat_counts(math.prod(a.shape) if flat else a.shape[axis], repeats)
    if counts is None:
        spread = emit("getitem", a, (slice(None),) * (axis + 1) + (None,))
        copies = emit("broadcast_to", spread, a.shape[:axis + 1] + (repeat_count(repeats),) + a.shape[axis + 1:])
        return emit("reshape", emit("astype", copies, a.dtype), meta.shape)
    positions = np.repeat(np.arange(len(counts)), counts)
    return emit("index", a, np.unravel_index(positions, a.shape) if flat else (slice(None),) * axis + (positions,))


def _triangle(keep: str):
    """np.triu and np.tril: where the column minus the row is on the kept side of k, m; else a zero
    of m's dtype (a 1-D m is broadcast along the rows, as NumPy's where does)."""
    def decomposition(emit: Emitter, m, k=0):
        if not _static(m):
            return None
        rows, columns = (m.shape[-2:] if len(m.shape) > 1 else m.shape * 2)
        offset = emit("subtract", emit("arange", columns), emit("getitem", emit("arange", rows), (slice(None), None)))
        return emit("where", emit(keep, offset, k), m, m.dtype.type(0))
    return decomposition


def _np_average(emit: Emitter, a, axis=None, weights=None, returned=False, keepdims=False):
    """Without weights, np.average is the mean; NumPy's weighted average raises where the weights
    sum to zero, and stays NumPy's call."""
    return _mean(emit, a, axis, None, keepdims) if weights is None and not returned else None


def _arg_extreme(extreme: str):
    """argmax or argmin of floats as two passes that vectorise: the extreme (NaN where there is
    one, as NumPy's max takes it), then the smallest position holding it (the first NaN then), a
    min of positions. One pass carrying the extreme and its position through selects does not
    vectorise: 35x slower than NumPy's argmax on a million float64."""
    def decompose(emit: Emitter, a, axis=None, keepdims=False):
        if a.dtype.kind != "f" or not a.shape:
            return None
        best = emit(extreme, a, axis=axis, keepdims=True)
        nan = emit("logical_and", emit("not_equal", best, best), emit("not_equal", a, a))
        held = emit("logical_or", emit("equal", a, best), nan)
        ndim = len(a.shape)
        dims = range(ndim) if axis is None else [normalize_axis_index(axis, ndim)]
        positions, stride = 0, 1   # a position along the reduced dims, C order (flat for None)
        for d in reversed(dims):
            along = emit("arange", a.shape[d])   # the loop's index, computed where it is used
            if ndim > 1:
                along = emit("expand_dims", along, tuple(e for e in range(ndim) if e != d))
            positions = along if isinstance(positions, int) else emit("add", positions, emit("multiply", along, stride))
            stride *= a.shape[d]
        return emit("min", emit("where", held, positions, stride), axis=axis, keepdims=keepdims)   # stride: past the last
    return decompose


# for a backend whose kernels carry an arg-reduction's position through selects, one at a time
# (llvm's): a float argmax/argmin as two passes that vectorise
ARG_EXTREMES = {"argmax": _arg_extreme("max"), "argmin": _arg_extreme("min")}

DECOMPOSITIONS = {"mean": _mean, "sum": _sum, "var": _var, "std": _std, "divmod": _divmod, "meshgrid": _meshgrid,
                  "einsum": einsum, "matmul": matmul, "dot": dot, "outer": outer, "roll": _roll, "diff": _diff, "nonzero": _nonzero,
                  "fill_diagonal": _fill_diagonal, "indices": _indices, "stack": _stack, "concatenate": _concatenate,
                  "setitem": update, "tile": _tile, "repeat": _repeat, "triu": _triangle("greater_equal"),
                  "tril": _triangle("less_equal"), "average": _np_average,
                  **{fn.__name__: _stacks(fn) for fn in STACKS}}


def _meta_of(result):
    return tuple(r.array_meta for r in result) if isinstance(result, tuple) else result.array_meta


def _decomposed(out: Graph, n: Node, look, rewrites: dict):
    """n's decomposition emitted into `out`: its node (a tuple of them for several results), or
    None where the decomposition declines (n is then kept whole)."""
    emit = Emitter(out, n.meta.get("loc"), n.array_meta)
    # its meta rules broadcast the operand's shape against its own reductions: the same
    # outcome for every size (and the result's meta is checked below)
    with replaying():
        result = rewrites[n.target](emit, *map_nodes(n.args, look), **map_nodes(n.kwargs, look))
    if result is not None and _meta_of(result) != n.array_meta:  # it must keep NumPy's dtypes and shapes
        raise AssertionError(f"decomposition of {n.target} gives {_meta_of(result)}, not {n.array_meta}")
    return result


def decompose(graph: Graph, extra: dict | None = None) -> Graph:
    """The graph with DECOMPOSITIONS' ops (and a backend's `extra` ones: ARG_EXTREMES) written
    as the primitives they are made of."""
    rewrites = {**DECOMPOSITIONS, **(extra or {})}
    out = Graph()
    out.guards = graph.guards
    new: dict[Node, Node] = {}
    look = new.__getitem__
    for n in graph.nodes:
        if n.op == "input":
            new[n] = out.input(n.name, n.array_meta, n.target, n.meta.get("loc"))
        elif n.op == "constant":
            new[n] = out.constant(n.args[0], n.meta.get("loc"))
        elif n.op == "output":
            out.output(map_nodes(n.args[0], look))
        elif n.target in rewrites and (result := _decomposed(out, n, look, rewrites)) is not None:
            new[n] = result
            if isinstance(result, Node):   # what the tracer noted (errstate, mask_positions) stays
                result.meta = {**n.meta, **result.meta}
        elif n.target == ops.TUPLE_GETITEM and isinstance(n.args[0], Node):  # a result of an op with several
            results, index = new[n.args[0]], n.args[1]
            new[n] = results[index] if isinstance(results, tuple) else out.result(results, index)
        else:
            new[n] = out.call(n.target, map_nodes(n.args, look), map_nodes(n.kwargs, look), n.array_meta, n.meta.get("loc"))
            new[n].meta = {**n.meta, **new[n].meta}   # what the tracer noted (errstate, mask_positions) stays
    out.symbols = [(new[s[0]], s[1]) if s is not None else None for s in graph.symbols]
    prune(out)
    out.write_back = [(k, new[node]) for k, node in graph.write_back]
    out.write_back_owned = graph.write_back_owned
    return out
