"""A loop's iterations as one CUDA graph: `CompiledProgram.iterate` on CuPy arrays.

A loop kept as a loop node (ops/control.py's CompiledLoop) runs its body's bound runner once per
iteration from Python: a Jacobi step of two 2048^2 stencils took about
21 µs of host time a launch on the H200, against 8 µs of device time, so the loop ran at the host's
pace (2.1 ms for 50 steps, 0.82 as one graph). `iterate` knows the trip count, so its iterations
are captured once into one graph and replayed: one launch for the whole loop.

A graph reads and writes fixed addresses with fixed sizes, so it is kept per key: the range, the
carried and free arrays' addresses, shapes and dtypes, and the values of the free numbers (the launches
it holds were given the offsets and sizes made of them). It is made the second time a key comes (the
loop's copies of its carried arrays come back at the same addresses from CuPy's pool call after
call; a key seen once would cost a capture for nothing), and at most `KEPT` are kept. The first
iteration, run before, compiled the kernels, so none is compiled while captured; a capture that
fails anyway runs the loop as before.

Only a body of launches alone is captured: no extern or fallback (host work, cuBLAS), no buffer of
its own (an allocation would be the graph's memory, reused by others), no split reduction (its
partials), no number it reads (copied onto the device at each iteration, from host memory a replay
would not read again; nor a checked gather's flag, read after its launch), no Python number it returns, and iterations that update the carried arrays
in place (each returns the arrays it was given). Else it runs as before, said once under `perf`.
"""

from __future__ import annotations

from collections import OrderedDict

from numpile import logs
from numpile.lowering import Kernel

from .device import CupyArrays

KEPT = 4   # graphs per body
SEEN = 64   # keys remembered before a graph is made


def why_not(compiled) -> str:
    """Why the body's iterations cannot be one graph, or ""."""
    program = compiled.program
    if not isinstance(compiled.arrays, CupyArrays):
        return "its buffers are not CuPy arrays"
    if any(not isinstance(s, Kernel) or s.name not in compiled.launches for s in program.steps):
        return "it runs externs or kernels without a Triton form"
    if set(program.buffers) - set(program.inputs):
        return "it allocates buffers of its own"
    if compiled.python_numbers:
        return "it returns Python numbers (a copy to the host)"
    if program.inputs[0] in _used(program):
        return "its kernels read the loop's index (a copy onto the device at each iteration)"
    if any(launch.kp.checked for launch in compiled.launches.values()):
        return "a gather's positions are checked after its launch (checks.py: a number read)"
    if any(launch.combine is not None for launch in compiled.launches.values()):
        return "a split reduction (its partials are allocated at each launch)"
    return ""


def _used(program) -> set:
    """The buffers the program's steps or outputs read or write."""
    return {n for s in program.steps for n in (*s.inputs, *s.outputs)} | set(program.outputs)


class LoopGraphs:
    """The CUDA graphs of one loop body's iterations (see the module's docstring)."""

    def __init__(self, compiled):
        self.compiled, self.why_not = compiled, why_not(compiled)
        used = set() if self.why_not else _used(compiled.program)   # (kernels alone, where not why_not)
        self.used = [name in used for name in compiled.program.inputs[1:]]   # carried, then free
        self.graphs: OrderedDict = OrderedDict()
        self.seen: set = set()
        if self.why_not:
            logs.get("perf").debug("triton: the loop body %s runs its iterations one by one: %s",
                                   compiled.graph_name, self.why_not)

    def replay(self, owning, start: int, step: int, count: int, carried: tuple, free: tuple) -> bool:
        """Run the iterations as one graph, if one is kept or made for them; False where not (nothing ran)."""
        if self.why_not:
            return False
        key = self._key(start, step, count, carried, free)
        if key is None:
            return False
        graph = self.graphs.get(key)
        if graph is None:
            if key not in self.seen:
                self.seen = self.seen if len(self.seen) < SEEN else set()
                self.seen.add(key)
                return False
            graph = self._capture(owning, start, step, count, carried, free)
            if graph is None:
                return False
            self.graphs[key] = graph
            while len(self.graphs) > KEPT:
                self.graphs.popitem(last=False)
        graph.launch(self.compiled.arrays.cupy.cuda.get_current_stream())
        return True

    def _key(self, start, step, count, carried, free):
        cupy = self.compiled.arrays.cupy
        parts = [start, step, count]
        for v, used in zip((*carried, *free), self.used):
            if isinstance(v, cupy.ndarray) and v.flags.c_contiguous:   # (else the runner copies it)
                parts.append((v.data.ptr, v.shape, v.dtype.str))
            elif used:   # a number the runner copies onto the device: host memory a graph cannot read
                return None
            elif isinstance(v, cupy.ndarray):
                parts.append(v.shape)
            else:   # a number the runner makes kernel arguments of (an outer loop's index in a size or an
                parts.append((type(v), v))   # offset): the graph holds its value (syrk's `C[i, :i + 1]`)
        return tuple(parts)

    def _capture(self, owning, start, step, count, carried, free):
        cupy = self.compiled.arrays.cupy
        stream = cupy.cuda.Stream(non_blocking=True)
        stream.wait_event(cupy.cuda.get_current_stream().record())
        values = carried
        try:
            with stream:
                stream.begin_capture()
                try:
                    for index in range(start, start + step * count, step):
                        values = owning(index, *values, *free)
                finally:
                    graph = stream.end_capture()
        except Exception as e:   # a call the capture refuses (nothing ran): launch by launch from now on
            self.why_not = f"the capture failed ({type(e).__name__}: {e})"
        if not self.why_not and (len(values) != len(carried) or any(v is not c for v, c in zip(values, carried))):
            self.why_not = "its iterations do not update the carried arrays in place"
        if self.why_not:
            logs.get("perf").debug("triton: the loop body %s runs its iterations one by one: %s",
                                   self.compiled.graph_name, self.why_not)
            return None
        logs.get("perf").debug("triton: the loop body %s replays its %d iterations as one CUDA graph",
                               self.compiled.graph_name, count)
        return graph
