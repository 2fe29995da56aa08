"""A lowering Program compiled for this CPU (`CompiledProgram`): the driver that decides which of
the plugin's two compilers runs each step, and the runner (runner.py) that calls them.

Which compiler runs a step, by one rule:

- a Kernel of the schedule: one native function through the kernel IR (kernels/); where
  kernels/ raises Unlowerable (float16, gcd, an integer power with an array exponent, ...),
  NumPy through the lowering toolkit's reference renderer, the reason logged under `perf` and
  kept in `fallbacks`;
- an Extern "loop" (a captured loop): one native nest straight from its body's Graph (nests/)
  where the body is element code; else its body compiled as a program of its own (this class,
  `loop_body`) and run per iteration, or its iterations in one native call
  (kernels/iterations.py);
- an Extern "cond" or "while_loop": its bodies compiled as programs when first run;
- any other Extern: the registry op's NumPy implementation (matmul through NumPy's BLAS, ...).

Dynamic shapes: one CompiledProgram serves every size. The runner reads the symbols' values
from the inputs' shapes, allocates buffers of the sizes they give, passes each kernel the
symbols it uses, and decides on threads (and their ranges) at run time.
"""

from __future__ import annotations

import math
import time

import numpy as np

from numpile import logs, ops
from numpile.lowering import Extern, Kernel, Program
from numpile.lowering.reference import symbol_values
from numpile.ops.control import CompiledCond, CompiledLoop, CompiledWhile
from numpile.shapes import NewGuard

from . import allocator, jit, pycall, runner, sizes
from .irbuilder import Module, Unlowerable
from .kernels import chain, iterations, plan
from .kernels.step import KernelStep
from .nests import nest

# the externs of conds and while loops: their bodies compiled when first run (a loop's: `_loop`)
_CONTROL = {"cond": CompiledCond, "while_loop": CompiledWhile}


def _small(buf) -> bool:
    """Whether a buffer is of a static size under the allocator's (np.empty's, then, as it is)."""
    nbytes = plan.buffer_bytes(buf)
    return isinstance(nbytes, int) and nbytes < allocator.MIN_BYTES


def _empty(shape, dtype=None, order="C", **kwargs):
    """np.empty, from the allocator's blocks where it is large (allocator.py): memory the OS
    already mapped, whatever the C library did with the last one's."""
    dtype = np.dtype(np.float64 if dtype is None else dtype)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    if order != "C" or kwargs or math.prod(shape) * dtype.itemsize < allocator.MIN_BYTES:
        return np.empty(shape, dtype, order, **kwargs)
    return allocator.empty(shape, dtype)


def _assign(a, index, value):
    """NumPy's `a[index] = value` into a itself (its buffer is the update's)."""
    a[index] = value
    return a


class CompiledProgram:
    """A Program with native kernels, run by a generated Python function (see `source`)."""

    def __init__(self, program: Program, example_inputs, *, graph_name: str = "graph", fast_math: bool = False,
                 compile_body=None, loop_body: bool = False):
        """`compile_body(graph, example_inputs)` compiles the body of a loop node (ops/control.py);
        `loop_body`: this is one, which gets a native loop where it can (kernels/iterations.py)."""
        start = time.perf_counter()
        self.compile_body = compile_body
        self.no_native_loop = "its program has no kernels"   # why a loop body's iterations are not one native call
        self.program = program
        self.fallbacks: dict[str, str] = {}
        # inputs that are arrays already (numpile's guards keep their type on later calls)
        self.array_inputs = {n for n, v in zip(program.inputs, example_inputs) if type(v) is np.ndarray}
        # Python floats and NumPy float64 scalars (guarded so) that kernels read as they are
        # (ndarray.float_or_array_data)
        self.float_inputs = {n for n, v in zip(program.inputs, example_inputs)
                             if type(v) in (float, np.float64) and program.buffers[n].dtype == np.float64}
        strides = self._strides(program, example_inputs)
        self.input_layouts = {n: sizes.layout_key(strides[n]) for n in program.inputs}   # what kernels assume
        module = Module(jit.host_features(), fast_math)
        self.steps: dict[str, KernelStep] = {}   # the kernels that run native, by step name
        key = jit.cache_key(f"{program}{sorted(strides.items())}{fast_math}")[:16]
        symbols = [self._kernel(step, module, key, strides, graph_name)
                   for step in program.steps if isinstance(step, Kernel)]
        symbols = [found for found in symbols if found is not None]
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
        self.source, self.run, self.runner_head, self.runner_env = runner.build(self)
        # what `compiled.__call__` finds first (graph_compile._direct_call): the entry calls the
        # runner itself, no frame of __call__ between (about 60 ns a call)
        self.__call__ = self.run
        if native_loop and symbols:
            self.iterate = runner.iterate(self, native_loop, code)
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

    def _kernel(self, step: Kernel, module: Module, key: str, strides: dict, graph_name: str) -> tuple | None:
        """Kernel step `step` rendered into module as a native function (kernels/): (its symbol,
        its KernelStep); None where kernels/ cannot lower it, and it runs with NumPy (the rule
        above)."""
        kp = plan.plan(step, self.program)
        ks = KernelStep(self.program, kp, strides, module.fast_math)
        symbol = f"npk_{key}_{step.name}"
        trial = Module(module.cpu_features, module.fast_math)
        try:
            if any(strides.get(n, ()) is None for n in kp.arrays if n != plan.PARTIALS):
                raise Unlowerable("an input's strides are not whole elements")
            ks.render(trial, symbol, strides)
        except (Unlowerable, NewGuard) as e:
            self.fallbacks[step.name] = str(e)
            logs.get("perf").debug("llvm: %s of %s runs with NumPy: %s", step.name, graph_name, e)
            return None
        ks.render(module, symbol, strides)
        self.steps[step.name] = ks
        return symbol, ks

    def __call__(self, *inputs):
        return self.run(*inputs)

    def _chains(self, module: Module, key: str, symbol_of: dict) -> dict:
        """The runs of kernels called as one (kernels/chain.py): those that run whole at static
        sizes. By a run's first step: (the chain's symbol, its steps, its arguments as runner names)."""
        names = runner.buffer_names(self.program)
        steps = self.program.steps

        def chainable(step) -> bool:
            ks = self.steps.get(getattr(step, "name", None)) if isinstance(step, Kernel) else None
            return ks is not None and ks.quick

        found = {}
        for run in chain.runs(steps, chainable):
            calls = [(symbol_of[ks], runner.arguments(self, i, names), ks.kp.extent)
                     for i in run for ks in [self.steps[steps[i].name]]]
            name = f"npk_{key}_chain{run[0]}"
            params = chain.render(module, name, calls)
            pycall.render(module, name, len(params), 0)
            found[run[0]] = (name, run, params)
        return found

    def _native_loop(self, module: Module, key: str, symbol_of: dict) -> tuple | None:
        """This loop body's native loop (kernels/iterations.py): (its symbol, its array parameters
        as runner names, its symbol parameters, the carried (input, output) buffers), or None."""
        found = iterations.plan(self.program, self.steps)
        if isinstance(found, str) or self.fallbacks:
            self.no_native_loop = found if isinstance(found, str) else "a kernel runs with NumPy"
            return None
        indices, carried = found
        names = runner.buffer_names(self.program)
        kernels = [(symbol_of[ks], runner.arguments(self, i, names), ks.kp)
                   for i in indices for ks in [self.steps[self.program.steps[i].name]]]
        name = f"npk_{key}_loop"
        arrays, symbols = iterations.render(module, name, self.program, kernels, carried, names)
        return name, arrays, symbols, carried

    def extern(self, i: int, fresh: set):
        """What runs extern step i (the rule above); `fresh`: the buffers made by this run so far,
        which a loop's nest may update in place (nests/nest.py's owned_carried)."""
        step = self.program.steps[i]
        if step.op == "loop":
            return self._loop(step, nest.owned_carried(self.program, i, fresh))
        if step.op in _CONTROL:
            return _CONTROL[step.op](self.compile_body)
        if step.op == "setitem" and step.output == step.args[0].name:   # in place (lowering/in_place.py)
            return _assign
        if step.op == "empty" and not _small(self.program.buffers[step.output]):
            return _empty
        return ops.get(step.op).impl

    def _loop(self, step: Extern, owned: tuple):
        """A loop node's extern: its whole nest native where it is element code (nests/), else
        its body compiled as a program and run per iteration, or its iterations in one native
        call (kernels/iterations.py)."""
        try:
            return nest.NativeNest(step.args[0], step.args[1:4], jit.host_features(), owned).run
        except (Unlowerable, NewGuard) as e:   # a decision on sizes the trace did not guard: not a nest
            logs.get("perf").debug("llvm: a loop is not one native nest: %s", e)
            return CompiledLoop(self.compile_body, step.args[1:4])

    def same_layouts(self, inputs) -> bool:
        """Whether these inputs have the layouts the kernels were compiled for (a native loop calls
        the kernels as compiled: one that meets another layout stops, maybe after others ran)."""
        env = {n: np.asarray(v) for n, v in zip(self.program.inputs, inputs)}
        values = symbol_values(self.program, env)
        return all(sizes.layout_key(sizes.strides_of(n, self.program.buffers[n].shape, env[n], values)) == key
                   for n, key in self.input_layouts.items())

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

