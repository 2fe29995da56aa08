"""Sizes only the data knows (`x[mask]`, `np.nonzero`, `np.unique`, `np.bincount`) over Dask
arrays, whose chunks along such a dim are of unknown size (nan) until computed.

- A boolean mask read, `x[m]`, which the tracer spells `x[np.nonzero(m)]`, is dask.array's
  `x[m]` again (`with_masks`): a selection chunk by chunk, where gathering positions of unknown
  count would read every chunk for each (and an n-d mask's positions not at all).
- A size used as an argument (the count of a mean of `x[m]`) is, for a pointwise op, a 0-d Dask
  array computing it (`size_value`); any other op taking one is an error naming it.
- Fused chains and tree reductions run numpile's kernels, which take blocks of any size (one
  compile for all of them: kernels.py). dask.array's own implementations get arrays of unknown
  chunk sizes only for the ops in `TRUSTED` (tests/test_data_sizes.py runs each): its scans,
  moments and percentiles give wrong results there where a chunk selects nothing (np.cumsum of
  `x[m]` loses elements, np.std is nan), so any other op is an error (`check`), not a value.
"""

from __future__ import annotations

import dask.array as da
import numpy as np

from numpile import ops
from numpile.graph import Graph, Node
from numpile.shapes import SYMBOL_PATTERN, evaluate, is_unbacked

# ops dask.array runs right on arrays of unknown chunk sizes (or refuses with its own error)
TRUSTED = frozenset({"tuple_getitem", "index", "getitem", "nonzero", "flatnonzero", "argwhere", "unique", "bincount",
                     "concatenate", "stack", "transpose", "swapaxes", "moveaxis", "squeeze", "expand_dims", "matmul",
                     "dot", "einsum"})


def check(steps) -> None:
    """An error for a step that would hand an array of unknown chunk sizes to a dask.array
    implementation not known to be right on it."""
    for s in steps:
        n = s.outputs[0]
        unknown = next((a for a in n.inputs if a.results is None and any(map(is_unbacked, a.shape))), None)
        if s.kind == "numpy" and unknown is not None and n.target not in TRUSTED \
                and ops.get(n.target).kind != ops.POINTWISE:
            raise NotImplementedError(
                f"numpile-dask: {n.target} of {unknown.name}, an array whose size only the data knows: dask.array's "
                f"{n.target} is not known to give NumPy's result on chunks of unknown size (its scans, moments and "
                f"percentiles do not where a chunk is empty); compute {unknown.name} first")


def size_value(graph: Graph, sym, sizes: list, env: dict, n: Node):
    """A symbolic size argument of n for this call: an int, or where it uses a size only the
    data knows, for a pointwise op, a 0-d Dask array computing it."""
    known, lazy = list(sizes), {}
    for k in {int(k) for k in SYMBOL_PATTERN.findall(sym.expr)}:
        if known[k] is None:
            binder, dim = graph.symbols[k]
            size = np.shape(env[binder])[dim]
            if size == size:   # a NumPy result (slice positions), or a Dask array's known size
                known[k] = size
            elif ops.get(n.target).kind == ops.POINTWISE:
                lazy[k] = length(env[binder], dim)
            else:
                raise NotImplementedError(f"numpile-dask: {n.target} ({n.name}) takes dim {dim} of {binder.name} "
                                          f"({binder.target}), a size Dask knows only once computed; compute "
                                          f"{binder.name} first")
    if not lazy:
        return evaluate(sym.expr, known)
    values = {k: lazy.get(k, v) for k, v in enumerate(known)}
    return eval(SYMBOL_PATTERN.sub(r"s[\1]", sym.expr), {"max": np.maximum, "s": values})


def length(a: da.Array, dim: int) -> da.Array:
    """a.shape[dim] as a 0-d Dask array: the blocks' lengths along dim, summed."""
    each = a.map_blocks(_block_length, dim, chunks=tuple((1,) * n for n in a.numblocks), dtype=np.intp,
                        meta=np.empty((0,) * a.ndim, np.intp))
    return each[tuple(slice(None) if i == dim else 0 for i in range(a.ndim))].sum()


def _block_length(block, dim: int) -> np.ndarray:
    return np.full((1,) * block.ndim, block.shape[dim], dtype=np.intp)


def with_masks(index):
    """A getitem's index with each boolean mask the tracer spelled as its nonzero() index arrays
    (all of one nonzero node's results, in order, in a row) a mask again."""
    items = list(index) if isinstance(index, tuple) else [index]
    out = []
    while items:
        found = _nonzero_of(items[0], 0)
        width = len(found.args[0].shape) if found is not None else 0
        if found is not None and found.args[0].dtype == bool and len(items) >= width and \
                all(_nonzero_of(v, j) is found for j, v in enumerate(items[:width])):
            out.append(found.args[0])
            del items[:width]
        else:
            out.append(items.pop(0))
    return tuple(out) if isinstance(index, tuple) else out[0]


def _nonzero_of(item, j: int) -> Node | None:
    """The nonzero node of which `item` is result j, else None."""
    if isinstance(item, Node) and item.target == ops.TUPLE_GETITEM and item.args[1] == j \
            and item.args[0].target == "nonzero":
        return item.args[0]
    return None
