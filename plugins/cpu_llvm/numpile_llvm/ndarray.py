"""CPython's ndarray object as native entries read it: the offsets of its data, dimensions and
strides pointers (checked against this Python at start-up: backend.py), and the loads of them in
LLVM IR. Kernel entries (kernels/function.py, kernels/iterations.py) and nest entries
(nests/nestcall.py) take their arrays as ndarray objects."""

from __future__ import annotations

from .irbuilder import I64, Function, V

# where CPython's ndarray object keeps its data, dimensions and strides pointers (checked at start-up)
DATA_OFFSET, DIMENSIONS_OFFSET, STRIDES_OFFSET = 16, 32, 40


def array_field(fn: Function, i: int, offset: int, stem: str = "p") -> V:
    """The pointer at `offset` in the entry's ndarray argument i."""
    slot = fn.emit(f"getelementptr inbounds i8, ptr %a{i}, i64 {offset}", I64, "p")
    return fn.emit(f"load ptr, ptr {slot.ref}", I64, stem)


def element(fn: Function, pointer: V, d: int) -> V:
    """Element d of an ndarray's dimensions or strides."""
    at = fn.emit(f"getelementptr inbounds i64, ptr {pointer.ref}, i64 {d}", I64, "p")
    return fn.emit(f"load i64, ptr {at.ref}", I64)
