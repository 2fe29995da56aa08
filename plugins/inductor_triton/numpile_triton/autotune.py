"""mode="max-autotune": each kernel's launch configuration chosen by timing candidates on the device.

The size heuristics of launch.py pick one configuration per kernel and size; with max-autotune the
first launch of a kernel at a size class (the sizes rounded up to powers of two) times the
candidates of its mode (block sizes and warps around the heuristic's choice) and keeps the fastest.
Candidates run on copies of the kernel's buffers, so a kernel that updates a buffer in place
updates it once, with the chosen configuration. What was chosen is kept on disk under
numpile's cache directory, keyed by the kernel's Triton source, its size class and the device, so
a second process times nothing; the perf log says what was timed and what was chosen.
"""

from __future__ import annotations

import hashlib
import json
import time

from numpile import disk_cache, logs

from . import matmul
from .kernel import KernelPlan, next_power_of_2

HEADER = b"numpile-triton autotune record 1\n"

POINTWISE_BLOCKS = (256, 512, 1024, 2048, 4096)
LOOP_RBLOCKS = (256, 512, 1024, 2048, 4096)
SPLIT_RBLOCKS = (1024, 2048, 4096, 8192)
ROW_TILES = (1024, 2048, 4096, 8192, 16384)
WARPS = (1, 2, 4, 8, 16)


def candidates(kp: KernelPlan, rows: int, cols: tuple) -> list[tuple[dict, int]]:
    """(block sizes, warps) worth timing for a kernel of these sizes."""
    if kp.mode == "matmul":
        return matmul.candidates(rows, *cols)
    longest = next_power_of_2(max(max(cols, default=1), 1))
    if kp.mode == "pointwise":
        blocks = [{"BLOCK": b} for b in POINTWISE_BLOCKS if b <= max(next_power_of_2(rows), POINTWISE_BLOCKS[0])]
    elif kp.mode == "split":
        blocks = [{"RBLOCK": r} for r in SPLIT_RBLOCKS if r <= max(longest, SPLIT_RBLOCKS[0])]
    else:
        rblocks = [longest] if kp.mode == "persistent" else [r for r in LOOP_RBLOCKS if r <= max(longest, LOOP_RBLOCKS[0])]
        blocks = list({(r, x): {"XBLOCK": x, "RBLOCK": r} for r in rblocks for tile in ROW_TILES
                       for x in [min(next_power_of_2(rows), max(1, tile // r))]}.values())
    return [(b, w) for b in blocks for w in WARPS if _elements(b) // w >= 32 and _elements(b) // w <= 4096]


def _elements(blocks: dict) -> int:
    """Elements in a program's block: what its warps share."""
    return blocks.get("BLOCK", 1) * blocks.get("XBLOCK", 1) * blocks.get("RBLOCK", 1)


def size_class(rows: int, cols: tuple) -> tuple:
    """Sizes that share a tuned configuration: rounded up to powers of two."""
    return (next_power_of_2(max(rows, 1)), *(next_power_of_2(max(c, 1)) for c in cols))


class Tuner:
    """The tuned configurations of one kernel (by size class), timed or read from disk."""

    def __init__(self, source: str, device_name: str, arrays):
        self.key = hashlib.sha256(f"{source}\n{device_name}".encode()).hexdigest()[:24]
        self.arrays = arrays   # the device buffers' library: copies and timing
        self.chosen: dict[tuple, tuple[dict, int]] = {}

    def choice(self, launch, rows: int, cols: tuple, arrays: tuple, sizes: tuple) -> tuple[dict, int]:
        """(block sizes, warps) for `launch`'s kernel at these sizes: remembered, read from disk,
        or timed now on copies of `arrays`."""
        sizes_key = size_class(rows, cols)
        if sizes_key not in self.chosen:
            name = f"triton/autotune/{self.key}_{'x'.join(map(str, sizes_key))}.json"
            saved = disk_cache.read(name, HEADER)
            if saved is not None:
                saved = json.loads(saved)
                self.chosen[sizes_key] = (saved["blocks"], saved["warps"])
            else:
                self.chosen[sizes_key] = self._time(launch, rows, cols, arrays, sizes)
                blocks, warps = self.chosen[sizes_key]
                disk_cache.write(name, HEADER, json.dumps({"blocks": blocks, "warps": warps}).encode())
        return self.chosen[sizes_key]

    def _time(self, launch, rows: int, cols: tuple, arrays: tuple, sizes: tuple) -> tuple[dict, int]:
        from triton.testing import do_bench
        copies = tuple(map(self.arrays.copy, arrays))
        start = time.perf_counter()
        timings = []
        for blocks, warps in candidates(launch.kp, rows, cols):
            configured = launch.configured(rows, cols, blocks, warps)
            if configured is None:
                continue
            launch.start(configured, copies, sizes)   # compiled (by the JIT) before it is timed
            timings.append((do_bench(lambda: launch.start(configured, copies, sizes), warmup=5, rep=20), blocks, warps))
        best_ms, blocks, warps = min(timings, key=lambda t: t[0])
        logs.get("perf").debug("triton: max-autotune timed %d configurations of %s in %.1f s; chose %s, %d warps (%.1f us)",
                               len(timings), launch.kp.kernel.name, time.perf_counter() - start,
                               ", ".join(f"{k}={v}" for k, v in blocks.items()), warps, best_ms * 1e3)
        return blocks, warps
