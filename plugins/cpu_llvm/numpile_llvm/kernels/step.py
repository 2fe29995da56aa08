"""A kernel step of a program at run time (`KernelStep`): its native versions by input layout,
run whole on the calling thread or split over threads (libgomp's team, else a Python pool), a new
version compiled where an input comes with strides it was not compiled for. The runner
(runner.py) calls it; kernels/function.py renders its functions."""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from numpile.lowering import Program
from numpile.shapes import SymInt, identical, no_new_guards

from .. import jit, pycall, sizes, team
from ..irbuilder import Module, Unlowerable
from ..sizes import as_python
from . import pairwise, plan
from . import function as kernel_function

# below this many elements of work a kernel runs on the calling thread: a hand-off costs ~20 µs
PARALLEL_MIN_WORK = 1 << 17


# the threads that run kernel shares beside the calling thread where libgomp is not there (team.py)
_POOL = ThreadPoolExecutor(os.cpu_count() - 1, thread_name_prefix="numpile-llvm") if (os.cpu_count() or 1) > 1 else None


def _thread_ranges(kp: plan.KernelPlan, extent: int) -> list[tuple[int, int]]:
    """The [lo, hi) of the parallel loop (`extent` iterations) each thread runs: equal shares, or
    for a float sum of a whole array the nodes of its pairwise tree a power-of-two levels deep,
    so that adding the threads' sums pairwise gives NumPy's sum to the bit."""
    if kp.split == "inner" and plan.pairwise(kp.kernel.stages[0]):
        return pairwise.pairwise_ranges(extent, 1 << (min(team.threads(), extent).bit_length() - 1))
    chunks = min(team.threads(), extent)
    edges = [extent * c // chunks for c in range(chunks + 1)]
    return list(zip(edges, edges[1:]))


class KernelStep:
    """One kernel: its native versions by input layout, run whole or split over threads."""

    def __init__(self, program: Program, kp: plan.KernelPlan, strides: dict, fast_math: bool):
        self.program, self.kp, self.fast_math = program, kp, fast_math
        # the runner allocates these (C order); inputs and extern results come with strides of their own
        self.owned = plan.allocated_buffers(program)
        self.checked = [n for n in kp.arrays if n != plan.PARTIALS and n not in self.owned]
        self.base_strides = strides
        self.variants: dict[tuple, tuple] = {}   # layout key -> (native, team)
        self.native = None
        self.team = None   # the entry that runs the shares on libgomp's team (team.py)
        # a float product multiplies in order (NumPy's), which threads cannot share
        # and a scatter stores in order
        splits = team.threads() > 1 and not (kp.split == "inner" and plan.sequential(kp.kernel.stages[0])) \
            and not plan.scatters(kp.kernel)
        if isinstance(kp.work, SymInt) or isinstance(kp.extent, SymInt):
            # the runner's test, on the sizes of each call (a 1-d kernel's work is its extent)
            test = f"{as_python(kp.work)} >= {PARALLEL_MIN_WORK}"
            self.parallel = splits and test + ("" if identical(kp.work, kp.extent) else f" and {as_python(kp.extent)} > 1")
            self.ranges = []
        else:
            self.parallel = splits and kp.work >= PARALLEL_MIN_WORK and kp.extent > 1
            self.ranges = _thread_ranges(kp, kp.extent) if self.parallel else []
        # little work on one thread: called without ctypes (pycall.py), and may join a chain
        self.quick = not self.parallel and not kp.symbols and kp.work < PARALLEL_MIN_WORK
        # at symbolic sizes a whole run is called without ctypes where the call's work is little
        self.small_test = f"{as_python(kp.work)} < {PARALLEL_MIN_WORK}" if kp.symbols and self.parallel is not True else None
        self.small = None   # that entry (pycall), loaded with the kernel
        self.table = team.table(self.ranges)   # (ranges, the driver's table of them, its address)
        self.tables: dict[int, tuple] = {}      # the same by the value of a symbolic extent
        #: how shares run: "libgomp" (one native call), "python pool" (a call per share), None: whole
        self.dispatch = ("libgomp" if team.available() else "python pool") if self.parallel else None
        # a split reduction run whole (slot -1) writes no partial, but its entry reads an array there
        self.unused_partials = () if kp.partial is None else (np.empty(0, kp.partial),)

    def layout_key(self, strides: dict) -> tuple:
        return tuple(sizes.layout_key(strides[n]) for n in self.checked)

    def render(self, module: Module, symbol: str, strides: dict) -> None:
        with no_new_guards():
            kernel_function.render(module, symbol, self.kp, self.program, strides, set(self.checked))
        if self.dispatch == "libgomp":
            team.render(module, symbol, len(self.kp.arrays), self.kp.symbols)
        if self.quick or self.small_test:
            pycall.render(module, symbol, len(self.kp.arrays), 3 + len(self.kp.symbols))

    def load(self, code: jit.Code, symbol: str) -> tuple:
        """The kernel's functions in a compiled module: (kernel, team entry or None)."""
        if self.quick:
            return pycall.function(code, symbol), None
        native = jit.function(code, symbol, len(self.kp.arrays), 3 + len(self.kp.symbols))
        if self.dispatch != "libgomp":
            return native, None
        return native, team.function(code, f"{symbol}.team", len(self.kp.arrays), len(self.kp.symbols))

    def symbols(self, symbol: str) -> list[str]:
        """The functions of the kernel `symbol` the runtime calls."""
        return [symbol] + [f"{symbol}.team"] * (self.dispatch == "libgomp") + [f"{symbol}.py"] * bool(self.quick or self.small_test)

    def run(self, arrays: tuple, symbols: tuple = (), extent: int | None = None) -> None:
        """Run split over threads: the arrays in kp.arrays order (without partials), the values of
        kp.symbols, and the parallel loop's extent where it is symbolic."""
        split = not team.crowded()
        if (self._split if split else self._whole)((self.native, self.team), arrays, symbols, extent):
            self.relayout(arrays, symbols, extent, split=split)

    def _whole(self, natives, arrays, symbols, extent) -> int:
        return natives[0](*arrays, *self.unused_partials, *symbols, 0, self.kp.extent if extent is None else extent, -1)

    def _split(self, natives, arrays, symbols, extent) -> int:
        # the pairs stay referenced while the driver reads them (another thread may drop them from tables)
        ranges, pairs, address = self.table if extent is None else self._table(extent)
        partials = None
        if self.kp.partial is not None:
            partials = np.empty(len(ranges), self.kp.partial)
            arrays = arrays + (partials,)
        native, entry = natives
        if entry is not None and team.usable:   # every share in one native call
            status = entry(*arrays, *symbols, address, len(ranges))
        else:
            futures = [_POOL.submit(native, *arrays, *symbols, *ranges[c], c) for c in range(1, len(ranges))]
            status = native(*arrays, *symbols, *ranges[0], 0)
            status |= sum(f.result() for f in futures)
        if partials is not None and not status:
            self._combine(partials, arrays)
        return status

    def _table(self, extent: int) -> tuple:
        """team.table of the threads' ranges for a symbolic extent's value (kept for 64 values)."""
        found = self.tables.get(extent)
        if found is None:
            if len(self.tables) >= 64:
                self.tables.clear()
            found = self.tables[extent] = team.table(_thread_ranges(self.kp, extent))
        return found

    def _combine(self, partials, arrays) -> None:
        stage = self.kp.kernel.stages[0]
        out = arrays[self.kp.arrays.index(stage.output)]
        if plan.pairwise(stage):   # the threads summed sibling nodes of the pairwise tree
            parts = list(partials)
            while len(parts) > 1:
                parts = [a + b for a, b in zip(parts[::2], parts[1::2])]
            out[()] = parts[0]
            return
        reduce = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum,
                  "any": np.logical_or, "all": np.logical_and}[self.kp.reduce]
        out[()] = reduce.reduce(partials).astype(stage.dtype)

    def relayout(self, arrays, symbols=(), extent=None, split=False) -> None:
        """The kernel returned a status: an input came with strides it was not compiled for (use,
        or make, a variant), or an index was out of bounds (run again in the compiled layout, it
        raises IndexError)."""
        arrays = tuple(map(np.asarray, arrays))   # an input float as the array it stands for (strides_of)
        strides = dict(self.base_strides)
        values = dict(zip(self.kp.symbols, symbols))
        values = [values.get(k) for k in range(len(self.program.symbols))]
        for name, array in zip(self.kp.arrays, arrays):
            if name in self.checked:
                strides[name] = sizes.strides_of(name, self.program.buffers[name].shape, array, values)
        key = self.layout_key(strides)
        natives = self.variants.get(key)
        if natives is None and key == self.layout_key(self.base_strides):
            natives = (self.native, self.team)
        if natives is None:
            if any(s is None for s in key):
                raise Unlowerable("an input's strides are not whole elements")
            module = Module(jit.host_features(), self.fast_math)
            symbol = f"npk_{jit.cache_key(f'{self.kp.kernel}{key}{self.fast_math}')[:20]}"
            self.render(module, symbol, strides)
            code, _ = jit.compile_ir(module.render(), self.symbols(symbol))
            natives = self.variants[key] = self.load(code, symbol)
        status = (self._split if split else self._whole)(natives, arrays, symbols, extent)
        if status & plan.OUT_OF_BOUNDS:
            raise IndexError(f"{self.kp.kernel.name}: an index array holds an index out of bounds")
        if status:
            raise RuntimeError(f"{self.kp.kernel.name}: strides changed while it ran")

