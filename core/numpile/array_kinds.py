"""Arrays of other libraries as inputs: CuPy arrays and torch tensors, on the GPU or the CPU, and
Dask arrays, chunked over the workers of a cluster.

NumPy code runs unchanged on CuPy arrays (NumPy hands its functions to CuPy through
`__array_function__` and `__array_ufunc__`), and torch tensors hold the same data NumPy arrays
do. numpile takes both as inputs. The tracer sees such an array as it sees an ndarray (its shape
and its dtype as NumPy's) and guards its type, dtype, shape and device; a call's arrays are all
of one kind on one device, and its array results come back in that kind, on that device.

Which backend gets them (`Backend.devices`): a CPU backend receives NumPy arrays (zero-copy
views of CPU tensors); a CUDA backend receives the device arrays as they are and may return
arrays of any library that speaks DLPack (or NumPy arrays, copied up), which `Boundary` turns
into arrays of the inputs' kind (zero-copy on the device).

Dask arrays are the device "dask": a call with one goes to config.default_backends["dask"], a
backend that builds a Dask graph (plugins/dask_array). Their chunks are guarded too (`layout`),
and they are values: `x += y` rebinds and `x[i] = v` replaces as dask.array does (`immutable`), so
the tracer leaves such updates to Python (a graph break). A size only the data knows (`x[mask]`)
is nan until computed (`lazy_sizes`): Python code reading one (`len(x[m])`) is a graph break too.

A kind is recognised without importing its library: a library the user did not import has no
arrays in the call.
"""

from __future__ import annotations

import functools
import sys
from dataclasses import dataclass
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class ArrayKind:
    name: str                       # the library, as users say it
    module: str                     # the module whose attribute `type_name` is the array type
    type_name: str
    numpy_views: bool               # NumPy's view functions (np.transpose, ...) make views of its arrays
    dtype: Callable                 # array -> its dtype as NumPy's (an error for a dtype NumPy has not)
    location: Callable              # array -> where it is: "cpu", "cuda:0", ...
    storage: Callable               # array -> the address of the allocation it views
    adopt: Callable                 # (array of any library, location) -> an array of this kind there
    # (what, fn): fn(array, dynamic dims) is guarded besides type, dtype, shape and device (Dask:
    # its chunks); fn raises TypeError for an array the tracer cannot take (unknown chunk sizes)
    layout: tuple | None = None
    immutable: bool = False         # in-place updates rebind or replace the array (Dask): Python runs them
    # a size only the data knows (x[mask]) stays unknown until computed (Dask: nan): read as a
    # Python value (len(x), x.shape) it is a graph break, and Python reads it as the library gives it
    lazy_sizes: bool = False
    to_numpy: Callable = np.asarray   # array -> a NumPy array of its values (copied off its device)
    # its indexing wraps a position out of bounds where NumPy raises IndexError (CuPy's, documented):
    # a backend's bounds check then raises NumPy's error (graph_compile._replay), not the library's value
    wraps_positions: bool = False

    def array_type(self):
        module = sys.modules.get(self.module)
        return getattr(module, self.type_name, None) if module is not None else None

    def on_cpu(self, value) -> np.ndarray:
        """A CPU array of this kind as a NumPy array sharing its memory."""
        return np.from_dlpack(value)


@functools.cache
def _torch_to_numpy(dtype) -> np.dtype:
    import torch
    try:
        return torch.empty(0, dtype=dtype).numpy().dtype
    except TypeError:
        raise TypeError(f"torch {dtype} has no NumPy dtype") from None


def _torch_adopt(value, location: str):
    import torch
    if isinstance(value, torch.Tensor):
        return value
    if isinstance(value, (np.ndarray, np.generic)):
        return torch.from_numpy(_c_ordered(value)).to(location)
    return torch.from_dlpack(value)


def _c_ordered(value) -> np.ndarray:
    """A NumPy array or scalar as a C-ordered array (a scalar as a 0-d one)."""
    a = np.asarray(value)
    return a if a.flags.c_contiguous and a.flags.writeable else a.copy()


def _cupy_adopt(value, location: str):
    import cupy
    if isinstance(value, cupy.ndarray):
        return value
    if isinstance(value, (np.ndarray, np.generic)):
        with cupy.cuda.Device(int(location.split(":")[1])):
            return cupy.asarray(value)
    return cupy.from_dlpack(value)


def _dask_chunks(value, dynamic_dims=()) -> tuple:
    """What is guarded of a Dask array's chunks: along a static dim its chunks exactly; along a
    dynamic one, for a regular chunking (all chunks but a smaller last one the same), that
    chunk size only, so that the number of chunks may change with the size."""
    if any(d != d for d in value.shape):   # NaN: sizes only computing would tell
        raise TypeError(f"a Dask array of unknown chunk sizes (shape {value.shape}); "
                        "call x.compute_chunk_sizes() first")
    def axis(i, c):
        regular = i in dynamic_dims and len(c) > 0 and all(b == c[0] for b in c[:-1]) and c[-1] <= c[0]
        return ("every", c[0]) if regular else c
    return tuple(axis(i, c) for i, c in enumerate(value.chunks))


def _dask_adopt(value, location: str):
    import dask.array as da
    return value if isinstance(value, da.Array) else da.asarray(value)


KINDS = (
    ArrayKind("cupy", "cupy", "ndarray", numpy_views=True, dtype=lambda a: a.dtype,
              location=lambda a: f"cuda:{a.device.id}", storage=lambda a: a.data.mem.ptr, adopt=_cupy_adopt,
              to_numpy=lambda a: a.get(), wraps_positions=True),
    ArrayKind("torch", "torch", "Tensor", numpy_views=False, dtype=lambda a: _torch_to_numpy(a.dtype),
              location=lambda a: str(a.device) if a.device.type != "cuda" else f"cuda:{a.device.index}",
              storage=lambda a: a.untyped_storage().data_ptr(), adopt=_torch_adopt,
              to_numpy=lambda a: a.numpy(force=True)),
    ArrayKind("dask", "dask.array.core", "Array", numpy_views=False, dtype=lambda a: a.dtype,
              location=lambda a: "dask", storage=id, adopt=_dask_adopt, layout=("chunks", _dask_chunks),
              immutable=True, lazy_sizes=True),
)


def kind_of(value) -> ArrayKind | None:
    """The kind of `value` when it is an array of one of KINDS (exactly its type), else None."""
    for kind in KINDS:
        if kind.module in sys.modules and type(value) is kind.array_type():
            return kind
    return None


def device_type(location: str) -> str:
    """"cuda" for "cuda:0": the device a backend lists in `Backend.devices`."""
    return location.partition(":")[0]


def call_device(args, kwargs) -> str:
    """The device of a call's array arguments (those at top level and in tuples, lists and dicts
    one level down): "dask" when one is a Dask array, else "cuda" when one is a CUDA array of a
    kind, else "cpu"."""
    values = [*args, *kwargs.values()]
    values += [v for c in values if isinstance(c, (tuple, list)) for v in c]
    values += [v for c in values if isinstance(c, dict) for v in c.values()]
    devices = [device_type(kind.location(v)) for v in values if (kind := kind_of(v)) is not None]
    return "dask" if "dask" in devices else devices[0] if devices else "cpu"


def host_outputs(graph, example_inputs, kind: ArrayKind) -> dict:
    """{index: whether a NumPy scalar} of the graph's outputs computed from no array of `kind`
    among its inputs (`np.asarray` of a list, `np.zeros(x.shape)`): NumPy's own arrays when the
    library runs the function eagerly, so NumPy's at the boundary too (a CuPy array there made
    `c.max(axis=0)` of a 0-d one raise after a break, which NumPy's allows)."""
    from .graph import Node
    array_type = kind.array_type()
    of_kind = {n for n, v in zip(graph.inputs, example_inputs) if type(v) is array_type}
    for n in graph.calls:
        if any(i in of_kind for i in n.inputs):
            of_kind.add(n)
    return {i: o.array_meta.scalar for i, o in enumerate(graph.outputs)
            if isinstance(o, Node) and o not in of_kind and not o.array_meta.weak}


class Boundary:
    """How a compiled graph whose inputs are arrays of `kind` at `location` meets a backend:
    `inputs` what the backend is given, `outputs` what the caller gets back. A backend's output
    that is one of the arrays it was given comes back as the caller's own array (identity kept,
    so that nothing is written back onto itself); `host` outputs (see host_outputs) as NumPy's."""

    def __init__(self, kind: ArrayKind, location: str, backend_devices: tuple, host: dict | None = None):
        self.kind, self.location, self.host = kind, location, host or {}
        device = device_type(location)
        if device not in backend_devices:
            raise TypeError(f"the inputs are {kind.name} arrays on {location}; this backend runs on "
                            f"{', '.join(backend_devices)} (leave the backend unset to pick one for {device})")
        self.to_numpy = device == "cpu"
        self.array_type = kind.array_type()

    def inputs(self, values) -> list:
        if not self.to_numpy:
            return list(values)
        return [self.kind.on_cpu(v) if type(v) is self.array_type else v for v in values]

    def outputs(self, results, given: list, originals) -> tuple:
        mine = {id(g): o for g, o in zip(given, originals)}
        return tuple(mine[id(r)] if id(r) in mine else self._numpy(r, self.host[i]) if i in self.host
                     else self._adopt(r) for i, r in enumerate(results))

    def _numpy(self, value, scalar: bool):
        value = self.kind.to_numpy(value) if type(value) is self.array_type else value
        return value[()] if scalar and isinstance(value, np.ndarray) else value

    def _adopt(self, value):
        if type(value) in (bool, int, float, complex) or type(value) is self.array_type:
            return value
        return self.kind.adopt(value, self.location)

    def wrap(self, compiled):
        """`compiled` (the backend's callable) called with this boundary's conversions."""
        def call(*values):
            given = self.inputs(values)
            return self.outputs(compiled(*given), given, values)
        return call
