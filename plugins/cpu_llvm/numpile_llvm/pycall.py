"""Small kernels called from Python without ctypes.

A ctypes call with a few arguments costs about 0.8 µs, more than a kernel on a dozen elements
takes. A small kernel (and a chain of them) therefore also gets an entry CPython calls
directly: a METH_FASTCALL builtin function, `@<kernel>.py(self, args, nargs)`, which reads
the arrays as the PyObject pointers the kernel takes and the ints with PyLong_AsLongLong, calls
the kernel and returns its status as a Python int: about 0.1 µs. It holds the GIL while the
kernel runs, which is why only kernels of little work use it (big ones keep ctypes, which
releases the GIL, so that other threads run meanwhile).
"""

from __future__ import annotations

import ctypes

import numpy as np

from .irbuilder import Module

_PYTHON_API = ("PyLong_AsLongLong", "PyLong_FromLong", "PyLong_AsUnsignedLongLong", "PyFloat_AsDouble",
               "PyObject_IsTrue", "PyErr_Occurred", "PyLong_FromLongLong", "PyLong_FromUnsignedLongLong",
               "PyFloat_FromDouble", "PyBool_FromLong", "PyTuple_Pack", "Py_DecRef", "PyErr_SetString")
_PYTHON_DATA = ("PyExc_IndexError", "PyExc_OverflowError", "PyExc_ValueError", "PyExc_MemoryError", "PyExc_AssertionError")
_METH_FASTCALL = 0x0080
# the JIT's names for the type objects of Python floats and NumPy's float64 scalars (a subclass
# of float, its value where float keeps its own)
FLOAT_TYPES = {"numpile.PyFloat_Type": float, "numpile.Float64Scalar": np.float64}


def register_symbols(llvm) -> None:
    """Make the C API functions the entries call, and the exception types they raise, known to the JIT."""
    for name in _PYTHON_API:
        llvm.add_symbol(name, ctypes.cast(getattr(ctypes.pythonapi, name), ctypes.c_void_p).value)
    for name in _PYTHON_DATA:
        llvm.add_symbol(python_data(name), ctypes.addressof(ctypes.c_void_p.in_dll(ctypes.pythonapi, name)))
    for name, kind in FLOAT_TYPES.items():
        llvm.add_symbol(name, id(kind))


def python_data(name: str) -> str:
    """The JIT's name for the C API variable `name` (the address of the PyObject* it holds). Not
    the C name: Numba, sharing the process's LLVM, registers `PyExc_RuntimeError` and the like as
    the exception objects themselves, and a load through that crashed raising them."""
    if name not in _PYTHON_DATA:
        raise KeyError(f"{name} is not among the C API variables registered for the JIT")
    return f"numpile.{name}"


def render(module: Module, symbol: str, narrays: int, nints: int) -> str:
    """The entry `<symbol>.py` calling kernel `symbol` (narrays PyObject*, then nints i64);
    returns its name."""
    module.declare("PyLong_AsLongLong", "declare i64 @PyLong_AsLongLong(ptr)")
    module.declare("PyLong_FromLong", "declare ptr @PyLong_FromLong(i64)")
    lines, args = ["entry:"], []
    for k in range(narrays + nints):
        lines += [f"  %p{k} = getelementptr ptr, ptr %args, i64 {k}", f"  %o{k} = load ptr, ptr %p{k}"]
        if k < narrays:
            args.append(f"ptr %o{k}")
        else:
            lines.append(f"  %i{k} = call i64 @PyLong_AsLongLong(ptr %o{k})")
            args.append(f"i64 %i{k}")
    lines += [f"  %status = call i32 @{symbol}({', '.join(args)})", "  %wide = sext i32 %status to i64",
              "  %result = call ptr @PyLong_FromLong(i64 %wide)", "  ret ptr %result"]
    name = f"{symbol}.py"
    module.functions.append(f"define ptr @\"{name}\"(ptr %self, ptr %args, i64 %nargs) {{\n" + "\n".join(lines) + "\n}\n")
    return name


class _MethodDef(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("meth", ctypes.c_void_p), ("flags", ctypes.c_int), ("doc", ctypes.c_char_p)]


_new_function = ctypes.pythonapi.PyCFunction_NewEx
_new_function.restype = ctypes.py_object
_new_function.argtypes = [ctypes.c_void_p, ctypes.py_object, ctypes.c_void_p]


def function(code, name: str):
    """The builtin function calling entry `<name>.py` of `code` (a jit.Code). Its self, which
    the entry ignores, holds the code and the method def, which must outlive it."""
    definition = _MethodDef(name.encode(), code.addresses[f"{name}.py"], _METH_FASTCALL, None)
    return _new_function(ctypes.addressof(definition), (code, definition), None)
