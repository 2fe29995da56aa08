"""A lowering Program run with Triton kernels: every Kernel rendered (kernel.py) into one Python
module of @triton.jit functions, and a generated runner (see `CompiledProgram.source`) that moves
buffers between the host and the device, allocates, launches and returns NumPy results.

Where each buffer's current value lives is decided at compile time, so the runner is straight-line
code: a kernel's operands are copied onto the device when their value is on the host, an extern's
(matmul, concatenate, anything not lowered: run by its NumPy implementation) and a fallback
kernel's (one codegen cannot render: run by the lowering's reference renderer) are copied back
first. With CuPy arrays as device buffers, externs run on them where they are (NumPy's function
dispatches to CuPy's). A buffer a kernel writes into that already held a value (an update in place) is copied
onto the device, never shared, so the caller's arrays change only through the graph's write-back.
"""

from __future__ import annotations

import hashlib
import importlib.util
import time

import numpy as np

from numpile import disk_cache, logs, ops
from numpile.lowering import BufferArg, Extern, Kernel, Program
from numpile.lowering.reference import run_kernel
from numpile.ops.control import CompiledCond, CompiledLoop, CompiledWhile
from numpile.shapes import SYMBOL_PATTERN, NewGuard, SymInt, read_symbol

from . import device
from .kernel import HELPERS, KernelPlan, Renderer, plan
from .autotune import Tuner
from .binaries import Records
from .launch import Launch, hooked
from .matmul import MatmulKernel, MatmulRenderer, matmul_plan, with_templates
from .on_device import DeviceExtern, DeviceFallback
from .reuse import Reused
from .scalar import Unlowerable, helpers

HEADER = '''import triton
import triton.language as tl
from triton.language.extra import libdevice
'''


def _python(size) -> str:
    """A size as runner source (symbols are the runner's variables s0, s1, ...)."""
    return f"({size.expr})" if isinstance(size, SymInt) else repr(size)


class _Rendered:
    """A kernel's plan, its Triton functions' names and the size parameters they take."""

    def __init__(self, kp: KernelPlan, program: Program, interpreting: bool):
        self.kp = kp
        self.dtypes = [tuple(program.buffers[b].dtype.str for b in p.arrays) for p in (kp, kp.combine) if p is not None]
        renderer = MatmulRenderer if kp.mode == "matmul" else Renderer
        self.renderers = [renderer(kp, program, f"triton_{kp.kernel.name}", interpreting)]
        if kp.combine is not None:
            self.renderers.append(Renderer(kp.combine, program, f"triton_{kp.combine.kernel.name}", interpreting))
        self.source = "\n\n".join(r.source() for r in self.renderers)
        if kp.combine is not None and self.renderers[1].size_params:
            raise Unlowerable("a symbolic size in the combining kernel of a split reduction")

    @property
    def sizes(self) -> list[str]:
        """The expressions of the main kernel's size parameters, in order."""
        return list(self.renderers[0].size_params)

    def launch(self, module, arrays, tune: bool, records) -> Launch:
        """`records(dtypes)`: the binaries.Records of a kernel taking arrays of these dtypes, or None."""
        kp = self.kp
        combine = None
        if kp.combine is not None:
            combine = Launch(kp.combine, getattr(module, self.renderers[1].name), static=(1, tuple(kp.combine.cols)),
                             arrays=arrays, records=records(self.dtypes[1]))
        dynamic = isinstance(kp.rows, SymInt) or any(isinstance(c, SymInt) for c in kp.cols)
        tuner = Tuner(self.source, device.name(), arrays) if tune else None
        return Launch(kp, getattr(module, self.renderers[0].name), combine,
                      None if dynamic else (kp.rows, tuple(kp.cols)), arrays=arrays, tuner=tuner, records=records(self.dtypes[0]))


def _load_module(source: str):
    """The module of `source`, from a file in numpile's cache directory (Triton reads the source
    of its kernels from their file)."""
    digest = hashlib.sha256(source.encode()).hexdigest()[:24]
    path = disk_cache.source_file(f"triton/kernels/numpile_{digest}.py", source)
    spec = importlib.util.spec_from_file_location(f"numpile_triton_kernels_{digest}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class CompiledProgram:
    """A Program with Triton kernels, run by a generated Python function (see `source`)."""

    def __init__(self, program: Program, *, graph_name: str = "graph", resident: bool = False, arrays=None,
                 tune: bool = False, compile_body=None, python_numbers: frozenset = frozenset()):
        """`compile_body(graph, example_inputs)` compiles the body of a loop node (ops/control.py):
        the loop runs on the host, the body's kernels on the device. `python_numbers`: the output
        buffers the graph returns as Python numbers, which come back to the host for any inputs."""
        start = time.perf_counter()
        self.python_numbers = python_numbers
        self.compile_body = compile_body
        interpreting = device.interpreting()
        self.program = program = with_templates(program, lambda t: self._renders(t, program, graph_name, interpreting))
        self.resident = resident   # device arrays in: results stay on the device
        self.arrays = arrays or device.TorchArrays()   # the library of device buffers
        self.graph_name = graph_name
        self.fallbacks: dict[str, str] = {}
        device.place_triton_cache()
        rendered: dict[str, _Rendered] = {}
        for step in program.steps:
            if isinstance(step, Kernel):
                try:
                    rendered[step.name] = _Rendered(_plan(step, program), program, interpreting)
                except (Unlowerable, NewGuard) as e:
                    self.fallbacks[step.name] = str(e)
                    where = "through CuPy on the device arrays" if self.arrays.numpy_api else "with NumPy on the host"
                    logs.get("perf").debug("triton: %s of %s runs %s: %s", step.name, graph_name, where, e)
        self.kernel_source = HEADER + "\n\n" + HELPERS + "\n\n" + helpers(interpreting) + "".join(f"\n\n{r.source}" for r in rendered.values())
        module = _load_module(self.kernel_source) if rendered else None
        direct = None if interpreting else self.arrays   # the interpreter launches through the JIT
        if tune and interpreting:
            logs.get("perf").debug("triton: %s is not autotuned: the interpreter's timings say nothing of a GPU's", graph_name)
        capability = self.arrays.capability() if direct is not None and rendered else None
        records = lambda dtypes: None if capability is None else Records(self.kernel_source, capability, dtypes)  # noqa: E731
        self.launches = {name: r.launch(module, direct, tune and not interpreting, records) for name, r in rendered.items()}
        self.sizes = {name: r.sizes for name, r in rendered.items()}
        self.source, self.runner = self._runner()
        self.run = self._first_run
        self._owning = None   # the bound runner that updates a loop's carried arrays in place (`iterate`)
        externs = [s.op for s in program.steps if isinstance(s, Extern)]
        if externs and not self.arrays.numpy_api:
            logs.get("perf").debug("triton: %s runs %s with NumPy on host copies (slow: a transfer each way)",
                                   graph_name, ", ".join(externs))
        self.compile_seconds = time.perf_counter() - start
        code_log = logs.get("output_code")
        if code_log.isEnabledFor(10):
            code_log.debug("triton program for %s:\n%s\n\nTriton kernels (%s):\n%s\n\nrunner:\n%s", graph_name, program,
                           "interpreter" if interpreting else device.name(), self.kernel_source, self.source)
        logs.get("perf").debug("triton: %s rendered in %.1f ms (Triton compiles each kernel on its first launch)",
                               graph_name, self.compile_seconds * 1e3)

    def __call__(self, *inputs):
        return self.run(*inputs)

    def iterate(self, start: int, step: int, count: int, carried: tuple, free: tuple) -> tuple:
        """`count` iterations of a loop's body (ops.control.CompiledLoop), after the first: the carried
        arrays, which the loop owns, are updated in place instead of copied at every iteration."""
        if self._owning is None:
            owned = frozenset(self.program.inputs[1:1 + len(carried)])
            self._owning = _RunnerWriter(self, bound=True, owned=owned).write()[1]
        for index in range(start, start + step * count, step):
            carried = self._owning(index, *carried, *free)
        return carried

    @staticmethod
    def _renders(template: MatmulKernel, program: Program, graph_name: str, interpreting: bool) -> bool:
        """Whether a matmul template renders (else the matmul stays cuBLAS's), said under `perf`."""
        fused = f", fused with the next kernel's {len(template.stages)} stages" \
            if template.product not in template.outputs else ""
        try:
            _Rendered(matmul_plan(template, program), program, interpreting)
        except (Unlowerable, NewGuard) as e:
            logs.get("perf").debug("triton: %s of %s stays an extern: its template%s has no Triton form (%s)",
                                   template.product, graph_name, fused, e)
            return False
        logs.get("perf").debug("triton: %s of %s is a Triton matmul template (%s)%s", template.product, graph_name,
                               template.name, fused)
        return True

    def _first_run(self, *inputs):
        """The runner, timed once: a first run compiles every kernel (or loads it from Triton's cache).
        Then the bound runner takes over (see `_RunnerWriter`)."""
        start = time.perf_counter()
        outputs = self.runner(*inputs)
        logs.get("perf").debug("triton: first run of %s in %.1f ms (Triton compiling or loading its %d kernels)",
                               self.graph_name, (time.perf_counter() - start) * 1e3, len(self.launches))
        self.bound_source, self.run = _RunnerWriter(self, bound=True).write()
        if self.bound_source != self.source:
            logs.get("output_code").debug("triton bound runner for %s:\n%s", self.graph_name, self.bound_source)
        if not self.resident and not device.interpreting() and logs.enabled("perf"):
            self._log_transfers(inputs, outputs)
        return outputs

    def _log_transfers(self, inputs, outputs) -> None:
        """What copying NumPy inputs to the device and results back costs each call, said once (the
        inputs copied up once more, timed)."""
        arrays = [x for x in inputs if isinstance(x, np.ndarray)]
        up, down = sum(a.nbytes for a in arrays), sum(np.asarray(o).nbytes for o in outputs)
        start = time.perf_counter()
        for a in arrays:
            self.arrays.to_device(a, False)
        self.arrays.synchronize()
        seconds = time.perf_counter() - start
        rate = up / seconds if up else 0.0
        logs.get("perf").debug("triton: %s copies %.1f MB of NumPy inputs to the device (%.2f ms, %.1f GB/s) and %.1f MB "
                               "of results back on every call; CuPy arrays or torch CUDA tensors stay on the device",
                               self.graph_name, up / 1e6, seconds * 1e3, rate / 1e9, down / 1e6)

    def _runner(self):
        """Python source that runs the program, and the function it defines."""
        return _RunnerWriter(self).write()


class _RunnerWriter:
    """Writes the runner: `b3` is buffer 3's value on the host, `d3` on the device.

    The bound runner, written after the first run (every kernel then compiled), calls Triton's
    launcher of each launch of fixed configuration directly, its grid and block values written in,
    instead of `Launch` (no launch key built, no dictionary looked up: about 3 µs a launch), while
    the buffers' addresses are 16-byte aligned and no profiler hooks launches; and it takes the
    buffers it allocates from `Reused` slots (see [Note: buffer reuse] in reuse.py)."""

    def __init__(self, compiled: CompiledProgram, bound: bool = False, owned: frozenset = frozenset()):
        """`owned`: inputs the caller hands over to be updated in place (a loop's carried arrays)."""
        self.compiled = compiled
        self.binding = bound
        self.streamed = False   # whether the runner reads the current stream (a bound runner's launches, slots)
        self.program = program = compiled.program
        self.index = {n: i for i, n in enumerate(program.buffers)}
        arrays = compiled.arrays
        self.env = {"to_device": arrays.to_device, "to_host": arrays.to_host, "empty": arrays.empty,
                    "host_empty": np.empty, "asarray": np.asarray, "current_stream": arrays.stream, "hooked": hooked}
        if arrays.numpy_api:
            self.env["device_asarray"], self.env["as_dtype"] = arrays.asarray, arrays.as_dtype
        self.lines: list[str] = []
        self.on_host = set(program.inputs)      # buffers whose current value is on the host
        self.on_device: set[str] = set()        # ... on the device
        # device values an extern gave: "any" layout (a transpose, a broadcast, a view of a caller's
        # array), or "shared" once made C-ordered for a kernel to read (still maybe a caller's memory)
        self.foreign: dict[str, str] = {}
        self.callers = set(program.inputs)      # host values that are the caller's arrays
        self.bound: set[int] = set()            # unbacked symbols bound so far (by externs' results)
        # kernels that write device buffers: the launched ones, and with NumPy's functions on the
        # device arrays (CuPy) every one (fallbacks run there too)
        launched = [s for s in program.steps if isinstance(s, Kernel)
                    and (s.name in compiled.launches or compiled.arrays.numpy_api)]
        self.device_written = {o for s in launched for o in s.outputs} - owned
        if compiled.resident:   # the inputs are device arrays (and numbers, which go there too)
            self.on_host, self.callers = set(), set()
            for name in program.inputs:
                i = self.index[name]
                self.lines.append(f"    d{i} = to_device(b{i}, {name in self.device_written})")
                self.on_device.add(name)

    def host(self, name: str) -> str:
        b = f"b{self.index[name]}"
        if name not in self.on_host:
            self.lines.append(f"    {b} = to_host(d{self.index[name]})")
            self.on_host.add(name)
        return b

    def on_device_now(self, name: str) -> str:
        d = f"d{self.index[name]}"
        if name not in self.on_device:
            self.lines.append(f"    {d} = to_device({self.host(name)}, {name in self.device_written})")
            self.on_device.add(name)
        return d

    def wrote(self, names, where: set, other: set) -> None:
        for n in names:
            where.add(n)
            other.discard(n)
            self.callers.discard(n)
            self.foreign.pop(n, None)

    def constant(self, value) -> str:
        name = f"c{len(self.env)}"
        self.env[name] = value
        return name

    def literal(self, value) -> str:
        """`value` as runner source: written in where it is None, a bool or an int; else a constant."""
        return repr(value) if value is None or type(value) in (bool, int) else self.constant(value)

    def write(self):
        program = self.program
        for i, step in enumerate(program.steps):
            if isinstance(step, Extern):
                self.extern(i, step)
            elif step.name in self.compiled.launches:
                self.kernel(i, step)
            else:
                self.fallback(i, step)
        def output(n: str) -> str:
            if n in self.compiled.python_numbers:   # a Python number for any inputs (an ndarray's NumPy
                return self.host(n) + ".item()"     # scalar would become a CuPy array at the boundary)
            if self.compiled.resident:   # a NumPy scalar result is a 0-d array there, as CuPy's reductions give
                return self.on_device_now(n)
            return self.host(n) + ("[()]" if program.buffers[n].scalar else "")
        outputs = [output(n) for n in program.outputs]
        self.lines.append(f"    return ({', '.join(outputs)}{',' if len(outputs) == 1 else ''})")
        head = [f"def run({', '.join(f'b{self.index[n]}' for n in program.inputs)}):"]
        if not self.compiled.resident:   # device arrays go to_device as they are
            head += [f"    b{self.index[n]} = asarray(b{self.index[n]})" for n in program.inputs]
        used = sorted({int(k) for line in self.lines for k in SYMBOL_PATTERN.findall(line)})
        if any(line.lstrip().startswith("fallback") for line in self.lines):
            used = [k for k, s in enumerate(program.symbols) if s is not None]
        head += [f"    s{k} = {read_symbol(f'b{self.index[program.symbols[k][0]]}', program.symbols[k][1])}" for k in used
                 if program.symbols[k][0] in program.inputs]   # the others an extern's result binds
        if self.streamed:
            head.append("    stream = current_stream()")
        source = "\n".join(head + self.lines) + "\n"
        exec(compile(source, "<numpile-triton runner>", "exec"), self.env)
        return source, self.env["run"]

    def extern(self, i: int, step: Extern) -> None:
        on_device = self.compiled.arrays.numpy_api   # NumPy's function runs on the device arrays
        value = self.on_device_now if on_device else self.host
        prefix, wrap = ("d", "device_asarray") if on_device else ("b", "asarray")

        def arg(v):
            if isinstance(v, BufferArg):
                return value(v.name)
            if isinstance(v, SymInt):
                return _python(v)
            if isinstance(v, (tuple, list)):
                inner = ", ".join(arg(x) for x in v)
                return f"({inner}{',' if len(v) == 1 else ''})" if isinstance(v, tuple) else f"[{inner}]"
            if isinstance(v, slice) and any(isinstance(b, SymInt) for b in (v.start, v.stop, v.step)):
                return f"slice({arg(v.start)}, {arg(v.stop)}, {arg(v.step)})"
            return self.constant(v)
        impl = CompiledLoop(self.compiled.compile_body, step.args[1:4]) if step.op == "loop" else \
            CompiledCond(self.compiled.compile_body) if step.op == "cond" else \
            CompiledWhile(self.compiled.compile_body) if step.op == "while_loop" else ops.get(step.op).impl
        self.env[f"extern{i}"] = DeviceExtern(impl, step.op, self.compiled.arrays, self.compiled.graph_name) \
            if on_device else impl
        args = ", ".join(arg(a) for a in step.args)
        kwargs = "".join(f", {k}={arg(v)}" for k, v in step.kwargs.items())
        call = f"extern{i}({args}{kwargs})"
        if isinstance(step.output, tuple):   # an op with several results: a buffer each
            self.lines.append(f"    ({''.join(f'{prefix}{self.index[o]}, ' for o in step.output)}) = map({wrap}, {call})")
        else:
            self.lines.append(f"    {prefix}{self.index[step.output]} = {wrap}({call})")
        if on_device:   # CuPy's function may give another dtype than NumPy's (histogram's float32 weights)
            for o in step.outputs:
                d = f"d{self.index[o]}"
                self.lines.append(f"    {d} = as_dtype({d}, {self.constant(self.program.buffers[o].dtype)})")
        for k, buffer, dim in self.program.binds(step):   # sizes only the data knew, which the result tells
            self.lines.append(f"    s{k} = {prefix}{self.index[buffer]}.shape[{dim}]")
            self.bound.add(k)
        if on_device:
            self.wrote(list(step.outputs), self.on_device, self.on_host)
            self.foreign.update(dict.fromkeys(step.outputs, "any"))
        else:
            self.wrote(list(step.outputs), self.on_host, self.on_device)

    def kernel(self, i: int, step: Kernel) -> None:
        launch = self.compiled.launches[step.name]
        kp = launch.kp
        arrays = []
        for name in kp.arrays:
            if name in self.on_host or name in self.on_device:   # it holds a value (an input, an update)
                arrays.append(self.on_device_now(name))
                self.own(name, written=name in step.outputs)
            else:   # a new buffer
                self.allocate(name)
                arrays.append(f"d{self.index[name]}")
        self.env[f"kernel{i}"] = launch
        sizes = "".join(f"({expr}), " for expr in self.compiled.sizes[step.name])
        dynamic = "" if launch.static is not None else \
            f", {_python(kp.rows)}, ({''.join(_python(c) + ', ' for c in kp.cols)})"
        call = f"kernel{i}(({', '.join(arrays)},), ({sizes}){dynamic})"
        direct = self.direct(launch, arrays) if self.binding and not sizes else None
        self.lines += [f"    {call}"] if direct is None else direct(call)
        self.wrote(step.outputs, self.on_device, self.on_host)

    def own(self, name: str, written: bool) -> None:
        """An extern's device result made what a kernel takes: C-ordered (kernels index buffers by
        C strides), and a copy of its own where the kernel writes into it."""
        state = self.foreign.get(name)
        if state is None or state == "shared" and not written:
            return
        d = f"d{self.index[name]}"
        self.lines.append(f"    {d} = to_device({d}, {written})")
        if written:
            del self.foreign[name]
        else:
            self.foreign[name] = "shared"

    def allocate(self, name: str) -> None:
        """A new device buffer: from a `Reused` slot in a bound runner where its shape is static and
        the library can tell who holds an array; else allocated."""
        buffer = self.program.buffers[name]
        d = f"d{self.index[name]}"
        holders = getattr(self.compiled.arrays, "holders", None)
        if self.binding and holders is not None and not any(isinstance(n, SymInt) for n in buffer.shape):
            slot = self.constant(Reused(self.compiled.arrays.empty, holders, tuple(buffer.shape), buffer.dtype))
            self.lines.append(f"    {d} = {slot}(stream)")
            self.streamed = True
        else:
            shape = "".join(_python(n) + ", " for n in buffer.shape)
            self.lines.append(f"    {d} = empty(({shape}), {self.constant(buffer.dtype)})")
        self.on_device.add(name)

    def direct(self, launch: Launch, arrays: list):
        """The lines launching `launch` (and its combining kernel) through Triton's launchers, given
        the line calling `launch` for the other cases; None where a launch is not bound."""
        chain = [(launch, arrays)]
        if launch.combine is not None:
            chain.append((launch.combine, [arrays[launch.kp.arrays.index(b)] for b in launch.combine.kp.arrays]))
        bound = [one.bound() for one, _ in chain]
        if None in bound:
            return None
        self.streamed = True
        pointers = {d: f"p{d[1:]}" for d in arrays}
        pointer = self.compiled.arrays.pointer_source
        lines = [f"    {', '.join(pointers.values())}, = {', '.join(pointer.format(d) for d in pointers)},",
                 f"    if ({' | '.join(pointers.values())}) & 15 or hooked():"]

        def launches(call):
            out = lines + [f"        {call}", "    else:"]
            for (run, grid, fixed, values), (_, given) in zip(bound, chain):
                args = [*map(str, grid), "stream", *map(self.literal, fixed), *(pointers[d] for d in given),
                        *map(repr, values)]
                out.append(f"        {self.constant(run)}({', '.join(args)})")
            return out
        return launches

    def fallback(self, i: int, step: Kernel) -> None:
        if self.compiled.arrays.numpy_api:
            self.device_fallback(i, step)
            return
        values = {}
        for name in step.inputs:
            values[name] = self.host(name)
        for name in step.outputs:
            b = f"b{self.index[name]}"
            if name in self.on_host or name in self.on_device:   # stored into in place
                self.host(name)
                if name in self.callers:
                    self.lines.append(f"    {b} = {b}.copy()")
            else:
                buffer = self.program.buffers[name]
                shape = "".join(_python(n) + ", " for n in buffer.shape)
                self.lines.append(f"    {b} = host_empty(({shape}), {self.constant(buffer.dtype)})")
            values[name] = b
        self.env[f"fallback{i}"] = _fallback(step)
        buffers = ", ".join(f"{name!r}: {b}" for name, b in values.items())
        self.lines.append(f"    fallback{i}({{{buffers}}}, [{self.symbols()}])")
        self.wrote(step.outputs, self.on_host, self.on_device)

    def device_fallback(self, i: int, step: Kernel) -> None:
        """A kernel run by the reference renderer on the device arrays (through CuPy)."""
        values = {}
        for name in step.outputs:
            if name in self.on_host or name in self.on_device:   # stored into in place
                values[name] = self.on_device_now(name)
                self.own(name, written=True)
            else:
                self.allocate(name)
                values[name] = f"d{self.index[name]}"
        for name in step.inputs:
            if name not in values:
                values[name] = self.on_device_now(name)
        self.env[f"fallback{i}"] = DeviceFallback(step, self.compiled.arrays, self.compiled.graph_name)
        buffers = ", ".join(f"{name!r}: {d}" for name, d in values.items())
        self.lines.append(f"    fallback{i}({{{buffers}}}, [{self.symbols()}])")
        self.wrote(step.outputs, self.on_device, self.on_host)

    def symbols(self) -> str:
        """The symbols' values known at this step, as runner source (None for the others)."""
        return ", ".join(f"s{k}" if s is not None and (s[0] in self.program.inputs or k in self.bound) else "None"
                         for k, s in enumerate(self.program.symbols))


def _plan(kernel: Kernel, program: Program) -> KernelPlan:
    return matmul_plan(kernel, program) if isinstance(kernel, MatmulKernel) else plan(kernel, program)


def _fallback(kernel: Kernel):
    """A kernel run by the lowering's reference renderer on host arrays."""
    return lambda buffers, symbols: run_kernel(kernel, buffers, symbols)
