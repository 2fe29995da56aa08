"""The backend "triton": a graph is scheduled into kernels (numpile.lowering, the fusion decisions
the llvm backend makes too), every kernel is rendered as a Triton kernel and run on the CUDA device
(or, with TRITON_INTERPRET=1, through Triton's interpreter on the CPU), and a generated Python
function runs the program: it copies NumPy inputs onto the device, launches the kernels, runs
externs (matmul, anything not lowered) with NumPy on host copies, and returns NumPy results.

A kernel codegen cannot render yet runs with NumPy on the host through the lowering's reference
renderer; the reason is logged under `perf` and kept in `CompiledProgram.fallbacks`.
"""

from __future__ import annotations

import numpile
from numpile import logs
from numpile.lowering import schedule
from numpile.shapes import NewGuard, no_new_guards

from . import device


TUNED = ("max-autotune", "max-autotune-no-cudagraphs")
GRAPHED = ("reduce-overhead", "max-autotune")


class TritonBackend(numpile.Backend):
    name = "triton"
    description = "fused Triton kernels on a CUDA GPU (TRITON_INTERPRET=1: Triton's interpreter on the CPU)"
    supports_dynamic_shapes = True
    supports_loops = True   # the loop on the host, each iteration's kernels on the device
    # reduce-overhead: CUDA graphs (graphs.py); max-autotune: timed launch configurations (autotune.py)
    # and CUDA graphs, as torch.compile's mode of that name; max-autotune-no-cudagraphs: the first alone
    modes = (None, "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")

    @property
    def devices(self) -> tuple[str, ...]:
        """The GPU's; the CPU's with TRITON_INTERPRET=1 (NumPy arrays in and out there)."""
        return ("cpu",) if device.interpreting() else ("cuda",)

    def is_available(self) -> tuple[bool, str]:
        return device.availability()

    def compile(self, graph, example_inputs, options):
        unknown = set(options) - {"mode"}
        if unknown:
            raise ValueError(f"backend 'triton' has no option {', '.join(sorted(map(repr, unknown)))}")
        from .program import CompiledProgram   # imports torch's and triton's helpers lazily
        name = f"graph {graph.fingerprint()[:10]}"
        try:
            program = schedule(graph)
        except NewGuard as e:
            logs.get("perf").debug("triton: %s runs with NumPy: its dynamic shapes need a decision: %s", name, e)
            return graph.compile_python()
        mode = options.get("mode")
        with no_new_guards():
            compiled = CompiledProgram(program, graph_name=name, resident=any(map(device.resident, example_inputs)),
                                       arrays=device.arrays_for(example_inputs), tune=mode in TUNED,
                                       compile_body=lambda body, inputs: self.compile(body, inputs, {}),
                                       python_numbers=python_numbers(graph, program))
        if mode not in GRAPHED:
            return compiled
        if not isinstance(compiled.arrays, device.CupyArrays):
            logs.get("perf").debug("triton: %s runs without CUDA graphs: %s captures programs on "
                                   "CuPy arrays, and these inputs are not", name, mode)
            return compiled
        from .graphs import GraphedProgram
        return GraphedProgram(compiled)


def python_numbers(graph, program) -> frozenset:
    """The program's output buffers that the graph returns as Python numbers."""
    return frozenset(b for b, n in zip(program.outputs, graph.outputs) if n.meta.get("weak"))
