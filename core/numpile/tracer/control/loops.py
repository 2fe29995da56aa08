"""One pass over a loop's body (a `for` loop's here; whiles.py's and fors.py's DataRangeBody are
kinds of it): the body traced once into a Graph of its own, each array the frame can reach standing
for its value at the start of an iteration, then what the pass left checked (what the loop node
carries, reads, or cannot take: `Unstable`, for passes.py), and the loop node put in the
enclosing graph with the frame given the values after it. Locals rebound to views that follow the
index (`ym2, ym1 = ym1, y[:, j]`) are carried as those views (`ViewOfIndex`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ... import config, logs
from ...exc import Unsupported
from ...graph import Graph, Node
from ...ops import ArrayMeta
from ...loop_ranges import loop_range
from ...shapes import SymInt, lone_symbol, substitute_index
from .. import bytecode_compat as bc
from ..variables import NULL, ArrayVariable, ConstantVariable, base_array
from . import appends
from .bodies import FrameState, bind_symbols, lift_outer, number_before, reachable_arrays, reorder_inputs, same_constant
from .liveness import live_after_loop
from .passes import Unstable
from .state import PEELS, LoopFrame


class LoopBody:
    """One pass over the body of the loop at FOR_ITER `inst`, for the index values `remaining`."""

    appends: dict = {}   # lists an earlier pass saw appended to (appends.py), set by passes.py
    item = None          # what the iteration traced took from the iterator (a range's or rows' body)

    def __init__(self, tx, inst, it, rebound: dict, stale: set, period: int = 1):
        """`it`: the loop's iterator (a range's or an array's rows: RangeIteratorVariable,
        ArrayIteratorVariable), which says the range of indices and the value taken at one.
        `period`: iterations the body holds (locals that swap arrays are back after them); the
        iterations past a whole number of periods are unrolled after the loop."""
        self.tx, self.inst, self.it, self.rebound, self.stale, self.period = tx, inst, it, rebound, stale, period
        self.outer = tx.output.graph
        self.body = Graph(self.outer)
        self.first, self.last, self.stop, self.step, self.count = it.remaining()
        if period > 1:   # the loop runs whole periods; `last` is the index the last one starts at
            self.groups = self.count // period
            self.last = self.first + (self.groups - 1) * period * self.step
            self.stop = self.first + self.groups * period * self.step
        self.index = tx.output.shape_env.new_loop_symbol(self.first)

    def _initial(self, value, meta):
        """A rebound local's value before the loop: an array, or a Python float carried as a graph
        value (`_changed`)."""
        return value if isinstance(value, ArrayVariable) else number_before(self.tx, self.outer, value, meta)

    def _iterations(self) -> None:
        """Trace the body's instructions for an iteration (`period` of them) with the index symbolic."""
        tx = self.tx
        with loop_range(self.index, self.first, self.last, self.step):
            for k in range(self.period):
                if k:   # the next iteration of the period starts after FOR_ITER, as FOR_ITER would
                    tx.ip = tx.index_of[self.inst.offset] + 1
                self.item = self.it.at(self.index + k * self.step)
                tx.push(self.item)
                self._run()

    def _enter(self) -> None:
        """The index: the local the loop binds it to, its input of the body."""
        self.target = index_name(self.tx, self.inst)
        self.index_node = self.body.input(self.target, ArrayMeta((), np.dtype(np.int64), True, True))
        self.tx.output.control.indices[self.index.expr] = self.index_node

    def trace(self) -> "LoopBody":
        tx, out = self.tx, self.tx.output
        self.state_locals = dict(tx.locals)
        self._enter()
        out.graph = self.body
        out.control.iterations.append(self.index_node)
        try:
            self.names = {}    # local rebound to an array -> (node before the loop, its placeholder)
            self.fresh = {}    # local rebound to an array -> the Variable it starts each iteration as
            self.held = {}     # local rebound to an array -> the Variable it held before the loop
            for name, meta in self.rebound.items():
                if isinstance(meta, ViewOfIndex):
                    continue
                before = self.held[name] = self._initial(tx.locals[name], meta)
                out.refresh(before)
                placeholder = self.body.input(name, meta)
                self.names[name] = (before.node, placeholder)
                tx.locals[name] = self.fresh[name] = ArrayVariable(placeholder)
            self.arrays = {}   # base ArrayVariable -> (node before the loop, its placeholder)
            for v in reachable_arrays(tx, views=False):
                if v.node.graph is self.body:   # a rebound local's placeholder
                    continue
                placeholder = self.body.input(v.node.name, v.node.array_meta)
                self.arrays[v] = (v.node, placeholder)
                # its views made before the loop read its value before the loop, unless it is
                # updated in the body (then they are made again from each iteration's value)
                v.node, v.version = placeholder, v.version + (id(v) in self.stale)
            self._enter_views()
            views = [(w, w.node) for w in reachable_arrays(tx, views=True) if w.base is not None]
            containers = FrameState(tx)
            self.rows = appends.enter(self)
            self._iterations()
            self._check_late()
            if len(tx.yields) != containers.out.yields:   # a generator's: the consumer would take body values
                raise Unstable("yields inside its body", peel=False)
            if self.appends:
                appends.store(self, self.rows)
            else:
                grown = appends.found(self, containers)
                if grown:
                    raise Unstable("appends to lists", peel=False, appends=grown)
            for name in self.rebound:   # a view whose base the body updated is made again from it
                if isinstance(tx.locals.get(name), ArrayVariable) and name not in self.viewed:
                    out.refresh(tx.locals[name])
            self._check_views(views)
            self.cells = containers.changed_cells()
            if self.cells and (self.count is None or self.period > 1 or any(c.contents is not self.item for c in self.cells)):
                raise Unstable("rebinds a variable a closure reads (a cell) to another value than the loop's item",
                               peel=False)
            if containers.changed_containers() or len(out.mutated) != len(containers.out.mutated) \
                    or out.attr_writes != containers.out.attr_writes:
                raise Unstable("changes a list, dict or object attribute", peel=False)
            self._check_locals()
        finally:
            out.graph = self.outer
            out.control.iterations.pop()
        return self

    def _check_late(self) -> None:
        """Arrays first read in the body (`o.s[:, t] = ...` of an attribute's) and updated there are
        carried by the next pass, which finds them among the graph's inputs: Unstable, with each
        back at its input."""
        out = self.tx.output
        late = [v for v in out.input_arrays() if v not in self.arrays and v.node.graph is self.body]
        for v in late:
            v.node, v.version = out.input_node(v), 0
        if late:
            raise Unstable("updates an array it reads first (an attribute's, a global's)", peel=False,
                           late=frozenset(map(id, late)))

    def _check_views(self, views: list) -> None:
        """A view made before the loop, of an array the body updates, must not be read at its
        value before the loop (Unstable: the next pass makes it again in the body)."""
        read = {id(n) for b in self.body for n in (b.inputs if b.op != "output" else b.args[0])
                if isinstance(n, Node) and n.graph is not self.body}
        updated = {id(v) for v, (_, placeholder) in self.arrays.items() if v.node is not placeholder}
        stale = {id(base_array(w)) for w, node in views if id(node) in read and id(base_array(w)) in updated}
        if stale - self.stale:
            raise Unstable("reads views of arrays it updates", peel=False, stale=stale)

    def small(self) -> bool:
        """Whether the loop is better unrolled: fewer iterations than config.loop_capture_min, or
        few ops unrolled; never with a loop inside (each iteration's copy of an inner loop is
        another nest to compile: NPBench's sselfeng, eight nested loops of 2 to 6 iterations,
        compiled 32 nests in 3.8 s)."""
        calls = self.body.calls
        if self.count is None or any(n.target == "loop" for n in calls):
            return False
        return self.count < config.loop_capture_min or self.count * len(calls) // self.period <= config.loop_unroll_ops

    def _run(self) -> None:
        """Run the body's instructions until control is back at FOR_ITER."""
        tx = self.tx
        head = loop_ip = tx.index_of[self.inst.offset]
        while head and tx.instructions[head - 1].opname == "EXTENDED_ARG":   # a jump back lands on those
            head -= 1
        exit_ip = tx.index_of[self.inst.argval]
        tx.output.control.frames.append(LoopFrame(tx, head, loop_ip, exit_ip))
        try:
            while not head <= tx.ip <= loop_ip:
                if tx.ip < head or tx.ip >= exit_ip or tx.return_value is not None:
                    raise Unsupported("control leaves the loop from inside its body (break or return)")
                tx.step()
        finally:
            tx.output.control.frames.pop()

    def _check_locals(self) -> None:
        tx = self.tx
        new_rebound, swapped, deferred = {}, {}, None
        fresh = {id(v) for v in self.fresh.values()}
        for name, v in self.fresh.items():
            if v.node is not self.names[name][1] and v.version:
                raise Unstable(f"{name} is rebound in the loop and also updated in place", peel=False)
            held = base_array(self.held[name])
            if held in self.arrays and held.node is not self.arrays[held][1]:
                # in the first iteration the local is that array, and sees the update: that one unrolled
                raise Unstable(f"{name} is rebound in the loop, and the array it held is updated in it", peel=True)
        for name, var in list(tx.locals.items()):
            before = self.state_locals.get(name)
            if name in self.viewed:
                if not self.viewed[name].same(self._view_of_index(var), self.index):
                    raise Unstable(f"{name} is rebound to a view that does not follow the index", peel=False)
                continue
            if name in self.names:
                if not isinstance(var, ArrayVariable) or var.node.array_meta != self.names[name][1].array_meta:
                    raise Unstable(f"{name} changes type, shape or dtype in the loop", peel=True)
                continue
            if var is before:
                continue
            if name == self.target and isinstance(var, ArrayVariable):   # the row the loop takes
                if self._live_after(name):
                    raise Unstable(f"{name}, the row the loop takes, is read after it", peel=False)
                continue
            if before is None:
                if self._live_after(name):
                    raise Unstable(f"{name} is first bound in the loop and read after it", peel=True)
                continue
            if isinstance(var, ArrayVariable) and isinstance(before, ArrayVariable):
                if var in self.arrays and before in self.arrays:
                    swapped[before] = var
                    continue
                template = self._view_of_index(var)
                if template is not None:   # `ym1 = y[:, j]`: made again from y at each iteration's start
                    new_rebound[name] = template
                    continue
                if any(var is v for v in self.state_locals.values()) and base_array(var) in self.arrays:
                    deferred = name   # `ym2 = ym1`: a view of the index once ym1 is carried as one
                    continue
                if var in self.arrays or id(var) in fresh or base_array(var) in self.arrays:
                    raise Unstable(f"{name} is rebound to another array of the frame (a view)", peel=False)
                if var.node.array_meta != before.node.array_meta:
                    raise Unstable(f"{name} changes shape or dtype in the loop", peel=True)
                new_rebound[name] = var.node.array_meta
            elif var.is_constant() and before.is_constant() and same_constant(var.as_constant(), before.as_constant()):
                continue
            elif var.is_constant() and self._of_index(var.as_constant()):
                if self.count is None and self._live_after(name):
                    raise Unstable(f"{name}, read after the loop, is its index, whose last value is not known", peel=False)
                continue
            else:
                new_rebound[name] = self._changed(name, before, var)
        if swapped:
            raise Unstable("swaps arrays between locals", False, period=self._period_of(swapped))
        if new_rebound:
            raise Unstable("rebinds locals to new arrays", False, new_rebound)  # carried in the next pass
        if deferred:
            raise Unstable(f"{deferred} is rebound to another array of the frame (a view)", peel=False)
        for v, (_, placeholder) in self.arrays.items():
            if v.node is not placeholder and v.node.array_meta != placeholder.array_meta:
                raise Unstable(f"{v.describe()} changes shape or dtype in the loop", peel=True)

    def _live_after(self, name: str) -> bool:
        return live_after_loop(self.tx, name, self.inst)

    # -- locals rebound to views that follow the index (`ym2, ym1 = ym1, y[:, j]`) --------------
    def _view_of_index(self, var) -> "ViewOfIndex | None":
        """What `var` is, where it is a view `base[index]` of an array of the frame with an index
        that moves with the loop's (a linear expression of it), else None."""
        index = getattr(self, "index", None)   # a while loop or a range from the data has no symbol
        if index is None or not isinstance(var, ArrayVariable) or var.base is None or var.base.base is not None \
                or var.base not in self.arrays or var.view_op[0].name not in ("getitem", "index") or var.view_op[2]:
            return None
        try:
            items = self.tx.output.graph_arg(var.view_op[1][0])
        except Unsupported:
            return None
        flat = items if isinstance(items, tuple) else (items,)
        ints = [x for item in flat for x in ((item.start, item.stop) if isinstance(item, slice) else (item,))]
        if any(isinstance(x, (Node, list, np.ndarray)) for x in ints) or not any(map(self._of_index, ints)):
            return None
        return ViewOfIndex(var.base, var.view_op[0], items, index)

    def _enter_views(self) -> None:
        """Each local carried as a view of the index: made at the iteration's start from its
        base as the iteration sees it (where the last one left it: the index one step back); before
        the loop it must be that view already (else one more iteration is unrolled)."""
        self.viewed = {name: t for name, t in self.rebound.items() if isinstance(t, ViewOfIndex)}
        for name, t in self.viewed.items():
            before = self.tx.locals.get(name)
            if not isinstance(before, ArrayVariable) or before.base is not t.base or before.view_op[0] is not t.op \
                    or repr(self.tx.output.graph_arg(before.view_op[1][0])) != repr(t.at(self.first - self.step)):
                raise Unstable(f"{name} is not yet the view of the index it is in the loop", peel=True)
            with loop_range(self.index, self.first, self.last, self.step):   # its bounds decided for every index
                self.tx.locals[name] = self.tx.output.call_op(t.op, (t.base, ConstantVariable(t.at(self.index - self.step))), {})

    def _changed(self, name: str, before, var):
        """A local holding another value after the iteration than before, not an array of the same
        meta: the meta to carry it as, or Unstable. A Python float that stays one (`t += dt`, a
        simulation's clock) is carried as a weak float64, and so is a Python int the iteration made
        a graph value (crc16's `crc`, shifted and xor-ed by a branch on the data), which the next
        iterations would carry anyway; another Python value unrolls the loop (an int counter is
        often an index or a size, which a graph value cannot be)."""
        if before.is_constant() and type(before.as_constant()) is float and (
                var.is_constant() and type(var.as_constant()) is float
                or isinstance(var, ArrayVariable) and var.node.shape == () and var.python_type() is float):
            return ArrayMeta((), np.dtype(np.float64), True, True)
        if before.is_constant() and type(before.as_constant()) is int and isinstance(var, ArrayVariable) \
                and var.node.shape == () and var.python_type() is int:
            return ArrayMeta((), np.dtype(np.int64), True, True)
        raise Unstable(f"{name} ({before.describe()} before the iteration, {var.describe()} after) "
                       "changes from one iteration to the next", peel=True)

    def _period_of(self, swapped: dict) -> int:
        """The iterations after which arrays that locals swap (`u, v = v, u`) are back where they
        began: the order of the permutation (1 where it is not one: then no loop)."""
        if self.count is None or self.period > 1 or set(swapped) != set(swapped.values()):
            return self.period
        order = 1
        for start in swapped:
            length, v = 1, swapped[start]
            while v is not start:
                length, v = length + 1, swapped[v]
            order = order * length // math.gcd(order, length)
        return order if order <= 4 and self.count >= 2 * order else 1

    def _of_index(self, value) -> bool:
        """Whether value is a linear expression of the index (known after the last iteration)."""
        return isinstance(value, SymInt) and value.opaque is None and self.index.expr in dict(value.terms)

    # -- the loop node -----------------------------------------------------------------------
    def finish(self, tx, inst) -> None:
        """Put the loop node in the enclosing graph, give the frame the values after it, and go on
        after the loop."""
        body = self.body
        appends.initial(self, self.rows)
        carried = [(v, before, placeholder) for v, (before, placeholder) in self.arrays.items() if v.node is not placeholder]
        renamed = [(name, before, placeholder) for name, (before, placeholder) in self.names.items()]
        results = [v.node for v, _, _ in carried] + [tx.locals[name].node for name, _, _ in renamed]
        body.output(results)
        body.write_back = [(k, placeholder) for k, (_, _, placeholder) in enumerate(carried)]
        body.write_back_owned = True   # ops/control.py's run_loop copies them first
        free = [(before, placeholder) for v, (before, placeholder) in self.arrays.items() if v.node is placeholder]
        inits = [before for _, before, _ in carried] + [before for _, before, _ in renamed]
        order = [self.index_node] + [p for _, _, p in carried] + [p for _, _, p in renamed]
        free_inits = self._lift(free)
        free_nodes = [p for _, p in free_inits]
        reorder_inputs(body, order + free_nodes)
        self._bind_symbols(free_inits)
        node = self.outer.loop(body, *self._bounds(), self.step * self.period, tuple(inits),
                               tuple(before for before, _ in free_inits), tx.loc)
        self._hand_on(node, carried, renamed)
        appends.hand_on(self, self.rows)
        for cell in self.cells:   # a closure's variable bound to the loop's item (a comprehension's): the last one
            cell.contents = self.it.at(self.last)
        for name, t in self.viewed.items():
            if self.count is None and self._live_after(name):
                raise Unsupported(f"{name}, read after the loop, is a view at its index, whose last value is not known")
            with loop_range(self.index, self.first, self.last, self.step):
                tx.locals[name] = tx.output.call_op(t.op, (t.base, ConstantVariable(t.at(self.last))), {})
        for name, var in list(tx.locals.items()):
            of_index = isinstance(var, ConstantVariable) and self._of_index(var.unguarded())   # an int argument stays unguarded
            if of_index and self.count is not None:
                with loop_range(self.index, self.first, self.last, self.step):
                    tx.locals[name] = ConstantVariable(substitute_index(var.as_constant(), self.index, self.last))
            elif name not in self.state_locals or of_index \
                    or name == self.target and isinstance(var, ArrayVariable):
                del tx.locals[name]   # bound in the loop, read nowhere after it
        rest = self.count - self.groups * self.period if self.period > 1 else 0
        if rest:   # the iterations past whole periods: FOR_ITER again, unrolled
            self.it.index += self.groups * self.period
            tx.output.control.attempts[(tx.code, inst.offset)] = PEELS + 1
            tx.ip = tx.index_of[inst.offset]
        else:
            _exhaust(tx, inst)
        logs.get("graph").debug("%s: the loop is captured as %s (%s iterations%s, body of %d ops)", tx.loc, node.name,
                                self.count if self.count is not None else self.it.range,
                                f", {self.period} in each pass of its body (locals swap arrays)" if self.period > 1 else "",
                                len(body.calls))

    def _bounds(self) -> tuple:
        """The loop node's start and stop."""
        return self.first, self.stop

    def _hand_on(self, node, carried: list, renamed: list) -> None:
        """The frame's arrays and rebound locals after the loop: the node's results (carried
        arrays, then rebound locals), the free arrays as they were."""
        for k, (v, _, _) in enumerate(carried):
            v.node, v.version = self.outer.result(node, k), v.version + 1
        for v, (before, placeholder) in self.arrays.items():
            if v.node is placeholder:
                v.node = before
        for k, (name, _, _) in enumerate(renamed):
            self.tx.locals[name] = ArrayVariable(self.outer.result(node, len(carried) + k))

    def _lift(self, free: list) -> list:
        """(enclosing node, body input) for each value of the enclosing graph the body reads: the
        free arrays' placeholders that are used, and any other node met in the body's arguments."""
        users = {id(n) for b in self.body for n in (b.inputs if b.op != "output" else b.args[0]) if isinstance(n, Node)}
        lifted = [(before, p) for before, p in free if id(p) in users]
        for before, p in free:
            if id(p) not in users:
                self.body.nodes.remove(p)
        lift_outer(self.body, lifted)
        return lifted

    def _bind_symbols(self, free_inits: list) -> None:
        bind_symbols(self.body, self.tx.output.shape_env, {lone_symbol(self.index): (self.index_node, None)}, free_inits)


@dataclass(eq=False)
class ViewOfIndex:
    """A local a loop carries as a view `op(base, items)` whose items are expressions of the
    loop's index `index` (the symbol of the pass that found it: each pass makes its own)."""

    base: object        # the ArrayVariable viewed
    op: object
    items: object       # the index as a graph argument: ints, SymInts, slices, None, Ellipsis
    index: SymInt

    def at(self, value):
        """The items with the loop's index replaced by `value` (an int or an expression)."""
        def moved(x):
            if isinstance(x, slice):
                return slice(moved(x.start), moved(x.stop), moved(x.step))
            if isinstance(x, SymInt) and self.index.expr in dict(x.terms):
                return x + dict(x.terms)[self.index.expr] * (value - self.index)
            return x
        return tuple(map(moved, self.items)) if isinstance(self.items, tuple) else moved(self.items)

    def same(self, other: "ViewOfIndex | None", index: SymInt) -> bool:
        """Whether other is this view, both read with the loop's index `index` (no decision taken)."""
        return other is not None and other.base is self.base and other.op is self.op \
            and repr(other.at(index)) == repr(self.at(index))


def index_name(tx, inst) -> str:
    """The name the loop binds its index to (the STORE_FAST after FOR_ITER), or "index"."""
    following = tx.instructions[tx.index_of[inst.offset] + 1]
    return following.argval if following.opname in ("STORE_FAST", "STORE_NAME") and isinstance(following.argval, str) \
        else "index"


def _exhaust(tx, inst) -> None:
    """Leave the loop as FOR_ITER does when its iterator is exhausted."""
    tx.jump(inst)
    if bc.FOR_ITER_EXIT_PUSHES_PLACEHOLDER:
        tx.push(NULL)
    else:
        tx.pop()
