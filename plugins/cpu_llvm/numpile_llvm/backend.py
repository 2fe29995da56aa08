"""The backend "llvm": the plugin class. A graph is scheduled into kernels (numpile.lowering) and
compiled as a CompiledProgram (program.py); a graph whose dynamic shapes need a decision runs
with NumPy."""

from __future__ import annotations

import ctypes
from functools import cache

import numpy as np

import numpile
from numpile import logs
from numpile.lowering import ARG_EXTREMES, schedule
from numpile.shapes import NewGuard, no_new_guards

from . import ndarray
from .program import CompiledProgram


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
            program = schedule(graph, ARG_EXTREMES)   # its kernels carry a position through selects: two passes
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
                           for offset in (ndarray.DATA_OFFSET, ndarray.DIMENSIONS_OFFSET, ndarray.STRIDES_OFFSET))
    if data != probe.__array_interface__["data"][0] or ctypes.c_int64.from_address(dims).value != probe.shape[0] \
            or ctypes.c_int64.from_address(strides).value != probe.strides[0]:
        return False, "this Python's ndarray object layout is not the one kernels read"
    for number in (0.75, np.float64(0.75)):
        if ctypes.c_void_p.from_address(id(number) + ndarray.TYPE_OFFSET).value != id(type(number)) \
                or ctypes.c_double.from_address(id(number) + ndarray.FLOAT_VALUE_OFFSET).value != number:
            return False, f"this Python's {type(number).__name__} object layout is not the one kernels read"
    return True, ""

