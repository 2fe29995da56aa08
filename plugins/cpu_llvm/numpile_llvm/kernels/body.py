"""The body of a kernel function: its loop nests (the parallel one over [lo, hi), each stage's
inner loops), reductions and scans. The kernel IR's expressions are rendered into LLVM IR by
expressions.py's mixin (gathers' bounds checks too), row buffers and streamed stores by
streams.py's, float sums in NumPy's pairwise order by pairwise.py's.
"""

from __future__ import annotations

import math

import numpy as np

from numpile.lowering import Load, Stage, gathers, walk
from numpile.shapes import SymInt, identical

from .. import scalar
from ..irbuilder import BOOL, I32, I64, NOT_UNROLLED, Function, Unlowerable, V, int_limits, literal, reg_type
from .coalesce import coalesced_loops
from .expressions import KernelExpressions
from .pairwise import PairwiseSums
from .plan import (
    ARG_REDUCTIONS, BLOCK, OUT_OF_BOUNDS, PARTIALS, KernelPlan, buffer_bytes, checks_positions, element_offset, pairwise,
    size_parameters, total_dtype,
)
from ..sizes import Sizes
from .streams import SCRATCH_BYTES, STREAM_MIN_BYTES, StreamedStores, contiguous_rows


# rows of a kernel of reductions down columns run side by side, in blocks of these many: four
# vectors of float64 on AVX-512 (independent adds), then one
JAM = (32, 8)


def _identity(reduce: str, dtype: np.dtype) -> V:
    if reduce in ("sum", "any"):
        return literal(0, dtype)
    if reduce in ("prod", "all"):
        return literal(1, dtype)
    if dtype.kind == "c":
        raise Unlowerable(f"{reduce} of {dtype} (NumPy orders complex values lexicographically)")
    if dtype.kind == "f":
        return literal(-math.inf if reduce == "max" else math.inf, dtype)
    if dtype.kind == "b":
        return literal(reduce == "min", dtype)
    low, high = int_limits(dtype)
    return literal(low if reduce == "max" else high, dtype)


def _scan_start(stage: Stage) -> V:
    """What a scan's first value is combined with: -0.0 + x is x for every float x (0.0 + -0.0
    is 0.0), 1 * x is x."""
    dtype = np.dtype(stage.dtype)
    return literal(-0.0 if stage.scan == "sum" and dtype.kind == "f" else int(stage.scan == "prod"), dtype)


def _combine(fn: Function, reduce: str, acc: V, x: V) -> V:
    kind = acc.dtype.kind
    if kind == "b":
        return fn.binary("or" if reduce in ("any", "max", "sum") else "and", acc, x)
    if reduce in ("sum", "prod"):   # one step at a time (float sums over trailing axes: _pairwise_sum)
        return scalar.table(acc.dtype)["add" if reduce == "sum" else "multiply"](fn, acc, x)
    signed = "s" if kind == "i" else "u"
    return fn.intrinsic(signed + reduce, [acc, x], acc.dtype)


def _extremum(fn: Function, reduce: str, acc: V, x: V) -> V:
    """The float max or min of acc and x, as a compare and select that LLVM vectorises into one
    instruction: its flags promise no NaN (and no care for the sign of zero, which NumPy's own
    order decides), so NaNs are tracked beside it (see KernelBody._nest)."""
    t = reg_type(acc.dtype)
    better = fn.emit(f"fcmp nnan nsz {'ogt' if reduce == 'max' else 'olt'} {t} {x.ref}, {acc.ref}", BOOL)
    return fn.emit(f"select nnan nsz i1 {better.ref}, {t} {x.ref}, {t} {acc.ref}", acc.dtype)


class KernelBody(KernelExpressions, StreamedStores, PairwiseSums):
    def __init__(self, module, name, kp: KernelPlan, program, strides, large: bool):
        self.module, self.name, self.kp, self.program, self.strides = module, name, kp, program, strides
        self.large = large   # whether outputs (and inputs) of symbolic sizes are taken as large
        self.fn = Function(module)
        self.parameters = size_parameters(kp, strides)
        self.size = Sizes(self.fn, {p: V(f"%{p}", I64) for p in self.parameters})
        self.pointer = {name: f"%d{i}" for i, name in enumerate(kp.arrays)}
        self.lo, self.hi, self.slot = V("%lo", I64), V("%hi", I64), V("%slot", I64)
        self.scratch: dict[str, tuple] = {}   # expression text -> (row scratch pointer, producing stage, bytes)
        self.streams: dict[int, str] = {}     # stage index -> the row buffer it writes, streamed out after each row
        self.prefetches: dict[tuple, tuple] = {}  # (buffer, offset of its row) -> (a Load of it, row bytes)
        self.following: dict = {}             # the next row's outer loop variables, for prefetches
        self.stage_index = 0
        self.block_start = literal(0, I64)    # where the current block of a streamed 1-d kernel starts
        self.values_in_scratch: str | None = None   # a pairwise sum adding its row's scratch values
        self.values_by_rows = None   # how a pairwise sum over loops that do not merge computes a run of values
        self.room = SCRATCH_BYTES
        self.out_of_bounds: str | None = None  # the flag a gather sets on an index out of bounds
        self.checking = False                  # a scatter's first pass: positions only, no stores

    def render(self) -> None:
        kernel, fn = self.kp.kernel, self.fn
        self._plan_pairwise()
        self._plan_gathers()
        if self.kp.split == "outer":
            self._plan_scratch()
            self._plan_streams()
            self._plan_prefetches()
        else:
            self._plan_streams()
        # a scatter checks every position it will store to before it stores any (a pass that
        # only computes them): a kernel that raises has changed nothing
        for self.checking in ((True, False) if checks_positions(kernel) else (False,)):
            if self.kp.split == "outer" and self._side_by_side():
                self._rows_side_by_side()
            elif self.kp.split == "outer":
                def row(r, carried):
                    if self.prefetches and not self.checking:
                        self.following = self._unflatten(fn.binary("add", r, literal(1, I64)), kernel.outer)
                    self._row(self._unflatten(r, kernel.outer))
                    return []
                fn.loop(self.lo, self.hi, [], row)
            else:
                self._row({})
            if self.checking:
                bad = fn.emit(f"load i1, ptr {self.out_of_bounds}", BOOL)
                refuse, store = fn.label("refuse"), fn.label("store")
                fn.emit(f"br i1 {bad.ref}, label %{refuse}, label %{store}")
                fn.start_block(refuse)
                fn.emit(f"ret i32 {OUT_OF_BOUNDS}")
                fn.start_block(store)
        if self.streams:   # non-temporal stores are weakly ordered: drain them before returning
            fn.module.declare("llvm.x86.sse.sfence", "declare void @llvm.x86.sse.sfence()")
            fn.emit("call void @llvm.x86.sse.sfence()")
        if self.out_of_bounds:
            bad = fn.emit(f"load i1, ptr {self.out_of_bounds}", BOOL)
            fn.emit(f"ret i32 {fn.select(bad, literal(OUT_OF_BOUNDS, I32), literal(0, I32)).ref}")
        else:
            fn.emit("ret i32 0")
        params = ", ".join([f"ptr noalias {self.pointer[n]}" for n in self.kp.arrays] + [f"i64 %{p}" for p in self.parameters])
        attributes = self.module.attribute_group("nounwind")
        self.module.functions.append(
            f"define internal i32 @{self.name}({params}, i64 %lo, i64 %hi, i64 %slot) {attributes} {{\n"
            + "\n".join(["entry:"] + self.size.lines + fn.lines) + "\n}\n")

    def _side_by_side(self) -> bool:
        """Whether the kernel's rows run JAM at a time: its reductions read down columns (a sum over
        axis 0), sums, products or integer extremes, and its other stages store one value a row."""
        def fits(stage: Stage) -> bool:
            if not stage.inner:
                return stage.reduce is None and stage.scan is None
            kind = stage.reduce in ("sum", "prod") or stage.reduce in ("max", "min") and np.dtype(stage.dtype).kind in "iub"
            return stage.down_columns and kind and len(stage.inner) == 1
        plain = not (self.scratch or self.streams or self.prefetches or self.out_of_bounds or self.checking)
        stages = self.kp.kernel.stages
        return plain and any(s.down_columns for s in stages) and all(map(fits, stages))

    def _rows_side_by_side(self) -> None:
        """The kernel's rows in blocks of each JAM width, then the rest one by one. A reduction down
        columns carries one total per row of a block through one loop down the rows of its
        source: the block's elements at each step sit side by side in memory (vector loads, and
        independent vector adds), where a row at a time reads one element a source row apart.
        Each row's total adds its elements in the same order."""
        fn = self.fn
        first = self.lo
        for width in JAM:
            blocks = fn.binary("udiv", fn.binary("sub", self.hi, first), literal(width, I64))
            fn.loop(literal(0, I64), blocks, [], lambda b, carried, at=first, width=width: self._block(
                fn.binary("add", at, fn.binary("mul", b, literal(width, I64))), width) or [])
            first = fn.binary("add", first, fn.binary("mul", blocks, literal(width, I64)))
        fn.loop(first, self.hi, [], lambda r, carried: self._row(self._unflatten(r, self.kp.kernel.outer)) or [])

    def _block(self, first: V, width: int) -> None:
        """Rows first, first + 1, ... (width of them), side by side (see _rows_side_by_side)."""
        fn, kernel = self.fn, self.kp.kernel
        outers = [self._unflatten(fn.binary("add", first, literal(w, I64)), kernel.outer) for w in range(width)]
        rows = [{} for _ in range(width)]
        for self.stage_index, stage in enumerate(kernel.stages):
            if not stage.inner:
                for outer, row in zip(outers, rows):
                    self._store(stage, outer, self._eval(stage.value, outer, row, {}))
                continue
            dtype, down = total_dtype(stage), len(kernel.outer)
            start, end = self._range(0, stage.inner[0])

            def step(i, totals, stage=stage, dtype=dtype, down=down):
                return [_combine(fn, stage.reduce, total, scalar.cast(fn, self._eval(stage.value, {**outer, down: i}, row, {}), dtype))
                        for total, outer, row in zip(totals, outers, rows)]
            totals = fn.loop(start, end, [_identity(stage.reduce, dtype)] * width, step)
            for outer, row, total in zip(outers, rows, totals):
                self._finish(stage, outer, row, total)

    def _unflatten(self, r: V, sizes: tuple) -> dict:
        """The outer loop variables of a flat index r (row-major)."""
        variables = {}
        for v in reversed(range(len(sizes))):
            if v == 0:
                variables[v] = r
            else:
                variables[v] = self.fn.binary("urem", r, self.size(sizes[v]))
                r = self.fn.binary("udiv", r, self.size(sizes[v]))
        return variables

    def _plan_prefetches(self) -> None:
        """Prefetched rows: a kernel streaming rows out that reads a large array a contiguous row at
        a time prefetches that array's next row as it copies a row out, a line or so per line
        copied. The row's lines then arrive while the memory bus has room, not one page after
        another as the first stage's loads ask for them. (Issued all at once instead, after the
        row, the prefetches stall on the misses in flight and it is slower.)"""
        if not self.streams:
            return
        first = len(self.kp.kernel.outer)
        for stage in self.kp.kernel.stages:
            for e in walk(stage.value):
                if not isinstance(e, Load) or e.weak or gathers(e):
                    continue
                buffer = self.program.buffers[e.buffer]
                coefficients, const = element_offset(e.index, self.strides[e.buffer])
                row = tuple(coefficients.get(v, 0) for v in range(first))
                nbytes, row_bytes = buffer_bytes(buffer), math.prod(stage.inner) * buffer.dtype.itemsize
                large = self.large if isinstance(nbytes, SymInt) else nbytes >= STREAM_MIN_BYTES
                if large and not isinstance(row_bytes, SymInt) and not identical(row, (0,) * first) \
                        and contiguous_rows(coefficients, first, stage.inner):
                    self.prefetches.setdefault((e.buffer, str(row), str(const)), (e, row_bytes))

    # -- loop nests ----------------------------------------------------------------------------
    def _row(self, outer: dict) -> None:
        """Every stage, one after the other, for one row."""
        rows: dict[str, V] = {}
        for self.stage_index, stage in enumerate(self.kp.kernel.stages):
            self._nest(stage, outer, rows)

    def _range(self, k: int, n) -> tuple[V, V]:
        """Bounds of a stage's k-th inner loop: the thread's share when it is the split loop."""
        if k == self.kp.split_loop and self.kp.split == "inner":
            return self.lo, self.hi
        return literal(0, I64), self.size(n)

    def _nest(self, stage: Stage, outer: dict, rows: dict) -> None:
        """A stage's loop nest for one row: every element is stored, or accumulated into the row
        value. A float sum adds its trailing inner loops (Stage.trailing) as one pairwise block
        (_pairwise_sum); everything else accumulates in order (see the module docstring)."""
        fn, first, kind = self.fn, len(self.kp.kernel.outer), stage.reduce
        element_dtype = total_dtype(stage) if kind else None
        # a float max or min carries (extremum of the non-NaN values, whether a NaN was seen)
        extremum = kind in ("max", "min") and element_dtype.kind == "f"
        merged = 1 if self.stage_index in self.streams else coalesced_loops(
            stage, first, self.strides, self.kp.split_loop if self.kp.split == "inner" else None)
        if pairwise(stage):   # a float sum's loops merge inside its pairwise block only
            merged = min(merged, stage.trailing)

        def element(variables, acc):
            variables = {**outer, **variables}
            if self.checking:
                self._indexed_offset(stage.output, stage.output_index, variables, rows, {})
                return []
            value = self._eval(stage.value, variables, rows, {})
            if stage.scan:
                return self._scan_step(stage, variables, value, acc)
            if kind in ARG_REDUCTIONS:
                return self._arg_step(stage, variables, scalar.cast(fn, value, element_dtype), acc)
            if kind is None:
                self._store(stage, variables, value)
                return []
            value = scalar.cast(fn, value, element_dtype)
            if extremum:
                return [_extremum(fn, kind, acc[0], value), fn.binary("or", acc[1], fn.compare("fcmp", "uno", value, value))]
            return [_combine(fn, kind, acc[0], value)]

        def blocks(start, end, acc, each):
            """each(lo, hi, acc) over [start, end) in blocks of BLOCK elements."""
            count = fn.binary("sub", end, start)
            nblocks = fn.binary("udiv", fn.binary("add", count, literal(BLOCK - 1, I64)), literal(BLOCK, I64))

            def block(b, carried):
                lo = fn.binary("add", start, fn.binary("mul", b, literal(BLOCK, I64)))
                return each(lo, fn.intrinsic("smin", [fn.binary("add", lo, literal(BLOCK, I64)), end], I64), carried)
            return fn.loop(literal(0, I64), nblocks, acc, block)

        def innermost(k, variables, acc):
            start, end = self._range(k, stage.inner[k])
            if self.kp.split == "inner" and self.stage_index in self.streams:   # a 1-d kernel's rows are blocks
                def streamed_block(lo, hi, carried):
                    self.block_start = lo
                    fn.loop(lo, hi, [], lambda i, c: element({**variables, first + k: i}, c))
                    self._stream_out(stage, lo, fn.binary("sub", hi, lo))
                    return []
                return blocks(start, end, acc, streamed_block)
            return fn.loop(start, end, acc, lambda i, c: element({**variables, first + k: i}, c), short_row(k))

        def short_row(k):
            """An innermost loop of a store LLVM must not unroll: of a constant count past the
            interleave groups it forms well (7), unrolled it made the loop around it vectorise across
            rows with gathers and scatters (`-(y - p)` on (100000, 10): 0.15x NumPy)."""
            row = stage.inner[k]
            short = kind is None and not stage.scan and isinstance(row, int) and 8 <= row <= 64 and (k or first)
            return fn.module.loop_properties(NOT_UNROLLED) if short else None

        def flat_sum(k0, variables, acc):
            """A float sum over the stage's inner loops from k0 on as one, row-major: the source's
            trailing axes, which NumPy sums as one block (C-ordered data coalesces)."""
            group = len(stage.inner) - merged   # the loops from here on run as one (coalesce.py)
            sizes = (*stage.inner[k0:group], math.prod(stage.inner[group:]) if merged > 1 else stage.inner[-1])

            def split(i, dims) -> list:
                """Flat position i over loops of sizes `dims` as their indices (row-major)."""
                indices, rest = [], i
                for t in reversed(range(len(dims))):
                    indices.insert(0, rest if t == 0 else fn.binary("urem", rest, self.size(dims[t])))
                    if t > 0:
                        rest = fn.binary("udiv", rest, self.size(dims[t]))
                return indices

            def value(indices):
                inner = dict(variables) | dict(zip(range(first + k0, first + group), indices)) | one_loop(group, indices[-1])
                return scalar.cast(fn, self._eval(stage.value, {**outer, **inner}, rows, {}), element_dtype)

            def by_rows(lo, hi, put) -> None:
                """The values at [lo, hi) a row of the last loop at a time: a division per row (a
                3-d broadcast expression's mean: one per element was 14x NumPy's time)."""
                last = self.size(sizes[-1])
                stop = fn.binary("udiv", fn.binary("add", hi, fn.binary("sub", last, literal(1, I64))), last)

                def row(r, carried):
                    at = fn.binary("mul", r, last)
                    lead = split(r, sizes[:-1])
                    fn.loop(fn.intrinsic("smax", [lo, at], I64), fn.intrinsic("smin", [hi, fn.binary("add", at, last)], I64), [],
                            lambda j, c: put(j, value([*lead, fn.binary("sub", j, at)])) or [])
                    return []
                fn.loop(fn.binary("udiv", lo, last), stop, [], row)
            n = math.prod(stage.inner[k0:])
            start, end = self._range(k0, n)
            # summing the row's own scratch value (softmax's exp): add it from the scratch
            kept = self.scratch.get(str(stage.value))
            own = kept is not None and kept[1] == self.stage_index and np.dtype(stage.value.dtype) == element_dtype
            self.values_in_scratch = kept[0] if own else None
            self.values_by_rows = by_rows if len(sizes) > 1 else None
            total = self._pairwise_sum(start, end, n, lambda i: value(split(i, sizes)), element_dtype)
            self.values_in_scratch = self.values_by_rows = None
            return [fn.binary("fadd", acc[0], total)]

        def one_loop(k, j) -> dict:
            """The variables of the loops from k on, run as one over their flat index j."""
            return {first + m: j if m == len(stage.inner) - 1 else literal(0, I64) for m in range(k, len(stage.inner))}

        def nest(k, variables, acc):
            if not stage.inner:
                return element(variables, acc)
            if pairwise(stage) and k == len(stage.inner) - stage.trailing:
                return flat_sum(k, variables, acc)
            if merged > 1 and k == len(stage.inner) - merged:
                return fn.loop(literal(0, I64), literal(math.prod(stage.inner[k:]), I64), acc,
                               lambda j, c: element({**variables, **one_loop(k, j)}, c))
            if k == len(stage.inner) - 1:
                return innermost(k, variables, acc)
            start, end = self._range(k, stage.inner[k])
            return fn.loop(start, end, acc, lambda i, c: nest(k + 1, {**variables, first + k: i}, c))

        start = [_identity(ARG_REDUCTIONS.get(kind, kind), element_dtype)] if kind else []
        if stage.scan and len(stage.inner) == 1:   # the running total is carried along the loop
            start = [_scan_start(stage)]
        if kind in ARG_REDUCTIONS:   # (the extreme so far, its flat index)
            start.append(literal(0, I64))
        result = nest(0, {}, start + [literal(False, BOOL)] if extremum else start)
        if kind in ARG_REDUCTIONS:
            self._finish(stage, outer, rows, result[1])
        elif extremum:
            self._finish(stage, outer, rows, fn.select(result[1], literal(math.nan, element_dtype), result[0]))
        elif kind:
            self._finish(stage, outer, rows, result[0])
        elif self.stage_index in self.streams and self.kp.split == "outer":
            row_start = {**outer, **{first + k: literal(0, I64) for k in range(len(stage.inner))}}
            self._stream_out(stage, self._offset(stage.output, stage.output_index, row_start),
                             literal(math.prod(stage.inner), I64))

    def _arg_step(self, stage: Stage, variables: dict, value: V, carried: list) -> list:
        """One step of argmax/argmin: the value replaces the extreme so far, and its flat index
        the index so far, when it is strictly beyond it (the first of equals stays), or when it
        is the first NaN (NumPy's extreme of anything with a NaN)."""
        fn, (extreme, at) = self.fn, carried
        first = len(self.kp.kernel.outer)
        flat = literal(0, I64)
        for k, n in enumerate(stage.inner):
            scaled = flat if k == 0 else fn.binary("mul", flat, self.size(n))
            flat = fn.binary("add", scaled, variables[first + k])
        wanted = ARG_REDUCTIONS[stage.reduce]
        kind = value.dtype.kind
        if kind == "f":
            beyond = fn.compare("fcmp", "ogt" if wanted == "max" else "olt", value, extreme)
            first_nan = fn.binary("and", fn.compare("fcmp", "uno", value, value), fn.compare("fcmp", "ord", extreme, extreme))
            beyond = fn.binary("or", beyond, first_nan)
        else:
            signed = "s" if kind == "i" else "u"
            beyond = fn.compare("icmp", f"{signed}{'gt' if wanted == 'max' else 'lt'}", value, extreme)
        return [fn.select(beyond, value, extreme), fn.select(beyond, flat, at)]

    def _scan_step(self, stage: Stage, variables: dict, value: V, carried: list) -> list:
        """One step of a scan: the total so far (carried along the innermost loop, or the lane's
        total stored one step back along the scanned loop) combined with the value, stored."""
        fn = self.fn
        value = scalar.cast(fn, value, stage.dtype)
        if carried:
            total = _combine(fn, stage.scan, carried[0], value)
            self._store(stage, variables, total)
            return [total]
        first = len(self.kp.kernel.outer)
        t = variables[first]
        back = fn.intrinsic("smax", [fn.binary("sub", t, literal(1, I64)), literal(0, I64)], I64)
        before = fn.load(self.pointer[stage.output], self._offset(stage.output, stage.output_index, {**variables, first: back}),
                         np.dtype(stage.dtype))
        before = fn.select(fn.compare("icmp", "eq", t, literal(0, I64)), _scan_start(stage), before)
        self._store(stage, variables, _combine(fn, stage.scan, before, value))
        return []

    def _store(self, stage: Stage, variables: dict, value: V) -> None:
        value = scalar.cast(self.fn, value, self.program.buffers[stage.output].dtype)
        if self.stage_index in self.streams:
            self.fn.store(self.streams[self.stage_index], self._row_offset(variables), value)
        else:
            self.fn.store(self.pointer[stage.output], self._indexed_offset(stage.output, stage.output_index, variables, {}, {}),
                          value)

    def _finish(self, stage: Stage, outer: dict, rows: dict, total: V) -> None:
        """A reduce stage's row value: kept for later stages and stored (a split reduction's
        share into its slot of the partials)."""
        fn = self.fn
        result = scalar.cast(fn, total, stage.dtype)
        rows[stage.row_name] = result
        if stage.output is None:
            return
        target = self._offset(stage.output, stage.output_index, outer)
        if self.kp.split != "inner":
            fn.store(self.pointer[stage.output], target, result)
            return
        # a thread's share goes to its slot of the partials; slot -1 means the whole range
        whole = fn.compare("icmp", "slt", self.slot, literal(0, I64))
        into_out, into_partials, joined = fn.label("whole"), fn.label("share"), fn.label("stored")
        fn.emit(f"br i1 {whole.ref}, label %{into_out}, label %{into_partials}")
        fn.start_block(into_partials)
        fn.store(self.pointer[PARTIALS], self.slot, total)
        fn.emit(f"br label %{joined}")
        fn.start_block(into_out)
        fn.store(self.pointer[stage.output], target, result)
        fn.emit(f"br label %{joined}")
        fn.start_block(joined)
