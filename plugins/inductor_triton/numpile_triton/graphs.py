"""mode="reduce-overhead": a compiled program replayed as one CUDA graph.

The runner of a program on CuPy arrays is captured once per input signature (shapes, dtypes and
the values of number inputs) into a CUDA graph: every kernel launch and every cuBLAS call of the
program in one `cudaGraphLaunch`. A graph reads and writes fixed addresses, so a call copies its
input arrays into the capture's own input buffers, replays the graph, and returns copies of the
outputs (the caller owns its results, as with NumPy; the next replay overwrites the capture's).

[Note: the capture's memory] Buffers the program allocates and frees while it is captured return
to a memory pool of the capture's own, never to CuPy's: the graph writes them on every replay,
so no array of the caller's may ever be given their memory (torch's CUDA graphs keep a private
pool for the same reason). A warm-up run before the capture compiles the kernels and fills that
pool, so that the captured run allocates no new device memory.

A program with steps on the host (a kernel run by the reference renderer, an extern CuPy cannot
run) or a cuBLAS call (CuPy does not capture cuBLAS) cannot be captured: it runs as in the default
mode, said once under `perf`. Neither is a program whose graph would cost more than it saves (one
launch, or copies larger than the launches they save: `_not_worth_it`); said under `perf` too.

[Note: inputs read in place] A model's weights come back as the same CuPy arrays call after call.
Skipping their copy into a capture's buffer would be wrong (the caller may have changed them in
place since: `model.w[...] = ...`), so instead the inputs whose array was the same object on two
calls in a row (of one signature) get a graph of their own that reads those arrays' memory where it
is: a replay sees their current values and copies only the others. The capture holds the arrays
(their memory can never be given to another array while the graph reads it); a call with other
arrays in those places replays the graph that copies everything. Chosen once per signature.
"""

from __future__ import annotations

import weakref

from numpile import logs


_MISSING = object()


def _reference(array):
    """A weak reference to an array (an id could be a later array's), or a strong one where the
    type takes none."""
    try:
        return weakref.ref(array)
    except TypeError:
        return lambda: array


class GraphedProgram:
    """Calls `compiled` (a CompiledProgram on CuPy arrays) through CUDA graphs, one per signature
    and set of inputs read in place (see [Note: inputs read in place])."""

    def __init__(self, compiled):
        import cupy
        self.cupy, self.compiled = cupy, compiled
        self.captures: dict = {}   # (signature, slots read in place) -> _Capture, or None: not worth one
        self.in_place: dict = {}   # signature -> the slots whose array was the same object on two calls in a row
        self.previous: dict = {}   # signature -> references to the last call's arrays, until one is chosen
        self.uncapturable = ""     # why the program runs without graphs, once known

    def __call__(self, *inputs):
        if self.uncapturable:
            return self.compiled.run(*inputs)
        signature = tuple((x.shape, x.dtype.str) if isinstance(x, self.cupy.ndarray) else (type(x), x) for x in inputs)
        if signature not in self.in_place:
            last = self.previous.pop(signature, ())
            same = frozenset(i for i, (x, was) in enumerate(zip(inputs, last)) if was is not None and was() is x)
            if same:
                self.in_place[signature] = same
            else:
                self.previous[signature] = tuple(_reference(x) if isinstance(x, self.cupy.ndarray) else None
                                                 for x in inputs)
        key = (signature, self.in_place.get(signature, frozenset()))
        capture = self.captures.get(key, _MISSING)
        if capture not in (_MISSING, None) and not capture.holds(inputs):   # other arrays now: copied in
            key = (signature, frozenset())
            capture = self.captures.get(key, _MISSING)
        if capture is _MISSING:
            why_not = self._not_worth_it(inputs, key[1])
            try:
                capture = self.captures[key] = None if why_not else _Capture(self.cupy, self.compiled, inputs, key[1])
            except Exception as e:   # a step the graph cannot hold: the program runs launch by launch
                self.uncapturable = f"{type(e).__name__}: {e}"
                logs.get("perf").debug("triton: %s runs without CUDA graphs (reduce-overhead): %s",
                                       self.compiled.graph_name, self.uncapturable)
                return self.compiled.run(*inputs)
            if capture is not None and key[1]:
                names = [self.compiled.program.inputs[i] for i in sorted(key[1])]
                logs.get("perf").debug("triton: %s replays a CUDA graph that reads %s where they are (the same arrays "
                                       "call after call; the graph keeps them alive)", self.compiled.graph_name,
                                       ", ".join(names))
        return capture(inputs) if capture is not None else self.compiled.run(*inputs)

    def _not_worth_it(self, inputs, in_place: frozenset) -> str:
        """Why a graph would cost more than it saves for these inputs, or "". A replay saves about
        5 µs of launching per launch after the first, and pays for copying the inputs in (and as
        many bytes out, about): at the H100's 3 TB/s, 5 µs copies 15 MB, 7.5 MB each way. Inputs
        read in place cost nothing."""
        launches = sum(1 + (launch.combine is not None) for launch in self.compiled.launches.values())
        copied = sum(x.nbytes for i, x in enumerate(inputs) if isinstance(x, self.cupy.ndarray) and i not in in_place)
        why = ""
        if launches < 2:
            why = f"it launches {launches} kernel: a graph saves nothing"
        elif copied > (launches - 1) * 7.5e6:
            why = f"copying its {copied / 1e6:.1f} MB of inputs in and out costs more than {launches} launches"
        if why:
            logs.get("perf").debug("triton: %s runs without a CUDA graph for these inputs (reduce-overhead): %s",
                                   self.compiled.graph_name, why)
        return why


class _Capture:
    def __init__(self, cupy, compiled, inputs, in_place: frozenset):
        if compiled.fallbacks:
            raise RuntimeError(f"kernels run on the host: {', '.join(compiled.fallbacks)}")
        checked = [name for name, launch in compiled.launches.items() if launch.kp.checked]
        if checked:
            raise RuntimeError(f"kernels whose gathers are checked on the host: {', '.join(checked)}")
        self.cupy = cupy
        self.held = [(i, inputs[i]) for i in sorted(in_place)]   # read where they are: kept alive
        self.pool = cupy.cuda.MemoryPool()   # see [Note: the capture's memory]
        with cupy.cuda.using_allocator(self.pool.malloc):
            self.inputs = [cupy.array(x, order="C", copy=True) if isinstance(x, cupy.ndarray) and i not in in_place
                           else x for i, x in enumerate(inputs)]
            compiled.runner(*self.inputs)   # warm-up: kernels compiled, the pool filled (unbound: see reuse.py)
            self.stream = cupy.cuda.Stream(non_blocking=True)
            self.stream.wait_event(cupy.cuda.get_current_stream().record())
            with self.stream:
                self.stream.begin_capture()
                try:
                    self.outputs = compiled.runner(*self.inputs)
                finally:
                    self.graph = self.stream.end_capture()
        self.copied = [(i, x) for i, x in enumerate(self.inputs) if isinstance(x, cupy.ndarray) and i not in in_place]
        self.memcpy = cupy.cuda.runtime.memcpyAsync

    def holds(self, inputs) -> bool:
        """Whether the arrays this graph reads in place are these inputs' arrays."""
        return all(inputs[i] is x for i, x in self.held)

    def __call__(self, inputs) -> tuple:
        """Copy in, replay, copy out: one cudaMemcpyAsync per array (CuPy's copy functions cost
        several microseconds of Python each, more than the copy of a small array)."""
        cupy, memcpy = self.cupy, self.memcpy
        stream = cupy.cuda.get_current_stream()
        for i, static in self.copied:
            x = inputs[i]
            if x.flags.c_contiguous:
                memcpy(static.data.ptr, x.data.ptr, static.nbytes, _DEVICE_TO_DEVICE, stream.ptr)
            else:
                cupy.copyto(static, x)
        self.graph.launch(stream)
        return tuple(self._copy(o, stream) if isinstance(o, cupy.ndarray) else o for o in self.outputs)

    def _copy(self, array, stream):
        if not array.flags.c_contiguous:
            return array.copy()
        out = self.cupy.empty(array.shape, array.dtype)
        self.memcpy(out.data.ptr, array.data.ptr, array.nbytes, _DEVICE_TO_DEVICE, stream.ptr)
        return out


_DEVICE_TO_DEVICE = 3   # cudaMemcpyKind
