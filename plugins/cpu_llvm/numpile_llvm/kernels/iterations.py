"""A loop node's iterations in one native call.

The body of a loop node (numpile.ops.control) is compiled like any graph; where every step of its
program is a kernel that may run whole on one thread (or an np.empty_like, see UNINITIALIZED),
the body also gets a *native loop*: one function that runs the remaining iterations, calling the
body's kernels in order (whole, on the calling thread) with the index as their symbol and copying
each carried value the body computed into a buffer of its own back into the carried buffer (a
value updated in place needs no copy). A kernel's extent may change with the index (computed in
the loop), and so may a temporary's size (allocated once, at its largest: kernels address their
temporaries in C order from the current sizes). No Python runs between iterations:

    i64 @loop(ptr arrays..., i64 symbols..., i64 start, i64 step, i64 count)   ; -1, or where it stopped

A kernel that returns a status stops it: the result is `t << 16 | position << 8 | status` for
iteration t and the kernel's position in the body. Where the first kernel stopped (iteration t did
nothing yet) the rest run through the body's runner (ops/control.py's IterationsStopped); else the
runner raises (the graph then runs as Python, which gives NumPy's error). Inputs of a layout the
kernels were not compiled for never get that far: the runner, which compiles kernels for them,
runs every iteration (CompiledProgram.same_layouts).
"""

from __future__ import annotations

import math

import numpy as np

from numpile.ops.control import IterationsStopped
from numpile.shapes import SYMBOL_PATTERN, SymInt

from ..irbuilder import I64, Function, Module, V, literal
from ..ndarray import DATA_OFFSET, array_field
from ..sizes import Sizes

ITERATION_SHIFT, POSITION_SHIFT = 16, 8
# externs whose values are unspecified (np.empty_like in a body): one buffer, allocated once, serves
# every iteration, and the native loop calls nothing for them
UNINITIALIZED = frozenset({"empty", "empty_like"})


def stopped(status: int, carried: tuple):
    """The exception for a native loop's status (see the module docstring)."""
    done, position = status >> ITERATION_SHIFT, (status >> POSITION_SHIFT) & 0xFF
    if position == 0:
        return IterationsStopped(done, carried)
    return RuntimeError(f"a kernel of a native loop stopped iteration {done} with status {status & 0xFF}")


def index_symbol(program) -> int | None:
    """The symbol a loop body's program reads off its first input's value (its index), or None."""
    first = program.inputs[0] if program.inputs else None
    return next((k for k, s in enumerate(program.symbols) if s == (first, None)), None)


def plan(program, steps: dict) -> tuple[list, list] | str:
    """(kernel step indices, carried (input, output) buffer pairs) when the body's program can run
    as a native loop, else why not. `steps`: the compiled kernel steps by kernel name."""
    index = index_symbol(program)
    if index is None or len(program.outputs) + 1 > len(program.inputs):
        return "not a loop body"
    carried = list(zip(program.inputs[1:], program.outputs))
    others = set(program.inputs) - {i for i, o in carried if i == o}
    if any(o in others or o != i and o in program.inputs for i, o in carried):
        return "a carried value is another input"   # a swap: copies would clobber it
    kernels = []
    for i, step in enumerate(program.steps):
        if getattr(step, "op", None) in UNINITIALIZED:
            continue
        kernels.append(i)
        ks = steps.get(getattr(step, "name", None))
        if ks is None:
            return f"{step.op if hasattr(step, 'op') else step.name} runs with NumPy"
        if ks.parallel is True:
            return f"{step.name} is large enough for threads"
    if any(_uses(d, index) for n, b in program.buffers.items() if b.kind == "input" or n in program.outputs
           for d in b.shape):
        return "a carried value's size changes with the index"
    return kernels, carried


class _InLoop(Sizes):
    """Sizes computed where they are used, inside the loop (they change with the index)."""

    def at_entry(self, emit):
        return emit()


def _uses(size, k: int) -> bool:
    return isinstance(size, SymInt) and str(k) in SYMBOL_PATTERN.findall(size.expr)


def render(module: Module, name: str, program, kernels: list, carried: list, names: dict) -> tuple[list, list]:
    """Add the native loop `name` calling `kernels`, each (symbol, runner names of its arrays, its
    kernel plan); returns its parameters: (runner array names, symbol numbers)."""
    index = index_symbol(program)
    arrays: list[str] = []
    for _, args, _ in kernels:
        arrays += [a for a in args if a not in arrays]
    copies = [(names[i], names[o], program.buffers[i]) for i, o in carried if i != o]
    arrays += [a for pair in copies for a in pair[:2] if a not in arrays]
    symbols = sorted({k for _, _, kp in kernels for k in kp.symbols} - {index}
                     | {int(k) for *_, b in copies for d in b.shape if isinstance(d, SymInt)
                        for k in SYMBOL_PATTERN.findall(d.expr)})
    fn = Function(module)
    params = {f"s{k}": V(f"%s{k}", I64) for k in symbols}
    sizes = Sizes(fn, params)
    start, step = V("%start", I64), V("%step", I64)

    # a kernel that reads the index as a value (`x + i * 0.5`) loads it from the index's 0-d buffer
    index_data = sizes.at_entry(lambda: array_field(fn, arrays.index(names[program.inputs[0]]), DATA_OFFSET, "data")) \
        if names[program.inputs[0]] in arrays else None

    def body(t: V, acc: list) -> list:
        i = fn.binary("add", start, fn.binary("mul", t, step))
        if index_data is not None:
            fn.emit(f"store i64 {i.ref}, ptr {index_data.ref}")
        values = {**params, f"s{index}": i}
        here = _InLoop(fn, values)   # sizes of this iteration
        for position, (symbol, args, kp) in enumerate(kernels):
            call = [f"ptr %a{arrays.index(a)}" for a in args] + [f"i64 {values[f's{k}'].ref}" for k in kp.symbols]
            extent = here(kp.extent) if _uses(kp.extent, index) else sizes(kp.extent)
            call += ["i64 0", f"i64 {extent.ref}", "i64 -1"]
            status = fn.emit(f"call i32 @{symbol}({', '.join(call)})", np.dtype(np.int32))
            stop, go = fn.label("stop"), fn.label("go")
            fn.emit(f"br i1 {fn.compare('icmp', 'ne', status, literal(0, np.dtype(np.int32))).ref}, "
                    f"label %{stop}, label %{go}")
            fn.start_block(stop)
            wide = fn.convert("zext", status, I64)
            where = fn.binary("or", fn.binary("shl", t, literal(ITERATION_SHIFT, I64)),
                              literal(position << POSITION_SHIFT, I64))
            fn.emit(f"ret i64 {fn.binary('or', where, wide).ref}")
            fn.start_block(go)
        for into, source, buf in copies:
            nbytes = fn.binary("mul", sizes(math.prod(buf.shape)), literal(buf.dtype.itemsize, I64))
            dst, src = (array_field(fn, arrays.index(a), DATA_OFFSET, "data") for a in (into, source))
            module.declare("llvm.memcpy", "declare void @llvm.memcpy.p0.p0.i64(ptr, ptr, i64, i1)")
            fn.emit(f"call void @llvm.memcpy.p0.p0.i64(ptr {dst.ref}, ptr {src.ref}, i64 {nbytes.ref}, i1 false)")
        return []
    fn.loop(literal(0, I64), V("%count", I64), [], body)
    fn.emit("ret i64 -1")
    signature = ", ".join([f"ptr %a{k}" for k in range(len(arrays))] + [f"i64 %s{k}" for k in symbols]
                          + ["i64 %start", "i64 %step", "i64 %count"])
    module.functions.append(f"define i64 @{name}({signature}) {module.attribute_group('nounwind')} {{\n"
                            + "\n".join(["entry:"] + sizes.lines + fn.lines) + "\n}\n")
    return arrays, symbols
