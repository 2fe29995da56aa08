"""Buffers a bound runner allocates, handed back to it call after call once nothing else holds them.

[Note: buffer reuse] Allocating a CuPy array costs about 3 µs of a 1024-element call's 13. A
bound runner (program.py) keeps each buffer of static shape it allocates, an output or a temporary,
in a `Reused` slot, and on the next call takes the same buffer again when nothing but the slot can
reach its memory: the array, its memory pointer and its memory object hold no more references than
right after the allocation. The caller's variable, a view (its base), `a.data`, a DLPack capsule or a
`__cuda_array_interface__` consumer each hold one of them, so a buffer the caller can still read is
never written again; one only an address held (`a.data.ptr`) is, as CuPy's own pool would reuse it.
A buffer is taken again only on the stream that last wrote it (CuPy's pool keeps one per stream for
the same reason). The capture of a CUDA graph (graphs.py) runs the unbound runner, which allocates
every buffer: a graph's buffers never enter a slot, and no slot's buffer enters a graph.

[Note: numbers kept on the device] A 0-d input that comes as a number (NPBench's `alpha * A @ x`
with a Python float) was made a device array at every call: `cupy.asarray` of a number is a
pinned-memory copy of about 16 µs of host time on the H200, two of gesummv's 110 µs a call. Where
only kernels read it (no extern can hand it on, it is no output, nothing writes it), a `HostScalar`
keeps one device array per value and stream, made on that stream (a kernel on it runs after the
copy). At most LIMIT are kept and none is dropped (a CUDA graph may read one); past them, and while
the stream is being captured, each call makes its own, as before.
"""

from __future__ import annotations

import struct
from sys import getrefcount

import numpy as np

_FLOAT_BITS = struct.Struct("<d").pack   # a float's key: -0.0 is not 0.0, each NaN its own


def cupy_holders(array) -> tuple:
    """The reference counts that say who can reach a CuPy array's memory (see the note)."""
    data = array.data
    return getrefcount(array), getrefcount(data), getrefcount(data.mem)


class Reused:
    """One buffer slot of a bound runner: `slot(stream)` is a buffer of the slot's shape and dtype,
    the last one when no one else holds it (see [Note: buffer reuse])."""

    __slots__ = ("empty", "holders", "shape", "dtype", "array", "refs", "stream")

    def __init__(self, empty, holders, shape: tuple, dtype):
        self.empty, self.holders, self.shape, self.dtype = empty, holders, shape, dtype
        self.array, self.refs, self.stream = None, None, None

    def __call__(self, stream):
        array = self.array   # the same locals hold it here as when `refs` was taken below
        if array is not None and stream == self.stream and self.holders(array) == self.refs:
            return array
        array = self.array = self.empty(self.shape, self.dtype)
        self.stream, self.refs = stream, self.holders(array)
        return array


def _value_key(value):
    """A number's key: its type and value, a float's by its bits (-0.0 is not 0.0); None for
    anything else (an array)."""
    kind = type(value)
    if kind is float:
        return kind, _FLOAT_BITS(value)
    if kind is int or kind is bool:
        return kind, value
    if isinstance(value, np.generic):
        return kind, value.tobytes()
    return None


class HostScalar:
    """One 0-d input of a runner that comes as a number: `kept(value, stream)` is a device array of
    its value (see [Note: numbers kept on the device])."""

    LIMIT = 16
    __slots__ = ("to_device", "capturing", "kept")

    def __init__(self, to_device, capturing):
        self.to_device, self.capturing = to_device, capturing
        self.kept: dict = {}   # (stream, type, value) -> device array

    def __call__(self, value, stream):
        key = _value_key(value)
        array = self.kept.get((stream, *key)) if key is not None else None
        if array is None:
            array = self.to_device(value, False)
            if key is not None and len(self.kept) < self.LIMIT and not self.capturing():
                self.kept[(stream, *key)] = array
        return array
