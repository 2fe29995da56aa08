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

The parallel loop is the flattened outer loops ("outer"), or, for a kernel of one stage with
no outer loops, that stage's first inner loop, or all of them as one for a float sum ("inner"):
a 1-d pointwise chain or a full reduction then still splits over threads, each reduction
writing its partial result into slot `slot` of an extra partials array (slot -1: straight
into the output).

A gather (a load through an index array, ir.Indirect) reads each position NumPy would, after
making a negative one count from the end; a position outside its dim is not read (element 0
is, instead) but sets the kernel's out-of-bounds flag, and the kernel returns OUT_OF_BOUNDS
when it is done: the runtime raises IndexError, and numpile runs the frame again with NumPy,
which raises its own error.

Float sums follow NumPy's pairwise summation exactly (see _KernelBody._pairwise_sum) and float
products multiply one element after another as NumPy's loop does, on one thread: a sum or a
product is NumPy's to the bit and the same in every kernel.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from numpile.lowering import Affine, Call, Const, Indirect, Kernel, Load, LoopIndex, Program, RowValue, Stage, gathers, walk
from numpile.shapes import SYMBOL_PATTERN, SymInt, identical

from . import allocator, jit, mathlib, scalar
from .irbuilder import BOOL, F32, F64, I32, I64, Function, Module, Unlowerable, V, int_limits, literal, mem_type, reg_type
from .sizes import Sizes, c_strides, read_at_run_time

# a kernel's status bits: an input's strides are not the ones it was compiled for (compile a
# variant); a gather met an index out of bounds
RELAYOUT, OUT_OF_BOUNDS = 1, 2
ARG_REDUCTIONS = {"argmax": "max", "argmin": "min"}   # and the extreme each looks for
BLOCK = 4096
PAIRWISE_LEAF = 128   # NumPy's PW_BLOCKSIZE: pairwise sums split ranges down to this many elements
PAIRWISE_LANES = 8    # and add a leaf in eight interleaved partial sums
PAIRWISE_FILL = 4 * PAIRWISE_LEAF   # elements evaluated into the values buffer at a time (short
                                    # phases without loads keep the memory streams going)
SCRATCH_BYTES = 1 << 17   # the most row buffers (scratch, streamed rows) a kernel keeps on its thread's stack
# outputs of half the last-level cache or more leave the caches anyway: stream them out
STREAM_MIN_BYTES = max((jit.last_level_cache_bytes() or 1 << 25) // 2, allocator.MIN_BYTES)
LINE = allocator.ALIGNMENT   # a cache line; rows streamed out start on one
PARTIALS = "__partials__"
# where CPython's ndarray object keeps its data, dimensions and strides pointers (checked at start-up)
DATA_OFFSET, DIMENSIONS_OFFSET, STRIDES_OFFSET = 16, 32, 40


@dataclass
class KernelPlan:
    kernel: Kernel
    arrays: list            # buffer names passed, in order; PARTIALS last for a split reduction
    split: str              # "outer", "inner" or "none"
    extent: int             # iterations of the parallel loop (a SymInt with dynamic shapes)
    work: int               # elements computed per call, to decide on threads (likewise)
    symbols: list           # the graph symbols whose values the kernel takes, by number
    partial: np.dtype | None = None   # dtype of a split reduction's partial results
    reduce: str | None = None         # the reduction a split kernel combines partials with
    split_loop: int = 0               # the inner loop an "inner" split shares out


def plan(kernel: Kernel, program: Program) -> KernelPlan:
    inputs = kernel.inputs
    arrays = inputs + [o for o in kernel.outputs if o not in inputs]
    work = math.prod(kernel.outer) * sum(math.prod(s.inner) for s in kernel.stages)
    symbols = sorted({int(k) for x in _sizes_of(kernel, program) if isinstance(x, SymInt)
                      for k in SYMBOL_PATTERN.findall(x.expr)})
    if kernel.outer:
        return KernelPlan(kernel, arrays, "outer", math.prod(kernel.outer), work, symbols)
    if len(kernel.stages) == 1 and kernel.stages[0].reduce in ARG_REDUCTIONS:
        return KernelPlan(kernel, arrays, "none", 1, work, symbols)   # the first extreme: in order, on one thread
    if len(kernel.stages) == 1 and kernel.stages[0].scan:
        # a scan along its first loop: threads share the next one (the lanes), or it runs whole
        inner = kernel.stages[0].inner
        if len(inner) > 1:
            return KernelPlan(kernel, arrays, "inner", inner[1], work, symbols, split_loop=1)
        return KernelPlan(kernel, arrays, "none", 1, work, symbols)
    if len(kernel.stages) == 1 and kernel.stages[0].inner:
        stage = kernel.stages[0]
        # no outer loops: a reduction over every axis. A float sum runs over them as one (see
        # _KernelBody._nest), and threads split that
        extent = math.prod(stage.inner) if pairwise(stage) else stage.inner[0]
        result = KernelPlan(kernel, arrays, "inner", extent, work, symbols)
        if stage.reduce:
            result.arrays = arrays + [PARTIALS]
            result.partial = _total_dtype(stage)
            result.reduce = stage.reduce
        return result
    return KernelPlan(kernel, arrays, "none", 1, work, symbols)


def _sizes_of(kernel: Kernel, program: Program):
    """Every size a kernel's code may compute with: loop sizes, index coefficients and constants,
    constant operands, its outputs' shapes (whether one is large), its inputs' C-order strides
    (in any other layout a stride is a constant or read from the array)."""
    for stage in kernel.stages:
        yield from stage.inner
        indices = []
        for index in [stage.output_index] + [e.index for e in walk(stage.value) if isinstance(e, Load)]:
            for i in index:
                if isinstance(i, Indirect):
                    yield from (i.size, i.scale, i.shift)
                else:
                    indices.append(i)
        for e in walk(stage.value):
            if isinstance(e, LoopIndex):
                indices.append(e.index)
            elif isinstance(e, Const):
                yield e.value
        for a in indices:
            yield a.const
            yield from (c for _, c in a.terms)
    yield from kernel.outer
    for name in kernel.outputs:
        yield from program.buffers[name].shape
    for name in kernel.inputs:
        yield from c_strides(program.buffers[name].shape)


def size_parameters(kp: KernelPlan, strides: dict) -> list[str]:
    """The names of the i64 values a kernel body takes besides its range: the symbols, then the
    strides read at run time."""
    read = [s.expr for name in kp.arrays if name != PARTIALS
            for d, s in enumerate(strides[name]) if read_at_run_time(name, d, s)]
    return [f"s{k}" for k in kp.symbols] + read


def render(module: Module, symbol: str, kp: KernelPlan, program: Program, strides: dict, checked: set) -> None:
    """Add the kernel's functions to the module: its entry and one body, or two where outputs
    of symbolic sizes stream out when large. `strides`: element strides per buffer (see
    sizes.py); `checked`: the buffers whose strides the entry checks."""
    large = [nbytes for stage in kp.kernel.stages
             if _streamed(kp, stage, program, strides, module, large=True)
             and isinstance(nbytes := _bytes(program.buffers[stage.output]), SymInt)]
    _render_entry(module, symbol, kp, program, strides, checked, large)
    _KernelBody(module, f"{symbol}.body", kp, program, strides, large=False).render()
    if large:
        _KernelBody(module, f"{symbol}.large", kp, program, strides, large=True).render()


def _render_entry(module, symbol, kp, program, strides, checked, large):
    fn = Function(module)
    sizes = Sizes(fn, {f"s{k}": V(f"%s{k}", I64) for k in kp.symbols})
    params = ", ".join([f"ptr %a{i}" for i in range(len(kp.arrays))] + [f"i64 %s{k}" for k in kp.symbols])
    data = []
    ok = literal(True, BOOL)
    for i, name in enumerate(kp.arrays):
        data.append(_field(fn, i, DATA_OFFSET, "data"))
        if name not in checked:
            continue
        buf = program.buffers[name]
        itemsize = literal(buf.dtype.itemsize, I64)
        pointer = _field(fn, i, STRIDES_OFFSET)
        dims = _field(fn, i, DIMENSIONS_OFFSET) if any(isinstance(n, SymInt) for n in buf.shape) else None
        for d, (n, s) in enumerate(zip(buf.shape, strides[name])):
            if not isinstance(n, SymInt) and n <= 1:
                continue
            actual = _element(fn, pointer, d)
            if read_at_run_time(name, d, s):   # whole elements, passed on
                same = fn.compare("icmp", "eq", fn.binary("srem", actual, itemsize), literal(0, I64))
                sizes.params[s.expr] = fn.binary("sdiv", actual, itemsize)
            elif isinstance(s, SymInt):
                same = fn.compare("icmp", "eq", actual, fn.binary("mul", sizes(s), itemsize))
            else:
                same = fn.compare("icmp", "eq", actual, literal(s * buf.dtype.itemsize, I64))
            if isinstance(n, SymInt):   # a dim of size 0 or 1 may have any stride
                same = fn.binary("or", same, fn.compare("icmp", "sle", _element(fn, dims, d), literal(1, I64)))
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


def _field(fn: Function, i: int, offset: int, stem: str = "p") -> V:
    """The pointer at `offset` in the entry's ndarray argument i."""
    slot = fn.emit(f"getelementptr inbounds i8, ptr %a{i}, i64 {offset}", I64, "p")
    return fn.emit(f"load ptr, ptr {slot.ref}", I64, stem)


def _element(fn: Function, pointer: V, d: int) -> V:
    """Element d of an ndarray's dimensions or strides."""
    at = fn.emit(f"getelementptr inbounds i64, ptr {pointer.ref}, i64 {d}", I64, "p")
    return fn.emit(f"load i64, ptr {at.ref}", I64)


def _bytes(buffer) -> int:
    return math.prod(buffer.shape) * buffer.dtype.itemsize


def _total_dtype(stage: Stage) -> np.dtype:
    """The type a reduction accumulates in: NumPy's loop type, bool for any/all, the values' own
    for argmax/argmin (whose result is an index)."""
    if stage.reduce in ARG_REDUCTIONS:
        return np.dtype(stage.value.dtype)
    return BOOL if stage.reduce in ("any", "all") else np.dtype(stage.dtype)


def scatters(kernel: Kernel) -> bool:
    """Whether a kernel stores through an index array: in order, on one thread, so that the last
    of repeated positions wins as in NumPy."""
    return any(isinstance(i, Indirect) for stage in kernel.stages for i in stage.output_index)


def sequential(stage: Stage) -> bool:
    """Whether a reduction must take its elements in order on one thread: a float product."""
    return stage.reduce == "prod" and np.dtype(stage.dtype).kind == "f"


def pairwise(stage: Stage) -> bool:
    """Whether a stage is a float sum, added in NumPy's pairwise order."""
    return stage.reduce == "sum" and np.dtype(stage.dtype).kind == "f"


def pairwise_split(n: int) -> int:
    """Where NumPy's pairwise summation splits a range of n > PAIRWISE_LEAF elements: half,
    rounded down to a multiple of 8."""
    return n // 2 - n // 2 % PAIRWISE_LANES


def balanced_leaf(n: int) -> int | None:
    """The leaf size when NumPy's pairwise tree over n elements has 2**k >= 4 equal leaves
    (every node then splits into equal halves), else None."""
    leaf = n
    while leaf > PAIRWISE_LEAF and leaf % (2 * PAIRWISE_LANES) == 0:
        leaf //= 2
    return leaf if 0 < leaf <= PAIRWISE_LEAF and n // leaf >= 4 else None


def pairwise_ranges(n: int, parts: int) -> list[tuple[int, int]]:
    """The nodes of the pairwise tree over [0, n) `parts` (a power of two) ranges deep, left to
    right, fewer where a range is a leaf: threads sum these and the partial sums are added
    pairwise, which is the whole sum to the bit."""
    ranges = [(0, n)]
    # halving a balanced tree's nodes keeps them balanced while they have 8 leaves or more
    while len(ranges) < parts and all(hi - lo >= 8 * PAIRWISE_LEAF for lo, hi in ranges):
        ranges = [half for lo, hi in ranges
                  for half in ((lo, lo + pairwise_split(hi - lo)), (lo + pairwise_split(hi - lo), hi))]
    return ranges


def _streamed(kp: KernelPlan, stage: Stage, program: Program, strides: dict, module: Module, large: bool) -> bool:
    """Whether a stage streams its rows out (_KernelBody._plan_streams): on x86, a store stage of
    a row kernel or a 1-d kernel (whose "rows" are blocks of BLOCK elements) whose output is
    large (of a symbolic size: when `large`), allocated by the kernels' allocator (on a cache
    line), and whose rows are contiguous, start on cache lines and, in a row kernel, are whole
    lines long (known at compile time)."""
    one_d = kp.split == "inner" and len(stage.inner) == 1
    if stage.reduce or not (kp.split == "outer" or one_d) or "sse2" not in module.cpu_features:
        return False
    if stage.scan and len(stage.inner) > 1:   # it reads back the lane totals it stored a step before
        return False
    if any(isinstance(i, Indirect) for i in stage.output_index):   # a scatter stores where its index says
        return False
    buffer = program.buffers[stage.output]
    itemsize, row, nbytes = buffer.dtype.itemsize, math.prod(stage.inner), _bytes(buffer)
    if buffer.kind == "input" or not (large if isinstance(nbytes, SymInt) else nbytes >= STREAM_MIN_BYTES) \
            or not one_d and not _multiple(row * itemsize, LINE):
        return False
    coefficients, const = element_offset(stage.output_index, strides[stage.output])
    first = len(kp.kernel.outer)
    on_lines = all(_multiple(coefficients.get(v, 0) * itemsize, LINE) for v in range(first))
    return _contiguous_rows(coefficients, first, stage.inner) and on_lines and _multiple(const * itemsize, LINE)


def _multiple(x, n: int) -> bool:
    """Whether x is a multiple of n for every size."""
    return not isinstance(x, SymInt) and x % n == 0


def _contiguous_rows(coefficients: dict, first: int, inner: tuple) -> bool:
    """Whether a stage's inner loops (variables from `first`) walk a buffer's elements in order."""
    return all(identical(coefficients.get(first + k, 0), math.prod(inner[k + 1:])) for k in range(len(inner)))


def element_offset(index: tuple, strides: tuple) -> tuple[dict, int]:
    """The element offset of an index (an Affine per dimension) in a buffer of these strides:
    (coefficient per loop variable, constant)."""
    coefficients: dict[int, int] = {}
    for a, s in zip(index, strides):
        for v, c in a.terms:
            coefficients[v] = coefficients.get(v, 0) + c * s
    return coefficients, sum(a.const * s for a, s in zip(index, strides))


def _identity(reduce: str, dtype: np.dtype) -> V:
    if reduce in ("sum", "any"):
        return literal(0, dtype)
    if reduce in ("prod", "all"):
        return literal(1, dtype)
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
        return fn.binary(("f" if kind == "f" else "") + ("add" if reduce == "sum" else "mul"), acc, x)
    signed = "s" if kind == "i" else "u"
    return fn.intrinsic(signed + reduce, [acc, x], acc.dtype)


def _extremum(fn: Function, reduce: str, acc: V, x: V) -> V:
    """The float max or min of acc and x, as a compare and select that LLVM vectorises into one
    instruction: its flags promise no NaN (and no care for the sign of zero, which NumPy's own
    order decides), so NaNs are tracked beside it (see _KernelBody._nest)."""
    t = reg_type(acc.dtype)
    better = fn.emit(f"fcmp nnan nsz {'ogt' if reduce == 'max' else 'olt'} {t} {x.ref}, {acc.ref}", BOOL)
    return fn.emit(f"select nnan nsz i1 {better.ref}, {t} {x.ref}, {t} {acc.ref}", acc.dtype)


def _expensive(e) -> bool:
    return isinstance(e, Call) and any(isinstance(x, Call) and x.op in mathlib.FUNCTIONS and x.op != "power" for x in walk(e))


def _outermost(e, wanted):
    """The outermost sub-expressions of e for which wanted() holds."""
    if wanted(e):
        yield e
    elif isinstance(e, Call):
        for a in (*e.args, *(v for _, v in e.kwargs)):
            yield from _outermost(a, wanted)


class _KernelBody:
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
        for self.checking in ((True, False) if scatters(kernel) else (False,)):
            if self.kp.split == "outer":
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
        """Streamed rows: a stage writing a large output (see _streamed) stores each row into a row
        buffer, then copies it out a cache line at a time with non-temporal stores. A plain store
        that misses reads the line from memory first; these write it without reading: a third
        less memory traffic for a kernel that reads one array and writes one. (LLVM's vectoriser
        keeps a non-temporal store scalar unless it is aligned to the vector, which the store of
        one element cannot promise: hence the row buffer and an explicit copy.)"""
        for index, stage in enumerate(self.kp.kernel.stages):
            if _streamed(self.kp, stage, self.program, self.strides, self.module, self.large):
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
                nbytes, row_bytes = _bytes(buffer), math.prod(stage.inner) * buffer.dtype.itemsize
                large = self.large if isinstance(nbytes, SymInt) else nbytes >= STREAM_MIN_BYTES
                if large and not isinstance(row_bytes, SymInt) and not identical(row, (0,) * first) \
                        and _contiguous_rows(coefficients, first, stage.inner):
                    self.prefetches.setdefault((e.buffer, str(row), str(const)), (e, row_bytes))

    def _plan_gathers(self) -> None:
        """A kernel that gathers keeps an out-of-bounds flag (a stack slot LLVM keeps in a
        register). A gather along a dim of size 0 has no element to read in place of a bad one:
        a stage that would run one returns OUT_OF_BOUNDS before anything runs."""
        fn = self.fn
        empty = literal(False, BOOL)
        for stage in self.kp.kernel.stages:
            indices = [e.index for e in walk(stage.value) if isinstance(e, Load)] + [stage.output_index]
            dims = [i.size for index in indices for i in index if isinstance(i, Indirect)]
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

    def _plan_pairwise(self) -> None:
        """Where pairwise sums keep their state, allocated once per call: a stack of tree nodes
        to visit, a stack of finished sums, and a buffer of up to PAIRWISE_FILL element values."""
        if any(pairwise(stage) for stage in self.kp.kernel.stages):
            emit = self.fn.emit
            self.pairwise_stack = {name: emit("alloca i64, i64 64, align 8", I64, name).ref for name in ("node", "size", "phase")}
            self.pairwise_stack["sum"] = emit("alloca double, i64 64, align 8", I64, "sums").ref
            self.pairwise_stack["value"] = emit(f"alloca double, i64 {PAIRWISE_FILL}, align {LINE}", I64, "values").ref
            self.pairwise_stack["chunk"] = emit("alloca i64, i64 2, align 8", I64, "chunk").ref

    def _slot(self, name: str, index: V, dtype: np.dtype) -> V:
        t = reg_type(dtype) if name in ("sum", "value") else "i64"
        base = self.values_in_scratch if name == "value" and self.values_in_scratch else self.pairwise_stack[name]
        return self.fn.emit(f"getelementptr inbounds {t}, ptr {base}, i64 {index.ref}", I64, "p")

    def _put(self, name: str, index: V, value: V) -> None:
        self.fn.store(self._slot(name, index, value.dtype).ref, literal(0, I64), value)

    def _get(self, name: str, index: V, dtype: np.dtype = I64) -> V:
        return self.fn.load(self._slot(name, index, dtype).ref, literal(0, I64), dtype)

    def _add_sums(self, left_at: V, right_at: V, dtype: np.dtype) -> None:
        """A node's sum from its halves': the stack of sums at left_at becomes left + right."""
        self._put("sum", left_at, self.fn.binary("fadd", self._get("sum", left_at, dtype), self._get("sum", right_at, dtype)))

    def _pairwise_sum(self, start: V, end: V, n: int, value_at, dtype: np.dtype) -> V:
        """The sum of value_at(i) for i in [start, end), added exactly as NumPy's pairwise_sum
        does: a range of more than PAIRWISE_LEAF elements is the sum of its two halves (split
        by pairwise_split); a leaf's elements go to eight partial sums (element j to sum j % 8),
        which are added ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7)), then the last n % 8
        elements one by one. [start, end) is the loop's whole length n, or a node of its tree
        (a thread's share, see pairwise_ranges). A balanced tree of at least four equal leaves
        (4096 elements: 32 leaves of 128) sums its leaves left to right, adding the last two
        finished sums as a binary counter carries; any other walks the tree with a stack. For a
        symbolic n both are compiled and the tree's shape at run time picks one."""
        fn = self.fn
        self._put("chunk", literal(1, I64), start)   # no values buffered yet
        size = fn.binary("sub", end, start)
        if not isinstance(n, SymInt):
            leaf = balanced_leaf(n)
            if leaf:
                return self._balanced_sum(start, end, size, literal(leaf, I64), value_at, dtype)
            return self._tree_walk_sum(start, end, size, value_at, dtype)
        leaf = self.size.at_entry(lambda: self._balanced_leaf(self.size(n)))
        balanced, walk, joined = fn.label("pw.balanced"), fn.label("pw.walk"), fn.label("pw.summed")
        fn.emit(f"br i1 {fn.compare('icmp', 'ne', leaf, literal(0, I64)).ref}, label %{balanced}, label %{walk}")
        fn.start_block(balanced)
        by_leaves = self._balanced_sum(start, end, size, leaf, value_at, dtype)
        from_balanced = fn.block
        fn.emit(f"br label %{joined}")
        fn.start_block(walk)
        by_walk = self._tree_walk_sum(start, end, size, value_at, dtype)
        from_walk = fn.block
        fn.emit(f"br label %{joined}")
        fn.start_block(joined)
        return fn.emit(f"phi {reg_type(dtype)} [ {by_leaves.ref}, %{from_balanced} ], [ {by_walk.ref}, %{from_walk} ]", dtype)

    def _balanced_leaf(self, n: V) -> V:
        """balanced_leaf(n) for n known at run time, 0 for None, without a loop: the halving stops
        at k = min(a, b) steps, a = cttz(n) - 3 (where the leaf stops being a multiple of 16) and
        b = bit_length((n - 1) >> 7) (where it reaches 128 or less); balanced when k >= 2 and
        0 < n >> k <= PAIRWISE_LEAF."""
        fn, no = self.fn, literal(False, BOOL)
        zeros = fn.intrinsic("cttz", [n, no], I64)
        a = fn.intrinsic("smax", [fn.binary("sub", zeros, literal(3, I64)), literal(0, I64)], I64)
        above = fn.binary("lshr", fn.binary("sub", n, literal(1, I64)), literal(PAIRWISE_LEAF.bit_length() - 1, I64))
        b = fn.binary("sub", literal(64, I64), fn.intrinsic("ctlz", [above, no], I64))
        k = fn.intrinsic("umin", [a, b], I64)
        leaf = fn.binary("lshr", n, k)
        ok = fn.binary("and", fn.compare("icmp", "uge", k, literal(2, I64)),
                       fn.binary("and", fn.compare("icmp", "ugt", leaf, literal(0, I64)),
                                 fn.compare("icmp", "ule", leaf, literal(PAIRWISE_LEAF, I64))))
        return fn.select(ok, leaf, literal(0, I64))

    def _balanced_sum(self, start, end, size, leaf, value_at, dtype) -> V:
        """A balanced tree of 4 * 2**k leaves: four leaves at a time (a node two levels up),
        each finished node pushed on the stack of sums and the last two added while the count
        of nodes so far has a trailing zero bit, as a binary counter carries."""
        fn = self.fn
        zero, one = literal(0, I64), literal(1, I64)
        unit = fn.binary("mul", leaf, literal(4, I64))

        def each_unit(k, carried):
            sums = carried[0]
            node = fn.binary("add", start, fn.binary("mul", k, unit))
            base = self._buffered(node, unit, end, value_at)
            groups = fn.binary("udiv", leaf, literal(PAIRWISE_LANES, I64))
            a, b, c, d = self._lane_sums([fn.binary("add", base, fn.binary("mul", leaf, literal(q, I64))) for q in range(4)],
                                         groups, dtype)
            self._put("sum", sums, fn.binary("fadd", fn.binary("fadd", a, b), fn.binary("fadd", c, d)))
            before, carry, done = fn.block, fn.label("pw.carry"), fn.label("pw.carried")
            count = fn.binary("add", k, one)
            fn.emit(f"br i1 {fn.compare('icmp', 'eq', fn.binary('and', count, one), zero).ref}, label %{carry}, label %{done}")
            fn.start_block(carry)
            bits, top = V(fn.fresh("bits"), I64), V(fn.fresh("top"), I64)
            phi_at = len(fn.lines)
            left_at = fn.binary("sub", top, one)
            self._add_sums(left_at, top, dtype)
            shifted = fn.binary("lshr", bits, one)
            fn.emit(f"br i1 {fn.compare('icmp', 'eq', fn.binary('and', shifted, one), zero).ref}, label %{carry}, label %{done}")
            fn.lines[phi_at:phi_at] = [f"  {bits.ref} = phi i64 [ {count.ref}, %{before} ], [ {shifted.ref}, %{carry} ]",
                                       f"  {top.ref} = phi i64 [ {sums.ref}, %{before} ], [ {left_at.ref}, %{carry} ]"]
            fn.start_block(done)
            after = fn.emit(f"phi i64 [ {sums.ref}, %{before} ], [ {left_at.ref}, %{carry} ]", I64)
            return [fn.binary("add", after, one)]
        fn.loop(zero, fn.binary("udiv", size, unit), [zero], each_unit)
        return self._get("sum", zero, dtype)

    def _tree_walk_sum(self, start, end, size, value_at, dtype) -> V:
        fn = self.fn
        zero, one = literal(0, I64), literal(1, I64)
        self._put("node", zero, start)
        self._put("size", zero, size)
        self._put("phase", zero, zero)
        before, head, body, leaf, inner, push, combine, done = (
            fn.block, fn.label("pw"), fn.label("pw.node"), fn.label("pw.leaf"), fn.label("pw.inner"),
            fn.label("pw.push"), fn.label("pw.combine"), fn.label("pw.done"))
        nodes, sums = V(fn.fresh("nodes"), I64), V(fn.fresh("sums"), I64)
        fn.emit(f"br label %{head}")
        fn.start_block(head)
        phi_at = len(fn.lines)
        fn.emit(f"br i1 {fn.compare('icmp', 'sgt', nodes, zero).ref}, label %{body}, label %{done}")
        fn.start_block(body)
        top = fn.binary("sub", nodes, one)
        node, node_size = self._get("node", top), self._get("size", top)
        fn.emit(f"br i1 {fn.compare('icmp', 'sle', node_size, literal(PAIRWISE_LEAF, I64)).ref}, label %{leaf}, label %{inner}")
        fn.start_block(leaf)
        self._put("sum", sums, self._leaf_sum(node, node_size, end, value_at, dtype))
        after_leaf = fn.binary("add", sums, one)
        leaf_end = fn.block
        fn.emit(f"br label %{head}")
        # an inner node: visit its left half, then its right half, then add their sums
        fn.start_block(inner)
        phase = self._get("phase", top)
        fn.emit(f"br i1 {fn.compare('icmp', 'ult', phase, literal(2, I64)).ref}, label %{push}, label %{combine}")
        fn.start_block(push)
        half = fn.binary("sub", fn.binary("udiv", node_size, literal(2, I64)),
                         fn.binary("urem", fn.binary("udiv", node_size, literal(2, I64)), literal(PAIRWISE_LANES, I64)))
        left = fn.compare("icmp", "eq", phase, zero)
        self._put("node", nodes, fn.select(left, node, fn.binary("add", node, half)))
        self._put("size", nodes, fn.select(left, half, fn.binary("sub", node_size, half)))
        self._put("phase", nodes, zero)
        self._put("phase", top, fn.binary("add", phase, one))
        pushed = fn.binary("add", nodes, one)
        fn.emit(f"br label %{head}")
        fn.start_block(combine)
        right_at, left_at = fn.binary("sub", sums, one), fn.binary("sub", sums, literal(2, I64))
        self._add_sums(left_at, right_at, dtype)
        fn.emit(f"br label %{head}")
        fn.lines[phi_at:phi_at] = [
            f"  {nodes.ref} = phi i64 [ 1, %{before} ], [ {top.ref}, %{leaf_end} ], [ {pushed.ref}, %{push} ], [ {top.ref}, %{combine} ]",
            f"  {sums.ref} = phi i64 [ 0, %{before} ], [ {after_leaf.ref}, %{leaf_end} ], [ {sums.ref}, %{push} ], [ {right_at.ref}, %{combine} ]",
        ]
        fn.start_block(done)
        return self._get("sum", zero, dtype)

    def _leaf_sum(self, node: V, size: V, end: V, value_at, dtype: np.dtype) -> V:
        """A leaf's sum, from the values buffer."""
        fn = self.fn
        base = self._buffered(node, size, end, value_at)
        groups = fn.binary("udiv", size, literal(PAIRWISE_LANES, I64))
        (lanes,) = self._lane_sums([base], groups, dtype)
        return fn.loop(fn.binary("mul", groups, literal(PAIRWISE_LANES, I64)), size, [lanes],
                       lambda i, c: [fn.binary("fadd", c[0], self._get("value", fn.binary("add", base, i), dtype))])[0]

    def _buffered(self, node: V, size: V, end: V, value_at) -> V:
        """Where [node, node + size) starts in the values buffer, filling it from node when the
        range is not all there: up to PAIRWISE_FILL elements (a scratch row: all of it), by one
        loop LLVM vectorises."""
        fn = self.fn
        zero, one = literal(0, I64), literal(1, I64)
        fill, have = fn.label("pw.fill"), fn.label("pw.have")
        fn.emit(f"br i1 {fn.compare('icmp', 'sgt', fn.binary('add', node, size), self._get('chunk', one)).ref}, "
                f"label %{fill}, label %{have}")
        fn.start_block(fill)
        if self.values_in_scratch:   # the whole row, which evaluating its values keeps in the scratch
            filled = end
            fn.loop(node, filled, [], lambda i, c: value_at(i) and [])
        else:
            filled = fn.intrinsic("smin", [fn.binary("add", node, literal(PAIRWISE_FILL, I64)), end], I64)
            fn.loop(node, filled, [], lambda i, c: self._put("value", fn.binary("sub", i, node), value_at(i)) or [])
        self._put("chunk", zero, node)
        self._put("chunk", one, filled)
        fn.emit(f"br label %{have}")
        fn.start_block(have)
        return fn.binary("sub", node, self._get("chunk", zero))

    def _lane_sums(self, bases: list, groups: V, dtype: np.dtype) -> list[V]:
        """For each base in the values buffer, its `groups` groups of eight added lane by lane
        and the lanes added as NumPy does: several leaves in one loop, so that their chains of
        dependent additions overlap."""
        fn, t = self.fn, reg_type(dtype)
        lanes = f"<{PAIRWISE_LANES} x {t}>"
        start = f"splat ({t} {literal(-0.0, dtype).ref})"   # -0.0 + x is x, for every x
        before, head, done = fn.block, fn.label("lanes"), fn.label("lanes.done")
        group = fn.fresh("g")
        totals, added = [fn.fresh("lanes") for _ in bases], [fn.fresh("lanes") for _ in bases]
        fn.emit(f"br i1 {fn.compare('icmp', 'sgt', groups, literal(0, I64)).ref}, label %{head}, label %{done}")
        fn.start_block(head)
        fn.lines.append(f"  {group} = phi i64 [ 0, %{before} ], [ {group}.next, %{head} ]")
        for total, new in zip(totals, added):
            fn.lines.append(f"  {total} = phi {lanes} [ {start}, %{before} ], [ {new}, %{head} ]")
        step = fn.binary("mul", V(group, I64), literal(PAIRWISE_LANES, I64))
        for base, total, new in zip(bases, totals, added):
            at = self._slot("value", fn.binary("add", base, step), dtype)
            value = fn.emit(f"load {lanes}, ptr {at.ref}, align {dtype.itemsize}", I64)
            fn.lines.append(f"  {new} = fadd {lanes} {total}, {value.ref}")
        fn.lines.append(f"  {group}.next = add nuw nsw i64 {group}, 1")
        again = fn.compare("icmp", "slt", V(f"{group}.next", I64), groups)
        fn.emit(f"br i1 {again.ref}, label %{head}, label %{done}")
        fn.start_block(done)
        vectors = [fn.emit(f"phi {lanes} [ {start}, %{before} ], [ {new}, %{head} ]", I64).ref for new in added]
        if len(vectors) == 1:
            parts = [fn.emit(f"extractelement {lanes} {vectors[0]}, i64 {j}", dtype) for j in range(PAIRWISE_LANES)]
            while len(parts) > 1:
                parts = [fn.binary("fadd", x, y) for x, y in zip(parts[::2], parts[1::2])]
            return parts
        return [s for a, b in zip(vectors[::2], vectors[1::2]) for s in self._lane_trees(a, b, dtype)]

    def _lane_trees(self, a: str, b: str, dtype: np.dtype) -> list[V]:
        """The lanes of two leaves added ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7)), both at
        once: each level adds the even lanes to the odd ones (the same additions, in vectors)."""
        fn, t = self.fn, reg_type(dtype)
        width = 2 * PAIRWISE_LANES
        both = fn.emit(f"shufflevector <{PAIRWISE_LANES} x {t}> {a}, <{PAIRWISE_LANES} x {t}> {b}, "
                       f"<{width} x i32> <{', '.join(f'i32 {j}' for j in range(width))}>", I64).ref
        while width > 2:
            half = width // 2
            picks = [", ".join(f"i32 {j}" for j in range(first, width, 2)) for first in (0, 1)]
            even, odd = (fn.emit(f"shufflevector <{width} x {t}> {both}, <{width} x {t}> poison, <{half} x i32> <{p}>", I64).ref
                         for p in picks)
            both = fn.emit(f"fadd <{half} x {t}> {even}, {odd}", I64).ref
            width = half
        return [fn.emit(f"extractelement <2 x {t}> {both}, i64 {j}", dtype) for j in range(2)]

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
        element_dtype = _total_dtype(stage) if kind else None
        # a float max or min carries (extremum of the non-NaN values, whether a NaN was seen)
        extremum = kind in ("max", "min") and element_dtype.kind == "f"

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
            return fn.loop(start, end, acc, lambda i, c: element({**variables, first + k: i}, c))

        def flat_sum(k0, variables, acc):
            """A float sum over the stage's inner loops from k0 on as one, row-major: the source's
            trailing axes, which NumPy sums as one block (C-ordered data coalesces)."""
            def value_at(i):
                inner, rest = dict(variables), i
                for k in reversed(range(k0, len(stage.inner))):
                    inner[first + k] = rest if k == k0 else fn.binary("urem", rest, self.size(stage.inner[k]))
                    if k > k0:
                        rest = fn.binary("udiv", rest, self.size(stage.inner[k]))
                return scalar.cast(fn, self._eval(stage.value, {**outer, **inner}, rows, {}), element_dtype)
            n = math.prod(stage.inner[k0:])
            start, end = self._range(k0, n)
            # summing the row's own scratch value (softmax's exp): add it from the scratch
            kept = self.scratch.get(str(stage.value))
            own = kept is not None and kept[1] == self.stage_index and np.dtype(stage.value.dtype) == element_dtype
            self.values_in_scratch = kept[0] if own else None
            total = self._pairwise_sum(start, end, n, value_at, element_dtype)
            self.values_in_scratch = None
            return [fn.binary("fadd", acc[0], total)]

        def nest(k, variables, acc):
            if not stage.inner:
                return element(variables, acc)
            if pairwise(stage) and k == len(stage.inner) - stage.trailing:
                return flat_sum(k, variables, acc)
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
        return scalar.cast(self.fn, self._offset_of(e.index, variables), e.dtype)

    def _call(self, e: Call, variables, rows, memo) -> V:
        operands = [self._eval(a, variables, rows, memo) for a in e.args]
        kwargs = {k: (self._eval(v, variables, rows, memo) if isinstance(v, (Call, Load, RowValue, LoopIndex)) else v)
                  for k, v in e.kwargs}
        kwargs = {k: (Const(v, getattr(v, "dtype", None)) if k in ("a_min", "a_max") and not isinstance(v, (V, Const)) else v)
                  for k, v in kwargs.items()}
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
            if not isinstance(i, Indirect):
                continue
            value = self._eval(i.value, variables, rows, memo)
            size = self.size(i.size)
            position = scalar.cast(fn, value, I64)   # uint64 keeps its bits: huge values stay out of bounds
            if value.dtype.kind == "i":   # NumPy counts a negative index from the end
                position = fn.select(fn.compare("icmp", "slt", position, literal(0, I64)), fn.binary("add", position, size), position)
            inside = fn.compare("icmp", "ult", position, size)
            flag = fn.emit(f"load i1, ptr {self.out_of_bounds}", BOOL)
            fn.emit(f"store i1 {fn.binary('or', flag, fn.binary('xor', inside, literal(True, BOOL))).ref}, ptr {self.out_of_bounds}")
            position = fn.select(inside, position, literal(0, I64))
            position = fn.binary("add", fn.binary("mul", position, self.size(i.scale)), self.size(i.shift))
            offset = fn.binary("add", offset, fn.binary("mul", position, self.size(stride)))
        return offset

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
