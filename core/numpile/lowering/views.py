"""Views as index arithmetic: for each view op, the index into its base for an index into its
result. Indices are tuples of `Affine`, one per dimension."""

from __future__ import annotations

from ..ops.meta import normalize_axis_index
from ..shapes import identical, replaying
from ..slicing import slice_start
from .ir import Affine


def broadcast_index(shape: tuple, target: tuple, index: tuple) -> tuple:
    """The index into an operand of `shape` broadcast to `target`, for an index into `target`."""
    lead = len(target) - len(shape)
    with replaying():  # which dims are 1: the meta rule's broadcast_shapes asked the same
        return tuple(index[lead + k] if _walks(d, target[lead + k]) else Affine.constant(0)
                     for k, d in enumerate(shape))


def _walks(dim, target_dim) -> bool:
    """Whether an operand's dim walks along the target's (else it is a 1 broadcast to more). The
    same size walks and a 1 stays at 0, whatever the target's size: no decision asked (a size
    only the data knows allows none)."""
    if identical(dim, target_dim):
        return True
    if isinstance(dim, int):
        return dim != 1
    return not (dim == 1 and target_dim != 1)


def slice_index(item: slice, size, position):
    """The index into a dim of `size` for `position` (an Affine) along its slice `item`."""
    with replaying():  # the comparisons getitem's meta rule made for the slice's length
        start = slice_start(item, size)
    return position.scaled(1 if item.step is None else item.step).offset(start)


def _getitem(node, index: tuple) -> tuple:
    base_shape = node.args[0].shape
    items = node.args[1]
    n_named = sum(1 for it in items if it is not None and it is not Ellipsis)
    out = iter(index)
    base: list = []
    for it in items:
        if it is None:
            next(out)  # a new axis of size 1: nothing in the base
        elif it is Ellipsis:
            for _ in range(len(base_shape) - n_named):
                base.append(next(out))
        elif isinstance(it, slice):
            base.append(slice_index(it, base_shape[len(base)], next(out)))
        else:
            base.append(Affine.constant(it % base_shape[len(base)]))
    base.extend(out)  # dims no item named: an implicit trailing Ellipsis
    return tuple(base)


def _permuted(perm):
    """Result dim k is base dim perm[k]."""
    def view(node, index):
        base = [None] * len(index)
        for k, p in enumerate(perm(node)):
            base[p] = index[k]
        return tuple(base)
    return view


def _transpose_perm(node):
    axes = node.kwargs["axes"]
    ndim = len(node.args[0].shape)
    return tuple(reversed(range(ndim))) if axes is None else tuple(normalize_axis_index(a, ndim) for a in axes)


def _swapaxes_perm(node):
    ndim = len(node.args[0].shape)
    a, b = (normalize_axis_index(x, ndim) for x in node.args[1:3])
    perm = list(range(ndim))
    perm[a], perm[b] = b, a
    return tuple(perm)


def _moveaxis_perm(node):
    ndim = len(node.args[0].shape)
    source, destination = node.args[1], node.args[2]
    source = [normalize_axis_index(s, ndim) for s in (source if isinstance(source, tuple) else (source,))]
    destination = [normalize_axis_index(d, ndim) for d in (destination if isinstance(destination, tuple) else (destination,))]
    order = [i for i in range(ndim) if i not in source]
    for dest, src in sorted(zip(destination, source)):
        order.insert(dest, src)
    return tuple(order)


def _expand_dims(node, index):
    ndim = len(node.shape)
    axis = node.args[1]
    axes = {normalize_axis_index(a, ndim) for a in (axis if isinstance(axis, tuple) else (axis,))}
    return tuple(i for k, i in enumerate(index) if k not in axes)


def _squeeze(node, index):
    base_shape = node.args[0].shape
    axis = node.kwargs.get("axis")
    if axis is None:
        with replaying():  # the meta rule asked which dims are 1
            removed = {k for k, d in enumerate(base_shape) if d == 1}
    else:
        removed = {normalize_axis_index(a, len(base_shape)) for a in (axis if isinstance(axis, tuple) else (axis,))}
    out = iter(index)
    return tuple(Affine.constant(0) if k in removed else next(out) for k in range(len(base_shape)))


def _broadcast_to(node, index):
    return broadcast_index(node.args[0].shape, node.shape, index)


VIEW_INDEX = {
    "getitem": _getitem,
    "transpose": _permuted(_transpose_perm),
    "swapaxes": _permuted(_swapaxes_perm),
    "moveaxis": _permuted(_moveaxis_perm),
    "expand_dims": _expand_dims,
    "squeeze": _squeeze,
    "broadcast_to": _broadcast_to,
}
