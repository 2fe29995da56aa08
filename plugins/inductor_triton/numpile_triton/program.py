"""A lowering Program run with Triton kernels: every Kernel rendered (kernel.py) into one Python
module of @triton.jit functions, and a generated runner (see `CompiledProgram.source`) that moves
buffers between the host and the device, allocates, launches and returns NumPy results.

Where each buffer's current value lives is decided at compile time, so the runner is straight-line
code: a kernel's operands are copied onto the device when their value is on the host, an extern's
(matmul, concatenate, anything not lowered: run by its NumPy implementation) and a fallback
kernel's (one codegen cannot render: run by the lowering's reference renderer) are copied back
first. With CuPy arrays as device buffers, externs run on them where they are (NumPy's function
dispatches to CuPy's). A buffer a kernel writes into that already held a value (an update in place) is copied
onto the device, never shared, so the caller's arrays change only through the graph's write-back; a
bound runner's kernels update a C-ordered CuPy argument in place (runner.py, `CupyArrays.updated`).
"""

from __future__ import annotations

import hashlib
import importlib.util
import time
from concurrent.futures import wait

import numpy as np

from numpile import disk_cache, logs
from numpile.lowering import Extern, Kernel, Program
from numpile.shapes import NewGuard, SymInt

from . import device
from .kernel import HELPERS, KernelPlan, Renderer, plan
from .autotune import Tuner
from .binaries import Records
from .launch import Launch
from .loop_graphs import LoopGraphs
from .matmul import MatmulKernel, MatmulRenderer, matmul_plan, with_templates
from .runner import RunnerWriter
from .pairs import real_form
from .scalar import Unlowerable, helpers
from .stages import split_stages

HEADER = '''import triton
import triton.language as tl
from triton.language.extra import libdevice
'''


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
        # a scan's second kernel walks the chunks its first one summed: their block sizes are one choice
        tune = tune and (kp.combine is None or kp.combine.mode != "scan_split")
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
        program = split_stages(program)
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
                    kernel, view = real_form(step, program)   # complex values as pairs of floats
                    rendered[step.name] = _Rendered(_plan(kernel, view), view, interpreting)
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
        self._ahead = [(launch, dtypes) for name, r in rendered.items() if not r.sizes
                       for launch, dtypes in zip((self.launches[name], self.launches[name].combine), r.dtypes)]
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
            self._owning = RunnerWriter(self, bound=True, owned=owned).write()[1]
            self._graphs = LoopGraphs(self)
        if self._graphs.replay(self._owning, start, step, count, carried, free):   # one CUDA graph
            return carried
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
        Then the bound runner takes over (see `runner.RunnerWriter`)."""
        start = time.perf_counter()
        self._compile_ahead()
        outputs = self.runner(*inputs)
        logs.get("perf").debug("triton: first run of %s in %.1f ms (Triton compiling or loading its %d kernels)",
                               self.graph_name, (time.perf_counter() - start) * 1e3, len(self.launches))
        self.bound_source, self.run = RunnerWriter(self, bound=True).write()
        if self.bound_source != self.source:
            logs.get("output_code").debug("triton bound runner for %s:\n%s", self.graph_name, self.bound_source)
        if not self.resident and not device.interpreting() and logs.enabled("perf"):
            self._log_transfers(inputs, outputs)
        return outputs

    def _compile_ahead(self) -> None:
        """The kernels compiled, and their launchers built beside the next compile, before the first
        run launches them (launch.py's `compile_ahead`, cupy_driver's note); where that fails, the
        launches compile them as before, said under `perf`."""
        builds = []
        try:
            for launch, dtypes in self._ahead:
                builds += launch.compile_ahead(tuple(map(np.dtype, dtypes)))
        except Exception as e:   # noqa: BLE001  the first run's launches compile them (and raise what is wrong)
            logs.get("perf").debug("triton: %s's kernels were not compiled ahead: %s: %s", self.graph_name, type(e).__name__, e)
        wait(builds)

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
        return RunnerWriter(self).write()


def _plan(kernel: Kernel, program: Program) -> KernelPlan:
    return matmul_plan(kernel, program) if isinstance(kernel, MatmulKernel) else plan(kernel, program)
