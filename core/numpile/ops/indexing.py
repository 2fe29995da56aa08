"""Indexing, `a[index]`, and its functional update `a[index] = value`.

Basic indexing ("getitem"): integers, slices (any step), None (np.newaxis), Ellipsis and
tuples of these. The result is a view of `a`, or a NumPy scalar when integers pick one element.

Advanced indexing ("index"): integer arrays (or lists of ints) among the items. The result is a
new array; its shape follows NumPy's rules: the index arrays (and the integers beside them)
broadcast together, and their shape takes the place of the first of them when they stand next
to each other in the index, else goes first. A boolean mask is, as NumPy defines it, its
`nonzero()` index arrays in its place: the tracer rewrites it so (after `check_masks`), and the
number of elements it selects is a size only the data knows. Assigning a scalar through one
mask, `a[mask] = value`, keeps the mask: a select over the array, no count needed.
"""

from __future__ import annotations

import math
import operator

import numpy as np

from . import params
from ..shapes import SymInt, unbacked
from ..slicing import slice_length
from .meta import as_meta, broadcast_shapes, probe, probe_call
from .registry import INDEXING, VIEW, ArrayMeta, lookup_callable, register


def _getitem_sig(a, index): ...


def _is_int(value) -> bool:
    """An int, or a symbolic one (a loop's index)."""
    return isinstance(value, (int, SymInt)) and not isinstance(value, bool)  # x[True] is not x[1]


def _kind(item) -> str:
    """What an index item is; IndexError/TypeError where NumPy refuses it, NotImplementedError
    for the advanced forms."""
    if item is None:
        return "newaxis"
    if item is Ellipsis:
        return "ellipsis"
    if _is_int(item):
        return "int"
    if isinstance(item, slice):
        bounds = (item.start, item.stop, item.step)
        if any(isinstance(b, ArrayMeta) for b in bounds):
            raise NotImplementedError("a slice with bounds computed in the graph beside integer or array items, "
                                      "or as a step, is not supported")
        if not all(b is None or _is_int(b) for b in bounds):
            raise TypeError("slice indices must be integers or None or have an __index__ method")
        return "slice"
    if isinstance(item, (float, complex, str, bytes)):
        raise IndexError("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) "
                         "and integer or boolean arrays are valid indices")
    raise NotImplementedError(f"advanced indexing (an index of type {type(item).__name__}) "
                              f"is not supported; only integers, slices, None and Ellipsis are")


def _is_index_array(item) -> bool:
    """An integer or boolean array among an index's items. An integer computed in the graph (a
    NumPy scalar or 0-d array, `x[v.argmax()]`) is one too: its value is known only when the graph
    runs, and as a 0-d index array it picks what the int would (the tracer keeps the result a
    view). So is a Python int computed in the graph (weak: `k = int(v * n)` in a loop body); other
    Python scalars are constants or guarded."""
    if isinstance(item, ArrayMeta):
        return not (item.weak or item.scalar) or item.dtype.kind in "iu"
    return isinstance(item, (np.ndarray, list))


def is_advanced(index: tuple) -> bool:
    """Whether an index (its items as metas or constants) asks for advanced indexing."""
    return any(_is_index_array(item) for item in index)


def _walk(a: ArrayMeta, index: tuple, kinds: list, ints_advanced: bool) -> tuple[list, list, list]:
    """An index over a's dims: the result dims its newaxis, Ellipsis and slice items give, in order;
    for each advanced item (an index array; an int too where arrays are) its shape and where it
    stands (its position among the items, and how many result dims come before it); and per dim of
    a what walks it: ("slice", item, k) or ("all", None, k) for one that gives result dim k of those,
    ("int", item, None) or ("array", item, None). NumPy's IndexError and ValueError for what it
    refuses."""
    if kinds.count("ellipsis") > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(k in ("int", "slice", "array") for k in kinds)
    if consumed > a.ndim:
        raise IndexError(f"too many indices for array: array is {a.ndim}-dimensional, but {consumed} were indexed")
    if "ellipsis" not in kinds:  # the dims no item names are those of an implicit trailing Ellipsis
        index, kinds = index + (Ellipsis,), kinds + ["ellipsis"]
    shape, advanced, places, axes, dim = [], [], [], [], 0
    for position, (item, kind) in enumerate(zip(index, kinds)):
        if kind == "newaxis":
            shape.append(1)
            continue
        if kind == "ellipsis":
            rest = a.ndim - consumed
            axes += [("all", None, len(shape) + k) for k in range(rest)]
            shape.extend(a.shape[dim:dim + rest])
            dim += rest
            continue
        size = a.shape[dim]
        axes.append((kind, item, len(shape) if kind == "slice" else None))
        if kind == "slice":
            if item.step == 0:
                raise ValueError("slice step cannot be zero")
            shape.append(slice_length(item, size))
        elif kind == "int":
            if not -size <= item < size:
                raise IndexError(f"index {item} is out of bounds for axis {dim} with size {size}")
            if ints_advanced:
                advanced.append(())
                places.append((position, len(shape)))
        else:
            advanced.append(_index_array(item).shape)
            places.append((position, len(shape)))
            _check_bounds(item, size, dim)
        dim += 1
    return shape, advanced, places, axes


def _getitem_meta(a, index):
    a = as_meta(a)
    if is_advanced(index):
        raise NotImplementedError("advanced indexing is the op 'index', not getitem")
    kinds = [_kind(item) for item in index]
    shape, _, _, _ = _walk(a, index, kinds, ints_advanced=False)
    # NumPy hands back a scalar for a 0-d result, unless the index spells out an Ellipsis
    return ArrayMeta(tuple(shape), a.dtype, scalar="ellipsis" not in kinds and not shape)


register("getitem", VIEW, impl=operator.getitem, meta=_getitem_meta, signature=_getitem_sig,
         numpy=(operator.getitem,), methods={"__getitem__": None}, convert={"index": params.index},
         doc="a[index], basic indexing")


def _index_sig(a, index): ...


def _index_array(item) -> ArrayMeta:
    """An index array as a meta: NumPy's IndexError for other dtypes, a graph break for masks."""
    meta = item if isinstance(item, ArrayMeta) else ArrayMeta.of(np.asarray(item))
    if meta.dtype.kind == "b":
        raise NotImplementedError("a boolean mask index selects as many elements as the data says")
    if meta.dtype.kind not in "iu" and not (isinstance(item, list) and not item):
        raise IndexError("arrays used as indices must be of integer (or boolean) type")
    return meta


def is_mask(item) -> bool:
    """A boolean array of one or more dims among an index's items (a meta or a constant)."""
    if isinstance(item, ArrayMeta):
        return not (item.weak or item.scalar) and item.dtype.kind == "b" and item.ndim >= 1
    return isinstance(item, (np.ndarray, list)) and np.asarray(item).dtype.kind == "b" and np.ndim(item) >= 1


def check_masks(a: ArrayMeta, index: tuple) -> None:
    """NumPy's IndexError where a boolean mask of the index does not have the shape of the dims of
    `a` it covers (those after the dims the items before it use; after an Ellipsis, counted from
    the end)."""
    widths = [np.ndim(item) if is_mask(item) else 0 if item is None or item is Ellipsis else 1 for item in index]
    for position, item in enumerate(index):
        if not is_mask(item):
            continue
        first = sum(widths[:position])
        if Ellipsis in index[:position]:
            first = a.ndim - sum(widths[position:])
        shape = item.shape if isinstance(item, ArrayMeta) else np.shape(item)
        if first < 0 or first + len(shape) > a.ndim:
            raise IndexError(f"too many indices for array: array is {a.ndim}-dimensional, but {sum(widths)} were indexed")
        for axis, m in enumerate(shape, start=first):
            if m != a.shape[axis]:
                raise IndexError(f"boolean index did not match indexed array along axis {axis}; size of axis is "
                                 f"{a.shape[axis]} but size of corresponding boolean axis is {m}")


def _check_bounds(item, size, axis: int) -> None:
    """A constant index array is checked now, with NumPy's message; an array input when it runs."""
    if isinstance(item, (list, np.ndarray)) and np.size(item) and not isinstance(size, SymInt):
        values = np.asarray(item)
        bad = values[(values < -size) | (values >= size)]
        if bad.size:
            raise IndexError(f"index {bad.flat[0]} is out of bounds for axis {axis} with size {size}")


def advanced_layout(a: ArrayMeta, index: tuple) -> tuple[list, tuple, int, list]:
    """a[index] for an index with integer arrays, by NumPy's rules: the advanced items broadcast
    together, and their joint shape stands where the first of them does when they are adjacent in
    the index, else first. Returns the result dims of the other items (see _walk), the joint
    shape, the result dim it starts at, and what walks each dim of a (_walk's axes)."""
    kinds = ["array" if _is_index_array(item) else _kind(item) for item in index]
    shape, advanced, places, axes = _walk(a, index, kinds, ints_advanced=True)
    try:
        joint = broadcast_shapes(*advanced)
    except ValueError:
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together with shapes "
                         + " ".join(str(tuple(s)) for s in advanced)) from None
    positions = [p for p, _ in places]
    adjacent = positions == list(range(positions[0], positions[0] + len(positions)))
    return shape, joint, places[0][1] if adjacent else 0, axes


def _advanced_shape(a: ArrayMeta, index: tuple) -> tuple:
    shape, joint, at, _ = advanced_layout(a, index)
    return tuple(shape[:at]) + joint + tuple(shape[at:])


def _index_meta(a, index):
    a = as_meta(a)
    if a.scalar:
        raise IndexError("invalid index to scalar variable.")
    shape = _advanced_shape(a, index)
    return ArrayMeta(shape, a.dtype, scalar=not shape and Ellipsis not in index)


register("index", INDEXING, impl=operator.getitem, meta=_index_meta, signature=_index_sig,
         convert={"index": params.index}, doc="a[index] with integer arrays among the items: a new array")


# a[start:stop:step] where a bound is an integer computed in the graph: the positions the slice
# picks along a dim of `size`, as an index array (the tracer indexes with it, and keeps the result
# a view). Python's slice rules; their number is a size only the data knows.
def _slice_positions_sig(size, start, stop, step): ...


def _slice_positions(size, start, stop, step):
    return np.arange(*slice(start, stop, step).indices(size))


def _slice_positions_meta(size, start, stop, step):
    for bound in (start, stop, step):
        if not (bound is None or _is_int(bound) or isinstance(bound, SymInt)
                or isinstance(bound, ArrayMeta) and bound.ndim == 0 and bound.dtype.kind in "iu"):
            raise TypeError("slice indices must be integers or None or have an __index__ method")
    if step == 0:
        raise ValueError("slice step cannot be zero")
    return ArrayMeta((unbacked("the length of a slice whose bounds are computed in the graph"),), np.dtype(np.intp))


register("slice_positions", INDEXING, impl=_slice_positions, meta=_slice_positions_meta, signature=_slice_positions_sig,
         doc="the positions a[start:stop:step] picks along a dim, for bounds computed in the graph")


# The functional form of `a[index] = value`, which the tracer uses to capture in-place updates:
# no NumPy spelling maps to it.
def _setitem_sig(a, index, value): ...


def _setitem(a, index, value):
    out = a.copy(order="K")  # the updated array keeps its layout, as an update in place does
    out[index] = value  # NumPy's assignment casting (unsafe) and broadcasting
    return out


def _setitem_meta(a, index, value):
    a = as_meta(a)
    if a.scalar:
        raise TypeError(f"'numpy.{a.dtype.type.__name__}' object does not support item assignment")
    if _masks(index):
        return _mask_setitem_meta(a, index, value)
    target = _index_meta(a, index) if is_advanced(index) else _getitem_meta(a, index)
    if isinstance(value, ArrayMeta):
        if broadcast_shapes(value.shape, target.shape) != target.shape:
            raise ValueError(f"could not broadcast input array from shape {value.shape} into shape {target.shape}")
    else:
        _check_fits(a, value)
    return ArrayMeta(a.shape, a.dtype)


def _check_fits(a: ArrayMeta, value) -> None:
    """A constant must fit the dtype, as NumPy checks when assigning (int8 <- 300 overflows); a
    size or a loop's index (an int64 whatever its value) fits int64, float and complex arrays."""
    if not (isinstance(value, SymInt) and (a.dtype == np.int64 or a.dtype.kind in "fc")):
        np.empty((), a.dtype)[()] = value


def _masks(index: tuple) -> list:
    return [item for item in index if isinstance(item, ArrayMeta) and not item.weak and item.dtype.kind == "b"]


def _mask_setitem_meta(a: ArrayMeta, index: tuple, value):
    """a[mask] = value, one mask over a's leading dims: the value must fit any number of
    selected elements, so it is a scalar (or 0-d); anything else needs the count first."""
    (mask,) = _masks(index) if len(index) == 1 else (None,)
    if mask is None:
        raise NotImplementedError("a boolean mask combined with other index items")
    if mask.ndim > a.ndim:
        raise IndexError(f"too many indices for array: array is {a.ndim}-dimensional, but {mask.ndim} were indexed")
    for axis, (m, n) in enumerate(zip(mask.shape, a.shape)):
        if m != n:
            raise IndexError(f"boolean index did not match indexed array along axis {axis}; size of axis is "
                             f"{n} but size of corresponding boolean axis is {m}")
    if isinstance(value, ArrayMeta) and value.ndim:
        raise NotImplementedError("a[mask] = array: how many elements the mask selects is known only from the data")
    if not isinstance(value, ArrayMeta):
        _check_fits(a, value)
    return ArrayMeta(a.shape, a.dtype)


register("setitem", INDEXING, impl=_setitem, meta=_setitem_meta, signature=_setitem_sig,
         convert={"index": params.index}, doc="a copy of a with a[index] = value")


# ufunc.at (np.add.at(a, indices, b)): unbuffered, every repeated index applies again, and `a` is
# updated in place; the op's result is a's new value (the tracer writes it back into a).
def _ufunc_at_sig(ufunc, a, indices, b=None, /): ...


def _ufunc_name(ufunc) -> str:
    """A NumPy ufunc with a registry row, by name (np.add.at reaches the row as np.ufunc.at(np.add, ...))."""
    op = lookup_callable(ufunc) if isinstance(ufunc, np.ufunc) else None
    if op is None or ufunc.nout != 1 or op.impl is not ufunc:
        raise TypeError(f"at of {ufunc!r} is not captured (only NumPy's ufuncs with one output)")
    return ufunc.__name__


def _ufunc_at_meta(ufunc, a, indices, b=None):
    a = as_meta(a)
    if a.scalar:
        raise TypeError("first operand of ufunc.at must be an array")
    if (b is None) != (getattr(np, ufunc).nin == 1):
        raise ValueError(f"{ufunc}.at takes {'no' if b is not None else 'a'} second operand here")
    return ArrayMeta(a.shape, a.dtype)


def _ufunc_at(ufunc, a, indices, b=None):
    out = np.array(a, copy=True, order="K")
    getattr(np, ufunc).at(out, indices, *(() if b is None else (b,)))
    return out


register("ufunc_at", INDEXING, impl=_ufunc_at, meta=_ufunc_at_meta, signature=_ufunc_at_sig, numpy=(np.ufunc.at,),
         convert={"ufunc": _ufunc_name, "indices": params.index}, updates="a",
         doc="np.add.at(a, indices, b), np.negative.at(a, indices), ...: a updated in place")


# np.fill_diagonal(a, val, wrap=False): NumPy's `a.flat[:end:step] = val`, the value repeated as
# often as needed along the diagonal; `a` is updated in place, the op's result is its new value.
def _fill_diagonal_sig(a, val, wrap=False): ...


def diagonal_positions(shape: tuple, wrap: bool) -> range:
    """The flat (C-order) positions np.fill_diagonal writes in an array of `shape`: those of
    (i, i, ...), and in a tall matrix with wrap=True again after each blank row."""
    size = math.prod(shape)
    if len(shape) == 2:
        return range(0, size if wrap else min(size, shape[1] * shape[1]), shape[1] + 1)
    return range(0, size, 1 + sum(math.prod(shape[:k]) for k in range(1, len(shape))))


def _fill_diagonal(a, val, wrap=False):
    out = a.copy(order="K")
    if np.size(val) and out.size:   # NumPy writes nothing then; CuPy's reads past an empty value (on a GPU:
        np.fill_diagonal(out, val, wrap)   # an illegal address, and the device unusable after it)
    return out


def _fill_diagonal_meta(a, val, wrap=False):
    a = as_meta(a)
    if a.ndim < 2:
        raise ValueError("array must be at least 2-d")
    if a.ndim > 2 and any(d != a.shape[0] for d in a.shape):
        raise ValueError("All dimensions of input must be of equal length")
    probe_call(np.fill_diagonal, probe(a), val)  # NumPy's refusal of a value that does not fit a's dtype
    return ArrayMeta(a.shape, a.dtype)


register("fill_diagonal", INDEXING, impl=_fill_diagonal, meta=_fill_diagonal_meta, signature=_fill_diagonal_sig,
         numpy=(np.fill_diagonal,), convert={"wrap": bool}, updates="a",
         doc="np.fill_diagonal(a, val, wrap=False): a updated in place")
