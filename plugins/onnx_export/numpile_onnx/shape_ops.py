"""Views, shape changes, indexing and creation.

Basic indexing is one `Slice` (negative steps too: Python's clamping is ONNX's), a `Gather` per
integer and an `Unsqueeze` for the `None`s. Updates and index lists known when exporting are
`ScatterND`/`Gather` on the flat positions NumPy itself computes for them. Creation ops with
constant arguments are constants (fills are an `Expand` of one value).
"""

from __future__ import annotations

import numpy as np

from numpile import ops
from numpile.ops.reductions import reduced_axes
from numpile.ops.shape import meshgrid_axis
from numpile.shapes import SymInt

from .emit import BOOL, INT64, Emitter, OnnxUnsupported, Value

_LAST, _FIRST = np.iinfo(np.int64).max, np.iinfo(np.int64).min   # open slice ends, as ONNX clamps them


def _static(shape) -> bool:
    return all(not isinstance(d, SymInt) for d in shape)


def _reshape(cx: Emitter, x: Value, shape) -> Value:
    return cx.op("Reshape", x, cx.ints(shape), dtype=x.dtype, shape=tuple(shape), allowzero=1)


def _reshape_node(cx, node, a, *rest, **kwargs):
    return _reshape(cx, cx.cast(a, node.dtype), node.shape)


def _expand(cx: Emitter, v: Value, shape, dtype) -> Value:
    """v broadcast to `shape`. An empty static shape is a constant: onnxruntime's Expand of a 1 to
    a 0 keeps the 1."""
    if _static(shape) and 0 in shape:
        return cx.const(np.zeros(shape, dtype=dtype))
    return cx.op("Expand", v, cx.ints(shape), dtype=dtype)


def _transpose(cx, node, a, axes=None):
    perm = list(reversed(range(a.ndim))) if axes is None else [ax % a.ndim for ax in np.atleast_1d(axes)]
    return cx.op("Transpose", a, dtype=a.dtype, perm=perm) if a.ndim > 1 else a


def _swapaxes(cx, node, a, axis1, axis2):
    perm = list(range(a.ndim))
    i, j = axis1 % a.ndim, axis2 % a.ndim
    perm[i], perm[j] = perm[j], perm[i]
    return cx.op("Transpose", a, dtype=a.dtype, perm=perm) if a.ndim > 1 else a


def _moveaxis(cx, node, a, source, destination):
    """NumPy's own order: the other axes in order, each moved axis inserted at its destination."""
    source = [s % a.ndim for s in np.atleast_1d(source).tolist()]
    destination = [d % a.ndim for d in np.atleast_1d(destination).tolist()]
    order = [n for n in range(a.ndim) if n not in source]
    for dest, src in sorted(zip(destination, source)):
        order.insert(dest, src)
    return cx.op("Transpose", a, dtype=a.dtype, perm=order) if a.ndim > 1 else a


def _expand_dims(cx, node, a, axis):
    axes = sorted(ax % len(node.shape) for ax in np.atleast_1d(axis).tolist())
    return cx.op("Unsqueeze", a, cx.ints(axes), dtype=a.dtype)


def _squeeze(cx, node, a, axis=None):
    axes = [i for i, d in enumerate(a.shape) if d == 1] if axis is None else list(reduced_axes(axis, a.ndim))
    return cx.op("Squeeze", a, cx.ints(axes), dtype=a.dtype) if axes and a.ndim else a


def _broadcast_to(cx, node, array, shape):
    return _expand(cx, cx.cast(array, node.dtype), node.shape, node.dtype)


def _flip(cx, node, m, axis=None):
    axes = list(reduced_axes(axis, m.ndim))
    if not axes:
        return m
    n = len(axes)
    return cx.op("Slice", m, cx.ints([-1] * n), cx.ints([_FIRST] * n), cx.ints(axes), cx.ints([-1] * n), dtype=m.dtype)


def _copy(cx, node, a, order="K"):
    return cx.op("Identity", cx.cast(a, node.dtype), dtype=node.dtype)


def _concatenate(cx, node, arrays, axis=0, **kwargs):
    parts = [cx.cast(x, node.dtype) for x in arrays]
    if axis is None:
        parts, axis = [cx.op("Reshape", p, cx.ints([-1]), dtype=p.dtype) for p in parts], 0
    return cx.op("Concat", *parts, dtype=node.dtype, axis=axis % len(node.shape))


def _stack(cx, node, arrays, axis=0, **kwargs):
    at = cx.ints([axis % len(node.shape)])
    parts = [cx.op("Unsqueeze", cx.cast(x, node.dtype), at, dtype=node.dtype) for x in arrays]
    return cx.op("Concat", *parts, dtype=node.dtype, axis=axis % len(node.shape))


def _meshgrid(cx, node, *xi, copy=True, sparse=False, indexing="xy"):
    """Each input flattened and set along its axis of the grid, broadcast to the grid unless sparse."""
    n = len(xi)
    sizes = [int(np.prod(np.shape(x) if not isinstance(x, Value) else x.shape)) for x in xi]
    axes = [meshgrid_axis(i, n, indexing) for i in range(n)]
    grid = [0] * n
    for size, ax in zip(sizes, axes):
        grid[ax] = size
    out = []
    for x, ax, meta in zip(xi, axes, node.results):
        v = cx.cast(x, meta.dtype) if isinstance(x, Value) else cx.const(np.asarray(x, dtype=meta.dtype))
        placed = _reshape(cx, v, [grid[ax] if k == ax else 1 for k in range(n)])
        out.append(placed if sparse else _expand(cx, placed, grid, meta.dtype))
    return tuple(out)


# -- indexing ------------------------------------------------------------------------------------

def _items(index: tuple, ndim: int) -> list:
    """The index with its Ellipsis spelled out as full slices."""
    used = sum(1 for i in index if i is not None and i is not Ellipsis)
    out = []
    for item in index:
        out += [slice(None)] * (ndim - used) if item is Ellipsis else [item]
    if Ellipsis not in index:
        out += [slice(None)] * (ndim - used)
    return out


def _getitem(cx, node, a, index):
    """Basic indexing: one Slice over the sliced dims, a Gather per integer (last dims first), then
    an Unsqueeze where the Nones put new dims."""
    items = _items(index, a.ndim)
    starts, ends, axes, steps, picks, news = [], [], [], [], [], []
    dim = out = 0
    for item in items:
        if item is None:
            news.append(out)
            out += 1
        elif isinstance(item, slice):
            if any(isinstance(b, (Value, bool)) for b in (item.start, item.stop, item.step)):
                raise OnnxUnsupported("a slice whose bounds are computed in the graph")
            if isinstance(item.step, SymInt):
                raise OnnxUnsupported("a slice whose step is a loop's index")
            step = 1 if item.step is None else item.step
            starts.append((0 if step > 0 else _LAST) if item.start is None else item.start)
            ends.append((_LAST if step > 0 else _FIRST) if item.stop is None else item.stop)
            axes.append(dim)
            steps.append(step)
            dim, out = dim + 1, out + 1
        elif _plain(item):
            picks.append((dim, item))
            dim += 1
        else:
            raise OnnxUnsupported(f"the index item {item!r} (a computed or boolean index)")
    x = a
    if any(isinstance(s, SymInt) or isinstance(e, SymInt) or s != 0 or e != _LAST or st != 1
           for s, e, st in zip(starts, ends, steps)):
        x = cx.op("Slice", x, cx.ints(starts), cx.ints(ends), cx.ints(axes), cx.ints(steps), dtype=a.dtype)
    for d, i in reversed(picks):   # an index that is a loop's index is computed from it
        x = cx.op("Gather", x, cx.scalar_size(i), dtype=a.dtype, axis=d)
    if news:
        x = cx.op("Unsqueeze", x, cx.ints(news), dtype=a.dtype)
    return x if x is not a else cx.op("Identity", a, dtype=a.dtype)


def _positions(a: Value, index: tuple) -> np.ndarray:
    """The flat positions `a[index]` selects, computed by NumPy (the index is known now)."""
    if not _static(a.shape) or any(isinstance(i, Value) for i in index):
        raise OnnxUnsupported("an index computed in the graph, or a symbolic shape")
    size = int(np.prod(a.shape))
    return np.arange(size, dtype=np.int64).reshape(a.shape)[index]


def _index(cx, node, a, index):
    """An index array on one axis (the others whole) is a Gather; integer arrays on the leading
    dims a GatherND; an index known now, a Gather of the flat positions it selects."""
    items = _items(index, a.ndim)
    arrays = [k for k, i in enumerate(items) if isinstance(i, Value)]
    if len(arrays) == 1 and all(i == slice(None) for k, i in enumerate(items) if k != arrays[0]):
        k = arrays[0]
        if items[k].dtype.kind not in "iu":
            raise OnnxUnsupported("a boolean mask (its result's size is known only from the data)")
        return cx.op("Gather", a, cx.cast(items[k], INT64), dtype=a.dtype, axis=k)
    where_from = _leading_arrays(cx, a, index)
    if where_from is not None:   # integer arrays (and integers) on the leading dims, broadcast together
        return cx.op("GatherND", a, where_from, dtype=a.dtype)
    positions = _positions(a, index)
    flat = cx.op("Reshape", a, cx.ints([-1]), dtype=a.dtype)
    return cx.op("Gather", flat, cx.const(positions), dtype=a.dtype)


def _plain(i) -> bool:
    """An integer index or slice bound: an int, or a SymInt (an expression of a loop's index)."""
    return isinstance(i, SymInt) or isinstance(i, int) and not isinstance(i, bool)


def _basic(index: tuple) -> bool:
    """Whether an index is basic: integers, slices of integer bounds, None and Ellipsis."""
    def bound(b):
        return b is None or _plain(b)
    return all(i is None or i is Ellipsis or _plain(i) or isinstance(i, slice) and all(map(bound, (i.start, i.stop, i.step)))
               for i in index)


def _grid(cx, a: Value) -> Value:
    """The flat position of every element of `a`, in a's shape (any size, symbolic too)."""
    shape = cx.op("Shape", a, dtype=INT64)
    count = cx.op("ReduceProd", shape, dtype=INT64, keepdims=0)
    flat = cx.op("Range", cx.const(np.array(0, np.int64)), count, cx.const(np.array(1, np.int64)), dtype=INT64)
    return cx.op("Reshape", flat, shape, dtype=INT64, shape=a.shape)


def _scatter(cx, node, a: Value, positions: Value, value, last_wins: bool = False) -> Value:
    """a with `value` (broadcast to the positions' shape) written at the flat `positions`. With
    repeats (`last_wins`), only each position's last write is kept, as NumPy's assignment does:
    ScatterND leaves the order of repeated indices open."""
    spread = cx.op("Expand", cx.cast(value, node.dtype), cx.op("Shape", positions, dtype=INT64), dtype=node.dtype)
    targets = cx.op("Reshape", positions, cx.ints([-1]), dtype=INT64)
    updates = cx.op("Reshape", spread, cx.ints([-1]), dtype=node.dtype)
    whole = cx.op("Reshape", cx.cast(a, node.dtype), cx.ints([-1]), dtype=node.dtype)
    if last_wins:
        n = cx.op("Shape", targets, dtype=INT64)
        order = cx.op("Range", cx.const(np.array(0, np.int64)), cx.op("Squeeze", n, dtype=INT64),
                      cx.const(np.array(1, np.int64)), dtype=INT64)
        none = cx.op("Expand", cx.const(np.array(-1, np.int64)), cx.op("Shape", whole, dtype=INT64), dtype=INT64)
        column = cx.op("Unsqueeze", targets, cx.ints([-1]), dtype=INT64)
        last = cx.op("ScatterND", none, column, order, dtype=INT64, reduction="max")
        keep = cx.op("Equal", cx.op("Gather", last, targets, dtype=INT64, axis=0), order, dtype=BOOL)
        targets = cx.op("Compress", targets, keep, dtype=INT64, axis=0)
        updates = cx.op("Compress", updates, keep, dtype=node.dtype, axis=0)
    column = cx.op("Unsqueeze", targets, cx.ints([-1]), dtype=INT64)
    scattered = cx.op("ScatterND", whole, column, updates, dtype=node.dtype)
    return cx.op("Reshape", scattered, cx.op("Shape", a, dtype=INT64), dtype=node.dtype)


def _leading_arrays(cx, a: Value, index: tuple):
    """For an index of integer arrays and integers on a's leading dims (the rest whole): the
    stacked, broadcast, non-negative indices GatherND takes; None for any other index."""
    items = list(index)
    while items and items[-1] in (slice(None), Ellipsis):
        items.pop()
    if not items or not any(isinstance(i, Value) for i in items) or len(items) > a.ndim or not _static(a.shape):
        return None
    if not all(isinstance(i, Value) and i.dtype.kind in "iu" or isinstance(i, int) and not isinstance(i, bool)
               for i in items):
        return None
    shape = np.broadcast_shapes(*(i.shape if isinstance(i, Value) else () for i in items))
    columns = []
    for item, dim in zip(items, a.shape):
        i64 = cx.cast(item, INT64) if isinstance(item, Value) else cx.const(np.array(item, np.int64))
        negative = cx.op("Less", i64, cx.const(np.array(0, np.int64)), dtype=BOOL)
        i64 = cx.op("Where", negative, cx.op("Add", i64, cx.const(np.array(dim, np.int64)), dtype=INT64), i64, dtype=INT64)
        i64 = cx.op("Expand", i64, cx.ints(shape), dtype=INT64)
        columns.append(cx.op("Unsqueeze", i64, cx.ints([-1]), dtype=INT64))
    return cx.op("Concat", *columns, dtype=INT64, axis=-1) if len(columns) > 1 else columns[0]


def _setitem(cx, node, a, index, value):
    """a with a[index] = value. A basic index selects its positions from a grid of a's flat
    positions (any size); integer arrays on the leading dims gather them (the last of repeated
    writes wins); a boolean mask with one value is a Where; an index known now, NumPy's positions."""
    if _basic(index):
        return _scatter(cx, node, a, _getitem(cx, node, _grid(cx, a), index), value)
    if len(index) == 1 and isinstance(index[0], Value) and index[0].dtype == BOOL:
        mask = index[0]
        if (isinstance(value, Value) and value.ndim) or mask.ndim > a.ndim:
            raise OnnxUnsupported("assigning an array through a boolean mask (its length is known only from the data)")
        if mask.ndim < a.ndim:
            mask = cx.op("Unsqueeze", mask, cx.ints(list(range(mask.ndim, a.ndim))), dtype=BOOL)
        return cx.op("Where", mask, cx.cast(value, node.dtype), cx.cast(a, node.dtype), dtype=node.dtype)
    where_to = _leading_arrays(cx, a, index)
    if where_to is not None:
        positions = cx.op("GatherND", _grid(cx, a), where_to, dtype=INT64)
        return _scatter(cx, node, a, positions, value, last_wins=True)
    positions = _positions(a, index)
    if positions.size == 0:
        return cx.op("Identity", cx.cast(a, node.dtype), dtype=node.dtype)
    repeats = np.unique(positions).size != positions.size
    return _scatter(cx, node, a, cx.const(positions), value, last_wins=repeats)


_AT_REDUCTIONS = {"add": "add", "subtract": "add", "multiply": "mul", "maximum": "max", "minimum": "min"}


def _ufunc_at(cx, node, ufunc, a, indices, b=None):
    """np.add.at and its kin: a ScatterND that reduces repeated indices (add, mul, max, min), each
    index array on one leading axis, negative indices counted from the end. Floats are summed
    in onnxruntime's order (within rounding of NumPy's one by one); NaNs in max/min are NumPy's
    only for integers."""
    name = ufunc if isinstance(ufunc, str) else ufunc.__name__
    reduction = _AT_REDUCTIONS.get(name)
    if reduction is None or b is None:
        raise OnnxUnsupported(f"{name}.at (a unary ufunc applies again at each repeat)")
    if reduction in ("max", "min") and node.dtype.kind == "f":
        raise OnnxUnsupported(f"{name}.at of floats (ScatterND's max and min do not see NaNs as NumPy)")
    if not all(isinstance(i, Value) and i.dtype.kind in "iu" for i in indices) or not _static(a.shape):
        raise OnnxUnsupported(f"{name}.at with indices other than integer arrays, or of a symbolic shape")
    dt = np.dtype(np.int64) if node.dtype.kind in "biu" else node.dtype
    k = len(indices)
    picked = np.broadcast_shapes(*(i.shape for i in indices))
    columns = []
    for i, dim in zip(indices, a.shape):
        i64 = cx.cast(i, INT64)
        wrapped = cx.op("Add", i64, cx.const(np.array(dim, np.int64)), dtype=INT64)
        negative = cx.op("Less", i64, cx.const(np.array(0, np.int64)), dtype=BOOL)
        i64 = cx.op("Where", negative, wrapped, i64, dtype=INT64)
        i64 = cx.op("Expand", i64, cx.ints(picked), dtype=INT64)
        columns.append(cx.op("Unsqueeze", i64, cx.ints([-1]), dtype=INT64))
    where_to = cx.op("Concat", *columns, dtype=INT64, axis=-1) if k > 1 else columns[0]
    updates = cx.cast(b, dt)
    if name == "subtract":
        updates = cx.op("Sub", cx.const(np.array(0, dt)), updates, dtype=dt)
    updates = _expand(cx, updates, tuple(picked) + tuple(a.shape[k:]), dt)
    out = cx.op("ScatterND", cx.cast(a, dt), where_to, updates, dtype=dt, reduction=reduction)
    return cx.cast(out, node.dtype)


# -- creation ------------------------------------------------------------------------------------

def _fill(value_of):
    """zeros, ones, empty, full and their _like forms: one value expanded to the result's shape
    (empty's values are NumPy's to choose: zeros)."""
    def convert(cx, node, *args, **kwargs):
        value = value_of(args)
        scalar = cx.cast(value, node.dtype) if isinstance(value, Value) else cx.const(np.array(value).astype(node.dtype))
        return _expand(cx, scalar, node.shape, node.dtype)
    return convert


def _constant(cx, node, *args, **kwargs):
    """arange, linspace, eye, identity, mgrid, the window functions of constant arguments: NumPy's
    result, stored."""
    if any(isinstance(v, Value) for v in list(args) + list(kwargs.values())) or not _static(node.shape):
        raise OnnxUnsupported("arguments computed in the graph")
    return cx.const(np.asarray(ops.get(node.target).impl(*args, **kwargs)))


ROWS = {
    "reshape": _reshape_node,
    "ravel": _reshape_node,
    "transpose": _transpose,
    "swapaxes": _swapaxes,
    "moveaxis": _moveaxis,
    "expand_dims": _expand_dims,
    "squeeze": _squeeze,
    "broadcast_to": _broadcast_to,
    "flip": _flip,
    "copy": _copy,
    "concatenate": _concatenate,
    "stack": _stack,
    "meshgrid": _meshgrid,
    "getitem": _getitem,
    "index": _index,
    "setitem": _setitem,
    "ufunc_at": _ufunc_at,
    "zeros": _fill(lambda args: 0),
    "empty": _fill(lambda args: 0),
    "ndarray": _fill(lambda args: 0),
    "ones": _fill(lambda args: 1),
    "full": _fill(lambda args: args[1]),
    "zeros_like": _fill(lambda args: 0),
    "empty_like": _fill(lambda args: 0),
    "ones_like": _fill(lambda args: 1),
    "full_like": _fill(lambda args: args[1]),
    "arange": _constant,
    "linspace": _constant,
    "eye": _constant,
    "identity": _constant,
    **dict.fromkeys(("bartlett", "blackman", "hamming", "hanning"), _constant),
    "mgrid": _constant,
}

UNSUPPORTED = {
    "nonzero": "its result's size is known only from the data",
    "flatnonzero": "its result's size is known only from the data",
    "argwhere": "its result's size is known only from the data",
    "unique": "its result's size is known only from the data",
    "slice_positions": "a slice bound computed in the graph",
    # registered after this table was written (branch h-ops): no rule yet, so no model
    "roll": "no ONNX rule written for it yet",
    "diff": "no ONNX rule written for it yet",
    "indices": "no ONNX rule written for it yet",
    "fill_diagonal": "no ONNX rule written for it yet",
}
