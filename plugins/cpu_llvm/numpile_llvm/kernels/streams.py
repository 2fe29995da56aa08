"""Large outputs streamed out: rows built in a buffer on the thread's stack and written with
non-temporal stores, so that an output larger than the caches does not evict the inputs on its
way out; and the row buffers (scratch) a kernel keeps for values it computes once per row.
"""

from __future__ import annotations

import math

import numpy as np

from numpile.lowering import Call, Indirect, Program, Stage, walk
from numpile.shapes import SymInt, identical

from .. import allocator, jit, mathlib
from ..irbuilder import I64, Module, V, literal, mem_type
from .plan import BLOCK, KernelPlan, buffer_bytes, element_offset

                                    # phases without loads keep the memory streams going)
SCRATCH_BYTES = 1 << 17   # the most row buffers (scratch, streamed rows) a kernel keeps on its thread's stack
# outputs of half the last-level cache or more leave the caches anyway: stream them out
STREAM_MIN_BYTES = max((jit.last_level_cache_bytes() or 1 << 25) // 2, allocator.MIN_BYTES)
LINE = allocator.ALIGNMENT   # a cache line; rows streamed out start on one


def streamed(kp: KernelPlan, stage: Stage, program: Program, strides: dict, module: Module, large: bool) -> bool:
    """Whether a stage streams its rows out (StreamedStores._plan_streams): on x86, a store stage of
    a row kernel or a 1-d kernel of one stage (whose "rows" are blocks of BLOCK elements) whose output is
    large (of a symbolic size: when `large`), allocated by the kernels' allocator (on a cache
    line), and whose rows are contiguous, start on cache lines and, in a row kernel, are whole
    lines long (known at compile time)."""
    one_d = kp.split == "inner" and len(stage.inner) == 1 and len(kp.kernel.stages) == 1
    if stage.reduce or not (kp.split == "outer" or one_d) or "sse2" not in module.cpu_features:
        return False
    if stage.scan and len(stage.inner) > 1:   # it reads back the lane totals it stored a step before
        return False
    if any(isinstance(i, Indirect) for i in stage.output_index):   # a scatter stores where its index says
        return False
    buffer = program.buffers[stage.output]
    itemsize, row, nbytes = buffer.dtype.itemsize, math.prod(stage.inner), buffer_bytes(buffer)
    if buffer.kind == "input" or not (large if isinstance(nbytes, SymInt) else nbytes >= STREAM_MIN_BYTES) \
            or not one_d and not _multiple(row * itemsize, LINE):
        return False
    coefficients, const = element_offset(stage.output_index, strides[stage.output])
    first = len(kp.kernel.outer)
    on_lines = all(_multiple(coefficients.get(v, 0) * itemsize, LINE) for v in range(first))
    return contiguous_rows(coefficients, first, stage.inner) and on_lines and _multiple(const * itemsize, LINE)


def _multiple(x, n: int) -> bool:
    """Whether x is a multiple of n for every size."""
    return not isinstance(x, SymInt) and x % n == 0


def contiguous_rows(coefficients: dict, first: int, inner: tuple) -> bool:
    """Whether a stage's inner loops (variables from `first`) walk a buffer's elements in order."""
    return all(identical(coefficients.get(first + k, 0), math.prod(inner[k + 1:])) for k in range(len(inner)))


def _expensive(e) -> bool:
    return isinstance(e, Call) and any(isinstance(x, Call) and x.op in mathlib.FUNCTIONS and x.op != "power" for x in walk(e))


def _outermost(e, wanted):
    """The outermost sub-expressions of e for which wanted() holds."""
    if wanted(e):
        yield e
    elif isinstance(e, Call):
        for a in (*e.args, *(v for _, v in e.kwargs)):
            yield from _outermost(a, wanted)


class StreamedStores:
    """KernelBody's row buffers and streamed stores."""

    def _row_buffer(self, row_bytes: int, stem: str) -> str | None:
        """A row buffer on the stack (in the cache while the row is computed), if there is room
        (rows of symbolic length: none)."""
        if isinstance(row_bytes, SymInt) or row_bytes > self.room:
            return None
        self.room -= row_bytes
        return self.fn.emit(f"alloca i8, i64 {row_bytes}, align {LINE}", I64, stem).ref

    def _plan_scratch(self) -> None:
        """Row scratch: an expensive value (one with a math call) that a stage computes and a later
        stage of the same row needs again is kept in a row buffer instead of recomputed
        (softmax's exp(x - max): once for the sum, once for the division)."""
        stages = self.kp.kernel.stages
        for i, stage in enumerate(stages):
            made = {str(e): e for e in walk(stage.value) if _expensive(e)}
            for later in stages[i + 1:]:
                if not stage.inner or not identical(later.inner, stage.inner):
                    continue
                for e in _outermost(later.value, lambda x: str(x) in made):
                    text = str(e)
                    if text not in self.scratch:
                        row_bytes = math.prod(stage.inner) * np.dtype(e.dtype).itemsize
                        pointer = self._row_buffer(row_bytes, "scratch")
                        if pointer is not None:
                            self.scratch[text] = (pointer, i, row_bytes)

    def _plan_streams(self) -> None:
        """Streamed rows: a stage writing a large output (see streamed) stores each row into a row
        buffer, then copies it out a cache line at a time with non-temporal stores. A plain store
        that misses reads the line from memory first; these write it without reading: a third
        less memory traffic for a kernel that reads one array and writes one. (LLVM's vectoriser
        keeps a non-temporal store scalar unless it is aligned to the vector, which the store of
        one element cannot promise: hence the row buffer and an explicit copy.)"""
        for index, stage in enumerate(self.kp.kernel.stages):
            if streamed(self.kp, stage, self.program, self.strides, self.module, self.large):
                row = BLOCK if self.kp.split == "inner" else math.prod(stage.inner)
                row_bytes = row * self.program.buffers[stage.output].dtype.itemsize
                pointer = self._spent_scratch(index, row_bytes) or self._row_buffer(row_bytes, "row")
                if pointer is not None:
                    self.streams[index] = pointer

    def _spent_scratch(self, index: int, row_bytes: int) -> str | None:
        """A row scratch of the same size that no stage after `index` reads: the stage may write its
        row over it (element by element, each read before it is written), which keeps one row
        buffer fewer in the L1 cache (softmax: exp(x - max) becomes the output row in place)."""
        later = self.kp.kernel.stages[index + 1:]
        for text, (pointer, producer, size) in self.scratch.items():
            if producer < index and size == row_bytes and not any(str(e) == text for s in later for e in walk(s.value)):
                return pointer
        return None

    def _stream_out(self, stage: Stage, start: V, count: V) -> None:
        """Copy a streamed stage's row buffer (`count` elements) to the output from element offset
        `start`: whole cache lines with non-temporal stores, the elements before the first line
        boundary and after the last (a 1-d kernel's range ends) with plain ones."""
        fn, first = self.fn, len(self.kp.kernel.outer)
        dtype = self.program.buffers[stage.output].dtype
        size = literal(dtype.itemsize, I64)
        row = fn.emit(f"getelementptr inbounds {mem_type(dtype)}, ptr {self.pointer[stage.output]}, i64 {start.ref}", I64, "p")
        buffer = self.streams[self.stage_index]
        misaligned = fn.binary("urem", fn.binary("mul", start, size), literal(LINE, I64))
        to_line = fn.binary("urem", fn.binary("sub", literal(LINE, I64), misaligned), literal(LINE, I64))   # bytes
        head = fn.intrinsic("umin", [fn.binary("udiv", to_line, size), count], I64)
        lines = fn.binary("udiv", fn.binary("mul", fn.binary("sub", count, head), size), literal(LINE, I64))
        tail = fn.binary("add", head, fn.binary("udiv", fn.binary("mul", lines, literal(LINE, I64)), size))

        def element(i, carried):
            fn.store(row.ref, i, fn.load(buffer, i, dtype))
            return []
        fn.loop(literal(0, I64), head, [], element)
        line, nontemporal = f"<{LINE // 4} x i32>", fn.module.metadata("!{i32 1}")
        source_start = fn.emit(f"getelementptr inbounds {mem_type(dtype)}, ptr {buffer}, i64 {head.ref}", I64, "p")
        target_start = fn.emit(f"getelementptr inbounds {mem_type(dtype)}, ptr {row.ref}, i64 {head.ref}", I64, "p")
        ahead = []   # (the next row of a prefetched array, its lines per line copied)
        for load, row_bytes in self.prefetches.values():
            # no `inbounds`: after the last row this points past the array, which a prefetch may
            following = {**self.following, **{v: literal(0, I64) for a in load.index for v, _ in a.terms if v >= first}}
            ahead.append((fn.emit(f"getelementptr {mem_type(load.dtype)}, ptr {self.pointer[load.buffer]}, "
                                  f"i64 {self._offset(load.buffer, load.index, following).ref}", I64, "p"),
                          -(-row_bytes // (math.prod(stage.inner) * dtype.itemsize))))
        if ahead:
            fn.module.declare("llvm.prefetch.p0", "declare void @llvm.prefetch.p0(ptr, i32, i32, i32)")

        def copy(i, carried):
            source = fn.emit(f"getelementptr inbounds {line}, ptr {source_start.ref}, i64 {i.ref}", I64, "p")
            value = fn.emit(f"load {line}, ptr {source.ref}, align {dtype.itemsize}", I64)
            target = fn.emit(f"getelementptr inbounds {line}, ptr {target_start.ref}, i64 {i.ref}", I64, "p")
            fn.emit(f"store {line} {value.ref}, ptr {target.ref}, align {LINE}, !nontemporal {nontemporal}")
            for next_row, per_line in ahead:
                for j in range(per_line):
                    at = fn.binary("add", fn.binary("mul", i, literal(per_line * LINE, I64)), literal(j * LINE, I64))
                    address = fn.emit(f"getelementptr i8, ptr {next_row.ref}, i64 {at.ref}", I64, "p")
                    fn.emit(f"call void @llvm.prefetch.p0(ptr {address.ref}, i32 0, i32 3, i32 1)")
            return []
        fn.loop(literal(0, I64), lines, [], copy)
        fn.loop(tail, count, [], element)
