"""The scheduler: a Graph becomes a Program of fused kernels.

Pointwise ops and views never get a kernel of their own: each becomes an
expression, evaluated at whatever index its consumer needs (views turn into
index arithmetic, broadcasting into constant indices). Values are materialised
into buffers only where they must be: graph outputs, reductions, inputs of
externs, and pointwise values that more than one kernel would otherwise
recompute. Gathers (`x[idx]`, the op `index`) are computed where they are used as
pointwise values are, their loads addressed through the index arrays (ir.Indirect).
What kind of node each is (pointwise, view, reduction, ...) is node_kinds.py's.
Materialised values are placed in kernels in graph order; one joins
the open kernel when its outer (parallel) loops are the kernel's and everything
it reads from that kernel is for the same outer index, so softmax, layer norm
and `((x - y) ** 2).sum()` are each one kernel of a few stages.

Updates in place (a setitem stored into its base's buffer) are stores.py's, a mixin of the
scheduler. Dynamic shapes: sizes stay SymInts, and the scheduler takes no decision on them that the
trace did not guard (it runs under shapes.no_new_guards()): loops match when their sizes
are the same expression.
"""

from __future__ import annotations

from ..graph import Graph, Node
from ..ops.indexing import advanced_layout
from ..ops.reductions import reduced_axes
from ..shapes import identical, no_new_guards, replaying
from .decompose import decompose
from .in_place import (
    early_reads, in_place_outputs, in_place_setitems, mask_positions, placement, setitem_form, sink_updates, update_parts,
)
from .ir import (
    Affine, Buffer, BufferArg, Call, Const, Extern, Indirect, Kernel, Load, LoopIndex, Program, RowValue, Stage, walk,
)
from .node_kinds import COMPUTED, SCANS, arange_steps, down_columns, fill_value, kind_of, scan_axis
from .stores import StoresInPlace
from .views import VIEW_INDEX, broadcast_index, slice_index

# a value whose inlined expression would hold more ops than this (counting an operand as often as it
# is used) is stored in a buffer instead, so an expression holds at most its op's arity times this:
# no walk over one (here, in views, in a renderer, printing it) recurses deeper or takes longer however
# large the graph (`t += a[i, i]` 1,000 times; `x = sin(x) + x[::-1]`, which doubles when inlined)
INLINE_SIZE = 64


class _CannotJoin(Exception):
    """A node reads a value of the open kernel at another outer index: it needs a kernel of its own."""


def schedule(graph: Graph, rewrites: dict | None = None) -> Program:
    """Lower a graph to a Program (`rewrites`: a backend's decompositions besides the common
    ones, lowering.ARG_EXTREMES). Raises shapes.NewGuard where a dynamic shape would need a
    decision the trace did not guard."""
    with no_new_guards():
        graph = decompose(graph, rewrites)
        sink_updates(graph)
        shared: set[Node] = set()
        while True:  # materialise pointwise values that several kernels recompute, until none does
            program, recomputed = _Scheduler(graph, shared).run()
            if not recomputed:
                return program
            shared |= recomputed


class _Scheduler(StoresInPlace):
    def __init__(self, graph: Graph, shared: set):
        self.graph = graph
        self.users: dict[Node, list[Node]] = {n: [] for n in graph}
        for n in graph.calls:
            for i in n.inputs:
                self.users[i].append(n)
        outputs = set(graph.outputs)
        self.materialized = {
            n for n in graph.calls
            if kind_of(n) in ("reduction", "scan", "extern")
            or kind_of(n) in COMPUTED and (n in outputs or n in shared or any(_reads_whole(u, n) for u in self.users[n]))
        }
        self.materialized |= _too_big(graph, self.materialized)
        self.place = placement(graph)
        self.materialized |= early_reads(graph, kind_of, self.materialized, self.users, self.place)
        self.in_place = in_place_setitems(graph, kind_of, self.materialized, self.users, self.place)
        self.flattened = self._flattened_stores(outputs | shared)
        self.into_input = in_place_outputs(graph, kind_of, self.materialized, self.users, self.in_place, self.place)
        self.buffers: dict[str, Buffer] = {}
        self.buffer_of: dict[Node, str] = {}
        self.steps: list = []
        self.kernel: Kernel | None = None
        self.in_kernel: dict[Node, tuple] = {}   # node made by the open kernel -> ("row", name) | ("store", buffer)
        self.kernels_using: dict[Node, set] = {}  # inlined pointwise node -> kernels whose expressions use it

    # -- driver --------------------------------------------------------------------------
    def run(self) -> tuple[Program, set]:
        together: list[Node] = []   # materialised nodes of one place (in_place.placement)
        for n in self.graph:
            if n.op in ("input", "constant"):
                self._buffer(n, "input")
            elif n.op == "call" and n in self.materialized:
                if together and self.place[n] != self.place[together[0]]:
                    self._place_together(together)
                    together = []
                together.append(n)
        self._place_together(together)
        self._close()
        outputs = []
        for n in self.graph.outputs:
            if n not in self.buffer_of:  # a view of an input returned as is: NumPy's own view
                self._extern(n)
            outputs.append(self.buffer_of[n])
            self.buffers[self.buffer_of[n]].scalar = n.meta.get("scalar", False)
            if self.buffers[self.buffer_of[n]].kind == "temp":
                self.buffers[self.buffer_of[n]].kind = "output"
        recomputed = {n for n, ks in self.kernels_using.items() if len(ks) > 1}
        inputs = [self.buffer_of[n] for n in self.graph.inputs]
        symbols = [(self.buffer_of[s[0]], s[1]) if s is not None else None for s in self.graph.symbols]
        return Program(self.buffers, inputs, self.steps, outputs, symbols), recomputed

    def _buffer(self, n: Node, kind: str) -> str:
        name = n.name
        self.buffers[name] = Buffer(name, tuple(n.shape), n.dtype, kind)
        self.buffer_of[n] = name
        return name

    def _close(self) -> None:
        if self.kernel is not None and self.kernel.stages:
            self.steps.append(self.kernel)
        self.kernel, self.in_kernel = None, {}

    def _place(self, n: Node) -> None:
        k = kind_of(n)
        if n in self.in_place:
            self._close()
            self._store_in_place(n)
            return
        if k == "extern" or fill_value(n) is not None:   # a filled creation stored whole: NumPy's (calloc's pages)
            self._close()
            self._extern(n)
            return
        outer = self._outer(n)
        if self.kernel is not None and identical(self.kernel.outer, outer) and self._joins_by_rows(n):
            try:
                self._add_stage(n)
                return
            except _CannotJoin:
                pass
        self._close()
        self.kernel = Kernel(f"kernel{sum(isinstance(s, Kernel) for s in self.steps)}", outer)
        self._add_stage(n)

    def _joins_by_rows(self, n: Node) -> bool:
        """Whether n may join the open kernel as far as how its rows read: a reduction down columns
        (Stage.down_columns) only beside others and stages of no inner loop, so that the kernel's
        rows can run side by side (a backend reads a row of the source for many row values)."""
        stages = self.kernel.stages
        if down_columns(n):
            return all(s.down_columns or not s.inner for s in stages)
        leaves_rows = kind_of(n) not in ("reduction", "scan") and len(n.shape) == len(self.kernel.outer)
        return leaves_rows or not any(s.down_columns for s in stages)

    def _outer(self, n: Node) -> tuple:
        """A reduction runs in parallel over the dims it keeps; a pointwise value over all but its last,
        so that reductions of its rows can join its kernel."""
        if kind_of(n) == "reduction":
            src = n.args[0]
            axes = reduced_axes(n.kwargs.get("axis"), len(src.shape))
            return tuple(d for i, d in enumerate(src.shape) if i not in axes)
        if kind_of(n) == "scan":   # the dims before the scanned axis; the axis and those after are a stage's
            return tuple(n.shape[:scan_axis(n)])
        shape = tuple(n.shape)
        if self.kernel is not None and identical(shape[:len(self.kernel.outer)], self.kernel.outer):
            return self.kernel.outer
        return shape[:-1]

    def _extern(self, n: Node) -> None:
        for i in n.inputs:
            if i not in self.buffer_of:  # a lazily computed value (a view or an inlined op) needed whole
                self._materialize_for_extern(i)
        args = tuple(_extern_arg(a, self.buffer_of) for a in n.args)
        kwargs = {k: _extern_arg(v, self.buffer_of) for k, v in n.kwargs.items()}
        self.steps.append(Extern(n.target, args, kwargs, self._buffer(n, "temp") if n.results is None else self._results(n)))

    def _results(self, n: Node) -> tuple:
        """The buffers of an extern with several results (`divmod[0]`, `divmod[1]`): its
        tuple_getitem users read them."""
        names = tuple(f"{n.name}[{i}]" for i in range(len(n.results)))
        for name, meta in zip(names, n.results):
            self.buffers[name] = Buffer(name, tuple(meta.shape), meta.dtype, "temp")
        for u in self.users[n]:
            self.buffer_of[u] = names[u.args[1]]
        return names

    def _materialize_for_extern(self, n: Node) -> None:
        if kind_of(n) == "view":
            self._extern(n)
            return
        self._close()
        self.materialized.add(n)
        self._place(n)
        self._close()

    # -- stages --------------------------------------------------------------------------
    def _add_stage(self, n: Node) -> None:
        kernel = self.kernel
        nouter = len(kernel.outer)
        used: set[Node] = set()
        if kind_of(n) == "reduction":
            src = n.args[0]
            axes = sorted(reduced_axes(n.kwargs.get("axis"), len(src.shape)))
            inner = tuple(src.shape[i] for i in axes)
            outer_vars = iter(range(nouter))
            inner_vars = iter(range(nouter, nouter + len(axes)))
            index = tuple(Affine.var(next(inner_vars) if i in axes else next(outer_vars)) for i in range(len(src.shape)))
            value = self._value(src, index, {}, used)
            trailing = 0   # the reduced axes that end the source's shape
            while trailing < len(axes) and axes[-1 - trailing] == len(src.shape) - 1 - trailing:
                trailing += 1
            # the row value is also stored (one element per row): later kernels read it from there
            stage = Stage(inner, value, reduce=n.target, row_name=n.name, output=self._buffer(n, "temp"),
                          output_index=self._row_index(n), dtype=n.dtype, trailing=trailing)
            self.in_kernel[n] = ("row", n.name)
        elif kind_of(n) == "scan":   # along the stage's first inner loop, the scanned axis
            shape = tuple(n.shape)
            if nouter != scan_axis(n):
                raise _CannotJoin()
            index = tuple(Affine.var(v) for v in range(len(shape)))
            value = self._value(n.args[0], index, {}, used)
            stage = Stage(shape[nouter:], value, scan=SCANS[n.target], output=self._buffer(n, "temp"),
                          output_index=index, dtype=n.dtype)
            self.in_kernel[n] = ("store", stage.output)
        else:
            shape = tuple(n.shape)
            inner = shape[nouter:]
            index = tuple(Affine.var(v) for v in range(len(shape)))
            value = self._computed(n, index, {}, used)
            stage = Stage(inner, value, output=self._output_buffer(n, value, index), output_index=index)
            self.in_kernel[n] = ("store", stage.output)
        kernel.stages.append(stage)
        for u in used:
            self.kernels_using.setdefault(u, set()).add(kernel.name)

    def _output_buffer(self, n: Node, value, index: tuple) -> str:
        """Where pointwise node n is stored: the input the caller writes it back into, when the
        kernel reads that input nowhere but where it stores (see in_place.py); else a new buffer."""
        x = self.into_input.get(n)
        if x is not None:
            buffer = self.buffer_of[x]
            values = [value, *(s.value for s in self.kernel.stages)]
            if all(e.index == index for v in values for e in walk(v) if isinstance(e, Load) and e.buffer == buffer):
                self.buffer_of[n] = buffer
                return buffer
        return self._buffer(n, "temp")

    def _row_index(self, n: Node) -> tuple:
        """Where a reduction's row value goes in its buffer: outer vars, 0 for kept (keepdims) axes."""
        src = n.args[0]
        axes = reduced_axes(n.kwargs.get("axis"), len(src.shape))
        keep = n.kwargs.get("keepdims", False)
        out, v = [], 0
        for i in range(len(src.shape)):
            if i in axes:
                if keep:
                    out.append(Affine.constant(0))
            else:
                out.append(Affine.var(v))
                v += 1
        return tuple(out)

    # -- expressions ---------------------------------------------------------------------
    def _value(self, n: Node, index: tuple, memo: dict, used: set):
        """The expression for node n's element at `index` (an Affine per dim of n)."""
        key = (n, index)
        if key in memo:
            return memo[key]
        if n in self.in_kernel:
            value = self._from_open_kernel(n, index)
        elif n in self.buffer_of:
            value = Load(self.buffer_of[n], index, n.dtype, n.meta.get("weak", False))
        elif kind_of(n) == "view":
            base = n.args[0]
            value = self._value(base, VIEW_INDEX[n.target](n, index), memo, used)
        elif kind_of(n) in COMPUTED:
            if fill_value(n) is None:   # a constant is no work to compute again
                used.add(n)
            value = self._computed(n, index, memo, used)
        else:
            raise AssertionError(f"{n.name} ({n.target}) is neither placed nor computable in place")
        memo[key] = value
        return value

    def _computed(self, n: Node, index: tuple, memo: dict, used: set):
        if n.target == "arange":
            start, step = arange_steps(n)
            return LoopIndex(index[0].scaled(step).offset(start), n.dtype)
        fill = fill_value(n)
        if fill is not None:
            return Const(fill, n.dtype)
        if kind_of(n) == "gather":
            return self._value_of_gather(n, index, memo, used)
        if kind_of(n) == "view":   # one stored for later (in_place.early_reads): a copy of its elements
            return self._value(n.args[0], VIEW_INDEX[n.target](n, index), memo, used)
        return self._value_of_pointwise(n, index, memo, used)

    def _value_of_gather(self, n: Node, index: tuple, memo: dict, used: set):
        base, items = n.args
        return self._value(base, self._gathered_index(base, items, index, memo, used), memo, used)

    def _gathered_index(self, base: Node, items: tuple, index: tuple, memo: dict, used: set) -> tuple:
        """The index into base of base[items] at `index`: slices and the Ellipsis walk base's dims
        as a view's would, ints pick one position, and an index array's element (at the index's
        joint dims) is the position along its dim (ir.Indirect)."""
        with replaying():   # the decisions the index meta rule made
            metas = tuple(i.array_meta if isinstance(i, Node) else i for i in items)
            _, joint, at, axes = advanced_layout(base.array_meta, metas)
        width = len(joint)
        joint_index = index[at:at + width]
        arrays = iter(i for i in items if isinstance(i, Node))   # the "array" axes, in order
        base_index = []
        for d, (kind, item, k) in enumerate(axes):
            size = base.shape[d]
            if kind in ("all", "slice"):
                position = index[k if k < at else k + width]
                base_index.append(position if kind == "all" else slice_index(item, size, position))
            elif kind == "int":
                base_index.append(Affine.constant(item % size))
            else:
                array = next(arrays)
                position = self._value(array, broadcast_index(array.shape, joint, joint_index), memo, used)
                base_index.append(Indirect(position, size, inside=mask_positions(array)))
        return tuple(base_index)

    def _value_of_pointwise(self, n: Node, index: tuple, memo: dict, used: set):
        def operand(a):
            if isinstance(a, Node):
                return self._value(a, broadcast_index(a.shape, n.shape, index), memo, used)
            return Const(a, getattr(a, "dtype", None))
        args = tuple(operand(a) for a in n.args)
        # keyword operands that are arrays (clip's bounds) are expressions too; the rest constants
        kwargs = tuple((k, operand(v) if isinstance(v, Node) else v) for k, v in n.kwargs.items())
        return Call(n.target, args, kwargs, n.dtype, n.meta.get("weak", False))

    def _from_open_kernel(self, n: Node, index: tuple):
        """A value the open kernel made: only for the current outer index (else a new kernel)."""
        nouter = len(self.kernel.outer)
        what, name = self.in_kernel[n]
        outer_vars = [Affine.var(v) for v in range(nouter)]
        if what == "row":
            wanted = self._row_index(n)
            if tuple(i for i, w in zip(index, wanted) if w.terms) != tuple(outer_vars) or \
                    any(not w.terms and i != w for i, w in zip(index, wanted)):
                raise _CannotJoin()
            return RowValue(name, n.dtype)
        if tuple(index[:nouter]) != tuple(outer_vars):
            raise _CannotJoin()
        return Load(name, index, n.dtype, n.meta.get("weak", False))


def _reads_whole(user: Node, n: Node) -> bool:
    """Whether `user` needs n in a buffer: an extern does, except a setitem's value or index array,
    which an update in place computes where it stores (an extern setitem materialises them when
    placed)."""
    return kind_of(user) == "extern" and not (setitem_form(user) and update_parts(user)[0] is not n)


def _too_big(graph: Graph, materialized: set) -> set:
    """Pointwise nodes whose inlined expression would hold more than INLINE_SIZE ops: stored in a
    buffer instead, where their consumers load them (one op). Sizes in graph order, no recursion."""
    size: dict[Node, int] = {}   # ops of a node's expression as inlined; buffers are loads (1)
    big = set()
    for n in graph.calls:
        kind = kind_of(n)
        if kind not in ("pointwise", "view", "gather"):
            continue
        size[n] = 1 + sum(size.get(i, 1) for i in n.inputs)
        if kind in COMPUTED and (n in materialized or size[n] > INLINE_SIZE):
            if n not in materialized:
                big.add(n)
            size[n] = 1
    return big


def _extern_arg(value, buffer_of):
    if isinstance(value, Node):
        return BufferArg(buffer_of[value])
    if isinstance(value, (tuple, list)):
        return type(value)(_extern_arg(v, buffer_of) for v in value)
    return value
