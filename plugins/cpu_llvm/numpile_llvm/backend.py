"""The backend "llvm": a graph is scheduled into kernels (numpile.lowering), every kernel is
rendered to LLVM IR and JIT-compiled for this CPU, and a generated Python function runs the
program: it allocates buffers, calls each kernel (split over threads when it is large) and
each extern (matmul through NumPy's BLAS, anything not lowered), and returns the outputs.

A kernel with something codegen cannot lower (float16, gcd, an integer power with an array
exponent, ...) runs with NumPy through the lowering toolkit's reference renderer instead; the
reason is logged under `perf` and kept in `CompiledProgram.fallbacks`.

Dynamic shapes: one CompiledProgram serves every size. The runner reads the symbols' values
from the inputs' shapes (`s0 = b0.shape[0]`), allocates buffers of the sizes they give, passes
each kernel the symbols it uses, and decides on threads (and their ranges) at run time.
"""

from __future__ import annotations

import ctypes
import math
import os
import re
import time
from concurrent.futures import ThreadPoolExecutor
from functools import cache

import numpy as np

import numpile
from numpile import logs, ops
from numpile.lowering import BufferArg, Extern, Kernel, Program, schedule
from numpile.ops.control import CompiledCond, CompiledLoop, CompiledWhile, IterationsStopped
from numpile.lowering.reference import run_kernel, symbol_values
from numpile.shapes import SYMBOL_PATTERN, NewGuard, SymInt, identical, no_new_guards, read_symbol

from . import allocator, chain, codegen, jit, loop, nest, pairwise, plan, pycall, sizes, team
from .irbuilder import Module, Unlowerable

# the externs of conds and while loops: their bodies compiled when first run (a loop's: _loop)
_CONTROL = {"cond": CompiledCond, "while_loop": CompiledWhile}

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


def _python(size) -> str:
    """A size as runner source (symbols are the runner's variables s0, s1, ...)."""
    return f"({size.expr})" if isinstance(size, SymInt) else repr(size)


class LLVMBackend(numpile.Backend):
    name = "llvm"
    description = "fused, vectorised, multi-threaded CPU kernels JIT-compiled with LLVM (llvmlite)"
    devices = ("cpu",)
    supports_dynamic_shapes = True
    supports_loops = True
    supports_conditionals = True

    def is_available(self) -> tuple[bool, str]:
        return _availability()

    #: numpile.compile(..., options={...}) keys this backend reads
    options = {"fast_math": "let LLVM reassociate float math and assume no NaN or inf (off: NumPy's exact results)"}

    def compile(self, graph, example_inputs, options, loop_body: bool = False):
        unknown = set(options) - set(self.options) - {"mode"}
        if unknown:
            raise ValueError(f"backend 'llvm' has no option {', '.join(sorted(map(repr, unknown)))}; "
                             f"it has {', '.join(map(repr, self.options))}")
        fast_math = bool(options.get("fast_math", False))
        name = f"graph {graph.fingerprint()[:10]}"
        try:
            program = schedule(graph)
        except NewGuard as e:
            logs.get("perf").debug("llvm: %s runs with NumPy: its dynamic shapes need a decision: %s", name, e)
            return graph.compile_python()
        with no_new_guards():
            return CompiledProgram(program, example_inputs, graph_name=name, fast_math=fast_math,
                                   compile_body=self._body_compiler(options), loop_body=loop_body)

    def _body_compiler(self, options):
        """compile_body for a program's loop nodes (ops/control.py's CompiledLoop)."""
        return lambda body, inputs: self.compile(body, inputs, options, loop_body=True)


@cache
def _availability() -> tuple[bool, str]:
    try:
        import llvmlite  # noqa: F401
    except ImportError as e:
        return False, f"llvmlite is not installed ({e})"
    probe = np.arange(6.0)[::-2]
    data, dims, strides = (ctypes.c_void_p.from_address(id(probe) + offset).value
                           for offset in (codegen.DATA_OFFSET, codegen.DIMENSIONS_OFFSET, codegen.STRIDES_OFFSET))
    if data != probe.__array_interface__["data"][0] or ctypes.c_int64.from_address(dims).value != probe.shape[0] \
            or ctypes.c_int64.from_address(strides).value != probe.strides[0]:
        return False, "this Python's ndarray object layout is not the one kernels read"
    return True, ""


def allocated_buffers(program: Program) -> set[str]:
    """The buffers the runner allocates: kernels' temporaries and outputs, not externs' results."""
    made_by_externs = {name for s in program.steps if isinstance(s, Extern) for name in s.outputs}
    return {n for n, b in program.buffers.items() if b.kind in ("temp", "output") and n not in made_by_externs}


class KernelStep:
    """One kernel: its native versions by input layout, run whole or split over threads."""

    def __init__(self, program: Program, kp: plan.KernelPlan, strides: dict, fast_math: bool):
        self.program, self.kp, self.fast_math = program, kp, fast_math
        # the runner allocates these (C order); inputs and extern results come with strides of their own
        self.owned = allocated_buffers(program)
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
            test = f"{_python(kp.work)} >= {PARALLEL_MIN_WORK}"
            self.parallel = splits and test + ("" if identical(kp.work, kp.extent) else f" and {_python(kp.extent)} > 1")
            self.ranges = []
        else:
            self.parallel = splits and kp.work >= PARALLEL_MIN_WORK and kp.extent > 1
            self.ranges = _thread_ranges(kp, kp.extent) if self.parallel else []
        # little work on one thread: called without ctypes (pycall.py), and may join a chain
        self.quick = not self.parallel and not kp.symbols and kp.work < PARALLEL_MIN_WORK
        # at symbolic sizes a whole run is called without ctypes where the call's work is little
        self.small_test = f"{_python(kp.work)} < {PARALLEL_MIN_WORK}" if kp.symbols and self.parallel is not True else None
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
            codegen.render(module, symbol, self.kp, self.program, strides, set(self.checked))
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
        if self._split((self.native, self.team), arrays, symbols, extent):
            self._relayout(arrays, symbols, extent, split=True)

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

    def _relayout(self, arrays, symbols=(), extent=None, split=False) -> None:
        """The kernel returned a status: an input came with strides it was not compiled for (use,
        or make, a variant), or an index was out of bounds (run again in the compiled layout, it
        raises IndexError)."""
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


class CompiledProgram:
    """A Program with native kernels, run by a generated Python function (see `source`)."""

    def __init__(self, program: Program, example_inputs, *, graph_name: str = "graph", fast_math: bool = False,
                 compile_body=None, loop_body: bool = False):
        """`compile_body(graph, example_inputs)` compiles the body of a loop node (ops/control.py);
        `loop_body`: this is one, which gets a native loop where it can (loop.py)."""
        start = time.perf_counter()
        self.compile_body = compile_body
        self.no_native_loop = "its program has no kernels"   # why a loop body's iterations are not one native call
        self.program = program
        self.fallbacks: dict[str, str] = {}
        # inputs that are arrays already (numpile's guards keep their type on later calls)
        self.array_inputs = {n for n, v in zip(program.inputs, example_inputs) if type(v) is np.ndarray}
        strides = self._strides(program, example_inputs)
        self.input_layouts = {n: sizes.layout_key(strides[n]) for n in program.inputs}   # what kernels assume
        module = Module(jit.host_features(), fast_math)
        self.steps: dict[str, object] = {}
        symbols = []
        key = jit.cache_key(f"{program}{sorted(strides.items())}{fast_math}")[:16]
        for step in program.steps:
            if isinstance(step, Kernel):
                kp = plan.plan(step, program)
                ks = KernelStep(program, kp, strides, fast_math)
                symbol = f"npk_{key}_{step.name}"
                trial = Module(module.cpu_features, fast_math)
                try:
                    if any(strides.get(n, ()) is None for n in kp.arrays if n != plan.PARTIALS):
                        raise Unlowerable("an input's strides are not whole elements")
                    ks.render(trial, symbol, strides)
                except (Unlowerable, NewGuard) as e:
                    self.fallbacks[step.name] = str(e)
                    logs.get("perf").debug("llvm: %s of %s runs with NumPy: %s", step.name, graph_name, e)
                    continue
                ks.render(module, symbol, strides)
                symbols.append((symbol, ks))
                self.steps[step.name] = ks
        self.chains = self._chains(module, key, dict((ks, s) for s, ks in symbols))
        native_loop = self._native_loop(module, key, dict((ks, s) for s, ks in symbols)) if loop_body else None
        self.ir = module.render()
        self.origin = "no kernels"
        if symbols:
            entries = [f for s, ks in symbols for f in ks.symbols(s)] + [f"{c}.py" for c, _, _ in self.chains.values()]
            entries += [native_loop[0]] if native_loop else []
            code, self.origin = jit.compile_ir(self.ir, entries)
            for symbol, ks in symbols:
                ks.native, ks.team = ks.load(code, symbol)
                if ks.small_test:
                    ks.small = pycall.function(code, symbol)
            self.chains = {i: (pycall.function(code, c), run, params)
                           for i, (c, run, params) in self.chains.items()}
        self.source, self.run = self._runner()
        if native_loop and symbols:
            self.iterate = self._iterate(native_loop, code)
        if loop_body:
            logs.get("perf").debug("llvm: loop body %s: %s", graph_name, "iterations in one native call" if
                                   getattr(self, "iterate", None) else
                                   f"one runner call per iteration ({self.no_native_loop})")
        self.compile_seconds = time.perf_counter() - start
        code_log = logs.get("output_code")
        if code_log.isEnabledFor(10):
            code_log.debug("llvm program for %s:\n%s\n\nLLVM IR (%s):\n%s\n\nrunner:\n%s",
                           graph_name, program, self.origin, jit.optimized_ir(self.ir) if symbols else "", self.source)
        logs.get("perf").debug("llvm: %s compiled in %.1f ms (object code: %s)", graph_name,
                               self.compile_seconds * 1e3, self.origin)

    def __call__(self, *inputs):
        return self.run(*inputs)

    def _chains(self, module: Module, key: str, symbol_of: dict) -> dict:
        """The runs of kernels called as one (chain.py): those that run whole at static sizes.
        By a run's first step: (the chain's symbol, its steps, its arguments as runner names)."""
        names = _buffer_names(self.program)
        steps = self.program.steps

        def chainable(step) -> bool:
            ks = self.steps.get(getattr(step, "name", None)) if isinstance(step, Kernel) else None
            return ks is not None and ks.quick

        found = {}
        for run in chain.runs(steps, chainable):
            calls = [(symbol_of[self.steps[steps[i].name]], self._arguments(i, names), self.steps[steps[i].name].kp.extent)
                     for i in run]
            name = f"npk_{key}_chain{run[0]}"
            params = chain.render(module, name, calls)
            pycall.render(module, name, len(params), 0)
            found[run[0]] = (name, run, params)
        return found

    def _native_loop(self, module: Module, key: str, symbol_of: dict) -> tuple | None:
        """This loop body's native loop (loop.py): (its symbol, its array parameters as runner
        names, its symbol parameters, the carried (input, output) buffers), or None."""
        found = loop.plan(self.program, self.steps)
        if isinstance(found, str) or self.fallbacks:
            self.no_native_loop = found if isinstance(found, str) else "a kernel runs with NumPy"
            return None
        indices, carried = found
        names = _buffer_names(self.program)
        kernels = [(symbol_of[ks], self._arguments(i, names), ks.kp)
                   for i in indices for ks in [self.steps[self.program.steps[i].name]]]
        name = f"npk_{key}_loop"
        arrays, symbols = loop.render(module, name, self.program, kernels, carried, names)
        return name, arrays, symbols, carried

    def _loop(self, step: Extern, owned: tuple = ()):
        """A loop node's extern: its whole nest native where it is element code (nest.py), else
        its body compiled as a program and run per iteration, or its iterations in one native
        call (loop.py)."""
        try:
            return nest.NativeNest(step.args[0], step.args[1:4], jit.host_features(), owned).run
        except Unlowerable as e:
            logs.get("perf").debug("llvm: a loop is not one native nest: %s", e)
            return CompiledLoop(self.compile_body, step.args[1:4])

    def _iterate(self, native_loop: tuple, code: jit.Code):
        """`iterate(start, step, count, carried, free)` (ops/control.py's CompiledLoop): the
        runner's prologue, then the native loop over the carried arrays, which it returns."""
        symbol, arrays, symbols, carried = native_loop
        native = code.function(symbol, ctypes.CFUNCTYPE(ctypes.c_int64, *[ctypes.c_void_p] * len(arrays),
                                                        *[ctypes.c_int64] * (len(symbols) + 3)))
        names = _buffer_names(self.program)
        inputs = "".join(names[n] + ", " for n in self.program.inputs)
        results = "".join(names[i] + ("[()]" if self.program.buffers[o].scalar else "") + ", " for i, o in carried)
        lines = ["def iterate(start, step, count, carried, free):",
                 "    if not same_layouts((start, *carried, *free)):",   # the runner compiles kernels for new ones
                 "        raise IterationsStopped(0, carried)",
                 f"    ({inputs}) = (start, *carried, *free)",
                 *self.runner_head, *self._loop_allocations(names),
                 f"    status = native({''.join(f'id({a}), ' for a in arrays)}{''.join(f's{k}, ' for k in symbols)}"
                 "start, step, count)",
                 "    if status != -1:", f"        raise stopped(status, ({results}))",
                 f"    return ({results})"]
        env = {**self.runner_env, "native": native, "stopped": loop.stopped, "same_layouts": self.same_layouts,
               "IterationsStopped": IterationsStopped}
        exec(compile("\n".join(lines) + "\n", "<numpile-llvm native loop>", "exec"), env)
        return env["iterate"]

    def same_layouts(self, inputs) -> bool:
        """Whether these inputs have the layouts the kernels were compiled for (a native loop calls
        the kernels as compiled: one that meets another layout stops, maybe after others ran)."""
        env = {n: np.asarray(v) for n, v in zip(self.program.inputs, inputs)}
        values = symbol_values(self.program, env)
        return all(sizes.layout_key(sizes.strides_of(n, self.program.buffers[n].shape, env[n], values)) == key
                   for n, key in self.input_layouts.items())

    def _loop_allocations(self, names: dict) -> list[str]:
        """A native loop's temporaries, each allocated at its largest over the loop: a size that
        changes with the index is linear in it, so largest at the first index or the last."""
        index = loop.index_symbol(self.program)
        last = re.compile(rf"\bs{index}\b")
        lines = [f"    s{index}_last = start + step * (count - 1)"]
        uninitialized = {o for s in self.program.steps if getattr(s, "op", None) in loop.UNINITIALIZED for o in s.outputs}
        for n in sorted(allocated_buffers(self.program) | uninitialized):
            buf = self.program.buffers[n]
            dims = [_python(d) for d in buf.shape]
            dims = [f"max({d}, {last.sub(f's{index}_last', d)})" if last.search(d) else d for d in dims]
            lines.append(f"    {names[n]} = empty(({''.join(d + ', ' for d in dims)}), {buf.dtype.str!r})")
        return lines

    def _whole_call(self, i: int, names: dict, env: dict) -> tuple[str, str]:
        """Kernel step i run whole on one thread, as runner source: (its relayout call, the
        statement `if kernel(...): relayout(...)`)."""
        ks = self.steps[self.program.steps[i].name]
        env[f"kernel{i}"], env[f"relayout{i}"] = ks.native, ks._relayout
        if ks.unused_partials:
            env[f"partials{i}"] = ks.unused_partials[0]
        arrays = ", ".join(names[n] for n in ks.kp.arrays if n != plan.PARTIALS)
        symbols = "".join(f"s{k}, " for k in ks.kp.symbols)
        dynamic = f", ({symbols}), {_python(ks.kp.extent)}" if ks.kp.symbols else ""
        relayout = f"relayout{i}(({arrays},){dynamic})"
        kernel = f"kernel{i}"
        if ks.small:
            env[f"small{i}"] = ks.small
            kernel = f"(small{i} if {ks.small_test} else kernel{i})"
        return relayout, f"if {kernel}({', '.join(self._arguments(i, names))}, {symbols}0, {_python(ks.kp.extent)}, -1): {relayout}"

    def _arguments(self, i: int, names: dict) -> list[str]:
        """The arrays kernel step i takes, as the runner names them (its partials last)."""
        ks = self.steps[self.program.steps[i].name]
        arrays = [names[n] for n in ks.kp.arrays if n != plan.PARTIALS]
        return arrays + ([f"partials{i}"] if ks.unused_partials else [])

    @staticmethod
    def _strides(program: Program, example_inputs) -> dict:
        """Element strides per buffer: the example inputs' own (see sizes.strides_of), C order for
        everything else."""
        strides = {n: sizes.c_strides(b.shape) for n, b in program.buffers.items()}
        env = {name: np.asarray(value) for name, value in zip(program.inputs, example_inputs)}
        values = symbol_values(program, env)
        for name, value in env.items():
            strides[name] = sizes.strides_of(name, program.buffers[name].shape, value, values)
        return strides

    def _runner(self):
        """Python source that runs the program, and the function it defines."""
        program = self.program
        names = _buffer_names(program)
        env = {"empty": np.empty, "cached_empty": allocator.empty, "asarray": np.asarray}
        chained = {i for _, run, _ in self.chains.values() for i in run[1:]}
        used = set()   # the symbols the runner needs
        unbacked = {k for k, s in enumerate(program.symbols) if s is not None and s[0] not in program.inputs}
        waiting = []   # (buffer, the unbacked symbols its shape needs) not yet allocated
        for n in sorted(allocated_buffers(program), key=list(program.buffers).index):
            env[f"dt_{names[n]}"] = program.buffers[n].dtype
            waiting.append((n, {int(k) for d in program.buffers[n].shape for k in SYMBOL_PATTERN.findall(_python(d))} & unbacked))
        lines, bound = [], set()

        def allocate():  # the buffers whose sizes are known by now
            for n, needs in [w for w in waiting if w[1] <= bound]:
                waiting.remove((n, needs))
                buf = program.buffers[n]
                shape = f"({''.join(_python(d) + ', ' for d in buf.shape)})"
                nbytes = math.prod(buf.shape) * buf.dtype.itemsize
                if isinstance(nbytes, SymInt):
                    alloc = f"(cached_empty if {_python(nbytes)} >= {allocator.MIN_BYTES} else empty)"
                else:
                    alloc = "cached_empty" if nbytes >= allocator.MIN_BYTES else "empty"
                lines.append(f"    {names[n]} = {alloc}({shape}, dt_{names[n]})")
        allocate()
        fresh = allocated_buffers(program)   # arrays made this run, for nests to update in place
        scalars = set()   # buffers holding a nest's Python scalar: made arrays where a step needs one
        for i, step in enumerate(program.steps):
            if isinstance(step, Extern):
                env[f"extern{i}"] = self._loop(step, nest.owned_carried(program, i, fresh)) if step.op == "loop" else \
                    _CONTROL[step.op](self.compile_body) if step.op in _CONTROL else ops.get(step.op).impl
            if i not in chained and not hasattr(env.get(f"extern{i}"), "returns_arrays"):   # not a nest
                needs = {b for k in (self.chains[i][1] if i in self.chains else [i]) for b in nest.step_reads(program.steps[k])}
                lines += [f"    {names[b]} = asarray({names[b]})" for b in sorted(needs & scalars)]
                scalars -= needs
            if isinstance(step, Extern):
                if nest.fresh_result(step.op) or step.op == "loop" and not isinstance(env[f"extern{i}"], CompiledLoop):
                    fresh |= set(step.outputs)
                direct = getattr(env[f"extern{i}"], "direct", None)
                if direct:   # a nest's builtin, called as it is (nestcall.runner)
                    env[f"extern{i}"] = direct
                    _, start, stop, _, carried, free = step.args
                    call = f"extern{i}({', '.join(_render_arg(a, names, env) for a in (*carried, *free, start, stop))})"
                else:
                    args = ", ".join(_render_arg(a, names, env) for a in step.args)
                    kwargs = "".join(f", {k}={_render_arg(v, names, env)}" for k, v in step.kwargs.items())
                    call = f"extern{i}({args}{kwargs})"
                if direct:
                    lines.append(f"    ({''.join(names[o] + ', ' for o in step.outputs)}) = {call}")
                    scalars |= {o for o in step.outputs if not program.buffers[o].shape}
                elif getattr(env[f"extern{i}"], "returns_arrays", False):   # a nest's: ndarrays already
                    lines.append(f"    ({''.join(names[o] + ', ' for o in step.outputs)}) = {call}")
                elif isinstance(step.output, tuple):   # an op with several results: a buffer each
                    lines.append(f"    ({''.join(names[o] + ', ' for o in step.output)}) = map(asarray, {call})")
                else:
                    lines.append(f"    {names[step.output]} = asarray({call})")
                for k, buffer, dim in program.binds(step):  # sizes the result tells
                    lines.append(f"    s{k} = {names[buffer]}.shape[{dim}]")
                    bound.add(k)
                allocate()
            elif i in self.chains:
                native, run, params = self.chains[i]
                env[f"chain{i}"] = native
                lines += chain.runner_lines(f"chain{i}", params, [self._whole_call(k, names, env) for k in run])
            elif i in chained:
                continue
            elif step.name in self.steps:
                ks = self.steps[step.name]
                arrays = ", ".join(names[n] for n in ks.kp.arrays if n != plan.PARTIALS)
                symbols = "".join(f"s{k}, " for k in ks.kp.symbols)
                dynamic = f", ({symbols}), {_python(ks.kp.extent)}" if ks.kp.symbols else ""
                whole = "if"
                if ks.parallel:
                    env[f"split{i}"] = ks.run
                    test = "" if ks.parallel is True else f"if {ks.parallel}: "
                    lines.append(f"    {test}split{i}(({arrays},){dynamic})")
                    whole = "elif"
                if ks.parallel is not True:
                    lines.append(f"    {whole} {self._whole_call(i, names, env)[1][3:]}")
            else:
                needs = plan.plan(step, program).symbols
                env[f"fallback{i}"] = _fallback(step, names, needs, len(program.symbols))
                lines.append(f"    fallback{i}(locals())")
                used.update(needs)
        outputs = [names[n] + ("[()]" if program.buffers[n].scalar and n not in scalars else "") for n in program.outputs]
        lines.append(f"    return ({', '.join(outputs)}{',' if len(outputs) == 1 else ''})")
        used.update(int(k) for line in lines for k in SYMBOL_PATTERN.findall(line))
        head = [f"def run({', '.join(names[n] for n in program.inputs)}):"]
        head += [f"    {names[name]} = asarray({names[name]})" for name in program.inputs if name not in self.array_inputs]
        head += [f"    s{k} = {read_symbol(names[program.symbols[k][0]], program.symbols[k][1])}" for k in sorted(used - unbacked)]
        source = "\n".join(head + lines) + "\n"
        exec(compile(source, "<numpile-llvm runner>", "exec"), env)
        self.runner_head, self.runner_env = head[1:], env   # what a native loop's runner begins with
        return source, env["run"]


def _buffer_names(program: Program) -> dict:
    """Each buffer's name in the runner: b0, b1, ..."""
    return {n: f"b{i}" for i, n in enumerate(program.buffers)}


def _render_arg(value, names: dict, env: dict) -> str:
    """An extern's argument as runner source: a buffer's name, a size, or a constant kept in env."""
    if isinstance(value, BufferArg):
        return names[value.name]
    if isinstance(value, SymInt):
        return _python(value)
    if isinstance(value, (tuple, list)):
        inner = ", ".join(_render_arg(v, names, env) for v in value)
        return f"({inner}{',' if len(value) == 1 else ''})" if isinstance(value, tuple) else f"[{inner}]"
    if isinstance(value, slice) and any(isinstance(b, SymInt) for b in (value.start, value.stop, value.step)):
        return f"slice({', '.join(_render_arg(b, names, env) for b in (value.start, value.stop, value.step))})"
    name = f"c{len(env)}"
    env[name] = value
    return name


def _fallback(kernel: Kernel, names: dict, needs: list, nsymbols: int):
    """A kernel run by the reference renderer on the runner's local buffers and symbols (`needs`
    of the `nsymbols`)."""
    used = kernel.inputs + kernel.outputs

    def run(local_vars: dict) -> None:
        symbols = [local_vars[f"s{k}"] if k in needs else None for k in range(nsymbols)]
        run_kernel(kernel, {n: local_vars[names[n]] for n in used}, symbols)
    return run
