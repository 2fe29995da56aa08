"""How Python calls a native loop nest (nest.py): the entry function and the Python that calls it.

    i32 @nest(ptr arrays..., scalars..., ptr out, i64 start, i64 stop)   ; 0, or why it stopped

An array comes as its PyArrayObject, a scalar by value (a bool as a byte, a complex as the struct
of its parts); the carried scalars' last values go to `out`, one SLOT_BYTES slot per carried value. The entry reads each array's data,
dims and strides and calls the nest's body, an internal function that takes them as arguments:
its data pointers `noalias` (a carried array is the nest's own copy, a free one is only read),
and called twice, once with the strides of C-contiguous arrays where every array has them. Inlined,
the contiguous copy knows which elements are neighbours: a value stored is a value loaded next
(no reload through memory), and loops vectorise.

CPython calls the nest through `@nest.py`, a METH_FASTCALL builtin (pycall.py): it converts the
scalars with the C API (a Python int past int64 raises its OverflowError there), keeps `out` on
its stack and hands back the carried scalars as a tuple of Python objects it makes: about 0.1 µs
where ctypes took about 1 µs. It holds the GIL while the nest runs, as Numba's functions do by
default. The Python around it is generated per nest, as the backend's runners are.
"""

from __future__ import annotations

import numpy as np

from .. import pycall
from ..casts import cast
from ..irbuilder import I64, Function, Module, V, literal, mem_type
from ..ndarray import DATA_OFFSET, DIMENSIONS_OFFSET, STRIDES_OFFSET, array_field, element

INDEX_ERROR, OVERFLOW, EMPTY, SHAPE, OVERLAP, CHECK, STEP = 1, 2, 3, 4, 5, 6, 7
SLOT_BYTES = 16   # a carried scalar's slot of `out`: a complex128 fits
_COMPLEX = np.dtype(np.complex128)
_STOPPED = {INDEX_ERROR: ("PyExc_IndexError", "an index of a compiled loop nest is out of bounds"),
            OVERFLOW: ("PyExc_OverflowError", "a Python int of a compiled loop nest left int64"),
            EMPTY: ("PyExc_ValueError", "a compiled loop nest took the max or min of an empty slice"),
            SHAPE: ("PyExc_ValueError", "a compiled loop nest stored a slice from one of another shape"),
            OVERLAP: ("PyExc_MemoryError", "a compiled loop nest found no memory for a slice's value, which it "
                                           "computes first (it reads the slice at other elements)"),
            CHECK: ("PyExc_AssertionError", "a check of a compiled loop nest failed (an assert, a raise)"),
            STEP: ("PyExc_ValueError", "a slice's step computed in a compiled loop nest is not positive")}
# a scalar argument from its Python object: C API function, its result type, its failure value
_FROM_PYTHON = {"i": ("PyLong_AsLongLong", "i64", "-1"), "u": ("PyLong_AsUnsignedLongLong", "i64", "-1"),
                "f": ("PyFloat_AsDouble", "double", "-1.0"), "b": ("PyObject_IsTrue", "i32", "-1"),
                "c": ("PyComplex_AsCComplex", "{double, double}", "-1.0")}   # its real part -1.0 on failure
# a carried scalar's Python object: C API function, the type it takes, how to widen to it
_TO_PYTHON = {"i": ("PyLong_FromLongLong", "i64", "sext"), "u": ("PyLong_FromUnsignedLongLong", "i64", "zext"),
              "f": ("PyFloat_FromDouble", "double", "fpext"), "b": ("PyBool_FromLong", "i64", "zext"),
              "c": ("PyComplex_FromDoubles", "double, double", None)}
_API = {"PyErr_Occurred": "declare ptr @PyErr_Occurred()", "PyErr_SetString": "declare void @PyErr_SetString(ptr, ptr)",
        "PyTuple_Pack": "declare ptr @PyTuple_Pack(i64, ...)", "Py_DecRef": "declare void @Py_DecRef(ptr)",
        **{f: f"declare ptr @{f}({t})" for f, t, _ in _TO_PYTHON.values()}}
SCALAR_KINDS = frozenset(_FROM_PYTHON)


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
        dims = [literal(d, I64) if isinstance(d, int) else element(fn, dims_at, i) for i, d in enumerate(meta.shape)]
        strides = [element(fn, strides_at, i) for i in range(len(dims))]
        dense, step = [], literal(meta.dtype.itemsize, I64)
        for d in reversed(dims):
            dense.insert(0, step)
            step = fn.binary("mul", step, d)
        for s, c in zip(strides, dense):
            contiguous.append(fn.compare("icmp", "eq", s, c))
        fields.append((f"ptr {data.ref}", [f"i64 {d.ref}" for d in dims], strides, dense))
    tail = ["ptr %out", "i64 %start", "i64 %stop"]

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
    module.functions.append(f"define internal i32 @{name}({', '.join(entry_parameters(metas))}) {module.attribute_group('nounwind')} {{\n"
                            + "\n".join(["entry:"] + fn.lines) + "\n}\n")


def entry_parameters(metas: list) -> list[str]:
    """The entry's parameters: per array its PyArrayObject, per scalar its value; then `out`, start, stop."""
    return [f"ptr %a{k}" if meta.shape else f"{mem_type(meta.dtype)} %a{k}" for k, meta in enumerate(metas)] \
        + ["ptr %out", "i64 %start", "i64 %stop"]


def render_python_entry(module: Module, name: str, entry: str, metas: list, carried: int) -> str:
    """`<name>.py`, the builtin CPython calls with (values..., start, stop): the scalars converted,
    `entry` called, and the tuple of the carried values after it returned: the arrays it was given,
    the scalars as Python ints, floats and bools it makes (nothing shared between calls, so threads
    may run the nest at once). Where the nest stops, it raises NumPy's error, or Python's."""
    fn = Function(module)
    slots = fn.emit(f"alloca [{max(carried, 1) * SLOT_BYTES} x i8], align 16", I64, "out")
    args, failed, objects = [], [], []
    for k in range(len(metas) + 2):
        at = fn.emit(f"getelementptr ptr, ptr %args, i64 {k}", I64, "p")
        obj = fn.emit(f"load ptr, ptr {at.ref}", I64, "o")
        objects.append(obj.ref)
        meta = metas[k] if k < len(metas) else None
        if meta is not None and meta.shape:
            args.append(f"ptr {obj.ref}")
            continue
        function, result, failure = _FROM_PYTHON[meta.dtype.kind if meta is not None else "i"]
        module.declare(function, f"declare {result} @{function}(ptr)")
        value = fn.emit(f"call {result} @{function}(ptr {obj.ref})", I64)
        said = fn.parts(V(value.ref, _COMPLEX))[0] if meta is not None and meta.dtype.kind == "c" else value
        kind = "double" if meta is not None and meta.dtype.kind == "c" else result
        compare = "fcmp oeq" if kind == "double" else "icmp eq"
        failed.append(fn.emit(f"{compare} {kind} {said.ref}, {failure}", np.dtype(bool)).ref)
        args.append(_narrowed(fn, value, result, meta) if meta is not None else f"i64 {value.ref}")
    args.insert(len(metas), f"ptr {slots.ref}")
    for symbol, line in _API.items():
        module.declare(symbol, line)
    any_failed = "false"
    for f in failed:
        any_failed = fn.emit(f"or i1 {any_failed}, {f}", np.dtype(bool)).ref
    fn.emit(f"br i1 {any_failed}, label %check, label %run")
    fn.start_block("check")   # a failure value may be a real value: the error says
    error = fn.emit("call ptr @PyErr_Occurred()", I64)
    raised = fn.emit(f"icmp ne ptr {error.ref}, null", np.dtype(bool))
    fn.emit(f"br i1 {raised.ref}, label %null, label %run")
    fn.start_block("run")
    status = fn.emit(f"call i32 @{entry}({', '.join(args)})", np.dtype(np.int32))
    stopped = fn.emit(f"icmp ne i32 {status.ref}, 0", np.dtype(bool))
    fn.emit(f"br i1 {stopped.ref}, label %stopped, label %done")
    fn.start_block("stopped")
    for code, (error, message) in _STOPPED.items():
        text = _string(module, f"nest.stopped{code}", message)
        symbol = pycall.python_data(error)
        module.declare(symbol, f"@{symbol} = external global ptr")
        raise_it, other = fn.label("raise"), fn.label("other")
        fn.emit(f"br i1 {fn.emit(f'icmp eq i32 {status.ref}, {code}', np.dtype(bool)).ref}, label %{raise_it}, label %{other}")
        fn.start_block(raise_it)
        kind = fn.emit(f"load ptr, ptr @{symbol}", I64)
        fn.emit(f"call void @PyErr_SetString(ptr {kind.ref}, ptr {text})")
        fn.emit("ret ptr null")
        fn.start_block(other)
    fn.emit("unreachable")
    fn.start_block("done")
    items = [V(objects[k], I64) if meta.shape else _boxed(fn, slots, k, meta) for k, meta in enumerate(metas[:carried])]
    boxed = [item for k, item in enumerate(items) if not metas[k].shape]
    for b in boxed:   # NULL: no memory for it (its error set)
        go = fn.label("boxed")
        fn.emit(f"br i1 {fn.emit(f'icmp eq ptr {b.ref}, null', np.dtype(bool)).ref}, label %null, label %{go}")
        fn.start_block(go)
    pack = fn.emit(f"call ptr (i64, ...) @PyTuple_Pack(i64 {len(items)}{''.join(', ptr ' + b.ref for b in items)})", I64)
    for b in boxed:   # the tuple holds them now
        fn.emit(f"call void @Py_DecRef(ptr {b.ref})")
    fn.emit(f"ret ptr {pack.ref}")
    fn.start_block("null")
    fn.emit("ret ptr null")
    symbol = f"{name}.py"
    module.functions.append(f"define ptr @\"{symbol}\"(ptr %self, ptr %args, i64 %nargs) {{\n"
                            + "\n".join(["entry:"] + fn.lines) + "\n}\n")
    return symbol


def _string(module: Module, symbol: str, text: str) -> str:
    """A C string constant of the module."""
    data = text.encode() + b"\0"
    module.declare(symbol, f'@{symbol} = private unnamed_addr constant [{len(data)} x i8] c"{text}\\00"')
    return f"@{symbol}"


def _boxed(fn: Function, slots: V, k: int, meta) -> V:
    """Carried scalar k's last value (slot k of `out`) as a new Python object."""
    at = fn.emit(f"getelementptr i8, ptr {slots.ref}, i64 {k * SLOT_BYTES}", I64, "p")
    t = mem_type(meta.dtype)
    value = fn.emit(f"load {t}, ptr {at.ref}", I64)
    function, wide, widen = _TO_PYTHON[meta.dtype.kind]
    if meta.dtype.kind == "c":
        re, im = fn.parts(cast(fn, V(value.ref, meta.dtype), _COMPLEX))
        return fn.emit(f"call ptr @{function}(double {re.ref}, double {im.ref})", I64)
    if t != wide:
        value = fn.emit(f"{widen} {t} {value.ref} to {wide}", I64)
    return fn.emit(f"call ptr @{function}({wide} {value.ref})", I64)


def _narrowed(fn: Function, value: V, result: str, meta) -> str:
    """A converted scalar as the entry takes it (mem_type: a bool as a byte)."""
    t = mem_type(meta.dtype)
    if meta.dtype.kind == "b":
        true = fn.emit(f"icmp sgt i32 {value.ref}, 0", np.dtype(bool))
        return f"i8 {fn.emit(f'zext i1 {true.ref} to i8', I64).ref}"
    if t == result:
        return f"{t} {value.ref}"
    if meta.dtype.kind == "c":   # complex64
        return f"{t} {cast(fn, V(value.ref, _COMPLEX), meta.dtype).ref}"
    opcode = "fptrunc" if result == "double" else "trunc"
    return f"{t} {fn.emit(f'{opcode} {result} {value.ref} to {t}', I64).ref}"


def runner(code, symbol: str, metas: list, carried: int, owned: tuple = ()):
    """The Python that runs the nest whose builtin entry is `<symbol>.py` of `code`: run(body, start, stop,
    step, carried, free), the loop extern's signature (ops/control.py), returning the carried values
    after the loop. A carried array is copied for the nest to update, but where `owned` says the
    nest may update the one it is given (of its dtype: nest.owned_carried). `run.direct` is the
    builtin itself where it needs nothing around it (no copy, no conversion): the backend's runner
    then calls it with (carried..., free..., start, stop), and its tuple is the loop's result."""
    native = pycall.function(code, symbol)
    env = {"array": np.array, "asarray": np.asarray, "native": native}
    names = [f"v{k}" for k in range(len(metas))]
    lines = ["def run(body, start, stop, step, carried, free):",
             f"    ({''.join(n + ', ' for n in names)}) = (*carried, *free)"]
    results, converted = [], False
    for k, meta in enumerate(metas):
        v = names[k]
        env[f"d{k}"], env[f"t{k}"] = meta.dtype, meta.dtype.type
        if meta.shape:
            # the nest updates a carried array in place: its own copy (the loop's value is new)
            if k >= carried:
                lines.append(f"    {v} = asarray({v})")
            else:
                if not (k < len(owned) and owned[k]):
                    lines.append(f"    {v} = array({v}, dtype=d{k}, copy=True)")
                    converted = True
                results.append(f"r{k}")
            continue
        if meta.dtype.kind == "u":   # PyLong_AsUnsignedLongLong takes Python ints only
            lines.append(f"    {v} = int({v})")
            converted = True
        if k < carried:
            results.append(f"r{k}" if meta.weak else f"t{k}(r{k})" if meta.scalar else f"array(r{k}, dtype=d{k})")
            converted |= not meta.weak
    lines += [f"    ({''.join(f'r{k}, ' for k in range(carried))}) = native({''.join(n + ', ' for n in names)}start, stop)",
              f"    return ({''.join(r + ', ' for r in results)})"]
    exec(compile("\n".join(lines) + "\n", "<numpile-llvm loop nest>", "exec"), env)
    run = env["run"]
    run.returns_arrays = all(meta.shape for meta in metas[:carried])   # the runner need not asarray them
    run.direct = None if converted else native
    return run