"""State shared by a traced frame and every frame inlined into it: the Graph being built, the guards, and the graph
inputs; `wrap` turns a real value reached through a Source into a Variable (installing the guards that value needs),
`call_op` adds a registry op to the graph. Indices only the data knows are data_indices.py's."""

from __future__ import annotations

import dataclasses
import types

import numpy as np

from .. import array_kinds, ops
from ..exc import Retrace, Unsupported
from ..graph import Graph, Node, map_nodes
from ..ops import ArrayMeta
from .aliasing import view_index
from .control.state import ControlState
from .operands import sequences_as_arrays
from .data_indices import DataIndices
from .variables.iterators import SequenceIterator
from .guards import GuardSet, array_guard_expected, object_guard
from .python_scalars import INT_INPUT_BOUND, DynamicIntVariable
from ..dynamic import DynamicInputs
from ..shapes import DataDependent, ShapeEnv, is_unbacked
from .sources import AttrSource, ExprSource, ItemSource, Source
from .variables import (
    ArrayMethodVariable, ArrayVariable, ConstantVariable, DictVariable, ListVariable, ObjectVariable,
    SliceVariable, TupleVariable, Variable, CONSTANT_TYPES, base_array,
)

# Ops whose result always views their first argument: updates of one are seen through the other.
ALWAYS_VIEWS = frozenset({"getitem", "transpose", "swapaxes", "moveaxis", "expand_dims", "squeeze", "broadcast_to",
                          "flip", "real", "imag"})
MAYBE_VIEWS = frozenset({"reshape", "ravel"})   # ops that view or copy depending on strides, which metas do not know


def aliased_inputs(reason: str, view: str) -> Retrace:
    """An input updated in place overlaps `view`, a later input that is a view of an earlier one:
    trace again with `view` made from its base in the graph."""
    return Retrace(reason, ("view", view))


def held_apart(reason: str, branch: tuple) -> Retrace:
    """A cond's result stands for an array held apart (tracer/control/branches.py) where its identity
    matters: trace again with the branch at `branch` (code, offset) breaking the graph."""
    return Retrace(reason, ("held apart", branch))


class OutputGraph:
    def __init__(self, frame_env: dict, dynamic: DynamicInputs | None = None, hints: frozenset = frozenset()):
        self.frame_env = frame_env  # names the Sources' expressions use: the arguments, __G, __C
        self.dynamic = dynamic or DynamicInputs()
        self.hints = hints  # what earlier traces of this call learnt (see Retrace)
        self.shape_env = ShapeEnv()
        self.graph = self.root_graph = Graph()   # the graph being built: the body of the loop being traced, inside one
        self.control = ControlState(self)   # the loops and branches being captured (tracer/control/)
        self.seeds: dict = {}           # a NumPy generator's Source -> the seed input of its draws (variables/draws.py)
        self.draws = 0                  # the random draws traced (each one's place in the trace)
        self.guards = GuardSet()
        self.input_sources: list[Source] = []
        self.example_inputs: list = []
        self.wrapped: dict[Source, Variable] = {}   # (a body's trace put back forgets those it wrapped)
        self.wrapped_arrays: dict[int, tuple] = {}  # id of an input ndarray -> (the array, its Variable)
        self._input_nodes: dict[int, Node] = {}   # id of an input ndarray's Variable -> its input node
        self.mutated: list[Variable] = []  # the caller's lists and dicts changed by the trace, in order
        self.mutated_arrays: list[ArrayVariable] = []  # the caller's arrays updated in place, in order
        self.attr_writes: dict[tuple, tuple] = {}  # (id of object var, name) -> (object var, name, value), in order
        self.loc = None  # the user source line being traced (SourceLoc)
        self.errstate: list[dict] = []  # settings of the np.errstate blocks being traced, outermost first
        self.data_indices = DataIndices(self)  # masks and slices of computed bounds in indices (data_indices.py)
        self.array_kind: tuple | None = None   # (ArrayKind, location) of the inputs that are CuPy arrays or tensors
        self._numpy_input: str | None = None   # the first input that is an ndarray (one kind per call)

    # -- inputs ------------------------------------------------------------------------
    def wrap(self, value, source: Source, *, guard: bool = True) -> Variable:
        """The Variable for a real value reached through `source`; each source is wrapped once."""
        if source in self.wrapped:
            return self.wrapped[source]
        var = self._build(value, source, guard)
        self.wrapped[source] = var
        return var

    def _input(self, value, source: Source, meta: ArrayMeta) -> ArrayVariable:
        node = self.root_graph.input(_input_name(source), meta, source.name(), self.loc)
        self.input_sources.append(source)
        self.example_inputs.append(value)
        return ArrayVariable(node, source)

    def fresh_input(self, value, source: Source, dtype: np.dtype) -> ArrayVariable:
        """A scalar input fetched anew at each call, unguarded (a seed: `value` only stands for it)."""
        return self._input(value, source, ArrayMeta((), dtype, scalar=True))

    def dynamic_int_input(self, value: int, source: Source) -> ArrayVariable:
        """A dynamic int met by Python arithmetic: a weak int64 graph input, guarded to fit in int32."""
        self.guards.add(source, "small_int", None)
        return self._input(value, source, ArrayMeta((), np.dtype(np.int64), scalar=True, weak=True))

    def _build(self, value, source: Source, guard: bool) -> Variable:
        kind = array_kinds.kind_of(value)
        if kind is not None:
            return self._kind_input(value, source, kind)
        if isinstance(value, (np.ndarray, np.generic)):
            if type(value) is not np.ndarray and not isinstance(value, np.generic):
                self.guards.add(source, "type", type(value))  # the eager entry is for this subclass only
                raise Unsupported(f"{source.name()} is an ndarray subclass ({type(value).__name__}); only plain ndarrays are compiled")
            if isinstance(value, np.ndarray):
                self._one_kind(source, None)
                aliased = self._aliased_input(value, source)
                if aliased is not None:
                    return aliased
            dims = [i for i, d in enumerate(np.shape(value)) if self.dynamic.wants(source.name(), i, d)]
            self.guards.add(source, "array", array_guard_expected(value, dims))
            shape = tuple(self.shape_env.new_symbol(source.expr(), i, d) if i in dims else d
                          for i, d in enumerate(np.shape(value)))
            var = self._input(value, source, ArrayMeta(shape, value.dtype, isinstance(value, np.generic)))
            self.wrapped_arrays[id(value)] = (value, var)
            self._input_nodes[id(var)] = var.node
            return var
        if type(value) is float and source.name() in self.dynamic.scalars:
            if guard:
                self.guards.add(source, "type", float)
            return self._input(value, source, ArrayMeta((), np.dtype(np.float64), scalar=True, weak=True))
        if type(value) is int and source.name() in self.dynamic.scalars and guard and abs(value) < INT_INPUT_BOUND:
            return DynamicIntVariable(value, source, lambda: self.guards.add(source, "const", value))
        if isinstance(value, CONSTANT_TYPES):
            kind = "id" if value is None or value is Ellipsis else "const"
            install = (lambda: self.guards.add(source, kind, value)) if guard else None
            return ConstantVariable(value, source, install)
        if isinstance(value, tuple):
            self.guards.add(source, "type", type(value))
            self.guards.add(source, "len", len(value))
            return TupleVariable([self.wrap(v, ItemSource(source, i)) for i, v in enumerate(value)], source)
        if isinstance(value, list):
            self.guards.add(source, "type", type(value))
            self.guards.add(source, "len", len(value))
            return ListVariable([self.wrap(v, ItemSource(source, i)) for i, v in enumerate(value)], source)
        if SequenceIterator.takes(value):   # a loop's, handed to the function resuming it after a break
            return SequenceIterator(self, value, source)
        if type(value) is dict:
            self.guards.add(source, "type", dict)
            self.guards.add(source, "keys", list(value))
            return DictVariable({k: self.wrap(v, ItemSource(source, k)) for k, v in value.items()}, source)
        if isinstance(value, types.BuiltinMethodType) and type(value.__self__) is np.ndarray:
            # `x.all` held in a variable (pytest's rewritten asserts): a new object at every call,
            # so guarded by what it is, not by identity
            self.guards.add(source, "type", types.BuiltinMethodType)
            self.guards.add(AttrSource(source, "__name__"), "const", value.__name__)
            return ArrayMethodVariable(self.wrap(value.__self__, AttrSource(source, "__self__")), value.__name__)
        if guard:
            self.guards.add(source, *object_guard(value))
        return ObjectVariable(value, source)

    def _kind_input(self, value, source: Source, kind: array_kinds.ArrayKind) -> ArrayVariable:
        """A CuPy array, torch tensor or Dask array (array_kinds.py): an input like an ndarray,
        guarded by its own type, dtype, shape and device (and a Dask array's chunks)."""
        location = kind.location(value)
        self._one_kind(source, (kind, location))
        same = self.wrapped_arrays.get(id(value))
        if same is not None:
            self.guards.add(source, "same", same[1].source)
            return same[1]
        for other, other_var in self.wrapped_arrays.values():
            # (a NumPy array or scalar beside it has no storage of this kind)
            if type(other) is type(value) and kind.storage(other) == kind.storage(value):
                raise Unsupported(f"{source.name()} and {other_var.source.name()} are views of one {kind.name} array")
        dims = [i for i, d in enumerate(value.shape) if self.dynamic.wants(source.name(), i, d)]
        try:
            dtype = kind.dtype(value)
            layout = kind.layout[1](value, tuple(dims)) if kind.layout else None   # raises for unknown sizes
        except TypeError as e:
            raise Unsupported(f"{source.name()}: {e}") from None
        shape = tuple(None if i in dims else d for i, d in enumerate(value.shape))
        self.guards.add(source, "kind_array", (type(value), value.dtype, shape, location, kind, layout))
        shape = tuple(self.shape_env.new_symbol(source.expr(), i, d) if i in dims else d for i, d in enumerate(value.shape))
        var = self._input(value, source, ArrayMeta(shape, dtype))
        var.numpy_views = kind.numpy_views
        self.wrapped_arrays[id(value)] = (value, var)
        return var

    def input_arrays(self) -> list[ArrayVariable]:   # the caller's arrays that are graph inputs, in order first seen
        return [var for _, var in self.wrapped_arrays.values()]

    def wrapped_containers(self) -> list:
        """The caller's lists and dicts the trace reached (through arguments, attributes, globals)."""
        return [v for v in self.wrapped.values() if isinstance(v, (ListVariable, DictVariable))]

    def input_node(self, var: ArrayVariable) -> Node:
        """The graph input an input array's Variable stood for before any update."""
        return self._input_nodes[id(var)]

    def read_size(self, value, what: str):
        """`value`, a dim or a tuple of dims, read by Python code as `what` (`len(x)`, `x.shape`).
        Arrays of a kind with lazy sizes (Dask) know a size only the data decides once computed:
        reading one is a graph break, and Python reads it as the library gives it (nan, or its error)."""
        kind = self.array_kind[0] if self.array_kind is not None else None
        unknown = [d for d in (value if isinstance(value, tuple) else (value,)) if is_unbacked(d)]
        if kind is not None and kind.lazy_sizes and unknown:
            raise Unsupported(f"{what} of a {kind.name} array: {self.shape_env.describe(DataDependent(unknown[0].expr))}; "
                              f"{kind.name} knows it once computed, Python reads it")
        return value

    def _one_kind(self, source: Source, kind: tuple | None) -> None:
        """One call's arrays are all ndarrays or all of one kind on one device (as CuPy and torch
        refuse to mix them): a second kind is a break, after which the code runs as Python."""
        if kind is None:   # an ndarray
            clash = self.array_kind
            self._numpy_input = self._numpy_input or source.name()
        else:
            clash = self._numpy_input or (self.array_kind if self.array_kind not in (None, kind) else None)
            self.array_kind = self.array_kind or kind
        if clash is not None:
            what = "an ndarray" if kind is None else f"a {kind[0].name} array on {kind[1]}"
            other = f"ndarray {clash}" if isinstance(clash, str) else f"a {clash[0].name} array on {clash[1]}"
            raise Unsupported(f"{source.name()} is {what}, beside {other}: numpile compiles arrays of one kind per call")

    def _aliased_input(self, value: np.ndarray, source: Source) -> ArrayVariable | None:
        """The Variable for an array that is an earlier input (the same Variable) or, when asked
        for, a view of one (made from it in the graph, so that updates show through both)."""
        same = self.wrapped_arrays.get(id(value))
        if same is not None:
            self.guards.add(source, "same", same[1].source)
            return same[1]
        if ("view", source.name()) not in self.hints:
            return None
        for base, base_var in self.wrapped_arrays.values():
            index = view_index(value, base) if np.may_share_memory(value, base) else None
            if index is not None:
                self.guards.add(source, "view", (base_var.source, index))
                var = self.call_op(ops.get("getitem"), (base_var, ConstantVariable(index)), {})
                var.source = source  # the caller's own view object stands for it outside the graph
                return var
        return None

    def mark_mutated(self, container: Variable) -> None:
        """Note a change to a list or dict; one the caller can see is replayed after the graph."""
        if container.source is not None and all(c is not container for c in self.mutated):
            self.mutated.append(container)

    def store_attr(self, obj: Variable, name: str, value: Variable) -> None:
        """`obj.name = value` on an object the caller can see: later reads in the trace see the value,
        and the write is replayed after the graph. Objects with their own attribute logic are not
        written by the trace."""
        if isinstance(obj, ArrayVariable) and name == "shape":
            return obj.set_shape(self, value)
        if not isinstance(obj, ObjectVariable) or obj.source is None or isinstance(obj.value, type) \
                or not hasattr(obj.value, "__dict__"):
            raise Unsupported(f"setting attribute {name!r} of {obj.describe()}")
        cls = type(obj.value)
        if cls.__setattr__ is not object.__setattr__ or hasattr(getattr(cls, name, None), "__set__"):
            raise Unsupported(f"setting attribute {name!r} of a {cls.__name__} (it customises attribute assignment)")
        self.attr_writes.pop((id(obj), name), None)  # replayed in the order of the last writes
        self.attr_writes[(id(obj), name)] = (obj, name, value)

    def written_attr(self, obj: Variable, name: str) -> Variable | None:
        entry = self.attr_writes.get((id(obj), name))
        return entry[2] if entry is not None else None

    def read_source(self, source: Source):
        """The real value behind a Source, read now (closure cells are read at trace time)."""
        return eval(source.expr(), dict(self.frame_env))

    # -- ops ---------------------------------------------------------------------------
    def call_op(self, op: ops.OpDef, args: tuple, kwargs: dict, method: str | None = None,
                weak: bool = False) -> Variable:
        """Add `op` applied to Variables; its meta rule gives the result's shape and dtype. A weak
        result is Python arithmetic on Python scalars (see Graph)."""
        gargs = tuple(self.graph_arg(a) for a in args)
        gkwargs = {k: self.graph_arg(v) for k, v in kwargs.items()}
        try:
            if method is None:
                gargs, gkwargs = op.normalize(gargs, gkwargs)
            else:
                gargs, gkwargs = op.normalize_method(method, gargs, gkwargs)
        except TypeError as e:
            raise Unsupported(f"unsupported call of np.{op.name}: {e}") from None
        gargs = sequences_as_arrays(self, op, gargs)
        metas = map_nodes((gargs, gkwargs), lambda n: n.array_meta)
        try:
            meta = op.meta(*metas[0], **metas[1])
        except NotImplementedError as e:
            raise Unsupported(str(e) or f"{op.name}: this form is not supported") from None
        except DataDependent as e:
            raise Unsupported(f"{op.name}: {self.shape_env.describe(e)}") from None
        except Exception as e:  # NumPy would raise here: let the eager run raise it for real
            raise Unsupported(f"{op.name} raises {type(e).__name__} in NumPy: {e}") from None
        if weak:
            meta = dataclasses.replace(meta, weak=True)
        either = self._python_or_numpy(op, (*args, *kwargs.values()), gargs, gkwargs, meta)
        node = self.graph.call(op.name, gargs, gkwargs, meta, self.loc)
        if self.errstate:
            node.meta["errstate"] = {k: v for settings in self.errstate for k, v in settings.items()}
        if node.results is not None:
            results = self._results(op, node, (*args, *kwargs.values()))
            self._check_bound(op)
            return results
        self.shape_env.bind_dims(node, node.shape)
        self._check_bound(op)
        result = ArrayVariable(node, python_or_numpy=either)
        if _makes_view(op.name, method, args, meta):
            base = args[0]
            result.base, result.view_op, result.base_version = base, (op, tuple(args[1:]), dict(kwargs), method), base.version
            base.viewed = True
        return result

    def _python_or_numpy(self, op: ops.OpDef, operands: tuple, gargs: tuple, gkwargs: dict, meta) -> tuple | None:
        """Where an operand may be a Python number or a NumPy scalar as the data decides
        (ArrayVariable.python_or_numpy): the op's result is the same array either way, or a scalar
        that is as undecided; else (another dtype, an op with several results, a loop's body or a
        branch's side) the trace starts again with that call a graph break."""
        either = [v for v in _flattened(operands) if isinstance(v, ArrayVariable) and v.python_or_numpy]
        if not either:
            return None
        call = either[0].python_or_numpy
        retrace = Retrace(f"{op.name} of a value that max()/min() makes a Python number or a NumPy scalar as the "
                          "data decides depends on which", ("python or numpy", call))
        if self.graph is not self.root_graph or isinstance(meta, tuple):
            raise retrace
        undecided = {id(v.node) for v in either}
        metas = map_nodes((gargs, gkwargs), lambda n: dataclasses.replace(n.array_meta, weak=True)
                          if id(n) in undecided else n.array_meta)
        try:
            other = op.meta(*metas[0], **metas[1])
        except Exception:
            raise retrace from None
        if isinstance(other, tuple) or (other.shape, other.dtype) != (meta.shape, meta.dtype):
            raise retrace
        return call if meta.scalar or meta.weak else None

    def check_python_or_numpy(self, var: Variable, what: str) -> None:
        """Retrace with the max()/min() that made `var` a graph break: `what` shows whether it is a
        Python number or a NumPy scalar."""
        if isinstance(var, ArrayVariable) and var.python_or_numpy:
            raise Retrace(f"max()/min() of a Python number and a NumPy scalar: {what} shows which the data chose",
                          ("python or numpy", var.python_or_numpy))

    def _check_bound(self, op: ops.OpDef) -> None:
        if any(u.node is None for u in self.shape_env.unbacked.values()):  # a meta rule's mistake, said plainly
            raise Unsupported(f"{op.name}: its meta rule named a size only the data knows that is no dim of its result")

    def _results(self, op: ops.OpDef, node: Node, operands: tuple) -> TupleVariable:
        """The tuple an op with several results returns: a tuple_getitem node per result, or the
        operand itself where NumPy returns it (`op.same_as`), so that updates show through both."""
        arrays = {v.node: v for v in operands if isinstance(v, ArrayVariable)}
        items = []
        for index, meta in enumerate(node.results):
            same = node.kwargs.get(op.same_as.get(index))
            if isinstance(same, Node) and same in arrays and not meta.scalar:
                items.append(arrays[same])
            else:
                items.append(ArrayVariable(self.graph.result(node, index)))
                self.shape_env.bind_dims(items[-1].node, meta.shape)
        return TupleVariable(items, cls=type(node.results))  # a meta rule returns NumPy's named tuple

    # -- in-place updates --------------------------------------------------------------
    def mark_view(self, result: ArrayVariable, array: ArrayVariable, index: Variable) -> None:
        """`result = array[index]` (op index) stands for NumPy's view: updates through one reach the other."""
        if not result.node.meta["scalar"]:
            result.base, result.view_op, result.base_version = array, (ops.get("index"), (index,), {}, None), array.version
            array.viewed = True

    def refresh(self, var: ArrayVariable) -> None:
        """Make a view again from its base when the base was updated since."""
        if var.base is None:
            return
        self.refresh(var.base)
        if var.base_version != var.base.version:
            op, rest, kwargs, method = var.view_op
            if op.name in MAYBE_VIEWS:
                raise Unsupported(f"an array updated in place is read through a {op.name} result, "
                                  "which NumPy makes a view or a copy depending on its strides")
            var.node = self.call_op(op, (var.base, *rest), kwargs, method).node
            var.base_version = var.base.version
            var.version += 1

    def mutate(self, var: ArrayVariable, value: ArrayVariable) -> None:
        """`var`'s data becomes `value`, which has var's shape and dtype: a new node for var, or for
        the base of a view, through a functional setitem."""
        kind = self.array_kind[0] if self.array_kind is not None else None
        if kind is not None and kind.immutable:   # as the library does it, not as NumPy would
            raise Unsupported(f"an in-place update in a call on {kind.name} arrays: {kind.name} rebinds (x += y) or "
                              f"replaces (x[i] = v) the array, which runs as Python")
        self.refresh(var)
        self.check_held_apart(var, "updated in place")
        if var.base is None:
            if var.source is not None and isinstance(self.read_source(var.source), np.ndarray):
                if not self.read_source(var.source).flags.writeable:  # NumPy raises its own error there
                    raise Unsupported(f"{var.source.name()} is read-only and updated in place")
                self.guards.add(var.source, "writeable", None)
            var.node = value.node
            var.version += 1
            if var.source is not None and all(v is not var for v in self.mutated_arrays):
                self.mutated_arrays.append(var)
            return
        op, rest, kwargs, method = var.view_op
        if op.name not in ("getitem", "index") or method is not None:
            raise Unsupported(f"in-place update of an array through a {op.name} view is not supported yet")
        self.mutate(var.base, self.call_op(ops.get("setitem"), (var.base, *rest, value), {}))
        var.version += 1   # changed too (refresh makes it again from its base): what was made of it sees that

    def check_held_apart(self, var: ArrayVariable, what: str, arrays: bool = True) -> None:
        """Retrace if `var` (or what it views) is a cond's result standing for an array held apart, or
        (with `arrays`) such an array, and `what` happens to it: that needs the one array NumPy has;
        or if it is a value max()/min() makes a Python number or a NumPy scalar (check_python_or_numpy)."""
        self.check_python_or_numpy(var, what)
        root = base_array(var)
        branch = root.stands_in_for or arrays and root.held_apart_by
        if branch:
            raise held_apart(f"{var.describe()} is {what} after a branch at top level that may leave it the same "
                             "array as another (a cond's result is a copy)", branch)

    def check_disjoint_updates(self) -> None:
        """An updated input must not share memory with another input (else the write-back would
        differ from NumPy's order of effects); guarded for later calls. A later input that is a
        view of an earlier one can be made from it instead: aliased_inputs asks for that. CuPy
        arrays are guarded alike (np.may_share_memory dispatches to CuPy's): without it an entry
        traced with two arrays would run when one array is passed as both."""
        order = {s: i for i, s in enumerate(self.input_sources)}
        guarded = set()   # pairs of sources: two updated inputs are tested once
        for var in self.mutated_arrays:
            mine = self.read_source(var.source)
            for source, other in zip(self.input_sources, self.example_inputs):
                kind = array_kinds.kind_of(other)
                if source == var.source or not (isinstance(other, np.ndarray) or kind is not None and kind.numpy_views) \
                        or frozenset((var.source, source)) in guarded:
                    continue
                guarded.add(frozenset((var.source, source)))
                if np.may_share_memory(mine, other):
                    reason = f"{var.source.name()} is updated in place and shares memory with {source.name()}"
                    values = {var.source: mine, source: other}
                    first, second = sorted(values, key=order.get)
                    if ("view", second.name()) not in self.hints and view_index(values[second], values[first]) is not None:
                        raise aliased_inputs(reason, second.name())
                    raise Unsupported(reason)
                self.guards.add(var.source, "disjoint", source)

    def graph_arg(self, var: Variable):
        """A Variable as a Graph argument: Nodes for arrays, Python constants, nested tuples/lists."""
        if isinstance(var, ArrayVariable):
            self.refresh(var)
            return var.node
        if isinstance(var, TupleVariable):
            return tuple(self.graph_arg(v) for v in var.items)
        if isinstance(var, ListVariable):
            return [self.graph_arg(v) for v in var.items]
        if isinstance(var, SliceVariable):
            return slice(self.graph_arg(var.start), self.graph_arg(var.stop), self.graph_arg(var.step))
        if var.is_constant():
            return var.as_constant()
        raise Unsupported(f"{var.describe()} cannot be passed to a NumPy function in a graph")

    def guard_shapes(self) -> None:
        """The relations between symbolic dims the trace relied on become guards."""
        for expr in self.shape_env.guards:
            self.guards.add(ExprSource(self.shape_env.source_expr(expr)), "expr", None)

    def prune_unused_inputs(self, outputs: list[Node]) -> None:
        """Drop graph inputs nothing reads (their guards stay: the trace looked at them); an input
        whose symbolic dims a node's arguments use is read."""
        used = {id(n) for node in self.graph.nodes for n in node.inputs} | {id(n) for n in outputs}
        symbol_owners = {expr: node for node, expr in zip(self.graph.inputs, (s.expr() for s in self.input_sources))}
        for index in self.graph.symbols_used() - set(self.shape_env.unbacked) - self.shape_env.loops:
            used.add(id(symbol_owners[self.shape_env.symbols[index][0]]))
        keep = []
        for node, src, ex in zip(self.graph.inputs, self.input_sources, self.example_inputs):
            if id(node) in used:
                keep.append((src, ex))
            else:
                self.graph.nodes.remove(node)
        self.input_sources = [s for s, _ in keep]
        self.example_inputs = [e for _, e in keep]
        by_expr = {s.expr(): node for s, node in zip(self.input_sources, self.graph.inputs)}
        self.graph.symbols = [((u.node, u.dim) if u.node.graph is self.graph else None)   # else bound in a loop's body
                              if (u := self.shape_env.unbacked.get(k)) is not None
                              else (by_expr[s[0]], s[1]) if s is not None and s[0] in by_expr else None
                              for k, s in enumerate(self.shape_env.symbols)]


def _flattened(values) -> list:
    """The Variables among values, tuples' and lists' items too."""
    flat = []
    for v in values:
        flat += _flattened(v.items) if isinstance(v, (TupleVariable, ListVariable)) else [v]
    return flat


def _makes_view(name: str, method: str | None, args: tuple, meta: ArrayMeta) -> bool:
    """Whether NumPy's result (may) share memory with the first argument; a NumPy scalar never
    does (`x[0]` of a 1-d x is a copy)."""
    if meta.scalar or not args or not isinstance(args[0], ArrayVariable):
        return False
    return name in ALWAYS_VIEWS or name in MAYBE_VIEWS and method != "flatten"


def _input_name(source: Source) -> str:
    name = source.name()
    return name[2:] if name.startswith("__") else name
