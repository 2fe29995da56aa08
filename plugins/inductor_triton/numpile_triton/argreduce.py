"""argmin and argmax in the row kernels of kernel.py (a mixin of its Renderer).

[Note: argmin and argmax] Each lane keeps the best value it saw (`best`) and where (`where`: the
position in the row, flattened in C order), replaced only by a strictly better one, so a lane keeps
its first; and the first position of a NaN it saw (`nans`). The row's answer is the first NaN's
position where the row has one (NumPy's), else the least position among the lanes holding the best
value. A persistent row is one step of this. A whole-array one splits as the other reductions do,
each program storing its chunk's best value and position (two partials buffers), and the combining
kernel's lanes take the positions stored, not their own.
"""

from __future__ import annotations

import math

import numpy as np

from numpile.lowering import Stage

from . import scalar
from .scalar import BOOL, Unlowerable, Val, constant, tl_type

# an arg reduction: the reduction of its values, the comparison a better value passes, the identity
ARG = {"argmin": ("min", "<", lambda d: math.inf if d.kind == "f" else np.iinfo(d).max),
       "argmax": ("max", ">", lambda d: -math.inf if d.kind == "f" else np.iinfo(d).min)}


def arg_dtype(stage: Stage) -> np.dtype:
    """What an argmin or argmax compares in: its values' dtype, float16 as float32, bools as 0/1."""
    dtype = np.dtype(stage.value.dtype)
    return scalar.F32 if dtype == np.float16 else np.dtype(np.uint8) if dtype.kind == "b" else dtype


class ArgReduction:
    """The Renderer's argmin and argmax stages (see the note)."""

    @property
    def nowhere(self) -> str:
        """The position of nothing seen yet: past every position."""
        return str(np.iinfo(self.index_dtype).max)

    def _arg_start(self, stage: Stage) -> None:
        """A looped row's lanes before its first block: nothing seen."""
        dtype = arg_dtype(stage)
        self.emit(f"best = tl.full([XBLOCK, RBLOCK], {constant(ARG[stage.reduce][2](dtype), dtype)}, {tl_type(dtype)})")
        self.emit(f"where = tl.full([XBLOCK, RBLOCK], {self.nowhere}, {tl_type(self.index_dtype)})")
        if dtype.kind == "f":
            self.emit("nans = where")

    def _arg_stage(self, stage: Stage, value, space, looped: bool) -> None:
        """One step of an argmin or argmax over a block (see [Note: argmin and argmax])."""
        if not isinstance(value, Val):
            raise Unlowerable(f"{stage.reduce} of a constant")
        dtype = arg_dtype(stage)
        _, better, identity = ARG[stage.reduce]
        v = scalar.cast(self, scalar.cast(self, value, BOOL) if value.dtype.kind == "b" else value, dtype)
        masked = self.let(f"tl.where({space.mask}, {v.text}, {constant(identity(dtype), dtype)})", dtype).text
        nowhere, index = self.nowhere, tl_type(self.index_dtype)
        at = f"{space.position} + {space.zero}"
        if self.kp.positions and self.kp.mode != "split":   # combining partials: the positions stored
            at = f"tl.load({self.pointers[self.kp.positions]} + {at}, mask={space.mask})"
        at = self.let(f"tl.where({space.mask}, {at}, {nowhere}).to({index})", self.index_dtype).text
        nan = f"tl.where({masked} != {masked}, {at}, {nowhere})"
        if looped:
            self.emit(f"take = {space.mask} & (({masked} {better} best) | (where == {nowhere}))")
            self.emit(f"best, where = tl.where(take, {masked}, best), tl.where(take, {at}, where)")
            if dtype.kind == "f":
                self.emit(f"nans = tl.minimum(nans, {nan})")
            return
        self.emit(f"best, where = {masked}, {at}")
        if dtype.kind == "f":
            self.emit(f"nans = {nan}")
        self._arg_finish(stage, space)

    def _arg_finish(self, stage: Stage, space) -> None:
        reduce = ARG[stage.reduce][0]
        index = tl_type(self.index_dtype)
        self.emit(f"best_row = tl.{reduce}(best, axis=1, keep_dims=True)")
        at = self.let(f"tl.min(tl.where(best == best_row, where, {self.nowhere}), axis=1, keep_dims=True).to({index})",
                      self.index_dtype)
        dtype = arg_dtype(stage)
        if dtype.kind == "f":
            self.emit("first_nan = tl.min(nans, axis=1, keep_dims=True)")
            at = self.let(f"tl.where(first_nan < {self.nowhere}, first_nan.to({index}), {at.text})", self.index_dtype)
        if self.kp.mode == "split":   # this program's best value (NaN where it saw one) and its position
            best = "best_row" if dtype.kind != "f" else \
                f"tl.where(first_nan < {self.nowhere}, {constant(math.nan, dtype)}, best_row)"
            self.emit(f"tl.store({self.pointers[self.kp.partial]} + rows, {best})")
            self.emit(f"tl.store({self.pointers[self.kp.positions]} + rows, {at.text})")
            return
        self._keep(stage, at, space)
