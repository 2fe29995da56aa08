"""The backend "llvm": a graph is scheduled into kernels (numpile.lowering), every kernel is
rendered to LLVM IR and JIT-compiled for this CPU, and a generated Python function runs the
program: it allocates buffers, calls each kernel (split over threads when it is large) and
each extern (matmul through NumPy's BLAS, anything not lowered), and returns the outputs.

A kernel with something codegen cannot lower (float16, gcd, an integer power with an array
exponent, ...) runs with NumPy through the lowering toolkit's reference renderer instead; the
reason is logged under `perf` and kept in `CompiledProgram.fallbacks`.
"""

from __future__ import annotations

import ctypes
import math
import os
import time
from concurrent.futures import ThreadPoolExecutor
from functools import cache

import numpy as np

import numpile
from numpile import logs, ops
from numpile.lowering import BufferArg, Extern, Kernel, Program, schedule
from numpile.lowering.reference import run_kernel

from . import allocator, codegen, jit
from .irbuilder import Module, Unlowerable

# below this many elements of work a kernel runs on the calling thread: a hand-off costs ~20 µs
PARALLEL_MIN_WORK = 1 << 17


# the threads that run kernel shares beside the calling thread (started on the first submit)
_POOL = ThreadPoolExecutor(os.cpu_count() - 1, thread_name_prefix="numpile-llvm") if (os.cpu_count() or 1) > 1 else None


def _threads() -> int:
    return os.cpu_count() or 1


def _thread_ranges(kp: codegen.KernelPlan) -> list[tuple[int, int]]:
    """The [lo, hi) of the parallel loop each thread runs: equal shares, or for a float sum of a
    whole array the nodes of its pairwise tree a power-of-two levels deep, so that adding the
    threads' sums pairwise gives NumPy's sum to the bit."""
    if kp.split == "inner" and codegen.pairwise(kp.kernel.stages[0]):
        return codegen.pairwise_ranges(kp.extent, 1 << (min(_threads(), kp.extent).bit_length() - 1))
    chunks = min(_threads(), kp.extent)
    edges = [kp.extent * c // chunks for c in range(chunks + 1)]
    return list(zip(edges, edges[1:]))


class LLVMBackend(numpile.Backend):
    name = "llvm"
    description = "fused, vectorised, multi-threaded CPU kernels JIT-compiled with LLVM (llvmlite)"
    devices = ("cpu",)
    supports_dynamic_shapes = False

    def is_available(self) -> tuple[bool, str]:
        return _availability()

    #: numpile.compile(..., options={...}) keys this backend reads
    options = {"fast_math": "let LLVM reassociate float math and assume no NaN or inf (off: NumPy's exact results)"}

    def compile(self, graph, example_inputs, options):
        unknown = set(options) - set(self.options) - {"mode"}
        if unknown:
            raise ValueError(f"backend 'llvm' has no option {', '.join(sorted(map(repr, unknown)))}; "
                             f"it has {', '.join(map(repr, self.options))}")
        fast_math = bool(options.get("fast_math", False))
        return CompiledProgram(schedule(graph), example_inputs, graph_name=f"graph {graph.fingerprint()[:10]}", fast_math=fast_math)


@cache
def _availability() -> tuple[bool, str]:
    try:
        import llvmlite  # noqa: F401
    except ImportError as e:
        return False, f"llvmlite is not installed ({e})"
    probe = np.arange(6.0)[::-2]
    data = ctypes.c_void_p.from_address(id(probe) + codegen.DATA_OFFSET).value
    strides = ctypes.c_void_p.from_address(id(probe) + codegen.STRIDES_OFFSET).value
    if data != probe.__array_interface__["data"][0] or ctypes.c_int64.from_address(strides).value != probe.strides[0]:
        return False, "this Python's ndarray object layout is not the one kernels read"
    return True, ""


def allocated_buffers(program: Program) -> set[str]:
    """The buffers the runner allocates: kernels' temporaries and outputs, not externs' results."""
    made_by_externs = {s.output for s in program.steps if isinstance(s, Extern)}
    return {n for n, b in program.buffers.items() if b.kind in ("temp", "output") and n not in made_by_externs}


class KernelStep:
    """One kernel: its native versions by input layout, run whole or split over threads."""

    def __init__(self, program: Program, kp: codegen.KernelPlan, strides: dict, fast_math: bool):
        self.program, self.kp, self.fast_math = program, kp, fast_math
        # the runner allocates these (C order); inputs and extern results come with strides of their own
        self.owned = allocated_buffers(program)
        self.checked = [n for n in kp.arrays if n != codegen.PARTIALS and n not in self.owned]
        self.base_strides = strides
        self.variants: dict[tuple, object] = {}
        self.native = None
        # a float product multiplies in order (NumPy's), which threads cannot share
        self.parallel = (kp.work >= PARALLEL_MIN_WORK and kp.extent > 1 and _threads() > 1
                         and not (kp.split == "inner" and codegen.sequential(kp.kernel.stages[0])))
        self.ranges = _thread_ranges(kp) if self.parallel else []
        # a split reduction run whole (slot -1) writes no partial, but its entry reads an array there
        self.unused_partials = () if kp.partial is None else (np.empty(0, kp.partial),)

    def layout_key(self, strides: dict) -> tuple:
        return tuple(strides[n] for n in self.checked)

    def render(self, module: Module, symbol: str, strides: dict) -> None:
        codegen.render(module, symbol, self.kp, self.program, strides, set(self.checked))

    def run(self, *arrays) -> None:
        """Run on the given arrays (kp.arrays order, without partials)."""
        if not self.parallel:
            status = self.native(*arrays, *self.unused_partials, 0, self.kp.extent, -1)
        else:
            status = self._split(self.native, arrays)
        if status:
            self._relayout(arrays)

    def _split(self, native, arrays) -> int:
        ranges = self.ranges
        partials = None
        if self.kp.partial is not None:
            partials = np.empty(len(ranges), self.kp.partial)
            arrays = arrays + (partials,)
        futures = [_POOL.submit(native, *arrays, *ranges[c], c) for c in range(1, len(ranges))]
        status = native(*arrays, *ranges[0], 0)
        status |= sum(f.result() for f in futures)
        if partials is not None and not status:
            self._combine(partials, arrays)
        return status

    def _combine(self, partials, arrays) -> None:
        stage = self.kp.kernel.stages[0]
        out = arrays[self.kp.arrays.index(stage.output)]
        if codegen.pairwise(stage):   # the threads summed sibling nodes of the pairwise tree
            parts = list(partials)
            while len(parts) > 1:
                parts = [a + b for a, b in zip(parts[::2], parts[1::2])]
            out[()] = parts[0]
            return
        reduce = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum,
                  "any": np.logical_or, "all": np.logical_and}[self.kp.reduce]
        out[()] = reduce.reduce(partials).astype(stage.dtype)

    def _relayout(self, arrays) -> None:
        """An input came with strides this kernel was not compiled for: use (or make) a variant."""
        strides = dict(self.base_strides)
        for name, array in zip(self.kp.arrays, arrays):
            if name in self.checked:
                strides[name] = codegen.element_strides(array)
        key = self.layout_key(strides)
        native = self.variants.get(key)
        if native is None:
            if any(s is None for s in key):
                raise Unlowerable("an input's strides are not whole elements")
            module = Module(jit.host_features(), self.fast_math)
            symbol = f"npk_{jit.cache_key(f'{self.kp.kernel}{key}{self.fast_math}')[:20]}"
            self.render(module, symbol, strides)
            addresses, _ = jit.compile_ir(module.render(), [symbol])
            native = self.variants[key] = jit.function(addresses[symbol], len(self.kp.arrays), 3)
        if self.parallel:
            status = self._split(native, arrays)
        else:
            status = native(*arrays, *self.unused_partials, 0, self.kp.extent, -1)
        if status:
            raise RuntimeError(f"{self.kp.kernel.name}: strides changed while it ran")


class CompiledProgram:
    """A Program with native kernels, run by a generated Python function (see `source`)."""

    def __init__(self, program: Program, example_inputs, *, graph_name: str = "graph", fast_math: bool = False):
        start = time.perf_counter()
        self.program = program
        self.fallbacks: dict[str, str] = {}
        strides = self._strides(program, example_inputs)
        module = Module(jit.host_features(), fast_math)
        self.steps: dict[str, object] = {}
        symbols = []
        key = jit.cache_key(f"{program}{sorted(strides.items())}{fast_math}")[:16]
        for step in program.steps:
            if isinstance(step, Kernel):
                kp = codegen.plan(step, program)
                ks = KernelStep(program, kp, strides, fast_math)
                symbol = f"npk_{key}_{step.name}"
                trial = Module(module.cpu_features, fast_math)
                try:
                    if any(strides.get(n, ()) is None for n in kp.arrays if n != codegen.PARTIALS):
                        raise Unlowerable("an input's strides are not whole elements")
                    ks.render(trial, symbol, strides)
                except Unlowerable as e:
                    self.fallbacks[step.name] = str(e)
                    logs.get("perf").debug("llvm: %s of %s runs with NumPy: %s", step.name, graph_name, e)
                    continue
                ks.render(module, symbol, strides)
                symbols.append((symbol, ks))
                self.steps[step.name] = ks
        self.ir = module.render()
        self.origin = "no kernels"
        if symbols:
            addresses, self.origin = jit.compile_ir(self.ir, [s for s, _ in symbols])
            for symbol, ks in symbols:
                ks.native = jit.function(addresses[symbol], len(ks.kp.arrays), 3)
        self.source, self.run = self._runner()
        self.compile_seconds = time.perf_counter() - start
        code_log = logs.get("output_code")
        if code_log.isEnabledFor(10):
            code_log.debug("llvm program for %s:\n%s\n\nLLVM IR (%s):\n%s\n\nrunner:\n%s",
                           graph_name, program, self.origin, jit.optimized_ir(self.ir) if symbols else "", self.source)
        logs.get("perf").debug("llvm: %s compiled in %.1f ms (object code: %s)", graph_name,
                               self.compile_seconds * 1e3, self.origin)

    def __call__(self, *inputs):
        return self.run(*inputs)

    @staticmethod
    def _strides(program: Program, example_inputs) -> dict:
        """Element strides per buffer: the example inputs' own, C order for everything else."""
        strides = {n: codegen.c_strides(b.shape) for n, b in program.buffers.items()}
        for name, value in zip(program.inputs, example_inputs):
            strides[name] = codegen.element_strides(np.asarray(value))
        return strides

    def _runner(self):
        """Python source that runs the program, and the function it defines."""
        program = self.program
        names = {n: f"b{i}" for i, n in enumerate(program.buffers)}
        env = {"empty": np.empty, "cached_empty": allocator.empty, "asarray": np.asarray}
        lines = [f"def run({', '.join(names[n] for n in program.inputs)}):"]
        for name in program.inputs:
            lines.append(f"    {names[name]} = asarray({names[name]})")
        allocated = allocated_buffers(program)
        for n, buf in program.buffers.items():
            if n in allocated:
                env[f"dt_{names[n]}"] = buf.dtype
                alloc = "cached_empty" if math.prod(buf.shape) * buf.dtype.itemsize >= allocator.MIN_BYTES else "empty"
                lines.append(f"    {names[n]} = {alloc}({buf.shape!r}, dt_{names[n]})")
        for i, step in enumerate(program.steps):
            if isinstance(step, Extern):
                env[f"extern{i}"] = ops.get(step.op).impl
                args = ", ".join(_render_arg(a, names, env) for a in step.args)
                kwargs = "".join(f", {k}={_render_arg(v, names, env)}" for k, v in step.kwargs.items())
                lines.append(f"    {names[step.output]} = asarray(extern{i}({args}{kwargs}))")
            elif step.name in self.steps:
                ks = self.steps[step.name]
                arrays = ", ".join(names[n] for n in ks.kp.arrays if n != codegen.PARTIALS)
                if ks.parallel:
                    env[f"kernel{i}"] = ks.run
                    lines.append(f"    kernel{i}({arrays})")
                else:
                    env[f"kernel{i}"], env[f"relayout{i}"] = ks.native, ks._relayout
                    extra = ""
                    if ks.unused_partials:
                        env[f"partials{i}"] = ks.unused_partials[0]
                        extra = f", partials{i}"
                    lines.append(f"    if kernel{i}({arrays}{extra}, 0, {ks.kp.extent}, -1): relayout{i}(({arrays},))")
            else:
                env[f"fallback{i}"] = _fallback(step, names)
                lines.append(f"    fallback{i}(locals())")
        outputs = [names[n] + ("[()]" if program.buffers[n].scalar else "") for n in program.outputs]
        lines.append(f"    return ({', '.join(outputs)}{',' if len(outputs) == 1 else ''})")
        source = "\n".join(lines) + "\n"
        exec(compile(source, "<numpile-llvm runner>", "exec"), env)
        return source, env["run"]


def _render_arg(value, names: dict, env: dict) -> str:
    """An extern's argument as runner source: a buffer's name, or a constant kept in env."""
    if isinstance(value, BufferArg):
        return names[value.name]
    if isinstance(value, (tuple, list)):
        inner = ", ".join(_render_arg(v, names, env) for v in value)
        return f"({inner}{',' if len(value) == 1 else ''})" if isinstance(value, tuple) else f"[{inner}]"
    name = f"c{len(env)}"
    env[name] = value
    return name


def _fallback(kernel: Kernel, names: dict):
    """A kernel run by the reference renderer on the runner's local buffers."""
    used = kernel.inputs + kernel.outputs

    def run(local_vars: dict) -> None:
        run_kernel(kernel, {n: local_vars[names[n]] for n in used})
    return run
