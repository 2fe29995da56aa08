"""Dask versions of NumPy test inputs, and running a backend's graph on them."""

import dask
import dask.array as da
import numpy as np


def chunked(x, parts: int = 2):
    """An ndarray as a Dask array of uneven chunks (about `parts` along each axis); 0-d arrays
    as 0-d Dask arrays; anything else as it is."""
    if not isinstance(x, np.ndarray):
        return x
    chunks = tuple(max(1, -(-d // parts) + (1 if d > 2 else 0)) if d else 1 for d in x.shape)
    return da.from_array(x, chunks=chunks or ())


def computed(outputs, graph, scheduler="threads"):
    """A graph's outputs computed: Dask arrays as NumPy values (a NumPy scalar where the graph's
    meta says NumPy returns one)."""
    values = dask.compute(*outputs, scheduler=scheduler)
    return tuple(v if n.meta.get("weak") else np.asarray(v)[()] if n.meta.get("scalar") else np.asarray(v)
                 for v, n in zip(values, graph.outputs))
