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
"""

from __future__ import annotations

from sys import getrefcount


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
