"""Kernel IR to Triton source: each Kernel of a lowering Program becomes one @triton.jit function
(a split full reduction, two).

[Note: how a kernel is laid out]
- "pointwise": every stage stores, over the same shape, and reads what earlier stages stored only
  where it stored it. The loops flatten into one index over all elements, split into blocks of
  BLOCK elements, one program each; loop variables come back by division and modulo.
- "persistent": a row kernel whose rows fit in registers. A program takes XBLOCK rows (the
  flattened outer loops) and each stage's whole row (its flattened inner loops, padded to RBLOCK),
  so later stages of the row (softmax's exp and division, layer norm's scaling) reuse the values
  earlier stages loaded and computed, and a reduce stage is one tl.sum/max/... over the row axis.
- "looped": the same with each stage looping over its row RBLOCK elements at a time, accumulating
  a reduction in an [XBLOCK, RBLOCK] block that is reduced after the loop. Rows of symbolic length
  always take this form (RBLOCK and XBLOCK are then chosen per call from the sizes).
- "split": a reduction of a whole array (no outer loops, one stage) over many elements. P programs
  each reduce a chunk into a partial result, and a second kernel (a "persistent" or "looped" one
  over the partials) combines them, so the work spreads over the GPU.

Sizes that are SymInts (dynamic shapes) are kernel arguments (`z0, z1, ...`, values computed by the
runner); buffers are C-ordered (the runner makes them so), so the strides are products of sizes.
Masked lanes of a reduction hold the reduction's identity; float max/min carry whether a NaN was
seen and give NaN then, as NumPy does; argmin and argmax: argreduce.py.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from numpile.lowering import Affine, Call, Const, Indirect, Kernel, Load, LoopIndex, Program, RowValue, Stage, walk
from numpile.shapes import SymInt, identical

from . import checks, scalar
from .argreduce import ARG, ArgReduction, arg_dtype
from .positions import gathers_inside
from .plans import (INT32_MAX, LOOP_RBLOCK, PERSISTENT_MAX, POINTWISE_BLOCK, ROW_TILE, SPLIT_MIN,  # noqa: F401  (the
                    SPLIT_PROGRAMS, SPLIT_RBLOCK, KernelPlan, partials_buffer)                  # tests patch them here)
from .scans import Scans, scan_plan
from .scalar import BOOL, Unlowerable, Val, constant, tl_type


_IDENTITY = {"sum": lambda d: 0, "prod": lambda d: 1, "any": lambda d: 0, "all": lambda d: 1,
             "max": lambda d: -math.inf if d.kind == "f" else np.iinfo(d).min,
             "min": lambda d: math.inf if d.kind == "f" else np.iinfo(d).max}
# a row's reduction (axis 1), and the step of a looped one's accumulator
_REDUCE = {"sum": "tl.sum({0}, axis=1, keep_dims=True)", "prod": "tl.reduce({0}, 1, _multiply, keep_dims=True)",
           "max": "tl.max({0}, axis=1, keep_dims=True)", "min": "tl.min({0}, axis=1, keep_dims=True)",
           "any": "tl.max({0}, axis=1, keep_dims=True)", "all": "tl.min({0}, axis=1, keep_dims=True)"}
_ACCUMULATE = {"sum": "{0} + {1}", "prod": "{0} * {1}", "max": "tl.maximum({0}, {1})", "min": "tl.minimum({0}, {1})",
               "any": "tl.maximum({0}, {1})", "all": "tl.minimum({0}, {1})"}
HELPERS = '''@triton.jit
def _multiply(a, b):
    return a * b
'''


def accumulator(stage: Stage) -> np.dtype:
    """The dtype a reduce stage accumulates in: its result dtype, except bools (uint8, as 0/1)
    and float16 (float32, rounded once at the end)."""
    dtype = np.dtype(stage.dtype)
    if stage.reduce in ("any", "all") or dtype.kind == "b":
        return np.dtype(np.uint8)
    return scalar.F32 if dtype == np.float16 else dtype


def plan(kernel: Kernel, program: Program, splits: bool = True) -> KernelPlan:
    """How a kernel runs (see the note above); a split reduction's partials buffer is added to
    the program, and a checked gather's flag (checks.py). `splits`: whether a whole-array
    reduction may split (not the combining one)."""
    unproven = _check_renderable(kernel, program)
    kp = _layout(kernel, program, splits)
    if unproven:
        kp.checked = checks.flag_buffer(kernel, program)
        kp.arrays.append(kp.checked)
        kp.unproven = unproven
    return kp


def _layout(kernel: Kernel, program: Program, splits: bool) -> KernelPlan:
    if any(s.scan for s in kernel.stages):
        return scan_plan(kernel, program, SPLIT_MIN if splits else math.inf)
    inputs = kernel.inputs
    arrays = inputs + [o for o in kernel.outputs if o not in inputs]
    stages = kernel.stages
    cols = [math.prod(s.inner) for s in stages]
    shape = tuple(kernel.outer) + tuple(stages[0].inner)
    if not any(s.reduce for s in stages) and all(identical(tuple(kernel.outer) + tuple(s.inner), shape) for s in stages) \
            and not _reads_elsewhere(kernel):
        return KernelPlan(kernel, "pointwise", arrays, rows=math.prod(shape), cols=cols)
    rows = math.prod(kernel.outer)
    stage = stages[0]
    if splits and not kernel.outer and len(stages) == 1 and stage.reduce and \
            (isinstance(cols[0], SymInt) or cols[0] > SPLIT_MIN):
        partial = f"{kernel.name}_partials"
        dtype = arg_dtype(stage) if stage.reduce in ARG else accumulator(stage)
        program.buffers[partial] = partials_buffer(partial, dtype)
        positions = f"{kernel.name}_positions" if stage.reduce in ARG else None
        if positions:
            program.buffers[positions] = partials_buffer(positions, np.dtype(np.int64))
        combine = Kernel(f"{kernel.name}_combine", (), [Stage(
            (SPLIT_PROGRAMS,), Load(partial, (Affine.var(0),), dtype), reduce=stage.reduce,
            row_name=stage.row_name, output=stage.output, output_index=stage.output_index, dtype=stage.dtype)])
        combined = plan(combine, program, splits=False)
        if positions:
            combined.arrays.append(positions)
            combined.positions = positions
        return KernelPlan(kernel, "split", [*arrays, partial, *([positions] if positions else [])], rows=SPLIT_PROGRAMS,
                          cols=cols, partial=partial, positions=positions, combine=combined)
    fits = all(isinstance(c, int) and c <= PERSISTENT_MAX for c in cols) and not isinstance(rows, SymInt)
    return KernelPlan(kernel, "persistent" if fits else "looped", arrays, rows=rows, cols=cols)


def _check_renderable(kernel: Kernel, program: Program) -> frozenset:
    """Unlowerable for what this renderer has no Triton form of yet: stores through an index array
    (scatters). The loads through one (gathers) whose positions may be out of range, which the
    kernel then checks (checks.py), as their text; those that are loop indices' arithmetic always
    inside the dimension (np.roll's) NumPy never refuses. Unlowerable kernels run through the
    lowering's reference renderer (program.py says where)."""
    unproven = set()
    for stage in kernel.stages:
        if stage.reduce and stage.reduce not in _REDUCE and stage.reduce not in ARG:
            raise Unlowerable(f"the reduction {stage.reduce}")
        if any(isinstance(i, Indirect) for i in stage.output_index):
            raise Unlowerable("a store through an index array")
        extents = (*kernel.outer, *stage.inner)
        gathers = [i for e in walk(stage.value) if isinstance(e, Load) for i in e.index if isinstance(i, Indirect)]
        unproven |= {str(i) for i in gathers if not gathers_inside(i, extents, program)}
    return frozenset(unproven)


def _combining(stage: Stage) -> str:
    """How a reduce stage combines elements: bools (any, all, a sum or product with a bool result:
    logical or and and) as the max and min of 0/1."""
    if np.dtype(stage.dtype).kind == "b" or stage.reduce in ("any", "all"):
        return {"sum": "max", "any": "max", "max": "max", "prod": "min", "all": "min", "min": "min"}[stage.reduce]
    return stage.reduce


def _tracks_nan(stage: Stage) -> bool:
    """Float max and min carry whether a NaN was seen (Triton's max/min may drop NaNs)."""
    return stage.reduce in ("max", "min") and accumulator(stage).kind == "f"


def _reads_elsewhere(kernel: Kernel) -> bool:
    """Whether a stage reads what an earlier stage stored at another index than where it stored it."""
    stored: dict[str, tuple] = {}
    for stage in kernel.stages:
        for e in walk(stage.value):
            if isinstance(e, Load) and e.buffer in stored and stored[e.buffer] != tuple(e.index):
                return True
        stored[stage.output] = tuple(stage.output_index)
    return False


def next_power_of_2(n: int) -> int:
    return 1 << max(0, int(n) - 1).bit_length()


@dataclass
class IndexSpace:
    """The loop variables of one block of values (a stage's row, or a pointwise block), as
    Triton expressions, and the masks of the block's rows, columns and both."""

    vars: dict
    row_vars: frozenset
    rmask: str | None
    cmask: str | None
    mask: str | None
    zero: str                               # zeros of the block's shape
    memo: dict = field(default_factory=dict)
    position: str = ""                      # a row block's lanes' positions in the row


class Renderer(ArgReduction, Scans):
    """Renders one KernelPlan as a @triton.jit function named `name` (see `source`)."""

    def __init__(self, kp: KernelPlan, program: Program, name: str, interpreting: bool):
        self.kp, self.program, self.name, self.interpreting = kp, program, name, interpreting
        self.lines: list[str] = []
        self.indent = 1
        self.counter = 0
        self.size_params: dict[str, str] = {}        # SymInt expression -> parameter name
        self.pointers = {b: f"{_identifier(b)}_ptr" for b in kp.arrays}
        self.rows: dict[str, Val] = {}               # a reduce stage's row value
        self.stored: dict[tuple, Val] = {}           # (buffer, index, space) -> the value stored there
        self.spaces: list[IndexSpace] = []               # the blocks of values made so far
        self.scopes = [0]                            # the loop bodies open where lines go now, outermost first
        self.shared_values: dict = {}                # key -> (scope, values): see `shared`
        self.int64 = self._needs_int64()
        self.index_dtype = np.dtype(np.int64 if self.int64 else np.int32)

    # -- the emitter the op table writes through ----------------------------------------------
    def let(self, text: str, dtype) -> Val:
        return self.let_all(text, (dtype,))[0]

    def let_all(self, text: str, dtypes: tuple) -> list[Val]:
        """Temporaries bound to the values of `text`, a tuple of one value per dtype."""
        names = [f"t{self.counter + 1 + k}" for k in range(len(dtypes))]
        self.counter += len(dtypes)
        self.emit(f"{', '.join(names)} = {text}")
        return [Val(n, np.dtype(d)) for n, d in zip(names, dtypes)]

    def shared(self, key, make):
        """What op renders share (sin and cos's reduction of one value): `make()` once per key,
        again where its first values are out of scope (made inside a loop body since closed)."""
        scope, values = self.shared_values.get(key, (None, None))
        if scope not in self.scopes:
            values = make()
            self.shared_values[key] = (self.scopes[-1], values)
        return values

    def emit(self, line: str) -> None:
        self.lines.append("    " * self.indent + line)

    def size(self, x) -> str:
        """A size or index constant as kernel text: a literal, or a parameter for a SymInt."""
        if isinstance(x, SymInt):
            return self.size_params.setdefault(x.expr, f"z{len(self.size_params)}")
        return str(int(x))

    def _needs_int64(self) -> bool:
        sizes = [math.prod(self.program.buffers[b].shape) for b in self.kp.arrays]
        sizes += [self.kp.rows, *self.kp.cols]
        return any(isinstance(n, SymInt) or n > INT32_MAX // 2 for n in sizes)

    # -- the function ------------------------------------------------------------------------
    def source(self) -> str:
        kp = self.kp
        for b in kp.arrays:
            tl_type(self.program.buffers[b].dtype)   # Unlowerable when it has no Triton type
        self.body()
        params = [self.pointers[b] for b in kp.arrays] + list(self.size_params.values()) + self.launch_params()
        head = [f"@triton.jit", f"def {self.name}({', '.join(params)}):"]
        return "\n".join(head + self.lines) + "\n"

    def body(self) -> None:
        {"pointwise": self._pointwise, "persistent": self._rows, "looped": self._rows, "split": self._rows,
         "scan": self._scan, "scan_split": self._scan}[self.kp.mode]()

    def launch_params(self) -> list[str]:
        """The parameters launch.py gives values per launch, after the pointers and sizes."""
        constexprs = ["BLOCK"] if self.kp.mode == "pointwise" else ["XBLOCK", "RBLOCK"]
        return (["CHUNK"] if self.kp.mode in ("split", "scan_split") else []) + [f"{c}: tl.constexpr" for c in constexprs]

    def _program_start(self, block: str) -> str:
        pid = "tl.program_id(0).to(tl.int64)" if self.int64 else "tl.program_id(0)"
        return f"{pid} * {block}"

    def _split_index(self, flat: str, sizes: tuple, first: int) -> dict:
        """Loop variables first, first+1, ... of `sizes` from a row-major flat index."""
        variables = {}
        rest = flat
        for k in reversed(range(len(sizes))):
            if k == 0:
                variables[first + k] = rest
            else:
                n = self.size(sizes[k])
                variables[first + k] = self.let(f"{rest} % {n}", self.index_dtype).text
                rest = self.let(f"{rest} // {n}", self.index_dtype).text
        return variables

    def _pointwise(self) -> None:
        kernel = self.kp.kernel
        shape = tuple(kernel.outer) + tuple(kernel.stages[0].inner)
        self.emit(f"offsets = {self._program_start('BLOCK')} + tl.arange(0, BLOCK)")
        self.emit(f"mask = offsets < {self.size(self.kp.rows)}")
        space = IndexSpace(self._split_index("offsets", shape, 0), frozenset(), None, "mask", "mask", "offsets * 0")
        for stage in kernel.stages:
            self._store(stage, self.value(stage.value, space), space)

    def _rows(self) -> None:
        kp, kernel = self.kp, self.kp.kernel
        split = kp.mode == "split"
        if split:   # one partial per program: a "row" of the chunk [start, end) of the whole array
            self.emit("rows = tl.program_id(0) + tl.arange(0, 1)[:, None]")
            self.emit(f"start = {self._program_start('CHUNK')}")
            self.emit(f"end = tl.minimum(start + CHUNK, {self.size(kp.cols[0])})")
            self.emit("rmask = rows >= 0")
            outer_vars = {}
        else:
            self.emit(f"rows = {self._program_start('XBLOCK')} + tl.arange(0, XBLOCK)[:, None]")
            self.emit(f"rmask = rows < {self.size(kp.rows)}")
            outer_vars = self._split_index("rows", tuple(kernel.outer), 0)
        spaces: list[tuple] = []   # persistent: (inner sizes, space) shared by stages of one row shape
        for index, stage in enumerate(kernel.stages):
            if self._reads_stored_elsewhere(stage, index):
                self.emit("tl.debug_barrier()")   # another thread stored it: make it visible
            if kp.mode == "persistent":
                space = next((s for inner, s in spaces if identical(inner, tuple(stage.inner))), None)
                if space is None:
                    space = self._row_space(stage, outer_vars, "0", kp.cols[index], len(spaces))
                    spaces.append((tuple(stage.inner), space))
                self._stage(stage, space, looped=False)
            else:
                self._looped_stage(stage, outer_vars, kp.cols[index], split)

    def _row_space(self, stage: Stage, outer_vars: dict, start: str, length, k: int) -> IndexSpace:
        cols, cmask, mask = f"cols{k}", f"cmask{k}", f"mask{k}"
        self.emit(f"{cols} = {start} + tl.arange(0, RBLOCK)[None, :]")
        self.emit(f"{cmask} = {cols} < {length if isinstance(length, str) else self.size(length)}")
        self.emit(f"{mask} = rmask & {cmask}")
        first = len(self.kp.kernel.outer)
        variables = {**outer_vars, **self._split_index(cols, tuple(stage.inner), first)}
        space = IndexSpace(variables, frozenset(outer_vars), "rmask", cmask, mask, f"rows * 0 + {cols} * 0",
                           position=cols)
        self.spaces.append(space)
        return space

    def _looped_stage(self, stage: Stage, outer_vars: dict, length, split: bool) -> None:
        acc = None
        if stage.reduce in ARG:
            self._arg_start(stage)
        elif stage.reduce:
            acc = accumulator(stage)
            identity = constant(_IDENTITY[_combining(stage)](acc), acc)
            self.emit(f"acc = tl.full([XBLOCK, RBLOCK], {identity}, {tl_type(acc)})")
            if _tracks_nan(stage):
                self.emit("nan = tl.zeros([XBLOCK, RBLOCK], tl.int8)")
        start, end = ("start", "end") if split else ("0", self.size(length))
        self.emit(f"for offset in range({start}, {end}, RBLOCK):")
        self.indent += 1
        self.scopes.append(len(self.lines))
        space = self._row_space(stage, outer_vars, "offset", "end" if split else length, self.kp.kernel.stages.index(stage))
        self._stage(stage, space, looped=True)
        self.scopes.pop()
        self.indent -= 1
        if stage.reduce in ARG:
            self._arg_finish(stage, space)
        elif stage.reduce:
            self._finish(stage, Val("acc", acc), "nan" if _tracks_nan(stage) else None, space)

    def _reads_stored_elsewhere(self, stage: Stage, index: int) -> bool:
        """Whether a stage loads from memory what an earlier stage of the kernel stored there."""
        earlier = {s.output: tuple(s.output_index) for s in self.kp.kernel.stages[:index] if s.output}
        return any(isinstance(e, Load) and e.buffer in earlier and
                   (self.kp.mode != "persistent" or tuple(e.index) != earlier[e.buffer])
                   for e in walk(stage.value))

    # -- stages ------------------------------------------------------------------------------
    def _stage(self, stage: Stage, space: IndexSpace, looped: bool) -> None:
        value = self.value(stage.value, space)
        if not stage.reduce:
            self._store(stage, value, space)
            return
        if stage.reduce in ARG:
            self._arg_stage(stage, value, space, looped)
            return
        acc = accumulator(stage)
        identity = constant(_IDENTITY[_combining(stage)](acc), acc)
        if np.dtype(stage.dtype).kind == "b":   # a truth value: whether nonzero, as 0/1
            value = scalar.cast(self, value, BOOL)
        a = scalar.cast(self, value, acc)
        masked = self.let(f"tl.where({space.mask}, {a.text}, {identity})", acc)
        nan = None
        if _tracks_nan(stage):
            nan = self.let(f"tl.where({space.mask} & ({a.text} != {a.text}), 1, 0).to(tl.int8)", np.int8).text
        if looped:
            self.emit(f"acc = {_ACCUMULATE[_combining(stage)].format('acc', masked.text)}")
            if nan:
                self.emit(f"nan = tl.maximum(nan, {nan})")
            return
        self._finish(stage, masked, nan, space)

    def _finish(self, stage: Stage, block: Val, nan: str | None, space: IndexSpace) -> None:
        """Reduce a block over its row axis; the row value is kept for later stages and stored."""
        acc = block.dtype
        total = self.let(_REDUCE[_combining(stage)].format(block.text), acc)
        if nan:
            flag = self.let(f"tl.max({nan}, axis=1, keep_dims=True)", np.int8)
            total = self.let(f"tl.where({flag.text} > 0, {constant(math.nan, acc)}, {total.text})", acc)
        if self.kp.mode == "split":   # this program's partial result
            self.emit(f"tl.store({self.pointers[self.kp.partial]} + rows, {total.text})")
            return
        self._keep(stage, total, space)

    def _keep(self, stage: Stage, total: Val, space: IndexSpace) -> None:
        """A row's reduced value, kept for later stages and stored."""
        row = scalar.cast(self, total, stage.dtype)
        self.rows[stage.row_name] = row
        if stage.output is not None:
            offset = self.offset(stage.output, stage.output_index, space, zero="rows * 0")
            self.emit(f"tl.store({self.pointers[stage.output]} + {offset}, {row.text}, mask=rmask)")

    def _store(self, stage: Stage, value, space: IndexSpace) -> None:
        dtype = self.program.buffers[stage.output].dtype
        value = scalar.cast(self, value, dtype)
        offset = self.offset(stage.output, stage.output_index, space)
        used = {v for a in stage.output_index for v, c in a.terms if not identical(c, 0)}
        if not used - space.row_vars and space.zero not in offset:   # the pointer takes the mask's shape
            offset = f"{offset} + {space.zero}"
        self.emit(f"tl.store({self.pointers[stage.output]} + {offset}, {value.text}, mask={space.mask})")
        self.stored[(stage.output, str(tuple(map(str, stage.output_index))), id(space))] = value
        # values computed from the buffer's old contents are stale now (`x += x; x.sum()`); a
        # key naming another buffer that ends the same way is dropped too, which only recomputes
        for memo in (space.memo, *(s.memo for s in self.spaces)):
            for key in [k for k in memo if f"{stage.output}[" in k[0]]:
                del memo[key]

    # -- values ------------------------------------------------------------------------------
    def offset(self, buffer: str, index: tuple, space: IndexSpace, zero: str | None = None) -> str:
        """The element offset of an index (an Affine per dimension) in a C-ordered buffer."""
        shape = tuple(self.program.buffers[buffer].shape)
        strides = [math.prod(shape[d + 1:]) for d in range(len(shape))]
        coefficients: dict[int, object] = {}
        const = 0
        gathered = []
        for a, s in zip(index, strides):
            if isinstance(a, Indirect):   # a position inside the dimension (_check_renderable, checks.py)
                gathered.append(f"{self._position(a, space)} * {self.size(s)}")
                continue
            for v, c in a.terms:
                coefficients[v] = coefficients.get(v, 0) + c * s
            const = const + a.const * s
        parts = [space.vars[v] if identical(c, 1) else f"{space.vars[v]} * {self.size(c)}"
                 for v, c in sorted(coefficients.items()) if not identical(c, 0)]
        parts += gathered
        if not parts:
            parts = [zero or space.zero]
        if not identical(const, 0):
            parts.append(self.size(const))
        return " + ".join(parts)

    def _position(self, a: Indirect, space: IndexSpace) -> str:
        """An Indirect's element position: its value, counted from the end where negative, scaled."""
        value = self.value(a.value, space)
        if not isinstance(value, Val):
            raise Unlowerable(f"a constant position {value}")
        p = scalar.cast(self, value, self.index_dtype).text
        size, scale, shift = (self.size(x) for x in (a.size, a.scale, a.shift))
        if str(a) in self.kp.unproven:
            p = checks.guard(self, p, size, space.mask)
        return self.let(f"(tl.where({p} < 0, {p} + {size}, {p}) * {scale} + {shift})", self.index_dtype).text

    def _mask_for(self, index: tuple, space: IndexSpace) -> str | None:
        if any(isinstance(a, Indirect) for a in index):
            return space.mask
        used = {v for a in index for v, c in a.terms if not identical(c, 0)}
        if not used:
            return None
        if used <= space.row_vars:
            return space.rmask
        return space.mask if used & space.row_vars else space.cmask

    def value(self, e, space: IndexSpace):
        """The value of an expression over a block (a Val; a Const stays a Const: weak)."""
        key = (str(e), str(getattr(e, "dtype", None)))
        if key in space.memo:
            return space.memo[key]
        if isinstance(e, Const):
            if isinstance(e.value, SymInt):   # a symbolic size is a Python int: weak
                value = self.let(f"tl.full([], {self.size(e.value)}, tl.int64)", np.int64)._replace(weak=True)
            else:
                value = e
        elif isinstance(e, Load):
            value = self._load(e, space)
        elif isinstance(e, RowValue):
            value = self.rows[e.name]
        elif isinstance(e, LoopIndex):
            value = scalar.cast(self, self.let(self.offset_of(e.index, space), self.index_dtype), e.dtype)
        elif isinstance(e, Call):
            operands = [self.value(a, space) for a in e.args]
            kwargs = {k: (self.value(v, space) if isinstance(v, (Call, Load, RowValue, LoopIndex)) else v)
                      for k, v in e.kwargs}
            kwargs = {k: (Const(v, getattr(v, "dtype", None)) if k in ("a_min", "a_max") and not isinstance(v, (Val, Const))
                          else v) for k, v in kwargs.items()}
            value = scalar.emit(self, e.op, operands, kwargs, e.dtype)._replace(weak=e.weak)
        else:
            raise Unlowerable(f"expression {e!r}")
        space.memo[key] = value
        return value

    def offset_of(self, index: Affine, space: IndexSpace) -> str:
        parts = [f"{space.vars[v]} * {self.size(c)}" for v, c in index.terms]
        return " + ".join(parts + [self.size(index.const)] if parts else [f"{space.zero} + {self.size(index.const)}"])

    def _load(self, e: Load, space: IndexSpace) -> Val:
        kept = self.stored.get((e.buffer, str(tuple(map(str, e.index))), id(space)))
        if kept is not None:
            return kept._replace(weak=e.weak)
        dtype = np.dtype(e.dtype)
        # an element without loop variables (a 0-d input) is loaded into every lane: Triton's
        # interpreter mistypes comparisons of scalars once they are broadcast
        pointer = f"{self.pointers[e.buffer]} + {self.offset(e.buffer, e.index, space)}"
        mask = self._mask_for(e.index, space)
        text = f"tl.load({pointer}, mask={mask})" if mask else f"tl.load({pointer})"
        return self.let(text, dtype)._replace(weak=e.weak)


def _identifier(name: str) -> str:
    text = "".join(c if c.isalnum() else "_" for c in name)
    return text if text[:1].isalpha() else f"b_{text}"
