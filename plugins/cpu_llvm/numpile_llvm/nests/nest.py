"""Loop nests of element code as one native function: Numba's ground.

A loop node (numpile.ops.control) whose body, and every loop body and cond side inside it, only
reads and writes single elements of arrays (`A[i, j]`, `A[i, j] = v`), computes scalars with
pointwise ops, and nests loops and conds, is compiled whole: its loops are native loops, its
conds branches, its scalars registers, its carried scalars phis. No Python and no call runs per
iteration or per element (nestcall.py: its entry and the Python that calls it). Its values
are the loop's carried then free values: arrays (read at their strides, updated in place: the
carried ones are the nest's copies), and scalars (a carried one's value after the last iteration
handed back). Every version of an array in the nest is one buffer, so a nest is compiled only
where each array is read and written at its newest version (the tracer's graphs of element code
are so).

Slices (any constant step) are loops inside the nest (slices.py): pointwise ops on slices of one
shape, stored into a slice or reduced by max, min, an integer sum or a product of two vectors
(PolyBench's nussinov, trisolv, seidel-2d, adi, jacobi-1d, durbin: array statements on a few
elements per iteration).

What each op becomes is calls.py's table; this module walks the graphs (`_Nest`: values,
element addresses and their checks, native loops) and makes the nest's module.

Where the outermost loop's iterations are independent (`_Nest.independent`: no scalar carried,
each array written touched only at the outermost index along one dim) and each runs a loop of its
own, they run on a libgomp team, the range cut in one equal run per core (team.render_range): an
escape-time fractal's rows, a sparse matrix's rows.

Where NumPy would raise, the nest stops with a status instead, and the graph raises (the frame
then runs again as Python, which raises NumPy's error): 1, an index out of range (negative ones
count from the end, as in NumPy); 2, a Python int leaving int64 (Python's ints do not wrap); 3,
the max or min of an empty slice; 6, a check node (an `assert`) that fails. It stops too where it cannot do what NumPy would (the frame then
runs as Python, with a warning): 4, a slice stored from a value of another shape (NumPy may
broadcast it); 5, no memory for a slice's value it computes first; 7, a slice's step computed in
the graph that is not positive (the sieve's `mask[j * j::j]` has j >= 2).
Anything else (a step of 0, a float sum, broadcasting, an array made in
the body, an op or dtype the op table of scalar.py lacks) raises Unlowerable: the loop then runs
as before (ops/control.py's CompiledLoop).
"""

from __future__ import annotations

import numpy as np

from numpile import logs, ops
from numpile.graph import Graph, Node
from numpile.lowering import BufferArg, Const, Kernel, Program
from numpile.shapes import SymInt

from .. import jit, scalar, team
from . import nestcall
from . import slices as slices_
from ..irbuilder import BOOL, I64, Function, Module, Unlowerable, V, literal
from .calls import CALLS, pointwise
from .nestcall import INDEX_ERROR, STEP
from ..sizes import Sizes
from .values import NestArray, as_index

# a loop the vectoriser takes runs its last iterations in the vector body, masked: element loops are
# short (a row of 30), and a scalar remainder there is a fifth of the row, branching on data
_TAIL_FOLDED = '!{!"llvm.loop.vectorize.predicate.enable", i1 true}'


class _Here(Sizes):
    """Sizes computed where they are used (in a loop body or a branch)."""

    def at_entry(self, emit):
        return emit()


class NativeNest:
    """A loop node of element code compiled whole; `run` is the loop's extern (nestcall.py), its
    nest called once per run."""

    def __init__(self, body: Graph, bounds: tuple, cpu_features: frozenset, owned: tuple = ()):
        """`bounds`: the loop node's (start, stop, step); a start or stop the graph has as a constant
        is one in the nest too (LLVM then knows every index's range: checks fold). `owned`: per
        carried value, whether the nest may update the array it is given (`owned_carried`)."""
        step = bounds[2]
        if not isinstance(step, int) or step == 0:
            raise Unlowerable("a loop step that is not a constant")
        metas = [n.array_meta for n in body.inputs[1:]]
        if any(not m.shape and m.dtype.kind not in nestcall.SCALAR_KINDS for m in metas):
            raise Unlowerable("a scalar of a kind a loop nest's entry does not convert")
        ir, split = _render(cpu_features, metas, body, bounds)
        symbol = f"npk_nest_{jit.cache_key(ir)[:16]}"   # one name per nest: all share one JIT
        self.ir = ir.replace("@nest", f"@{symbol}").replace('@"nest', f'@"{symbol}')
        code, origin = jit.compile_ir(self.ir, [f"{symbol}.py"])
        if logs.get("output_code").isEnabledFor(10):
            logs.get("output_code").debug("llvm loop nest %s (%s):\n%s", symbol, origin, jit.optimized_ir(self.ir))
        logs.get("perf").debug("llvm: a loop of element code is one native function, %s", symbol)
        self.run = nestcall.runner(code, symbol, metas, len(body.outputs), owned)
        if split:
            self.run = _seeing_crowds(self.run)


def _seeing_crowds(run):
    """A split nest's runner that first looks whether the machine is crowded (team.crowded, which
    sets the flag its team reads: it then runs the range on the calling thread alone)."""
    def crowded_then_run(*args):
        team.crowded()
        return run(*args)
    crowded_then_run.direct = None
    return crowded_then_run


def owned_carried(program: Program, i: int, fresh: set) -> tuple:
    """Per carried value of loop step i of program: whether its nest may update the buffer in place
    instead of a copy. So where the buffer is one made fresh this run (`fresh`: by a kernel into
    the runner's allocation, by a nest, by `fresh_result`'s externs: no view of another buffer), no
    other step reads it, the program does not return it, and the step passes it once: nothing
    else sees it (and where the nest stops, the frame runs again from its own inputs); and of the
    dtype the nest updates."""
    body, carried = program.steps[i].args[0], program.steps[i].args[4]
    passed = [b.name for b in _buffer_args(program.steps[i].args)]
    read = {b for j, step in enumerate(program.steps) if j != i for b in step_reads(step)}
    return tuple(isinstance(c, BufferArg) and c.name in fresh and c.name not in read and passed.count(c.name) == 1
                 and c.name not in program.outputs and program.buffers[c.name].dtype == node.dtype
                 for c, node in zip(carried, body.inputs[1:]))


def step_reads(step) -> list:
    """The buffers a program step (a Kernel or an Extern) reads."""
    return step.inputs if isinstance(step, Kernel) else [a.name for a in _buffer_args((step.args, step.kwargs))]


def fresh_result(op: str) -> bool:
    """Whether extern `op` always hands back a new array of its own (a copy, np.zeros, np.arange...;
    np.ndarray may wrap a buffer it is given)."""
    return op == "copy" or ops.get(op).kind == ops.CREATION and op != "ndarray"


def _buffer_args(value) -> list:
    """The BufferArgs in an extern's arguments, at any depth."""
    if isinstance(value, BufferArg):
        return [value]
    if isinstance(value, dict):
        value = tuple(value.values())
    return [b for v in value for b in _buffer_args(v)] if isinstance(value, (tuple, list)) else []


def _render(cpu_features: frozenset, metas: list, body: Graph, bounds: tuple) -> tuple[str, bool]:
    """The nest's module, and whether it splits: its body function (@nest.body: the loops), its entry (@nest: nestcall.py),
    and where the outermost loop's iterations are independent and do some work each (a loop, a
    while loop or a slice stored in them), the team (@nest.team: team.py) that runs them on all cores."""
    module = Module(cpu_features)
    nest = _render_body(module, metas, body, bounds)
    threads = team.threads()
    split = bool(nest.inner_loops) and threads > 1 and team.available() and nest.independent()
    if split and any(type(b) is int for b in bounds[:2]):   # each thread runs its own part of the range
        module = Module(cpu_features)
        _render_body(module, metas, body, (None, None, bounds[2]))
    nestcall.render_entry(module, "nest", "nest.body", metas)
    if split:
        team.render_range(module, "nest.team", "nest", nestcall.entry_parameters(metas), bounds[2], threads, 2 * threads)
        logs.get("perf").debug("llvm: a loop nest's iterations are independent: they run on %d threads", threads)
    nestcall.render_python_entry(module, "nest", "nest.team" if split else "nest", metas, len(body.outputs))
    return module.render(), split


def _render_body(module: Module, metas: list, body: Graph, bounds: tuple) -> "_Nest":
    """@nest.body, with the loop's start and stop constants where `bounds` has them as ints."""
    fn = Function(module)
    nest = _Nest(fn)
    values = [nest.parameter(k, node) for k, node in enumerate(body.inputs[1:])]
    start, stop = (V(literal(b, I64).ref if type(b) is int else f"%{name}", I64, True)
                   for b, name in zip(bounds, ("start", "stop")))
    nest.carried = values[:len(body.outputs)]
    results = nest.loop(body, start, stop, bounds[2], nest.carried, values[len(body.outputs):])
    for k, (node, value) in enumerate(zip(body.inputs[1:], results)):
        if isinstance(value, V):   # a carried scalar: its last value into its slot of `out`
            fn.store("%out", literal(nestcall.SLOT_BYTES * k // node.dtype.itemsize, I64), scalar.cast(fn, value, node.dtype))
    fn.emit("ret i32 0")
    attributes = module.attribute_group("alwaysinline nounwind")
    module.functions.append(f"define internal i32 @nest.body({', '.join(nestcall.body_parameters(metas))}) "
                            f"{attributes} {{\n" + "\n".join(["entry:"] + fn.entry + fn.lines) + "\n}\n")
    return nest


class _Nest:
    def __init__(self, fn: Function):
        self.fn = fn
        self.current: dict[int, Node] = {}   # an array's root -> the node of its newest version
        self.roots = 0
        self.carried: list = []              # the outermost loop's carried values
        self.index: str | None = None        # the outermost loop's index (its register)
        # (root, written, the dims indexed by the outermost index, the dims sliced upward from it)
        self.accesses: list = []
        self.inner_loops = 0                 # loops and slice stores in an iteration: its work
        self.ndims: dict[int, int] = {}      # an accessed array's root -> its number of dims

    def independent(self) -> bool:
        """Whether the outermost loop's iterations touch disjoint elements, so that threads may run
        them in any order: no scalar carried from one to the next, and every array written is read
        and written only at the outermost index along one dim (`out[i, j] = out[i, j - 1] + x[j]`:
        row i is iteration i's alone), or only at it along some dim and from it upward along the
        others (a covariance's `cov[i:M, i] = cov[i, i:M] = ...`: every element iteration i touches
        has i as its least coordinate); arrays only read are read anywhere."""
        if not all(isinstance(c, NestArray) for c in self.carried):
            return False
        for root in {r for r, written, _, _ in self.accesses if written}:
            accesses = [(at, up) for r, _, at, up in self.accesses if r == root]
            if not frozenset.intersection(*(at for at, _ in accesses)) \
                    and not all(at and len(at | up) == self.ndims[root] for at, up in accesses):
                return False
        return True

    # -- values ------------------------------------------------------------------------
    def parameter(self, k: int, node: Node):
        """Parameter k (nestcall.body_parameters) as the nest reads it: a NestArray, or a scalar's value."""
        if not node.shape:
            value = V(f"%a{k}", node.dtype)
            if node.dtype.kind == "b":   # a byte, as ctypes passes a bool
                value = self.fn.emit(f"icmp ne i8 %a{k}, 0", BOOL)
            return self.weak(node, value)
        dims = tuple(d if isinstance(d, int) else V(f"%n{k}_{i}", I64) for i, d in enumerate(node.shape))
        strides = tuple(V(f"%s{k}_{i}", I64) for i in range(len(node.shape)))
        self.roots += 1
        self.current[self.roots] = node
        return NestArray(self.roots, V(f"%d{k}", I64), dims, strides, node.dtype)

    @staticmethod
    def weak(node: Node, value: V) -> V:
        return V(value.ref, value.dtype, bool(node.meta.get("weak")))

    def operand(self, a, env: dict, sizes: Sizes):
        """An argument's value: a node's, a SymInt's (i64), or a Python constant (a Const)."""
        if isinstance(a, Node):
            return env[a]
        if isinstance(a, V):   # a value computed already (a gather's position)
            return a
        if isinstance(a, SymInt):
            return V(sizes(a).ref, I64, True)
        if isinstance(a, (bool, int, float, complex, np.generic)):
            return Const(a, getattr(a, "dtype", None))
        if isinstance(a, (tuple, list)) and 0 < len(a) <= 16 and all(type(v) in (bool, int, float) for v in a):
            values = np.asarray(a)   # a short constant vector (`(1, 0, 1) == np.bitwise_and(mask, v)`)
            return slices_.chosen(self.fn, [literal(v, values.dtype) for v in values])
        raise Unlowerable(f"a {type(a).__name__} argument in a loop nest")

    def version(self, node: Node, array) -> NestArray:
        """`array`, node's value, where it is its root's newest version (else Unlowerable)."""
        if not isinstance(array, NestArray):
            raise Unlowerable("an array made inside a loop nest")
        if self.current.get(array.root) is not node:
            raise Unlowerable("an array read at an older version than its newest in a loop nest")
        return array

    # -- graphs --------------------------------------------------------------------------
    def graph(self, graph: Graph, env: dict) -> list:
        """Emit graph's calls with its inputs' values in env; returns its outputs' values."""
        params, bound_here = {}, {}
        for k, s in enumerate(graph.symbols):
            if s is not None and s[0] not in env:   # a size a node of this graph binds (a slice's length)
                bound_here.setdefault(s[0], []).append((k, s[1]))
            elif s is not None:
                params[f"s{k}"] = self._size_of(env[s[0]], s[1])
        sizes = _Here(self.fn, params)
        for n in graph.nodes:
            if n.op == "constant":
                value = n.args[0]
                env[n] = V(literal(value, n.dtype).ref, n.dtype, bool(n.meta.get("weak")))
            elif n.op == "call":
                handler = CALLS.get(n.target) or (pointwise if ops.get(n.target).kind == "pointwise" else None)
                if handler is None:
                    raise Unlowerable(f"{n.target} in a loop nest")
                env[n] = handler(self, n, env, sizes)
                for k, dim in bound_here.get(n, ()):
                    if dim is None or not isinstance(env[n], (NestArray, slices_.Lazy)):
                        raise Unlowerable("a size known only when a loop nest's body runs")
                    params[f"s{k}"] = self._size_of(env[n], dim)
            elif n.op == "output":
                return [self.operand(a, env, sizes) for a in n.args[0]]
        return []

    def _size_of(self, value, dim: int | None) -> V:
        """A symbol's value: the size of dim `dim` of an array or slice expression, or with dim None
        the value itself (a loop's index, a scalar input)."""
        if dim is None:
            return as_index(self.fn, value)
        return literal(value.dims[dim], I64) if isinstance(value.dims[dim], int) else value.dims[dim]

    def address(self, n: Node, array: NestArray, index, env: dict, sizes: Sizes, written: bool = False) -> V:
        """The address of element `index` of array, its bounds checked (status INDEX_ERROR)."""
        address, slices = self.place(array, index, env, sizes, written)
        if slices:
            raise Unlowerable("a slice stored into in a loop nest")
        return address

    def _is_index(self, item, env: dict, sizes: Sizes) -> bool:
        """Whether an index item is the outermost loop's index itself."""
        if item is None or isinstance(item, (int, slice)):
            return False
        operand = self.operand(item, env, sizes)   # made once: sizes are kept
        return isinstance(operand, V) and operand.ref == self.index

    def _from_index(self, start, env: dict, sizes: Sizes) -> bool:
        """Whether a slice's start is the outermost loop's index or that plus a count (`i + 1`)."""
        if isinstance(start, SymInt) and start.opaque is None and len(start.terms) == 1 \
                and isinstance(start.const, int) and start.const >= 0:
            (name, coefficient), = start.terms
            return coefficient == 1 and self._is_index(SymInt(name), env, sizes)
        return self._is_index(start, env, sizes)

    def place(self, array: NestArray, index, env: dict, sizes: Sizes, written: bool = False) -> tuple:
        """Where `array[index]` starts, and per slice of the index its (stride, length): an integer
        counts from the end where negative and is checked (status INDEX_ERROR), a slice's bounds
        are clamped as Python's are."""
        fn = self.fn
        index = slices_.per_dim(index, len(array.dims))
        offset, outermost, upward, slices = literal(0, I64), set(), set(), []
        for k, (i, at) in enumerate(zip(index, self.positions(index, array.dims, env, sizes))):
            if isinstance(at, slices_.Span):
                slices.append((fn.binary("mul", array.strides[k], at.stride()), at.length))
                offset = fn.binary("add", offset, fn.binary("mul", at.start, array.strides[k]))
                if isinstance(i, slice) and (isinstance(at.step, V) or at.step > 0) and self._from_index(i.start, env, sizes):
                    upward.add(k)
                continue
            if self._is_index(i, env, sizes):
                outermost.add(k)
            offset = fn.binary("add", offset, fn.binary("mul", at, array.strides[k]))
        self.accesses.append((array.root, written, frozenset(outermost), frozenset(upward)))
        self.ndims[array.root] = len(array.dims)
        return fn.emit(f"getelementptr inbounds i8, ptr {array.data.ref}, i64 {offset.ref}", I64, "p"), slices

    def positions(self, index: tuple, dims, env: dict, sizes: Sizes) -> list:
        """Per item of an index of one item per dim: an integer's position, counted from the end
        where negative and checked (status INDEX_ERROR), or a slice's Span, its bounds clamped as
        Python's are."""
        fn, out = self.fn, []
        for i, d in zip(index, dims):
            dim = literal(d, I64) if isinstance(d, int) else d
            if isinstance(i, slice):
                step = 1 if i.step is None else i.step
                if type(step) is not int:   # computed in the graph: positive, else the nest stops (STEP)
                    step = as_index(fn, self.operand(step, env, sizes))
                    self.check(fn.compare("icmp", "sgt", step, literal(0, I64)), STEP)
                elif step == 0:
                    raise Unlowerable("a slice with a step of 0 in a loop nest")
                up = isinstance(step, V) or step > 0
                # Python's bounds: clamped to [0, dim] going up, to [-1, dim - 1] going down
                low, high = (literal(0, I64), dim) if up else (literal(-1, I64), fn.binary("sub", dim, literal(1, I64)))
                start = self._clamped(i.start, low if up else high, dim, low, high, env, sizes)
                stop = self._clamped(i.stop, dim if up else literal(-1, I64), dim, low, high, env, sizes)
                out.append(slices_.Span(start, step, _trip_count(fn, start, stop, step)))
                continue
            if isinstance(i, (type(None), type(Ellipsis))) or isinstance(i, Node) and i.shape:
                raise Unlowerable("a new axis or an array index in a loop nest")
            value = as_index(fn, self.operand(i, env, sizes) if not isinstance(i, int) else literal(i, I64))
            wrapped = fn.select(fn.compare("icmp", "slt", value, literal(0, I64)), fn.binary("add", value, dim), value)
            self.check(fn.compare("icmp", "ult", wrapped, dim), INDEX_ERROR)
            out.append(wrapped)
        return out

    def _clamped(self, bound, default: V, dim: V, low: V, high: V, env: dict, sizes: Sizes) -> V:
        """A slice bound as Python takes it: None the default, a negative one from the end, then
        clamped to [low, high]."""
        fn = self.fn
        if bound is None:
            return default
        value = as_index(fn, self.operand(bound, env, sizes) if not isinstance(bound, int) else literal(bound, I64))
        value = fn.select(fn.compare("icmp", "slt", value, literal(0, I64)), fn.binary("add", value, dim), value)
        return fn.intrinsic("smin", [fn.intrinsic("smax", [value, low], I64), high], I64)

    def check(self, ok: V, status: int) -> None:
        """Go on where `ok` holds, else return `status`."""
        fn = self.fn
        go, stop = fn.label("ok"), fn.label("stop")
        fn.emit(f"br i1 {ok.ref}, label %{go}, label %{stop}, !prof {self._likely()}")
        fn.start_block(stop)
        fn.emit(f"ret i32 {status}")
        fn.start_block(go)

    def _likely(self) -> str:
        return self.fn.module.metadata('!{!"branch_weights", i32 2000, i32 1}')

    def loop(self, body: Graph, start: V, stop: V, step: int, carried: list, free: list) -> list:
        """A loop over range(start, stop, step) running body; the carried values after it."""
        fn = self.fn
        count = _trip_count(fn, start, stop, step)
        inputs = body.inputs
        index, carried_in, free_in = inputs[0], inputs[1:1 + len(carried)], inputs[1 + len(carried):]
        scalars = [k for k, v in enumerate(carried) if isinstance(v, V)]
        inits = [scalar.cast(fn, carried[k], carried_in[k].dtype) for k in scalars]

        def iteration(t: V, phis: list) -> list:
            i = fn.binary("add", start, fn.binary("mul", t, literal(step, I64)))
            self.index = self.index or i.ref
            env = {index: V(i.ref, I64, True)}
            values = list(carried)
            for k, phi in zip(scalars, phis):
                values[k] = self.weak(carried_in[k], phi)
            for node, value in zip(carried_in, values):
                env[node] = self.enter(node, value)
            for node, value in zip(free_in, free):
                env[node] = self.enter(node, value)
            outs = self.graph(body, env)
            for k, (out, node) in enumerate(zip(outs, body.outputs)):
                if isinstance(carried[k], NestArray) and (not isinstance(out, NestArray) or out.root != carried[k].root):
                    raise Unlowerable("a loop nest's carried array is not updated in place")
            return [scalar.cast(fn, outs[k], carried_in[k].dtype) for k in scalars]
        results = fn.loop(literal(0, I64), count, inits, iteration, fn.module.loop_properties(_TAIL_FOLDED))
        values = list(carried)
        for k, value in zip(scalars, results):
            values[k] = self.weak(carried_in[k], value)
        return values

    def enter(self, node: Node, value):
        """A graph input's value: an array's newest version is now this input."""
        if isinstance(value, NestArray):
            self.current[value.root] = node
            return value
        if isinstance(value, Const):
            return V(literal(value.value, node.dtype).ref, node.dtype, bool(node.meta.get("weak")))
        return value


def _trip_count(fn: Function, start: V, stop: V, step: int | V) -> V:
    """How many indices range(start, stop, step) has (a loop's iterations, a slice's length; a
    step that is a V is positive)."""
    computed = isinstance(step, V)
    span = fn.binary("sub", stop, start) if computed or step > 0 else fn.binary("sub", start, stop)
    size, less_one = (step, fn.binary("sub", step, literal(1, I64))) if computed else \
        (literal(abs(step), I64), literal(abs(step) - 1, I64))
    whole = fn.binary("sdiv", fn.binary("add", span, less_one), size)
    return fn.intrinsic("smax", [whole, literal(0, I64)], I64)
