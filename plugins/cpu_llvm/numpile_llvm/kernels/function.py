"""Kernel IR to LLVM IR: one native function per kernel of a lowering Program.

A kernel function takes its buffers as ndarray objects, a range [lo, hi) of its parallel
loop and a slot, and returns a status:

    i32 @kernel(PyArrayObject* b0, ..., i64 s0, ..., i64 lo, i64 hi, i64 slot)   ; 0 ok, else STATUS bits

It reads each array's data pointer and, for arrays it did not allocate (inputs, results of
externs), checks the strides it was specialised for: strides are compile-time constants in
the address arithmetic, which is what lets LLVM vectorise. A mismatch returns 1 and the
runtime compiles a variant for the new layout. The loops live in `@kernel.body`, whose data
pointers are `noalias`: buffers never overlap, as every output is freshly allocated.

In a graph with dynamic shapes a kernel also takes the values of the symbols its sizes use
(`s0, ...`, see sizes.py): trip counts, C-order strides and index constants are computed from
them at entry; a stride that is not the C-order one nor 0 or ±1 is read from the array. What
was decided from sizes at compile time is decided at run time there: the shape of a float
sum's pairwise tree (the balanced walk or the general one), and whether large outputs stream
out (two bodies, chosen at entry).
"""

from __future__ import annotations

import numpy as np

from numpile.lowering import Program
from numpile.shapes import SymInt

from .body import KernelBody
from ..irbuilder import BOOL, I64, Function, Module, V, literal
from ..ndarray import DATA_OFFSET, DIMENSIONS_OFFSET, STRIDES_OFFSET, array_field, element, float_or_array_data
from .plan import RELAYOUT, KernelPlan, buffer_bytes, size_parameters
from ..sizes import Sizes, read_at_run_time
from .streams import STREAM_MIN_BYTES, streamed

def render(module: Module, symbol: str, kp: KernelPlan, program: Program, strides: dict, checked: set) -> None:
    """Add the kernel's functions to the module: its entry and one body, or two where outputs
    of symbolic sizes stream out when large. `strides`: element strides per buffer (see
    sizes.py); `checked`: the buffers whose strides the entry checks."""
    large = [nbytes for stage in kp.kernel.stages
             if streamed(kp, stage, program, strides, module, large=True)
             and isinstance(nbytes := buffer_bytes(program.buffers[stage.output]), SymInt)]
    _render_entry(module, symbol, kp, program, strides, checked, large)
    KernelBody(module, f"{symbol}.body", kp, program, strides, large=False).render()
    if large:
        KernelBody(module, f"{symbol}.large", kp, program, strides, large=True).render()


def _render_entry(module, symbol, kp, program, strides, checked, large):
    fn = Function(module)
    sizes = Sizes(fn, {f"s{k}": V(f"%s{k}", I64) for k in kp.symbols})
    params = ", ".join([f"ptr %a{i}" for i in range(len(kp.arrays))] + [f"i64 %s{k}" for k in kp.symbols])
    data = []
    ok = literal(True, BOOL)
    for i, name in enumerate(kp.arrays):
        data.append(float_or_array_data(fn, i) if _maybe_float(name, program) else array_field(fn, i, DATA_OFFSET, "data"))
        if name not in checked:
            continue
        buf = program.buffers[name]
        itemsize = literal(buf.dtype.itemsize, I64)
        pointer = array_field(fn, i, STRIDES_OFFSET)
        dims = array_field(fn, i, DIMENSIONS_OFFSET) if any(isinstance(n, SymInt) for n in buf.shape) else None
        for d, (n, s) in enumerate(zip(buf.shape, strides[name])):
            if not isinstance(n, SymInt) and n <= 1:
                continue
            actual = element(fn, pointer, d)
            if read_at_run_time(name, d, s):   # whole elements, passed on
                same = fn.compare("icmp", "eq", fn.binary("srem", actual, itemsize), literal(0, I64))
                sizes.params[s.expr] = fn.binary("sdiv", actual, itemsize)
            elif isinstance(s, SymInt):
                same = fn.compare("icmp", "eq", actual, fn.binary("mul", sizes(s), itemsize))
            else:
                same = fn.compare("icmp", "eq", actual, literal(s * buf.dtype.itemsize, I64))
            if isinstance(n, SymInt):   # a dim of size 0 or 1 may have any stride
                same = fn.binary("or", same, fn.compare("icmp", "sle", element(fn, dims, d), literal(1, I64)))
            ok = fn.binary("and", ok, same)
    fn.emit(f"br i1 {ok.ref}, label %run, label %relayout")
    fn.start_block("relayout")
    fn.emit(f"ret i32 {RELAYOUT}")
    fn.start_block("run")
    args = ", ".join([f"ptr {d.ref}" for d in data] + [f"i64 {sizes.params[p].ref}" for p in size_parameters(kp, strides)]
                     + ["i64 %lo", "i64 %hi", "i64 %slot"])
    if large:   # outputs of symbolic size: streamed out when one is large
        big = literal(False, BOOL)
        for nbytes in large:
            big = fn.binary("or", big, fn.compare("icmp", "sge", sizes(nbytes), literal(STREAM_MIN_BYTES, I64)))
        fn.emit(f"br i1 {big.ref}, label %large, label %small")
        fn.start_block("large")
        status = fn.emit(f"call i32 @{symbol}.large({args})", np.dtype(np.int32))
        fn.emit(f"ret i32 {status.ref}")
        fn.start_block("small")
    status = fn.emit(f"call i32 @{symbol}.body({args})", np.dtype(np.int32))
    fn.emit(f"ret i32 {status.ref}")
    module.functions.append(f"define i32 @{symbol}({params}, i64 %lo, i64 %hi, i64 %slot) "
                            f"{module.attribute_group('nounwind')} {{\n"
                            + "\n".join(["entry:"] + sizes.lines + fn.lines) + "\n}\n")


def _maybe_float(name: str, program: Program) -> bool:
    """Whether buffer `name` may come as a Python float: a 0-d float64 input (runner.py)."""
    return name in program.inputs and not program.buffers[name].shape and program.buffers[name].dtype == np.float64
