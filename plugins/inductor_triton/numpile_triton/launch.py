"""Launch configurations from sizes: how many programs a kernel runs and the block sizes each
takes (see kernel.py's note for the modes). Sizes known at compile time are decided once; with
dynamic shapes, on every call from the sizes of that call (Triton compiles once per distinct set
of block sizes, all powers of two)."""

from __future__ import annotations

import math

import numpy as np

from triton import knobs   # the launch hooks Triton calls around a launch (triton 3.4 and newer)

from . import jitless, matmul
from .cupy_driver import BACKGROUND, Pointer
from .device import real_view
from .kernel import LOOP_RBLOCK, POINTWISE_BLOCK, ROW_TILE, SPLIT_PROGRAMS, SPLIT_RBLOCK, KernelPlan, next_power_of_2


def _warps(elements: int, most: int = 16) -> int:
    """Warps per program: one per 256 elements of its block, 1 to `most`."""
    return max(1, min(most, elements // 256))


# a persistent row's program keeps the row in registers: 8 warps for an 8192-element one (layer norm
# of 8192^2 float32 on the H200: 143 µs with 16, 137 with 8, 139 with 4; torch.compile 132)
PERSISTENT_WARPS = 8


def heuristic(kp: KernelPlan, rows: int, cols: tuple) -> tuple[dict, int]:
    """The block sizes and warps the size heuristics pick (max-autotune times others: autotune.py)."""
    longest = max(max(cols, default=1), 1)
    if kp.mode == "matmul":
        return matmul.heuristic(rows, *cols)
    if kp.mode == "pointwise":
        block = min(POINTWISE_BLOCK, next_power_of_2(rows))
        return {"BLOCK": block}, _warps(block)
    if kp.mode in ("split", "scan_split"):
        rblock = min(SPLIT_RBLOCK, next_power_of_2(longest))
        return {"RBLOCK": rblock}, _warps(rblock)
    rblock = next_power_of_2(longest) if kp.mode == "persistent" else min(LOOP_RBLOCK, next_power_of_2(longest))
    xblock = min(next_power_of_2(rows), max(1, ROW_TILE // rblock))
    most = PERSISTENT_WARPS if kp.mode == "persistent" else 16
    return {"XBLOCK": xblock, "RBLOCK": rblock}, _warps(xblock * rblock, most)


def configured(kp: KernelPlan, rows: int, cols: tuple, blocks: dict, warps: int) -> tuple | None:
    """(grid, the kernel's block arguments in its parameter order, num_warps) for these sizes and
    block sizes, or None when the kernel has nothing to do."""
    if kp.mode in ("split", "scan_split"):
        rblock = blocks["RBLOCK"]
        chunk = math.ceil(math.ceil(cols[0] / SPLIT_PROGRAMS) / rblock) * rblock or rblock
        return (SPLIT_PROGRAMS,), {"CHUNK": chunk, "XBLOCK": 1, "RBLOCK": rblock}, warps
    if rows == 0 or kp.mode == "matmul" and cols[0] == 0:
        return None
    if kp.mode == "matmul":   # rows M, cols (N, K)
        return matmul.grid(rows, cols[0], blocks), blocks, warps
    step = blocks["BLOCK"] if kp.mode == "pointwise" else blocks["XBLOCK"]
    return (math.ceil(rows / step),), blocks, warps


_PENDING = object()   # a static launch's configuration before its first call


class Launch:
    """Runs one kernel (and a split reduction's combining kernel after it) on device arrays.

    The first launch of each configuration goes through Triton's JIT (`fn[grid](...)`), which
    compiles and returns the kernel (in a CuPy program before torch is imported, Triton's compiler
    without the JIT: jitless.py); later ones call that compiled kernel's launcher directly
    with the buffers' addresses, skipping the JIT's per-call binding and specialisation (about
    60 µs a launch on the H100 box's CPU). Triton specialises a kernel on which addresses are
    16-byte aligned and which integers are 1, multiples of 16 or past 32 bits: those facts are part of the key.
    The interpreter always takes the JIT's path (it runs on tensors, not addresses).
    """

    def __init__(self, kp: KernelPlan, fn, combine: "Launch | None" = None, static: tuple | None = None,
                 arrays=None, tuner=None, records=None):
        self.kp, self.fn, self.combine = kp, fn, combine
        self.static = static   # (rows, cols) when no size is symbolic: the config is decided once
        self.fixed = _PENDING  # ... on the first call
        self.arrays = arrays   # the device buffers' library (device.Arrays); None: the interpreter
        self.tuner = tuner     # max-autotune's (autotune.Tuner), or None: the heuristics decide
        self.records = records   # binaries.Records: kernels found again without the JIT in a new process
        self.kernels = {}      # (grid, block values, warps, specialisation) -> Triton's compiled kernel

    def __call__(self, arrays: tuple, sizes: tuple = (), rows: int | None = None, cols: tuple = ()) -> None:
        if self.static is None:
            launch = self._config(rows, cols, arrays, sizes)
        else:
            if self.fixed is _PENDING:
                self.fixed = self._config(*self.static, arrays, sizes)
            launch = self.fixed
        if launch is not None:
            self.start(launch, arrays, sizes)
        if self.combine is not None:
            picked = [arrays[self.kp.arrays.index(b)] for b in self.combine.kp.arrays]
            self.combine(tuple(picked), (), 1, (SPLIT_PROGRAMS,))

    def _config(self, rows: int, cols: tuple, arrays: tuple, sizes: tuple) -> tuple | None:
        choice = heuristic(self.kp, rows, cols) if self.tuner is None else \
            self.tuner.choice(self, rows, cols, arrays, sizes)
        return self.configured(rows, cols, *choice)

    def configured(self, rows: int, cols: tuple, blocks: dict, warps: int) -> tuple | None:
        return configured(self.kp, rows, cols, blocks, warps)

    def start(self, launch: tuple, arrays: tuple, sizes: tuple) -> None:
        """Launches this kernel (not the combining one) in configuration `launch`."""
        if self.arrays is None:
            grid, blocks, warps = launch
            self.fn[grid](*map(real_view, arrays), *sizes, **blocks, num_warps=warps, enable_fp_fusion=False)
        else:
            self._launch(launch, arrays, sizes)

    def compile_ahead(self, dtypes: tuple) -> list:
        """Before a CuPy program's first run (cupy_driver's note): this launch's kernel for 16-byte
        aligned buffers (`dtypes`: its arrays' as the renderer sees them), where its configuration is
        fixed and Triton's JIT is not in use, loaded from an earlier process's record or compiled
        without the JIT; its launcher built on a background thread. The futures of those builds."""
        if self.arrays is None or self.static is None or self.tuner is not None or self.arrays.tensor is not Pointer:
            return []
        if self.fixed is _PENDING:
            self.fixed = self._config(*self.static, (), ())
        if self.fixed is None:
            return []
        grid, blocks, warps = self.fixed
        values = tuple(blocks.values())
        key = (warps, values, False)   # _launch's key for aligned buffers
        if key in self.kernels:
            return []
        kernel = self.records.load(self.fn, key) if self.records is not None else None
        if kernel is None:
            kernel = jitless.compiled(self.fn, [np.empty(0, d) for d in dtypes], [0] * len(dtypes), values, warps, True)
            if kernel is None:
                return []
            if self.records is not None:
                self.records.save(self.fn, key, kernel)
        self.kernels[key] = kernel
        return [BACKGROUND.submit(jitless.launcher, kernel)]

    def bound(self) -> tuple | None:
        """What a bound runner (program.py) calls for this launch, once its kernel for 16-byte-aligned
        buffers is compiled, where its configuration is fixed and it takes no sizes (else None):
        (the launch function, the grid, the arguments between the stream and the pointers, the
        block values). The launch function is the C one under Triton's launcher where the kernel
        needs no scratch memory (the launcher's Python call allocates none then, about 1 µs)."""
        if self.arrays is None or self.static is None or self.fixed in (_PENDING, None):
            return None
        grid, blocks, warps = self.fixed
        values = tuple(blocks.values())
        kernel = self.kernels.get((warps, values, False))   # _launch's key for aligned buffers
        if kernel is None:
            return None
        run, grid = kernel.run, (*grid, 1, 1)[:3]
        tail = (kernel.packed_metadata, None, None, None)   # no launch metadata, no hooks (hooked() says)
        if run.global_scratch_size or run.profile_scratch_size or getattr(run, "gsan_enabled", False):
            return run, grid, (kernel.function, *tail), values
        return run.launch, grid, (kernel.function, run.launch_cooperative_grid, run.launch_pdl, None, None, *tail), values

    def _launch(self, launch, arrays: tuple, sizes: tuple) -> None:
        grid, blocks, warps = launch
        pointer = self.arrays.pointer
        pointers = [pointer(a) for a in arrays]
        values = (*sizes, *blocks.values())   # blocks are in the kernel's parameter order (kernel.py)
        # the block sizes (constexprs) as they are, the integers' specialisation (with no integers,
        # the block values themselves); all addresses aligned (the rule) is one test. Not the integers'
        # values: in a static kernel too they can change call after call (a loop index's offsets,
        # `A[:, k]`), and a key each would compile a kernel each (lu's first call took 23 s)
        key = (warps, values if self.static is not None and not sizes else
               (tuple(v for k, v in blocks.items() if k != "CHUNK"), *((v == 1, v % 16 == 0, v >= 2 ** 31) for v in (*sizes, blocks.get("CHUNK", 1)))),
               any(p % 16 for p in pointers) and tuple(p % 16 == 0 for p in pointers))
        kernel = self.kernels.get(key)
        if kernel is None:
            kernel = self.records.load(self.fn, key)   # an earlier process's, without the JIT (binaries.py)
            if kernel is None:   # compiled without the JIT, which imports torch (jitless.py), where it can be
                kernel = jitless.compiled(self.fn, arrays, pointers, values, warps, self.arrays.tensor is Pointer)
                if kernel is not None:
                    self.records.save(self.fn, key, kernel)
            if kernel is None:   # compiled (or found in Triton's cache) by the JIT, which launches it too
                tensors = [real_view(self.arrays.tensor(a)) for a in arrays]
                kernel = self.kernels[key] = self.fn[grid](*tensors, *sizes, **blocks, num_warps=warps,
                                                           enable_fp_fusion=False)
                self.records.save(self.fn, key, kernel)
                return
            self.kernels[key] = kernel
        args = (*pointers, *values)
        stream = self.arrays.stream()
        grid = (*grid, 1, 1)
        enter, exit = _hook(knobs.runtime.launch_enter_hook), _hook(knobs.runtime.launch_exit_hook)
        # a profiler's hooks get the launch's metadata
        metadata = kernel.launch_metadata(grid, stream, *args) if enter is not None or exit is not None else None
        kernel.run(grid[0], grid[1], grid[2], stream, kernel.function, kernel.packed_metadata, metadata, enter, exit,
                   *args)


def hooked() -> bool:
    """Whether a profiler set a launch hook (a bound runner then launches through `Launch`, which
    hands the hooks their metadata)."""
    runtime = knobs.runtime
    return _hook(runtime.launch_enter_hook) is not None or _hook(runtime.launch_exit_hook) is not None


def _hook(hook):
    """A launch hook as Triton's launcher takes it: None for none. Triton 3.5 and newer keep an empty
    HookChain there, which its launcher calls, and whose metadata we would build: about 2 µs a launch
    on the H100 box."""
    return None if hook is None or getattr(hook, "calls", None) == [] else hook
