"""A caching allocator for large buffers, so a kernel writes into memory the OS already mapped.

A fresh 64 MiB `np.empty` costs as much as writing it: the C library maps new pages for it
and the kernel zeroes every one on first touch (3 ms of a 4 ms layer norm on 4096x4096
float32). Large buffers here are leases on raw blocks: an array's base is a `_Lease`, and
when the last array (or view) of it dies, its block goes back to a free list for the next
call of the same size. At most `MAX_CACHED_BYTES` stay cached. Blocks start on a cache line
(`ALIGNMENT`), which kernels streaming rows out with non-temporal stores rely on. Threads share
the free lists under `_lock` (re-entrant: a lease may die in a collection the locked code set off).
"""

from __future__ import annotations

import math
import threading

import numpy as np

MIN_BYTES = 1 << 20
ALIGNMENT = 64
MAX_CACHED_BYTES = 1 << 30
_free: dict[int, list[np.ndarray]] = {}
_cached = 0
_lock = threading.RLock()


class _Lease:
    __slots__ = ("block", "__array_interface__")

    def __init__(self, block: np.ndarray):
        self.block = block
        self.__array_interface__ = {"shape": (block.nbytes,), "typestr": "|u1", "version": 3,
                                    "data": (block.__array_interface__["data"][0], False)}

    def __del__(self):
        global _cached
        with _lock:
            if _cached + self.block.nbytes <= MAX_CACHED_BYTES:
                _free.setdefault(self.block.nbytes, []).append(self.block)
                _cached += self.block.nbytes


def empty(shape: tuple, dtype: np.dtype) -> np.ndarray:
    """np.empty(shape, dtype) from a cached block; for buffers of MIN_BYTES or more."""
    nbytes = math.prod(shape) * dtype.itemsize
    global _cached
    with _lock:
        blocks = _free.get(nbytes)
        block = blocks.pop() if blocks else None
        if block is not None:
            _cached -= nbytes
    if block is None:
        raw = np.empty(nbytes + ALIGNMENT, np.uint8)
        skip = -raw.ctypes.data % ALIGNMENT
        block = raw[skip:skip + nbytes]
    return np.asarray(_Lease(block)).view(dtype).reshape(shape)


def clear() -> None:
    """Give every cached block back to the C library."""
    global _cached
    with _lock:
        _free.clear()
        _cached = 0
