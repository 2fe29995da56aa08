"""The Dask graph of one call: each step of the partition as Dask operations on the call's arrays.

  blockwise  `da.blockwise(kernel, ...)` over the step's inputs, aligned from the right as NumPy
             broadcasts (Dask unifies differently chunked inputs, as dask.array's own elemwise
             does); a row reduction's axes are rechunked into one chunk first where they are
             not already (said under `perf`) and passed whole to the kernel (a contracted index),
             the results split back into the chunks dask.array's elementwise ops would give
  tree       the chunk kernel (fused producers, then the reduction keeping its axes) as a
             blockwise, then `da.reduction`'s tree with compiled combine and aggregate kernels
             (16 partials to a task where each is small, Dask's 4 otherwise)
  numpy      the op's NumPy function called on Dask arrays: dask.array's implementation

Nothing is computed: the call returns lazy Dask arrays, as dask.array does.
"""

from __future__ import annotations

import math

import dask
import dask.array as da
from dask.array.core import common_blockdim
from dask.array.utils import meta_from_array
import numpy as np

from numpile import logs, ops
from numpile.graph import Graph, Node, map_nodes

from . import data_sizes
from .kernels import InputSpec, Ref, Template, make_kernel
from .partition import Step, axes_of


# partials of at most SMALL_PARTIAL bytes (a full reduction's scalars, a column sum's rows) are
# combined SMALL_FAN_IN to a task: adding them costs nothing against a task's own cost in Dask
# (16 chunks of x.sum(): one combining task, not 4 and then 1)
SMALL_PARTIAL = 64 << 10
SMALL_FAN_IN = 16


def _identity(x, axis=None, keepdims=None):
    """The chunk step of a tree whose chunks were reduced by a fused kernel already."""
    return x


class Program:
    """A graph's steps with their kernels; called with the graph's inputs, it returns the
    outputs as Dask arrays (Python scalars for weak outputs)."""

    def __init__(self, graph: Graph, steps: list[Step], inner: str, inner_options: dict, split_every=None):
        data_sizes.check(steps)
        self.graph, self.steps, self.split_every = graph, steps, split_every
        for s in steps:
            if s.kind == "blockwise":
                s.kernel = make_kernel(Template.of(s.inputs, s.nodes, s.outputs), inner, inner_options, "fused")
            elif s.kind == "tree":
                r = s.outputs[0]
                chunk = Template.of(s.inputs, s.nodes, s.outputs)
                last = chunk.rows[-1]
                chunk = Template(chunk.inputs, (*chunk.rows[:-1], (last[0], last[1], {**last[2], "keepdims": True})),
                                 chunk.returns)
                s.kernel = make_kernel(chunk, inner, inner_options, f"{r.target}-chunk")
                s.combine = make_kernel(_reduce_template(r, True), inner, inner_options, f"{r.target}-combine")
                s.aggregate = make_kernel(_reduce_template(r, r.kwargs.get("keepdims", False)), inner, inner_options,
                                          f"{r.target}-aggregate")
        self._said: set = set()

    def __call__(self, *inputs):
        g = self.graph
        env: dict[Node, object] = dict(zip(g.inputs, inputs))
        env.update((n, n.args[0]) for n in g.nodes if n.op == "constant")
        sizes = g.symbol_values(inputs)
        for s in self.steps:
            RUN[s.kind](self, s, env, sizes)
        return tuple(map_nodes(g.outputs, lambda n: _lazy(env[n], n)))

    # -- steps ------------------------------------------------------------------------------
    def _numpy(self, s: Step, env: dict, sizes: list) -> None:
        n = s.outputs[0]
        impl = AS_NUMPY_DOES.get(n.target, ops.get(n.target).impl)
        args = (n.args[0], data_sizes.with_masks(n.args[1])) if n.target == "index" else n.args
        value = lambda sym: data_sizes.size_value(self.graph, sym, sizes, env, n)  # noqa: E731
        with np.errstate(**n.meta.get("errstate") or {}):
            result = impl(*map_nodes(args, env.__getitem__, value), **map_nodes(n.kwargs, env.__getitem__, value))
        env[n] = n.array_meta.python_type(result) if n.meta.get("weak") else _as_numpy_gives(result, n)

    def _blockwise(self, s: Step, env: dict, sizes: list) -> None:
        shape = s.outputs[0].shape
        args, new_axes = self._aligned(s, env, shape)
        several = len(s.outputs) > 1
        dtype = object if several else s.outputs[0].dtype
        out = da.blockwise(s.kernel, tuple(range(len(shape))), *args, dtype=dtype, new_axes=new_axes,
                           concatenate=True, meta=_meta(args, len(shape), dtype))
        outs = [out] if not several else [   # one more task per chunk and output: a tuple's item
            out.map_blocks(_item, i, dtype=o.dtype, meta=_meta(args, len(shape), o.dtype))
            for i, o in enumerate(s.outputs)]
        if s.row_axes:   # rows gathered into one chunk: the results in the chunks dask.array's would have
            want = self._chunks_as_dask_gives(s, env, shape)
            outs = [o if o.chunks == want else o.rechunk(want) for o in outs]
        env.update(zip(s.outputs, outs))

    def _tree(self, s: Step, env: dict, sizes: list) -> None:
        r = s.outputs[0]
        axes = axes_of(r)
        shape = r.args[0].shape
        args, new_axes = self._aligned(s, env, shape)
        ndim = len(shape)
        partial = da.blockwise(s.kernel, tuple(range(ndim)), *args, dtype=r.dtype, new_axes=new_axes,
                               adjust_chunks={a: 1 for a in axes}, concatenate=True, meta=_meta(args, ndim, r.dtype))
        keepdims = r.kwargs.get("keepdims", False)
        env[r] = da.reduction(partial, _identity, s.aggregate, axis=axes, keepdims=keepdims, dtype=r.dtype,
                              split_every=self._fan_in(partial, axes), combine=s.combine, concatenate=True,
                              meta=_meta(args, len(r.shape), r.dtype))

    def _fan_in(self, partial, axes: tuple):
        """split_every: the option's or Dask's setting where given, else Dask's 4 partials per
        task, SMALL_FAN_IN where each partial is small. An int is spread over the reduced axes
        that have several blocks only (Dask spreads it over all of them: a sum of a 2-d array
        chunked by rows would be a binary tree, twice as deep as 4 partials per task)."""
        split = self.split_every or dask.config.get("split_every", None)
        if split is None:
            block = math.prod(max(c) for a, c in enumerate(partial.chunks) if a not in axes) * partial.dtype.itemsize
            split = SMALL_FAN_IN if block <= SMALL_PARTIAL else 4
        if isinstance(split, dict):
            return split
        many = [a for a in axes if partial.numblocks[a] > 1]
        each = max(int(split ** (1 / max(len(many), 1))), 2)
        return {a: each if a in many else 1 for a in axes}

    # -- inputs -----------------------------------------------------------------------------
    def _aligned(self, s: Step, env: dict, shape: tuple) -> tuple[list, dict]:
        """blockwise's (array, index) pairs for a step's inputs, aligned from the right with its
        `shape`; a row axis an input spans while the step's result has size 1 there is a
        contracted index (the kernel gets it whole). And the new axes: result axes no input has."""
        ndim = len(shape)
        args, seen = [], set()
        for a in s.inputs:
            v = env[a]
            if isinstance(v, np.ndarray) and v.ndim:
                v = da.from_array(v, chunks=-1)
            if not isinstance(v, da.Array):   # scalars and 0-d arrays: the same for every task
                args += [v, None]
                continue
            v = self._rows(v, ndim, s.row_axes, a)
            index = []
            for j, d in enumerate(v.shape):
                i = ndim - v.ndim + j
                contracted = i in s.row_axes and d != 1 and isinstance(shape[i], int) and shape[i] == 1
                index.append(ndim + i if contracted else i)
            seen |= set(index)
            args += [v, tuple(index)]
        new_axes = {i: 1 for i in range(ndim) if i not in seen}
        return args, new_axes

    def _chunks_as_dask_gives(self, s: Step, env: dict, shape: tuple) -> tuple:
        """The chunks of a step's results as dask.array's elementwise ops give them: along each
        axis its inputs' chunks there, unified (an input of size 1 there broadcasts)."""
        along = [set() for _ in shape]
        for a in s.inputs:
            v = env[a]
            if isinstance(v, da.Array):
                for j, c in enumerate(v.chunks):
                    if v.shape[j] != 1:
                        along[len(shape) - v.ndim + j].add(c)
        return tuple(common_blockdim(c) if c and not (isinstance(d, int) and d == 1) else (1,)
                     for c, d in zip(along, shape))

    def _rows(self, v, ndim: int, row_axes: tuple, node: Node):
        """v with its axes that are row axes of the step in one chunk (a rechunk where they are
        not: said once per step under `perf`)."""
        axes = [ndim - v.ndim + j for j in range(v.ndim)]
        split = {j: -1 for j, i in enumerate(axes) if i in row_axes and len(v.chunks[j]) > 1}
        if not split:
            return v
        if (node, tuple(split)) not in self._said:
            self._said.add((node, tuple(split)))
            logs.get("perf").debug("numpile-dask: %s rechunked into one chunk along axis %s for a row reduction "
                                   "(%s chunks there; the results split back)", node.name, ", ".join(map(str, split)),
                                   ", ".join(str(len(v.chunks[j])) for j in split))
        limit = dask.utils.parse_bytes(dask.config.get("array.chunk-size"))
        block = np.prod([v.shape[j] if j in split else max(c) for j, c in enumerate(v.chunks)]) * v.dtype.itemsize
        if block > limit:   # rows whole; the other axes as Dask picks to stay under its chunk size
            split.update({j: "auto" for j in range(v.ndim) if j not in split})
        return v.rechunk(split)


RUN = {"numpy": Program._numpy, "blockwise": Program._blockwise, "tree": Program._tree}


def _flat_arg(fn):
    """np.argmax over all axes of an n-d Dask array: of its ravel, whose ties Dask breaks in
    NumPy's order (over the n-d blocks it takes the first block's, not the first element's)."""
    def call(a, axis=None, out=None, *, keepdims=False):   # out: None (meta rules refuse others)
        if axis is not None or isinstance(a, np.ndarray) or a.ndim < 2:
            return fn(a, axis=axis, keepdims=keepdims)
        found = fn(a.ravel())
        return found.reshape((1,) * a.ndim) if keepdims else found
    return call


def _histogram(a, bins=10, range=None, density=None, weights=None):
    """np.histogram, with NumPy's widening of an empty range (lo == hi) to lo - 0.5, hi + 0.5."""
    if range is not None and range[0] == range[1]:
        range = (range[0] - 0.5, range[1] + 0.5)
    return np.histogram(a, bins, range=range, density=density, weights=weights)


def _unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *, equal_nan=True):
    """np.unique with only the arguments the call gives: dask.array's takes neither `axis` nor
    `equal_nan` (NumPy's defaults are its behaviour; others raise dask's error, as they would
    uncompiled)."""
    given = {}
    if axis is not None:
        given["axis"] = axis
    if not equal_nan:
        given["equal_nan"] = equal_nan
    return np.unique(ar, return_index=return_index, return_inverse=return_inverse, return_counts=return_counts,
                     **given)


def _pad(array, pad_width, mode="constant", options=()):
    """np.pad; an odd reflection as NumPy's on the array in one chunk (dask.array's gives other
    values at inf and NaN)."""
    options = dict(options)
    if options.get("reflect_type") != "odd" or not isinstance(array, da.Array):
        return np.pad(array, pad_width, mode, **options)
    widths = np.broadcast_to(np.asarray(pad_width, dtype=object), (array.ndim, 2))
    return array.rechunk(-1).map_blocks(lambda block: np.pad(block, pad_width, mode, **options), dtype=array.dtype,
                                        chunks=tuple((n + before + after,) for n, (before, after) in zip(array.shape, widths)))


def _gradient(f, *varargs, axis=None, edge_order=1):
    """np.gradient: dask.array's gives a list (of one array for one axis), NumPy's a tuple or the array."""
    result = np.gradient(f, *varargs, axis=axis, edge_order=edge_order)
    if not isinstance(result, list):
        return result
    return result[0] if len(result) == 1 else tuple(result)


# ops whose dask.array implementation differs from NumPy's where NumPy's can be kept
AS_NUMPY_DOES = {"argmax": _flat_arg(np.argmax), "argmin": _flat_arg(np.argmin), "nanargmax": _flat_arg(np.nanargmax),
                 "nanargmin": _flat_arg(np.nanargmin), "histogram": _histogram, "unique": _unique, "pad": _pad, "gradient": _gradient}


def _as_numpy_gives(value, n: Node):
    """dask.array's result of an op as NumPy's: where Dask promotes otherwise (np.dot of int32
    gives int64 there), cast to NumPy's dtype; a shape other than NumPy's is an error, never
    a wrong value."""
    if n.results is not None:
        return tuple(_checked(v, m.shape, m.dtype, n.target) for v, m in zip(value, n.results))
    return _checked(value, n.shape, n.dtype, n.target)


def _checked(value, shape: tuple, dtype, target: str):
    if not isinstance(value, da.Array):   # NumPy's result (a histogram's edges): in NumPy's dtype
        return value.astype(dtype) if isinstance(value, np.ndarray) and value.dtype != dtype else value
    if len(value.shape) != len(shape) or any(isinstance(d, int) and d != v for d, v in zip(shape, value.shape)):
        raise NotImplementedError(f"numpile-dask: dask.array's {target} gives shape {value.shape} where NumPy gives "
                                  f"{tuple(shape)}: this call does not run on Dask arrays")
    return value if value.dtype == dtype else value.astype(dtype)


def _meta(args: list, ndim: int, dtype):
    """What Dask records of a result's chunks without computing one: an empty array of the
    inputs' chunk type (NumPy, or CuPy for GPU chunks), so that Dask never calls a kernel to find out."""
    like = next((a for a in args if isinstance(a, da.Array)), None)
    return meta_from_array(like._meta if like is not None else np.empty(0), ndim=ndim, dtype=dtype)


def _item(t, i):
    return t[i]


def _reduce_template(r: Node, keepdims: bool) -> Template:
    """The combine (keepdims) or aggregate step of a tree for reduction r: r over its partials
    (the operand's dims, its reduced ones as many as the partials gathered)."""
    axes = axes_of(r)
    partials = InputSpec(r.dtype, unknown=tuple(i for i in InputSpec.of(r.args[0]).unknown if i not in axes))
    args = (Ref(0), *r.args[1:])
    return Template((partials,), ((r.target, args, {**r.kwargs, "keepdims": keepdims}),), (1,))


def _lazy(value, n: Node):
    """An output as the call returns it: Dask arrays as they are, weak values as Python scalars,
    a value NumPy computed from constants alone as a Dask array (what dask.array returns)."""
    if n.meta.get("weak") or isinstance(value, da.Array):
        return value
    return da.asarray(value)
