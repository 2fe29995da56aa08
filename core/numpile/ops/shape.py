"""Views and rearrangements: reshape, transpose, swapaxes, moveaxis, expand_dims, squeeze,
broadcast_to, flip (views of their input), and copy, ravel, concatenate, stack, hstack, vstack,
column_stack, dstack, roll, meshgrid (new arrays); diff, the differences of neighbours along an axis, which NumPy computes from a
concatenate and slices.

A view op applied to a NumPy scalar calls the scalar's method, which hands back a scalar
again for a 0-d result; on an ndarray the result is always an ndarray.
"""

from __future__ import annotations

import math

import numpy as np

from . import params
from ..slicing import slice_length
from .meta import as_meta, broadcast_shapes, normalize_axis_index, normalize_axis_tuple, probe, probe_call
from .registry import SHAPE, VIEW, ArrayMeta, register


def _view(a: ArrayMeta, shape: tuple) -> ArrayMeta:
    return ArrayMeta(tuple(shape), a.dtype, scalar=a.scalar and not shape)


def _as_tuple(axes) -> tuple:
    return axes if isinstance(axes, tuple) else (axes,)


def _varargs(name: str):
    """Method adapter of x.reshape(3, 4) and x.transpose(1, 0): the varargs are the one
    argument that np.reshape and np.transpose take (x.reshape((3, 4)) passes it as is)."""
    def adapter(a, *values, **kwargs):
        if kwargs:
            raise TypeError(f"ndarray.{name}() takes no keyword arguments here: {sorted(kwargs)}")
        if not values:
            return (a,), {}
        return (a, values[0] if len(values) == 1 else values), {}
    return adapter


# -- reshape -------------------------------------------------------------------------------

def _reshape_sig(a, /, shape): ...


def _reshape_meta(a, shape):
    a = as_meta(a)
    unknown = [i for i, d in enumerate(shape) if d < 0]
    known = math.prod(d for d in shape if d >= 0)
    if len(unknown) > 1:
        raise ValueError("can only specify one unknown dimension")
    if unknown and known and a.size % known == 0:
        shape = shape[:unknown[0]] + (a.size // known,) + shape[unknown[0] + 1:]
    elif unknown or known != a.size:
        raise ValueError(f"cannot reshape array of size {a.size} into shape {shape}")
    return _view(a, shape)


register("reshape", VIEW, impl=np.reshape, meta=_reshape_meta, signature=_reshape_sig,
         numpy=(np.reshape,), methods={"reshape": _varargs("reshape")},
         convert={"shape": params.shape}, doc="np.reshape, x.reshape(3, 4), x.reshape((3, 4))")


# -- transpose, swapaxes, moveaxis ---------------------------------------------------------

def _transpose_sig(a, axes=None): ...


def _transpose_meta(a, axes=None):
    a = as_meta(a)
    if axes is None:
        perm = tuple(reversed(range(a.ndim)))
    else:
        axes = _as_tuple(axes)
        if len(axes) != a.ndim:
            raise ValueError("axes don't match array")
        perm = normalize_axis_tuple(axes, a.ndim)
    return _view(a, tuple(a.shape[i] for i in perm))


register("transpose", VIEW, impl=np.transpose, meta=_transpose_meta, signature=_transpose_sig,
         numpy=(np.transpose,), methods={"transpose": _varargs("transpose")}, properties=("T",),
         convert={"axes": params.axes}, doc="np.transpose, x.transpose(1, 0), x.T")


def _swapaxes_sig(a, axis1, axis2): ...


def _swapaxes_meta(a, axis1, axis2):
    a = as_meta(a)
    i, j = normalize_axis_index(axis1, a.ndim, "axis1"), normalize_axis_index(axis2, a.ndim, "axis2")
    shape = list(a.shape)
    shape[i], shape[j] = shape[j], shape[i]
    return _view(a, shape)


register("swapaxes", VIEW, impl=np.swapaxes, meta=_swapaxes_meta, signature=_swapaxes_sig,
         numpy=(np.swapaxes,), methods={"swapaxes": None},
         convert={"axis1": params.integer, "axis2": params.integer}, doc="np.swapaxes")


def _moveaxis_sig(a, source, destination): ...


def _moveaxis_meta(a, source, destination):
    a = as_meta(a)
    source = normalize_axis_tuple(source, a.ndim, "source")
    destination = normalize_axis_tuple(destination, a.ndim, "destination")
    if len(source) != len(destination):
        raise ValueError("`source` and `destination` arguments must have the same number of elements")
    order = [i for i in range(a.ndim) if i not in source]
    for dest, src in sorted(zip(destination, source)):
        order.insert(dest, src)
    return _view(a, tuple(a.shape[i] for i in order))


register("moveaxis", VIEW, impl=np.moveaxis, meta=_moveaxis_meta, signature=_moveaxis_sig,
         numpy=(np.moveaxis,), convert={"source": params.axes, "destination": params.axes},
         doc="np.moveaxis")


# -- expand_dims, squeeze, broadcast_to, flip ----------------------------------------------

def _expand_dims_sig(a, axis): ...


def _expand_dims_meta(a, axis):
    a = as_meta(a)
    ndim = a.ndim + len(_as_tuple(axis))
    axes = normalize_axis_tuple(axis, ndim)
    dims = iter(a.shape)
    return ArrayMeta(tuple(1 if i in axes else next(dims) for i in range(ndim)), a.dtype)


register("expand_dims", VIEW, impl=np.expand_dims, meta=_expand_dims_meta, signature=_expand_dims_sig,
         numpy=(np.expand_dims,), convert={"axis": params.axes}, doc="np.expand_dims")


def _squeeze_sig(a, axis=None): ...


def _squeeze_meta(a, axis=None):
    a = as_meta(a)
    if axis is None:
        axes = tuple(i for i, d in enumerate(a.shape) if d == 1)
    elif a.ndim == 0 and isinstance(axis, int) and axis in (0, -1):
        axes = ()  # NumPy takes an int axis 0 or -1 of a 0-d array (not in a tuple) as no axis
    else:
        axes = normalize_axis_tuple(axis, a.ndim)
        if any(a.shape[i] != 1 for i in axes):
            raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
    return _view(a, tuple(d for i, d in enumerate(a.shape) if i not in axes))


register("squeeze", VIEW, impl=np.squeeze, meta=_squeeze_meta, signature=_squeeze_sig,
         numpy=(np.squeeze,), methods={"squeeze": None}, convert={"axis": params.axis},
         doc="np.squeeze")


def _broadcast_to_sig(array, shape): ...


def _broadcast_to_meta(array, shape):
    a = as_meta(array)
    if any(d < 0 for d in shape):
        raise ValueError("all elements of broadcast shape must be non-negative")
    if len(shape) < a.ndim or broadcast_shapes(a.shape, shape) != shape:
        raise ValueError(f"operands could not be broadcast together with remapped shapes "
                         f"[original->remapped]: {a.shape} and requested shape {shape}")
    return ArrayMeta(shape, a.dtype)


register("broadcast_to", VIEW, impl=np.broadcast_to, meta=_broadcast_to_meta,
         signature=_broadcast_to_sig, numpy=(np.broadcast_to,), convert={"shape": params.shape},
         doc="np.broadcast_to")


def _flip_sig(m, axis=None): ...


def _flip_meta(m, axis=None):
    m = as_meta(m)
    if axis is not None:
        normalize_axis_tuple(axis, m.ndim)
    return ArrayMeta(m.shape, m.dtype, scalar=not m.shape)  # NumPy indexes a 0-d m with (): a scalar


register("flip", VIEW, impl=np.flip, meta=_flip_meta, signature=_flip_sig, numpy=(np.flip,),
         convert={"axis": params.axes}, doc="np.flip")


# -- copy, ravel, concatenate, stack -------------------------------------------------------

def _copy_sig(a, order="K"): ...


def _copy_meta(a, order="K"):
    a = as_meta(a)
    probe_call(np.copy, a, order)  # NumPy's refusal of an unknown order
    return ArrayMeta(a.shape, a.dtype)  # an ndarray, of a NumPy scalar too


def _copy_method(a, order="C"):
    """x.copy(): C order by default; of a NumPy scalar it is that scalar, which np.copy is not."""
    meta = getattr(a, "array_meta", a)  # a graph Node, a meta or a real value
    if isinstance(meta, np.generic) or isinstance(meta, ArrayMeta) and meta.scalar:
        raise TypeError("copy() of a NumPy scalar is not captured")
    return (a, order), {}


# Memory order decides strides only: every order gives the same values in a functional graph.
register("copy", SHAPE, impl=np.copy, meta=_copy_meta, signature=_copy_sig, numpy=(np.copy,),
         methods={"copy": _copy_method}, doc="np.copy, x.copy()")


def _ravel_sig(a): ...


def _ravel_meta(a):
    a = as_meta(a)
    return ArrayMeta((a.size,), a.dtype)


# x.flatten() is x.ravel() in a functional graph: both are a new 1-D array of the same values.
register("ravel", SHAPE, impl=np.ravel, meta=_ravel_meta, signature=_ravel_sig,
         numpy=(np.ravel,), methods={"ravel": None, "flatten": None}, doc="np.ravel, x.ravel(), x.flatten()")


def _operands(arrays) -> list[ArrayMeta]:
    if not isinstance(arrays, tuple):
        raise NotImplementedError("an array as the sequence of arrays (its rows) is not supported; "
                                  "pass a tuple or list of arrays")
    return [as_meta(x) for x in arrays]


def _concatenate_sig(arrays, /, axis=0): ...


def _concatenate_meta(arrays, axis=0):
    metas = _operands(arrays)
    # the probe raises NumPy's errors for an empty sequence, 0-d arrays, unequal ndims, the axis
    dtype = probe_call(np.concatenate, [probe(m) for m in metas], axis=axis).dtype
    if axis is None:
        return ArrayMeta((sum(m.size for m in metas),), dtype)
    first = metas[0].shape
    axis = normalize_axis_index(axis, len(first))
    for index, m in enumerate(metas):
        for dim, (d, e) in enumerate(zip(first, m.shape)):
            if dim != axis and d != e:
                raise ValueError(f"all the input array dimensions except for the concatenation axis must "
                                 f"match exactly, but along dimension {dim}, the array at index 0 has size "
                                 f"{d} and the array at index {index} has size {e}")
    return ArrayMeta(first[:axis] + (sum(m.shape[axis] for m in metas),) + first[axis + 1:], dtype)


register("concatenate", SHAPE, impl=np.concatenate, meta=_concatenate_meta, signature=_concatenate_sig,
         numpy=(np.concatenate,), convert={"arrays": params.sequence, "axis": params.axis_index},
         doc="np.concatenate")


def _stack_sig(arrays, axis=0): ...


def _stack_meta(arrays, axis=0):
    metas = _operands(arrays)
    dtype = probe_call(np.stack, [probe(m) for m in metas], axis=axis).dtype  # raises for an empty sequence
    shape = metas[0].shape
    if any(m.shape != shape for m in metas):
        raise ValueError("all input arrays must have the same shape")
    axis = normalize_axis_index(axis, len(shape) + 1)
    return ArrayMeta(shape[:axis] + (len(metas),) + shape[axis:], dtype)


register("stack", SHAPE, impl=np.stack, meta=_stack_meta, signature=_stack_sig,
         numpy=(np.stack,), convert={"arrays": params.sequence, "axis": params.integer}, doc="np.stack")


# NumPy's hstack, vstack, column_stack and dstack: each operand given at least the dims the function
# gives it (a function of its shape), then concatenated along an axis (a function of the first's ndim)
STACKS = {
    np.hstack: (lambda s: s or (1,), lambda ndim: 0 if ndim == 1 else 1),
    np.vstack: (lambda s: (1,) * (2 - len(s)) + s, lambda ndim: 0),
    np.column_stack: (lambda s: s if len(s) > 1 else (s or (1,)) + (1,), lambda ndim: 1),
    np.dstack: (lambda s: {0: (1, 1, 1), 1: (1, *s, 1), 2: (*s, 1)}.get(len(s), s), lambda ndim: 2),   # atleast_3d
}


def stack_layout(fn, shapes: list) -> tuple[list, int]:
    """The shapes np.hstack (vstack, column_stack, dstack) gives its operands and the axis it
    concatenates them along."""
    given, axis = STACKS[fn]
    shapes = [given(tuple(s)) for s in shapes]
    return shapes, axis(len(shapes[0]))


def _stacks_sig(tup): ...


def _stacks_meta(fn):
    def meta(tup):
        metas = _operands(tup)
        probe_call(fn, [probe(m) for m in metas])   # NumPy's refusal of an empty sequence
        shapes, axis = stack_layout(fn, [m.shape for m in metas])
        return _concatenate_meta(tuple(ArrayMeta(s, m.dtype) for s, m in zip(shapes, metas)), axis)
    return meta


for _fn in STACKS:
    register(_fn.__name__, SHAPE, impl=_fn, meta=_stacks_meta(_fn), signature=_stacks_sig, numpy=(_fn,),
             convert={"tup": params.sequence}, doc=f"np.{_fn.__name__}: a concatenate of its operands given dims")


# -- diff ----------------------------------------------------------------------------------

def _diff_sig(a, n=1, axis=-1, prepend=None, append=None): ...


def _diff_call(a, n=1, axis=-1, prepend=np._NoValue, append=np._NoValue):
    """An end not given is None in the canonical layout; an explicit None (which NumPy makes an
    object array) is refused."""
    if prepend is None or append is None:
        raise TypeError("diff() with prepend=None or append=None (an object array) is not captured")
    return (a, n, axis, *(None if end is np._NoValue else end for end in (prepend, append))), {}


def _diff(a, n=1, axis=-1, prepend=None, append=None):
    """np.diff, the ends that are None not given."""
    ends = {name: end for name, end in (("prepend", prepend), ("append", append)) if end is not None}
    return np.diff(a, n, axis, **ends)


def diff_end(end, shape: tuple, axis: int) -> ArrayMeta:
    """A prepend= or append= value as NumPy concatenates it to an array of `shape`: a 0-d one
    broadcast to `shape` with 1 along the axis."""
    end = as_meta(end)
    return ArrayMeta(shape[:axis] + (1,) + shape[axis + 1:] if end.ndim == 0 else end.shape, end.dtype)


def _diff_meta(a, n=1, axis=-1, prepend=None, append=None):
    # NumPy's dtype (not_equal of booleans, subtract else, after promoting with the ends) and its
    # refusals: a negative n, a 0-d a, a bad axis
    dtype = probe_call(_diff, a, n, axis, prepend, append).dtype
    if n == 0:
        raise NotImplementedError("n=0 (NumPy returns a itself: updates through the result reach a) is not supported")
    a = as_meta(a)
    axis = normalize_axis_index(axis, a.ndim)
    before, after = ([diff_end(end, a.shape, axis)] if end is not None else [] for end in (prepend, append))
    pieces = before + [a] + after
    length = _concatenate_meta(tuple(pieces), axis).shape[axis]  # concatenate's errors for ends that do not fit
    for _ in range(n):
        length = slice_length(slice(1, None), length)  # as the decomposition's slices have it
    return ArrayMeta(a.shape[:axis] + (length,) + a.shape[axis + 1:], dtype)


register("diff", SHAPE, impl=_diff, meta=_diff_meta, signature=_diff_sig, numpy=(np.diff,), adapter=_diff_call,
         convert={"n": params.integer, "axis": params.integer}, doc="np.diff")


# -- roll ----------------------------------------------------------------------------------

def _roll_sig(a, shift, axis=None): ...


def roll_offsets(shape: tuple, shift, axis) -> dict:
    """{axis: how far np.roll moves the elements along it, in [1, size)}, for the axes it moves:
    the shifts of a repeated axis add up, and a shift is taken modulo the size (an empty dim moves
    nothing). axis None: the axis of the flattened array."""
    if axis is None:
        shape, axis = (math.prod(shape),), 0
    offsets: dict = {}
    for s, ax in np.broadcast(shift, axis):
        ax = normalize_axis_index(int(ax), len(shape))
        offsets[ax] = offsets.get(ax, 0) + int(s)
    return {ax: s % shape[ax] for ax, s in offsets.items() if shape[ax] and s % shape[ax]}


def _roll_meta(a, shift, axis=None):
    a = as_meta(a)
    # NumPy's refusals: a bad axis, shift and axis that do not broadcast or are not 1-D
    probe_call(np.roll, a, shift, axis)
    return ArrayMeta(a.shape, a.dtype)  # a new ndarray, of a NumPy scalar too


register("roll", SHAPE, impl=np.roll, meta=_roll_meta, signature=_roll_sig, numpy=(np.roll,),
         convert={"shift": params.axes, "axis": params.axes}, doc="np.roll")


# -- meshgrid ------------------------------------------------------------------------------

def _meshgrid_sig(*xi, copy=True, sparse=False, indexing="xy"): ...


def meshgrid_axis(i: int, ndim: int, indexing: str) -> int:
    """The axis along which input i varies: its own, but 'xy' swaps the first two (x varies
    along the columns, as in plotting)."""
    return {0: 1, 1: 0}.get(i, i) if indexing == "xy" and ndim > 1 else i


def _meshgrid_meta(*xi, copy=True, sparse=False, indexing="xy"):
    """One array per input, each input flattened along its own axis: broadcast to the grid of
    all their sizes (each stays 1 elsewhere if sparse), in the input's dtype."""
    probes = probe_call(np.meshgrid, *xi, copy=copy, sparse=sparse, indexing=indexing)  # dtypes; bad indexing=
    if not copy:
        raise NotImplementedError("copy=False (views of the inputs, written through to them) is not supported")
    ndim = len(xi)
    sizes = [as_meta(x).size for x in xi]
    grid = [0] * ndim
    for i, size in enumerate(sizes):
        grid[meshgrid_axis(i, ndim, indexing)] = size
    results = []
    for i, p in enumerate(probes):
        axis = meshgrid_axis(i, ndim, indexing)
        shape = tuple(n if k == axis else 1 for k, n in enumerate(grid)) if sparse else tuple(grid)
        results.append(ArrayMeta(shape, p.dtype))
    return tuple(results)


register("meshgrid", SHAPE, impl=np.meshgrid, meta=_meshgrid_meta, signature=_meshgrid_sig, numpy=(np.meshgrid,),
         doc="np.meshgrid: an array per input")
