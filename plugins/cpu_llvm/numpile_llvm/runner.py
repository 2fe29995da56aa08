"""The runner of a CompiledProgram (program.py): generated Python source that reads the symbols'
values from the inputs' shapes (`s0 = b0.shape[0]`), allocates buffers of the sizes they give,
calls each step in order (a kernel whole or split over threads, a chain of small kernels, an
extern, a kernel the reference renderer runs) and returns the outputs; and a loop body's
`iterate`, the same prologue around its native loop (kernels/iterations.py). Each function takes
the CompiledProgram `cp` whose runner it writes."""

from __future__ import annotations

import ctypes
import re

import numpy as np

from numpile.lowering import BufferArg, Extern, Kernel, Program
from numpile.lowering.reference import run_kernel
from numpile.ops.control import CompiledLoop, IterationsStopped
from numpile.shapes import SYMBOL_PATTERN, SymInt, read_symbol

from . import allocator
from .kernels import chain, iterations, plan
from .nests import nest
from .sizes import as_python


def iterate(cp, native_loop: tuple, code):
    """`iterate(start, step, count, carried, free)` (ops/control.py's CompiledLoop): the
    runner's prologue, then the native loop over the carried arrays, which it returns."""
    symbol, arrays, symbols, carried = native_loop
    native = code.function(symbol, ctypes.CFUNCTYPE(ctypes.c_int64, *[ctypes.c_void_p] * len(arrays),
                                                    *[ctypes.c_int64] * (len(symbols) + 3)))
    names = buffer_names(cp.program)
    inputs = "".join(names[n] + ", " for n in cp.program.inputs)
    results = "".join(names[i] + ("[()]" if cp.program.buffers[o].scalar else "") + ", " for i, o in carried)
    lines = ["def iterate(start, step, count, carried, free):",
             "    if not same_layouts((start, *carried, *free)):",   # the runner compiles kernels for new ones
             "        raise IterationsStopped(0, carried)",
             f"    ({inputs}) = (start, *carried, *free)",
             *[f"    {names[n]} = asarray({names[n]})" for n in sorted(cp.float_inputs)],   # the native loop reads arrays
             *cp.runner_head, *_loop_allocations(cp, names),
             f"    status = native({''.join(f'id({a}), ' for a in arrays)}{''.join(f's{k}, ' for k in symbols)}"
             "start, step, count)",
             "    if status != -1:", f"        raise stopped(status, ({results}))",
             f"    return ({results})"]
    env = {**cp.runner_env, "native": native, "stopped": iterations.stopped, "same_layouts": cp.same_layouts,
           "IterationsStopped": IterationsStopped}
    exec(compile("\n".join(lines) + "\n", "<numpile-llvm native loop>", "exec"), env)
    return env["iterate"]


def _loop_allocations(cp, names: dict) -> list[str]:
    """A native loop's temporaries, each allocated at its largest over the loop: a size that
    changes with the index is linear in it, so largest at the first index or the last."""
    index = iterations.index_symbol(cp.program)
    last = re.compile(rf"\bs{index}\b")
    lines = [f"    s{index}_last = start + step * (count - 1)"]
    uninitialized = {o for s in cp.program.steps if getattr(s, "op", None) in iterations.UNINITIALIZED for o in s.outputs}
    for n in sorted(plan.allocated_buffers(cp.program) | uninitialized):
        buf = cp.program.buffers[n]
        dims = [as_python(d) for d in buf.shape]
        dims = [f"max({d}, {last.sub(f's{index}_last', d)})" if last.search(d) else d for d in dims]
        lines.append(f"    {names[n]} = empty(({''.join(d + ', ' for d in dims)}), {buf.dtype.str!r})")
    return lines


def _whole_call(cp, i: int, names: dict, env: dict) -> tuple[str, str]:
    """Kernel step i run whole on one thread, as runner source: (its relayout call, the
    statement `if kernel(...): relayout(...)`)."""
    ks = cp.steps[cp.program.steps[i].name]
    env[f"kernel{i}"], env[f"relayout{i}"] = ks.native, ks.relayout
    if ks.unused_partials:
        env[f"partials{i}"] = ks.unused_partials[0]
    arrays = ", ".join(names[n] for n in ks.kp.arrays if n != plan.PARTIALS)
    symbols = "".join(f"s{k}, " for k in ks.kp.symbols)
    dynamic = f", ({symbols}), {as_python(ks.kp.extent)}" if ks.kp.symbols else ""
    relayout = f"relayout{i}(({arrays},){dynamic})"
    kernel = f"kernel{i}"
    if ks.small:
        env[f"small{i}"] = ks.small
        kernel = f"(small{i} if {ks.small_test} else kernel{i})"
    return relayout, f"if {kernel}({', '.join(arguments(cp, i, names))}, {symbols}0, {as_python(ks.kp.extent)}, -1): {relayout}"


def arguments(cp, i: int, names: dict) -> list[str]:
    """The arrays kernel step i takes, as the runner names them (its partials last)."""
    ks = cp.steps[cp.program.steps[i].name]
    arrays = [names[n] for n in ks.kp.arrays if n != plan.PARTIALS]
    return arrays + ([f"partials{i}"] if ks.unused_partials else [])


def build(cp) -> tuple:
    """Python source that runs CompiledProgram cp's program, the function it defines, and the
    runner's prologue and namespace (a native loop's `iterate` begins with them)."""
    writer = _Writer(cp)
    chained = {i for _, run, _ in cp.chains.values() for i in run[1:]}
    for i, step in enumerate(cp.program.steps):
        writer.allocate(i)
        if isinstance(step, Extern):
            writer.env[f"extern{i}"] = cp.extern(i, writer.fresh)
        if i not in chained and not hasattr(writer.env.get(f"extern{i}"), "returns_arrays"):   # not a nest
            writer.as_arrays(cp.chains[i][1] if i in cp.chains else [i])
        if isinstance(step, Extern):
            writer.extern(i, step)
        elif i in cp.chains:
            writer.chain(i)
        elif i in chained:
            continue
        elif step.name in cp.steps:
            writer.kernel(i, step)
        else:
            writer.fallback(i, step)
        writer.release(i)
    return writer.finish()


def _lifetimes(cp) -> tuple[dict, dict]:
    """Per buffer, the step of its first use and of its last (a chained kernel's at the chain's
    first step, where the runner calls the chain)."""
    head = {k: run[0] for _, run, _ in cp.chains.values() for k in run}
    first, last = {}, {}
    for i, step in enumerate(cp.program.steps):
        for n in (*nest.step_reads(step), *step.outputs):
            first.setdefault(n, head.get(i, i))
            last[n] = head.get(i, i)
    return first, last


class _Writer:
    """The runner's source, written step by step: its lines, the namespace they run in, and what
    it knows so far (symbols bound by extern results, buffers made fresh, nests' Python scalars)."""

    def __init__(self, cp):
        self.cp, self.program = cp, cp.program
        self.names = buffer_names(self.program)
        self.env = {"empty": np.empty, "cached_empty": allocator.empty, "asarray": np.asarray}
        self.lines: list[str] = []
        self.used = set()    # the symbols the runner needs
        self.bound = set()   # the unbacked symbols an extern's result has told so far
        self.unbacked = {k for k, s in enumerate(self.program.symbols) if s is not None and s[0] not in self.program.inputs}
        self.waiting = []    # (buffer, the unbacked symbols its shape needs) not yet allocated
        for n in sorted(plan.allocated_buffers(self.program), key=list(self.program.buffers).index):
            self.env[f"dt_{self.names[n]}"] = self.program.buffers[n].dtype
            needs = {int(k) for d in self.program.buffers[n].shape for k in SYMBOL_PATTERN.findall(as_python(d))}
            self.waiting.append((n, needs & self.unbacked))
        self.fresh = plan.allocated_buffers(self.program)   # arrays made this run, for nests to update in place
        self.first_use, self.last_use = _lifetimes(cp)
        self.scalars = set()   # buffers holding a nest's Python scalar: made arrays where a step needs one
        self.floats = set(cp.float_inputs)   # Python floats: kernels read them as they are, other steps get arrays

    def allocate(self, step: int) -> None:
        """The buffers step `step` or an earlier one uses whose sizes are known by now: made when
        they are first needed and dropped after their last use (release), temporaries take turns
        in the memory the C library keeps, as NumPy's do; all made at once, a program of many
        mid-sized ones mapped fresh pages on every call."""
        names = self.names
        for n, needs in [w for w in self.waiting if w[1] <= self.bound and self.first_use.get(w[0], 0) <= step]:
            self.waiting.remove((n, needs))
            buf = self.program.buffers[n]
            shape = f"({''.join(as_python(d) + ', ' for d in buf.shape)})"
            nbytes = plan.buffer_bytes(buf)
            if isinstance(nbytes, SymInt):
                alloc = f"(cached_empty if {as_python(nbytes)} >= {allocator.MIN_BYTES} else empty)"
            else:
                alloc = "cached_empty" if nbytes >= allocator.MIN_BYTES else "empty"
            self.lines.append(f"    {names[n]} = {alloc}({shape}, dt_{names[n]})")

    def release(self, step: int) -> None:
        """Drop the temporaries step `step` used last (an output or an input stays)."""
        kept = set(self.program.outputs) | set(self.program.inputs)
        done = [self.names[n] for n, last in self.last_use.items() if last == step and n not in kept]
        if done:
            self.lines.append(f"    del {', '.join(done)}")

    def as_arrays(self, steps: list) -> None:
        """The nests' Python scalars these steps read, and the input floats unless every step is a
        native kernel, made arrays first."""
        needs = {b for k in steps for b in nest.step_reads(self.program.steps[k])}
        native = all(getattr(self.program.steps[k], "name", None) in self.cp.steps for k in steps)
        python = self.scalars | (set() if native else self.floats)
        self.lines += [f"    {self.names[b]} = asarray({self.names[b]})" for b in sorted(needs & python)]
        self.scalars -= needs
        self.floats -= needs if not native else set()

    def extern(self, i: int, step: Extern) -> None:
        names, env, program = self.names, self.env, self.program
        if nest.fresh_result(step.op) or step.op == "loop" and not isinstance(env[f"extern{i}"], CompiledLoop):
            self.fresh |= set(step.outputs)
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
            self.lines.append(f"    ({''.join(names[o] + ', ' for o in step.outputs)}) = {call}")
            self.scalars |= {o for o in step.outputs if not program.buffers[o].shape}
        elif getattr(env[f"extern{i}"], "returns_arrays", False):   # a nest's: ndarrays already
            self.lines.append(f"    ({''.join(names[o] + ', ' for o in step.outputs)}) = {call}")
        elif isinstance(step.output, tuple):   # an op with several results: a buffer each
            self.lines.append(f"    ({''.join(names[o] + ', ' for o in step.output)}) = map(asarray, {call})")
        else:
            self.lines.append(f"    {names[step.output]} = asarray({call})")
        for k, buffer, dim in program.binds(step):  # sizes the result tells
            self.lines.append(f"    s{k} = {names[buffer]}.shape[{dim}]")
            self.bound.add(k)
        self.allocate(i)

    def chain(self, i: int) -> None:
        native, run, params = self.cp.chains[i]
        self.env[f"chain{i}"] = native
        self.lines += chain.runner_lines(f"chain{i}", params, [_whole_call(self.cp, k, self.names, self.env) for k in run])

    def kernel(self, i: int, step) -> None:
        ks = self.cp.steps[step.name]
        arrays = ", ".join(self.names[n] for n in ks.kp.arrays if n != plan.PARTIALS)
        symbols = "".join(f"s{k}, " for k in ks.kp.symbols)
        dynamic = f", ({symbols}), {as_python(ks.kp.extent)}" if ks.kp.symbols else ""
        whole = "if"
        if ks.parallel:
            self.env[f"split{i}"] = ks.run
            test = "" if ks.parallel is True else f"if {ks.parallel}: "
            self.lines.append(f"    {test}split{i}(({arrays},){dynamic})")
            whole = "elif"
        if ks.parallel is not True:
            self.lines.append(f"    {whole} {_whole_call(self.cp, i, self.names, self.env)[1][3:]}")

    def fallback(self, i: int, step: Kernel) -> None:
        needs = plan.plan(step, self.program).symbols
        self.env[f"fallback{i}"] = _fallback(step, self.names, needs, len(self.program.symbols))
        self.lines.append(f"    fallback{i}(locals())")
        self.used.update(needs)

    def finish(self) -> tuple:
        """(source, run, the prologue after `def run`, the namespace)."""
        program, names = self.program, self.names
        self.lines += [f"    {names[n]} = asarray({names[n]})" for n in sorted(self.floats & set(program.outputs))]
        outputs = [names[n] + ("[()]" if program.buffers[n].scalar and n not in self.scalars else "") for n in program.outputs]
        self.lines.append(f"    return ({', '.join(outputs)}{',' if len(outputs) == 1 else ''})")
        self.used.update(int(k) for line in self.lines for k in SYMBOL_PATTERN.findall(line))
        head = [f"def run({', '.join(names[n] for n in program.inputs)}):"]
        head += [f"    {names[name]} = asarray({names[name]})" for name in program.inputs
                 if name not in self.cp.array_inputs | self.cp.float_inputs]
        head += [f"    s{k} = {read_symbol(names[program.symbols[k][0]], program.symbols[k][1])}"
                 for k in sorted(self.used - self.unbacked)]
        source = "\n".join(head + self.lines) + "\n"
        exec(compile(source, "<numpile-llvm runner>", "exec"), self.env)
        return source, self.env["run"], head[1:], self.env


def buffer_names(program: Program) -> dict:
    """Each buffer's name in the runner: b0, b1, ..."""
    return {n: f"b{i}" for i, n in enumerate(program.buffers)}


def _render_arg(value, names: dict, env: dict) -> str:
    """An extern's argument as runner source: a buffer's name, a size, or a constant kept in env."""
    if isinstance(value, BufferArg):
        return names[value.name]
    if isinstance(value, SymInt):
        return as_python(value)
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
