"""A caching allocator for buffers of 64 KiB and more, so a kernel writes into memory the OS
already mapped.

A fresh `np.empty` of that size often costs as much as writing it: the C library maps new pages
for it (or gave the last ones back) and the OS zeroes each on first touch (3 ms of a 4 ms layer
norm on 4096x4096 float32; on the 2-core VM a fault took 1-2 µs, and the body of NPBench's
mandelbrot2 on 40,000 points faulted 670 pages a call, NumPy's own 285). Buffers here are arrays
over blocks the allocator keeps: a block is free again once no array made from it is alive, which
its reference count says (NumPy makes every view, and every view of a view, refer to the block
itself). Sizes come in classes, eight per power of two, so arrays whose sizes change from call to
call (a mask's selection) reuse blocks too, at most an eighth of a block unused. At most
`MAX_CACHED_BYTES` are kept, blocks in use included, and `MAX_BLOCKS` per class; past that,
`np.empty`. Blocks start on a cache line (`ALIGNMENT`), which kernels streaming rows out with
non-temporal stores rely on. Threads share the pools under `_lock`.
"""

from __future__ import annotations

import math
import sys
import threading

import numpy as np

MIN_BYTES = 1 << 16
ALIGNMENT = 64
MAX_CACHED_BYTES = 1 << 30
MAX_BLOCKS = 16   # per size class: the blocks an allocation looks through
# size class -> its blocks, free or in use: (the array owning the memory, where its aligned start is)
_pools: dict[int, list[tuple[np.ndarray, int]]] = {}
_cached = 0
_lock = threading.Lock()


def _unused_references() -> int:
    """A free block's reference count as `empty` reads it: its pool entry's, the loop's, the call's."""
    for block, _ in [(np.empty(1, np.uint8), 0)]:
        return sys.getrefcount(block)


_UNUSED = _unused_references()
_COUNTS_EXACT = getattr(sys, "_is_gil_enabled", lambda: True)()   # a free-threaded Python defers them


def empty(shape: tuple, dtype: np.dtype) -> np.ndarray:
    """np.empty(shape, dtype) over a kept block; for buffers of MIN_BYTES or more. The array's base
    is the block, which owns its memory, so that every view of it refers to the block too."""
    global _cached
    if not _COUNTS_EXACT:
        return np.empty(shape, dtype)
    size = _size_class(math.prod(shape) * dtype.itemsize)
    with _lock:
        pool = _pools.setdefault(size, [])
        for block, start in pool:
            if sys.getrefcount(block) == _UNUSED:
                return np.ndarray(shape, dtype, block, start)
        if len(pool) >= MAX_BLOCKS or _cached + size > MAX_CACHED_BYTES:
            return np.empty(shape, dtype)
        block = np.empty(size + ALIGNMENT, np.uint8)
        pool.append((block, -block.ctypes.data % ALIGNMENT))
        _cached += size
        return np.ndarray(shape, dtype, block, pool[-1][1])


def _size_class(nbytes: int) -> int:
    """The block size that serves nbytes: eight sizes per power of two."""
    step = 1 << max(nbytes.bit_length() - 4, 0)
    return -(-nbytes // step) * step


def clear() -> None:
    """Keep no block: those in use go back to the C library with their last array."""
    global _cached
    with _lock:
        _pools.clear()
        _cached = 0
