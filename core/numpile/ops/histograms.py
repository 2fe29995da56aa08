"""Histograms: np.histogram (the counts and the bin edges) and np.histogram_bin_edges.

The bins fix the shapes: an int `bins` gives that many counts and one edge more; an array of
edges gives one count fewer than edges, and np.histogram returns that array itself as its
edges (`same_as`: updates of one show through the other). An estimator name ('auto', 'fd',
...) picks the number of bins from the data, a size no meta rule can know: not captured. The
dtypes (counts in intp, in the weights' dtype, or float64 with density=True; edges in the
data's float type, or the given edges' own) and NumPy's refusals of the arguments (bins < 1, a
bad range) come from np.histogram on probes; the values of the data (an infinite range, edges
that do not increase) are checked by NumPy when the graph runs.
"""

from __future__ import annotations

import operator

import numpy as np

from ..shapes import sym_max
from .meta import as_meta, probe_call
from .registry import REDUCTION, ArrayMeta, register


def _sizes(bins) -> tuple:
    """(counts, edges) that `bins` asks for, or NotImplementedError where the data decides them."""
    if isinstance(bins, str):
        raise NotImplementedError(f"bins={bins!r} picks the number of bins from the data (an output "
                                  "size known only at run time); pass an int or the edges")
    if isinstance(bins, ArrayMeta):
        if bins.ndim == 0:
            raise NotImplementedError("bins given as a 0-d array computed in the graph (a number of "
                                      "bins known only at run time); pass a Python int")
        return sym_max(bins.shape[0] - 1, 0), bins.shape[0]
    if np.ndim(bins) == 0:
        return operator.index(bins), operator.index(bins) + 1
    return max(len(bins) - 1, 0), len(bins)


def _check_weights(a, weights) -> None:
    if weights is not None and as_meta(weights).shape != as_meta(a).shape:
        raise ValueError("weights should have the same shape as a.")


def _histogram_sig(a, bins=10, range=None, density=None, weights=None): ...


def _histogram_meta(a, bins=10, range=None, density=None, weights=None):
    """(counts[n], edges[n + 1]) for n bins."""
    n, n_edges = _sizes(bins)
    counts, edges = probe_call(np.histogram, a, bins, range, density, weights)  # dtypes; NumPy's refusals
    _check_weights(a, weights)
    return ArrayMeta((n,), counts.dtype), ArrayMeta((n_edges,), edges.dtype)


register("histogram", REDUCTION, impl=np.histogram, meta=_histogram_meta, signature=_histogram_sig,
         numpy=(np.histogram,), same_as={1: "bins"}, doc="np.histogram: (counts, bin edges)")


def _bin_edges_sig(a, bins=10, range=None, weights=None): ...


def _bin_edges_meta(a, bins=10, range=None, weights=None):
    if isinstance(bins, ArrayMeta):
        raise NotImplementedError("edges given as an array are returned as they are (the same array): use them")
    _, n_edges = _sizes(bins)
    edges = probe_call(np.histogram_bin_edges, a, bins, range, weights)
    _check_weights(a, weights)
    return ArrayMeta((n_edges,), edges.dtype)


register("histogram_bin_edges", REDUCTION, impl=np.histogram_bin_edges, meta=_bin_edges_meta,
         signature=_bin_edges_sig, numpy=(np.histogram_bin_edges,), doc="np.histogram_bin_edges")
