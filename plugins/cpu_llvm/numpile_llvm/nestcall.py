"""How Python calls a native loop nest (nest.py): the entry function and the Python that calls it.

    i32 @nest(ptr arrays..., scalars..., ptr out, i64 start, i64 stop)   ; 0, or why it stopped

An array comes as its PyArrayObject, a scalar by value (a bool as a byte); the carried scalars'
last values go to `out`, one 8-byte slot per carried value. The entry reads each array's data,
dims and strides and calls the nest's body, an internal function that takes them as arguments:
its data pointers `noalias` (a carried array is the nest's own copy, a free one is only read),
and called twice, once with the strides of C-contiguous arrays where every array has them. Inlined,
the contiguous copy knows which elements are neighbours: a value stored is a value loaded next
(no reload through memory), and loops vectorise.

The Python side is generated per nest (as the backend's runners are): no loop over the values,
no 0-d array per scalar; ctypes' PYFUNCTYPE keeps the GIL (no release and take per call), which
also keeps `out`, one buffer per nest, to one caller at a time.
"""

from __future__ import annotations

import ctypes

import numpy as np

from .codegen import DATA_OFFSET, DIMENSIONS_OFFSET, STRIDES_OFFSET, array_field
from .irbuilder import I64, Function, Module, V, literal, mem_type

INDEX_ERROR, OVERFLOW = 1, 2
_STOPPED = {INDEX_ERROR: (IndexError, "an index of a compiled loop nest is out of bounds"),
            OVERFLOW: (OverflowError, "a Python int of a compiled loop nest left int64")}
_CTYPES = {"?": ctypes.c_bool, "b": ctypes.c_int8, "h": ctypes.c_int16, "i": ctypes.c_int32, "l": ctypes.c_int64,
           "q": ctypes.c_int64, "B": ctypes.c_uint8, "H": ctypes.c_uint16, "I": ctypes.c_uint32,
           "L": ctypes.c_uint64, "Q": ctypes.c_uint64, "f": ctypes.c_float, "d": ctypes.c_double}
_TO_PYTHON = {"b": "bool", "i": "int", "u": "int", "f": "float"}   # a scalar argument as ctypes takes it
_INT64 = (-2**63, 2**63 - 1)


def body_parameters(metas: list) -> list[str]:
    """The body function's parameters: per array its data, dims and strides; per scalar its value."""
    params = []
    for k, meta in enumerate(metas):
        if meta.shape:
            params += [f"ptr noalias %d{k}"] + [f"i64 %n{k}_{i}" for i in range(len(meta.shape))] \
                + [f"i64 %s{k}_{i}" for i in range(len(meta.shape))]
        else:
            params.append(f"{mem_type(meta.dtype)} %a{k}")
    return params + ["ptr noalias %out", "i64 %start", "i64 %stop"]


def render_entry(module: Module, name: str, body: str, metas: list) -> None:
    """`name`, the entry: each array's fields read, the body called for contiguous arrays or any."""
    fn = Function(module)
    fields, contiguous = [], []
    for k, meta in enumerate(metas):
        if not meta.shape:
            fields.append((f"{mem_type(meta.dtype)} %a{k}",))
            continue
        data = array_field(fn, k, DATA_OFFSET, "data")
        dims_at, strides_at = array_field(fn, k, DIMENSIONS_OFFSET), array_field(fn, k, STRIDES_OFFSET)
        dims = [literal(d, I64) if isinstance(d, int) else _element(fn, dims_at, i) for i, d in enumerate(meta.shape)]
        strides = [_element(fn, strides_at, i) for i in range(len(dims))]
        dense, step = [], literal(meta.dtype.itemsize, I64)
        for d in reversed(dims):
            dense.insert(0, step)
            step = fn.binary("mul", step, d)
        for s, c in zip(strides, dense):
            contiguous.append(fn.compare("icmp", "eq", s, c))
        fields.append((f"ptr {data.ref}", [f"i64 {d.ref}" for d in dims], strides, dense))
    tail = [f"ptr %out", "i64 %start", "i64 %stop"]

    def call(dense: bool) -> None:
        args = []
        for f in fields:
            args += [f[0]] if len(f) == 1 else [f[0], *f[1], *[f"i64 {s.ref}" for s in (f[3] if dense else f[2])]]
        status = fn.emit(f"call i32 @{body}({', '.join(args + tail)})", np.dtype(np.int32))
        fn.emit(f"ret i32 {status.ref}")
    if contiguous:
        every = contiguous[0]
        for c in contiguous[1:]:
            every = fn.binary("and", every, c)
        fn.emit(f"br i1 {every.ref}, label %dense, label %any")
        fn.start_block("dense")
        call(True)
        fn.start_block("any")
    call(False)
    params = [f"ptr %a{k}" if meta.shape else f"{mem_type(meta.dtype)} %a{k}" for k, meta in enumerate(metas)]
    module.functions.append(f"define i32 @{name}({', '.join(params + tail)}) {module.attribute_group('nounwind')} {{\n"
                            + "\n".join(["entry:"] + fn.lines) + "\n}\n")


def _element(fn: Function, pointer: V, d: int) -> V:
    at = fn.emit(f"getelementptr inbounds i64, ptr {pointer.ref}, i64 {d}", I64, "p")
    return fn.emit(f"load i64, ptr {at.ref}", I64)


def runner(address: int, metas: list, carried: int):
    """The Python that runs the nest at `address`: run(body, start, stop, step, carried, free), the
    loop extern's signature (ops/control.py), returning the carried values after the loop."""
    out = (ctypes.c_uint64 * max(carried, 1))()
    argtypes, env = [], {"array": np.array, "asarray": np.asarray, "stopped": _stopped}
    names = [f"v{k}" for k in range(len(metas))]
    lines = ["def run(body, start, stop, step, carried, free):",
             f"    ({''.join(n + ', ' for n in names)}) = (*carried, *free)"]
    args, results = [], []
    for k, meta in enumerate(metas):
        v = names[k]
        if meta.shape:
            argtypes.append(ctypes.c_void_p)
            env[f"d{k}"] = meta.dtype
            # the nest updates a carried array in place: its own copy (the loop's value is new)
            lines.append(f"    {v} = array({v}, dtype=d{k}, copy=True)" if k < carried else f"    {v} = asarray({v})")
            args.append(f"id({v})")
            if k < carried:
                results.append(v)
            continue
        kind = _CTYPES[meta.dtype.char]
        argtypes.append(kind)
        lines.append(f"    {v} = {_TO_PYTHON[meta.dtype.kind]}({v})")
        if meta.weak and meta.dtype.kind == "i":   # ctypes would wrap a Python int past int64
            lines.append(f"    if not {_INT64[0]} <= {v} <= {_INT64[1]}: raise OverflowError('a Python int left int64')")
        args.append(v)
        if k < carried:
            size = ctypes.sizeof(kind)   # slot k at byte 8k: element 8k / size of a view of its type
            env[f"out{k}"] = (kind * (8 * carried // size)).from_buffer(out)
            env[f"t{k}"] = meta.dtype.type
            value = f"out{k}[{8 * k // size}]"
            results.append(value if meta.weak else f"t{k}({value})" if meta.scalar else f"array({value}, dtype=d{k})")
            env[f"d{k}"] = meta.dtype
    env["native"] = ctypes.PYFUNCTYPE(ctypes.c_int32, *argtypes, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64)(address)
    env["out"] = ctypes.addressof(out)
    env["keep"] = out
    lines += [f"    status = native({''.join(a + ', ' for a in args)}out, start, stop)",
              "    if status:", "        stopped(status)",
              f"    return ({''.join(r + ', ' for r in results)})"]
    exec(compile("\n".join(lines) + "\n", "<numpile-llvm loop nest>", "exec"), env)
    return env["run"]


def _stopped(status: int):
    kind, message = _STOPPED[status]
    raise kind(message)
