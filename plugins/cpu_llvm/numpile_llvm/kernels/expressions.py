"""The kernel IR's expressions rendered into LLVM IR in a kernel's body (`KernelExpressions`, a
mixin of body.py's KernelBody, which holds the function, sizes, pointers and strides it reads):
constants, loads at an index's element offset, row values, loop indices and calls of the scalar op
table (`RENDER`, by expression class), each computed once per loop iteration (memo) and kept in a
row's scratch where a later stage reads it.

A gather (a load through an index array, ir.Indirect) reads each position NumPy would, after
making a negative one count from the end; a position outside its dim is not read (element 0
is, instead) but sets the kernel's out-of-bounds flag (a mask's positions, `inside` their dim,
are read as they are), and the kernel returns OUT_OF_BOUNDS
when it is done: the runtime raises IndexError, and numpile runs the frame again with NumPy,
which raises its own error.
"""

from __future__ import annotations

import math

import numpy as np

from numpile.lowering import Affine, Call, Const, Indirect, Load, LoopIndex, RowValue, walk
from numpile.shapes import SymInt, identical

from .. import scalar
from ..irbuilder import BOOL, I64, Unlowerable, V, literal
from .plan import OUT_OF_BOUNDS, element_offset


def _nonnegative(e) -> bool:
    """Whether an expression's every value is >= 0: a loop index of no negative term (np.arange)."""
    return isinstance(e, LoopIndex) and isinstance(e.index, Affine) and isinstance(e.index.const, int) \
        and e.index.const >= 0 and all(isinstance(c, int) and c >= 0 for _, c in e.index.terms)


class KernelExpressions:
    """KernelBody's expressions, gathers' bounds checks and element offsets."""

    def _plan_gathers(self) -> None:
        """A kernel that gathers keeps an out-of-bounds flag (a stack slot LLVM keeps in a
        register). A gather along a dim of size 0 has no element to read in place of a bad one:
        a stage that would run one returns OUT_OF_BOUNDS before anything runs."""
        fn = self.fn
        empty = literal(False, BOOL)
        for stage in self.kp.kernel.stages:
            indices = [e.index for e in walk(stage.value) if isinstance(e, Load)] + [stage.output_index] \
                + [(e.index,) for e in walk(stage.value) if isinstance(e, LoopIndex)]
            dims = [i.size for index in indices for i in index if isinstance(i, Indirect) and not i.inside]
            if not dims:
                continue
            if any(isinstance(n, int) and n == 0 for n in dims):
                raise Unlowerable("a gather along a dim of size 0")
            runs = fn.compare("icmp", "sgt", self.size(math.prod(self.kp.kernel.outer) * math.prod(stage.inner)), literal(0, I64))
            for n in dims:
                if isinstance(n, SymInt):
                    empty = fn.binary("or", empty, fn.binary("and", runs, fn.compare("icmp", "eq", self.size(n), literal(0, I64))))
            if self.out_of_bounds is None:
                self.out_of_bounds = fn.emit("alloca i1, align 1", I64, "oob").ref
                fn.emit(f"store i1 false, ptr {self.out_of_bounds}")
        if empty.ref != "false":
            go, stop = fn.label("gather"), fn.label("empty")
            fn.emit(f"br i1 {empty.ref}, label %{stop}, label %{go}")
            fn.start_block(stop)
            fn.emit(f"ret i32 {OUT_OF_BOUNDS}")
            fn.start_block(go)

    # -- values --------------------------------------------------------------------------
    def _offset(self, buffer: str, index: tuple, variables: dict) -> V:
        """Element offset of an index (an Affine per dimension) in a buffer of known strides."""
        coefficients, const = element_offset(index, self.strides[buffer])
        offset = self.size(const)
        for v, c in sorted(coefficients.items()):
            if not identical(c, 0):
                term = variables[v] if identical(c, 1) else self.fn.binary("mul", variables[v], self.size(c))
                offset = term if offset.ref == "0" else self.fn.binary("add", offset, term)
        return offset

    def _eval(self, e, variables: dict, rows: dict, memo: dict):
        """The value of an expression at the current loop indices; Consts stay Consts (weak)."""
        key = id(e)
        if key in memo:
            return memo[key]
        kept = self.scratch.get(str(e)) if self.scratch and isinstance(e, Call) else None
        if kept is not None and kept[1] != self.stage_index:
            value = self.fn.load(kept[0], self._row_offset(variables), np.dtype(e.dtype))
        else:
            render = self.RENDER.get(type(e))
            if render is None:
                raise Unlowerable(f"expression {e!r}")
            value = render(self, e, variables, rows, memo)
        if kept is not None and kept[1] == self.stage_index:
            self.fn.store(kept[0], self._row_offset(variables), value)
        memo[key] = value
        return value

    # -- each kernel-IR expression node, rendered (RENDER: by node class) --------------------------
    def _const(self, e: Const, variables, rows, memo):
        # a symbolic size is a Python int: weak
        return V(self.size(e.value).ref, I64, True) if isinstance(e.value, SymInt) else e

    def _load(self, e: Load, variables, rows, memo) -> V:
        offset = self._indexed_offset(e.buffer, e.index, variables, rows, memo)
        return self.fn.load(self.pointer[e.buffer], offset, np.dtype(e.dtype))._replace(weak=e.weak)

    def _row_value(self, e: RowValue, variables, rows, memo) -> V:
        return rows[e.name]

    def _loop_index(self, e: LoopIndex, variables, rows, memo) -> V:
        # an index's value, read through np.roll's wrap (an ir.Indirect) where a rolled np.indices fused in
        at = self._position(e.index, variables, rows, memo) if isinstance(e.index, Indirect) else self._offset_of(e.index, variables)
        return scalar.cast(self.fn, at, e.dtype)

    def _call(self, e: Call, variables, rows, memo) -> V:
        operands = [self._eval(a, variables, rows, memo) for a in e.args]
        kwargs = {k: (self._eval(v, variables, rows, memo) if isinstance(v, (Call, Load, RowValue, LoopIndex)) else v)
                  for k, v in e.kwargs}
        kwargs = {k: (Const(v, getattr(v, "dtype", None)) if k in ("a_min", "a_max") and not isinstance(v, (V, Const)) else v)
                  for k, v in kwargs.items()}
        if e.op == "power" and _nonnegative(e.args[1]):
            kwargs["nonnegative"] = True
        return scalar.emit(self.fn, e.op, operands, kwargs, np.dtype(e.dtype))._replace(weak=e.weak)

    RENDER = {Const: _const, Load: _load, RowValue: _row_value, LoopIndex: _loop_index, Call: _call}

    def _indexed_offset(self, buffer: str, index: tuple, variables: dict, rows: dict, memo: dict) -> V:
        """The element offset of an index; one addressed through data (ir.Indirect) has each
        position checked against its dim: a bad one sets the out-of-bounds flag and addresses
        position 0 instead."""
        if not any(isinstance(i, Indirect) for i in index):
            return self._offset(buffer, index, variables)
        fn = self.fn
        affine = tuple(Affine.constant(0) if isinstance(i, Indirect) else i for i in index)
        offset = self._offset(buffer, affine, variables)
        for i, stride in zip(index, self.strides[buffer]):
            if isinstance(i, Indirect):
                offset = fn.binary("add", offset, fn.binary("mul", self._position(i, variables, rows, memo), self.size(stride)))
        return offset

    def _position(self, i: Indirect, variables: dict, rows: dict, memo: dict) -> V:
        """The position along its dim an ir.Indirect picks, as an i64 (see _indexed_offset)."""
        fn = self.fn
        value = self._eval(i.value, variables, rows, memo)
        position = scalar.cast(fn, value, I64)   # uint64 keeps its bits: huge values stay out of bounds
        if i.inside:   # a mask's positions: in bounds
            return fn.binary("add", fn.binary("mul", position, self.size(i.scale)), self.size(i.shift))
        size = self.size(i.size)
        if value.dtype.kind == "i":   # NumPy counts a negative index from the end
            position = fn.select(fn.compare("icmp", "slt", position, literal(0, I64)), fn.binary("add", position, size), position)
        inside = fn.compare("icmp", "ult", position, size)
        flag = fn.emit(f"load i1, ptr {self.out_of_bounds}", BOOL)
        fn.emit(f"store i1 {fn.binary('or', flag, fn.binary('xor', inside, literal(True, BOOL))).ref}, ptr {self.out_of_bounds}")
        position = fn.select(inside, position, literal(0, I64))
        return fn.binary("add", fn.binary("mul", position, self.size(i.scale)), self.size(i.shift))

    def _row_offset(self, variables: dict) -> V:
        """Row-major offset of the current stage's inner loop indices, into a row buffer (from the
        block's start in a 1-d kernel)."""
        stage = self.kp.kernel.stages[self.stage_index]
        first = len(self.kp.kernel.outer)
        if self.kp.split == "inner":
            return self.fn.binary("sub", variables[first], self.block_start)
        offset = literal(0, I64)
        for k, n in enumerate(stage.inner):
            scaled = offset if k == 0 else self.fn.binary("mul", offset, self.size(n))
            offset = self.fn.binary("add", scaled, variables[first + k])
        return offset

    def _offset_of(self, index, variables) -> V:
        offset = self.size(index.const)
        for v, c in index.terms:
            term = self.fn.binary("mul", variables[v], self.size(c))
            offset = self.fn.binary("add", offset, term)
        return offset
