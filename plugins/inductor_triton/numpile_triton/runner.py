"""The runner of a CompiledProgram (program.py): generated Python source, straight-line, that moves
buffers between the host and the device (`b3` is buffer 3's value on the host, `d3` on the device),
allocates, launches each kernel, runs externs and fallback kernels, and returns the outputs; and the
bound runner written after the first run, which calls Triton's launchers directly."""

from __future__ import annotations

import numpy as np

from numpile import ops
from numpile.lowering import BufferArg, Extern, Kernel
from numpile.lowering.reference import run_kernel
from numpile.ops.control import CompiledCond, CompiledLoop, CompiledWhile
from numpile.shapes import SYMBOL_PATTERN, SymInt, read_symbol

from . import checks
from .launch import Launch, hooked
from .on_device import DeviceExtern, DeviceFallback
from .plans import reads
from .reuse import HostScalar, Reused


def _python(size) -> str:
    """A size as runner source (symbols are the runner's variables s0, s1, ...)."""
    return f"({size.expr})" if isinstance(size, SymInt) else repr(size)


class RunnerWriter:
    """Writes the runner: `b3` is buffer 3's value on the host, `d3` on the device.

    The bound runner, written after the first run (every kernel then compiled), calls Triton's
    launcher of each launch of fixed configuration directly, its grid and block values written in,
    instead of `Launch` (no launch key built, no dictionary looked up: about 3 µs a launch), while
    the buffers' addresses are 16-byte aligned and no profiler hooks launches; and it takes the
    buffers it allocates from `Reused` slots (see [Note: buffer reuse] in reuse.py)."""

    def __init__(self, compiled, bound: bool = False, owned: frozenset = frozenset()):
        """`owned`: inputs the caller hands over to be updated in place (a loop's carried arrays)."""
        self.compiled = compiled
        self.binding = bound
        self.streamed = False   # whether the runner reads the current stream (a bound runner's launches, slots)
        self.program = program = compiled.program
        self.index = {n: i for i, n in enumerate(program.buffers)}
        arrays = compiled.arrays
        self.env = {"to_device": arrays.to_device, "to_host": arrays.to_host, "empty": arrays.empty, "zeros": arrays.zeros,
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
        # inputs given as device arrays (and numbers, which go there too), made buffers where first
        # used: a loop body's unused index was copied onto the device at every iteration
        self.unconverted: set[str] = set()
        # 0-d inputs kept on the device per value where they come as numbers: those only kernels read,
        # of CuPy programs (see [Note: numbers kept on the device] in reuse.py)
        self.host_scalars: set[str] = set()
        # inputs a bound runner lets its kernels update in the caller's own array: the graph writes
        # them back anyway, and the lowering updates an input in place only where no later step may
        # raise; a kernel run by the reference renderer may, so it gets a copy (CupyArrays.updated)
        self.in_place: set[str] = set()
        if bound and compiled.resident and hasattr(arrays, "updated"):
            kernels = [s for s in program.steps if isinstance(s, Kernel)]
            fallbacks = {o for s in kernels if s.name not in compiled.launches for o in s.outputs}
            self.in_place = self.device_written & set(program.inputs) - fallbacks
            self.env["updated"] = arrays.updated
        if compiled.resident:
            self.on_host, self.callers = set(), set()
            self.on_device, self.unconverted = set(program.inputs), set(program.inputs)
            if getattr(arrays, "capturing", None) is not None:
                handed_on = set().union(*(reads(s) for s in program.steps if isinstance(s, Extern)))
                self.host_scalars = {n for n in program.inputs if program.buffers[n].shape == ()} - handed_on \
                    - self.device_written - owned - set(program.outputs)

    def host(self, name: str) -> str:
        b = f"b{self.index[name]}"
        if name not in self.on_host:
            self.lines.append(f"    {b} = to_host({self.on_device_now(name)})")
            self.on_host.add(name)
        return b

    def on_device_now(self, name: str) -> str:
        d = f"d{self.index[name]}"
        if name in self.unconverted:
            self.unconverted.discard(name)
            if name in self.host_scalars:
                arrays = self.compiled.arrays
                kept = self.constant(HostScalar(arrays.to_device, arrays.capturing))
                self.lines.append(f"    {d} = {kept}(b{self.index[name]}, stream)")
                self.streamed = True
            elif name in self.in_place:
                others = "".join(f"b{self.index[n]}, " for n in self.program.inputs if n != name)
                self.lines.append(f"    {d} = updated(b{self.index[name]}, ({others}))")
            else:
                self.lines.append(f"    {d} = to_device(b{self.index[name]}, {name in self.device_written})")
        elif name not in self.on_device:
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
            elif name == kp.checked:   # no position out of range yet
                self.lines.append(f"    d{self.index[name]} = zeros((1,), {self.constant(checks.FLAG_DTYPE)})")
                arrays.append(f"d{self.index[name]}")
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
        if kp.checked:   # NumPy's IndexError where a position was out of range (checks.py)
            self.env[f"check{i}"] = checks.Check(step, self.compiled.arrays, self.compiled.graph_name)
            buffers = ", ".join(f"{name!r}: {d}" for name, d in zip(kp.arrays, arrays) if name != kp.checked)
            self.lines.append(f"    check{i}(d{self.index[kp.checked]}, {{{buffers}}}, [{self.symbols()}])")

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
        for name in step.outputs:   # first: a later stage may read what an earlier one stores
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
        for name in step.inputs:
            if name not in values:
                values[name] = self.host(name)
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


def _fallback(kernel: Kernel):
    """A kernel run by the lowering's reference renderer on host arrays."""
    return lambda buffers, symbols: run_kernel(kernel, buffers, symbols)
