"""CPython's ndarray object as native entries read it: the offsets of its data, dimensions and
strides pointers (checked against this Python at start-up: backend.py), and the loads of them in
LLVM IR. Kernel entries (kernels/function.py, kernels/iterations.py) and nest entries
(nests/nestcall.py) take their arrays as ndarray objects; a kernel entry takes a 0-d float64
input as a Python float or a NumPy float64 scalar too (the runner passes those as they came:
np.asarray of one costs about 90 ns a call)."""

from __future__ import annotations

from .irbuilder import BOOL, I64, Function, V, literal
from .pycall import FLOAT_TYPES

# where CPython's ndarray object keeps its data, dimensions and strides pointers (checked at start-up)
DATA_OFFSET, DIMENSIONS_OFFSET, STRIDES_OFFSET = 16, 32, 40
# where every object keeps its type, and a Python float its value (checked at start-up)
TYPE_OFFSET, FLOAT_VALUE_OFFSET = 8, 16


def array_field(fn: Function, i: int, offset: int, stem: str = "p") -> V:
    """The pointer at `offset` in the entry's ndarray argument i."""
    slot = fn.emit(f"getelementptr inbounds i8, ptr %a{i}, i64 {offset}", I64, "p")
    return fn.emit(f"load ptr, ptr {slot.ref}", I64, stem)


def element(fn: Function, pointer: V, d: int) -> V:
    """Element d of an ndarray's dimensions or strides."""
    at = fn.emit(f"getelementptr inbounds i64, ptr {pointer.ref}, i64 {d}", I64, "p")
    return fn.emit(f"load i64, ptr {at.ref}", I64)


def float_or_array_data(fn: Function, i: int) -> V:
    """The data pointer of the entry's argument i, a 0-d float64 input: an ndarray's, or the
    address of the value of a Python float or a NumPy float64 scalar."""
    kind = array_field(fn, i, TYPE_OFFSET, "type")
    is_float = literal(False, BOOL)
    for name in FLOAT_TYPES:
        fn.module.declare(name, f"@{name} = external global i8")
        is_float = fn.binary("or", is_float, fn.emit(f"icmp eq ptr {kind.ref}, @{name}", BOOL))
    value = fn.emit(f"getelementptr inbounds i8, ptr %a{i}, i64 {FLOAT_VALUE_OFFSET}", I64, "p")
    data = array_field(fn, i, DATA_OFFSET, "data")   # a float's value read as a pointer: unused
    return fn.emit(f"select i1 {is_float.ref}, ptr {value.ref}, ptr {data.ref}", I64, "data")
