"""Branches on data kept in the graph: an `if` on a graph value in a loop body, traced both ways
into a `cond` node.

In the body of a loop being captured (fors.py, whiles.py, or a `for` loop's first iteration
unrolled before the rest is captured; anywhere with `config.top_level_conds`: state.py), a
conditional jump on a graph value (`if A[i, j] > 0:`, `x if c else y`, `c and d`) cannot be
decided while tracing. Each side is
traced instead, from the jump to where the two paths meet again (the jump's immediate
post-dominator in the frame's control-flow graph: the instruction after the if/else, the loop's
head after a `continue`, the frame's end where both sides return), each into a Graph of its own.
What the sides leave different (a local, a stack slot, an array updated in place, the value
returned) is a result of both, and the cond node's results (ops/control.py) stand for it after
the branch. Only the side taken runs, so a side that would raise in NumPy raises only if taken.

Refused, the jump then breaking the graph as before (`NUMPILE_LOGS=graph` says why): a side
that breaks the graph or leaves the loop, changes a list, dict or attribute, or leaves a value of
another kind than the other side does (a Python int on one side, a NumPy int64 on the other).
"""

from __future__ import annotations

import numpy as np

from ... import logs, ops
from ...exc import Unsupported
from ...graph import Graph, Node, symbols_of
from ...ops import ArrayMeta
from ...loop_ranges import assuming, facts
from ...shapes import SymInt
from ..variables import ArrayVariable, ConstantVariable, base_array
from .bodies import FrameState, bind_symbols, lift_outer, reorder_inputs, same_constant
from .liveness import live_at, successors

HEAD, END, OUT = -1, -2, -3   # where paths end: the loop's head, the frame's end, outside the loop
MAX_STEPS = 100_000           # instructions traced on one side before giving up
_NUMBERS = (bool, int, float)


def capture(tx, inst, jump_when: bool, keep_on_jump: bool) -> bool:
    """At conditional jump `inst` (jumping when the value on the stack's truth is `jump_when`;
    keeping the value on the stack when it jumps if `keep_on_jump`), trace both sides into a cond
    node and go on where they meet; False where that is not tried or fails (the trace is then as
    it was, and the jump needs the value as before)."""
    value = tx.stack[-1]
    if not _testable(tx, value) or ("held apart", (tx.code, inst.offset)) in tx.output.hints:
        return False
    state = FrameState(tx)
    frame = tx.output.control.loop_frame(tx)
    loop = frame if frame is not None and frame.is_while else None   # a while loop's: does it go on?
    saved = loop.goes_on if loop is not None else None
    compared = tx.output.control.compared.get(value.node)   # `i < j - 1`: each side knows which way it went
    try:
        meet = _meeting_point(tx, tx.index_of[inst.offset])
        sides = []
        for truth in (True, False):
            if loop is not None:
                loop.goes_on = saved
            assumes = facts(*compared, holds=truth) if compared else ()
            side = _Side(tx, inst, truth == jump_when, keep_on_jump, meet, assumes).trace()
            side.flag = None if loop is None or meet != HEAD else \
                loop.goes_on if loop.goes_on is not None else ConstantVariable(tx.ip == frame.head)
            sides.append(side)
            state.restore()
        if loop is not None:
            loop.goes_on = saved
        _merge(tx, inst, value, sides, meet, state)
    except Unsupported as e:
        if loop is not None:
            loop.goes_on = saved
        state.restore()
        logs.get("graph").debug("%s: the branch on %s breaks: %s", tx.loc, value.describe(), e.reason)
        return False
    return True


def _testable(tx, value) -> bool:
    """Whether a branch on `value` may be a cond: one graph value, where the capture rule tries one."""
    return isinstance(value, ArrayVariable) and value.node.shape == () and tx.output.control.tries_branch(tx)


def truth_value(tx, value, negate: bool = False):
    """bool(value) (or `not value`) of a graph value a cond may test, as a graph value; else None."""
    return as_bool(tx, value, negate) if _testable(tx, value) else None


def as_bool(tx, value: ArrayVariable, negate: bool = False) -> ArrayVariable:
    """bool(value) (or `not value`) of a 0-d graph value, as a graph value."""
    if value.node.dtype == np.bool_ and not negate:
        return value
    test = "equal" if negate else "not_equal"
    return tx.output.call_op(ops.get(test), (value, ConstantVariable(0)), {}, weak=bool(value.node.meta.get("weak")))


def _meeting_point(tx, k: int) -> int:
    """Where the paths from the jump at instruction k meet first: its immediate post-dominator,
    with the loop's head (HEAD) and the frame's end (END) as ends of paths; Unsupported if a side
    leaves the loop first."""
    frame = tx.output.control.loop_frame(tx)

    def succ(j: int) -> list[int]:
        found = successors(tx, j, tx.instructions[j]) or [END]
        if frame is None:
            return found
        return [HEAD if frame.ends_iteration(n) else OUT if n >= 0 and not frame.head <= n < frame.end else n
                for n in found]

    reach, todo = {}, [k]
    while todo:
        j = todo.pop()
        if j in reach or j < 0:
            continue
        reach[j] = succ(j)
        todo += reach[j]
    ends = {HEAD, END, OUT}
    everything = set(reach) | ends
    pdom = {j: set(everything) for j in reach} | {e: {e} for e in ends}
    changed = True
    while changed:
        changed = False
        for j in sorted(reach, reverse=True):
            new = {j} | set.intersection(*(pdom[s] for s in reach[j]))
            if new != pdom[j]:
                pdom[j], changed = new, True
    strict = pdom[k] - {k}
    meet = next((d for d in strict if pdom[d] == strict), None)
    if meet is None or meet == OUT:
        raise Unsupported("the two sides of the branch do not meet again inside the loop (a break or return)")
    return meet


class _Side:
    """One side of the branch traced into a Graph of its own, and what it left."""

    def __init__(self, tx, inst, jumps: bool, keep_on_jump: bool, meet: int, assumes: tuple = ()):
        """`assumes`: what holds of the loop indices where this side runs (loop_ranges.assuming)."""
        self.tx, self.inst, self.jumps, self.keep_on_jump, self.meet = tx, inst, jumps, keep_on_jump, meet
        self.assumes = assumes

    def trace(self) -> "_Side":
        tx, out = self.tx, self.tx.output
        self.jump_at = tx.index_of[self.inst.offset]
        outer = out.graph
        self.graph = Graph(outer)
        self.graph.assumes = self.assumes
        guards, mutated, attrs = len(out.shape_env.guards), len(out.mutated), dict(out.attr_writes)
        before = FrameState(tx)
        out.graph = self.graph
        try:
            if not (self.jumps and self.keep_on_jump):
                tx.pop()
            if self.jumps:
                tx.jump(self.inst)
            with assuming(self.assumes):
                self._run()
            for v in (*tx.locals.values(), *tx.stack, tx.return_value):
                if isinstance(v, ArrayVariable):
                    out.refresh(v)   # a view of an array this side updated, made again here
        finally:
            out.graph = outer
        if before.changed_cells():
            raise Unsupported("a side of the branch rebinds a variable a closure reads (a cell)")
        if before.changed_containers() or len(out.mutated) != mutated or out.attr_writes != attrs:
            raise Unsupported("a side of the branch changes a list, dict or object attribute")
        self.locals, self.stack, self.return_value = dict(tx.locals), list(tx.stack), tx.return_value
        # each array's node and version as this side leaves it (restoring the frame puts back the old)
        self.nodes = {id(v): (v.node, v.version) for v in (*self.locals.values(), *self.stack, self.return_value,
                                                           *(a for a, *_ in before.arrays)) if isinstance(v, ArrayVariable)}
        self.mutated_arrays = list(out.mutated_arrays)
        self.guards = out.shape_env.guards[guards:]
        return self

    def node(self, v: ArrayVariable) -> Node:
        return self.nodes[id(v)][0] if id(v) in self.nodes else v.node

    def _run(self) -> None:
        tx, meet = self.tx, self.meet
        frame = tx.output.control.loop_frame(tx)
        for _ in range(MAX_STEPS):
            if tx.return_value is not None:
                if meet == END:
                    return
                raise Unsupported("one side of the branch returns and the other goes on")
            if meet == HEAD and frame.ends_iteration(tx.ip) or tx.ip == meet:
                return
            if tx.ip <= self.jump_at:
                raise Unsupported("the branch is a while loop's test (a while loop on a graph value)")
            tx.step()
        raise Unsupported(f"a side of the branch ran more than {MAX_STEPS} instructions")


def _merge(tx, inst, value: ArrayVariable, sides: list, meet: int, state: FrameState) -> None:
    """Put the cond node in the graph and give the frame the values after it."""
    out = tx.output
    then, other = sides
    if len(then.stack) != len(other.stack):
        raise Unsupported("the sides of the branch leave stacks of different depths")
    slots = [("stack", k) for k in range(len(then.stack))] + [("return", None)] * (meet == END) \
        + [("flag", None)] * (then.flag is not None)
    for name in sorted(set(then.locals) | set(other.locals)):
        if name in then.locals and name in other.locals:
            slots.append(("local", name))
        elif live_at(tx, name, meet if meet >= 0 else len(tx.instructions)) and meet != END:
            raise Unsupported(f"{name} is bound on one side of the branch only and read after it")
    results = []   # (slot, then value, else value)
    held_apart = {}   # slot -> the arrays held apart that its result stands for
    for slot in slots:
        t, f = _value(then, slot), _value(other, slot)
        if t is f or _equal_constants(t, f):   # an array updated in place is merged below, its views made again
            continue
        for v in (t, f):
            if isinstance(v, ArrayVariable) and not v.node.meta.get("scalar") and \
                    (_shared(tx, state, v, slot) or v.stands_in_for):
                if out.control.frames or out.control.peeling(tx):
                    raise Unsupported(f"{slot[1] if slot[0] == 'local' else 'a value'} is {v.describe()} on one side "
                                      "of the branch, an array held apart from it too (a cond's result would be a copy)")
                held_apart.setdefault(slot, []).append(v)
        results.append((slot, t, f))
    arrays = [(v, before) for v, before, *_ in state.arrays if v.base is None and
              (then.nodes[id(v)][0] is not before or other.nodes[id(v)][0] is not before)]
    outputs = {side: [] for side in (0, 1)}
    for k, side in enumerate(sides):
        saved, out.graph = out.graph, side.graph
        try:
            outputs[k] = [_as_node(out, side, (t, f)[k], (t, f)[1 - k], slot) for slot, t, f in results]
            outputs[k] += [side.nodes[id(v)][0] for v, _ in arrays]
        finally:
            out.graph = saved
    for k, side in enumerate(sides):
        side.graph.output(outputs[k])
    operands = _operands(out, sides)
    pred = truth_value(tx, value)
    node = out.graph.cond(pred.node, then.graph, other.graph, tuple(operands), tx.loc)
    tx.stack[:] = then.stack   # as the sides leave it (the jump popped its value); results below
    branch = (tx.code, inst.offset)
    for k, (slot, _, _) in enumerate(results):
        _assign(tx, slot, result := ArrayVariable(out.graph.result(node, k)))
        if slot in held_apart:   # a copy, as long as nothing needs it to be the array itself
            result.stands_in_for = branch
            for root in map(base_array, held_apart[slot]):
                root.held_apart_by = root.held_apart_by or branch
    for k, (v, _) in enumerate(arrays, start=len(results)):
        v.node, v.version = out.graph.result(node, k), max(then.nodes[id(v)][1], other.nodes[id(v)][1]) + 1
    for side in sides:
        out.shape_env.guards += [g for g in side.guards if g not in out.shape_env.guards]
        out.mutated_arrays += [v for v in side.mutated_arrays if all(v is not w for w in out.mutated_arrays)]
    for slot in slots:   # the values both sides agree on
        if slot not in [r[0] for r in results]:
            _assign(tx, slot, _value(then, slot))
    for name in set(tx.locals) - {name for kind, name in slots if kind == "local"}:
        del tx.locals[name]   # bound on one side only, read nowhere after
    if meet == HEAD:
        tx.ip = out.control.frames[-1].head
    elif meet >= 0:
        tx.ip = meet
    logs.get("graph").debug("%s: the branch on %s is captured as %s (%d results)", tx.loc, value.describe(),
                            node.name, len(results) + len(arrays))


def _shared(tx, state: FrameState, v: ArrayVariable, slot) -> bool:
    """Whether array v is seen apart from this slot before the branch (the caller's, a view or
    viewed, in another local of this frame or of one it was inlined from, in a container): then a
    copy of it as a cond's result would lose what updates through it reach, and its identity."""
    if v.source is not None or v.base is not None or any(w.base is v for w, *_ in state.arrays):
        return True
    if any(w is v and not (slot[0] == "local" and name == slot[1]) for name, w in state.locals.items()):
        return True
    frame = tx.parent
    while frame is not None:
        if any(w is v for w in (*frame.locals.values(), *frame.stack)):
            return True
        frame = frame.parent
    return any(id(v) in (items if isinstance(items, list) else items.values()) for _, items in state.containers)


def _value(side: _Side, slot):
    kind, key = slot
    return {"stack": lambda: side.stack[key], "return": lambda: side.return_value, "flag": lambda: side.flag,
            "local": lambda: side.locals[key]}[kind]()


def _assign(tx, slot, var) -> None:
    kind, key = slot
    if kind == "stack":
        tx.stack[key] = var
    elif kind == "return":
        tx.return_value = var
    elif kind == "flag":
        tx.output.control.loop_frame(tx).goes_on = var
    else:
        tx.locals[key] = var


def _equal_constants(t, f) -> bool:
    return t.is_constant() and f.is_constant() and same_constant(t.as_constant(), f.as_constant())


def _as_node(out, side: _Side, var, other, slot) -> Node:
    """The node of the side's graph for `var`, a result of a branch whose other side leaves `other`:
    an array's node, or a Python number (of the same type as the other side's) as a weak value."""
    what = {"local": slot[1], "stack": "a value on the stack", "return": "the value returned",
            "flag": "whether the while loop goes on"}[slot[0]]
    if isinstance(var, ArrayVariable):
        if isinstance(other, ArrayVariable) and other.node.array_meta != var.node.array_meta:
            raise Unsupported(f"{what} is {var.node.array_meta} on one side of the branch and {other.node.array_meta} "
                              "on the other")
        if not isinstance(other, ArrayVariable) and not (var.node.meta.get("weak") and _number(other) is not None
                                                         and _python_type(other) is var.node.array_meta.python_type):
            raise Unsupported(f"{what} is {var.describe()} on one side of the branch and {other.describe()} on the other")
        return side.node(var)
    number = _number(var)
    if isinstance(number, SymInt):
        return out.control.index_value(number).node
    if number is None or not (isinstance(other, ArrayVariable) or _python_type(other) is type(number)):
        raise Unsupported(f"{what} is {var.describe()} on one side of the branch and {other.describe()} on the other")
    if type(number) is int and not -2**62 <= number < 2**62:
        raise Unsupported(f"{what} ({number}) may not stay in int64")
    # number * 1 (one), not a constant node: what the lowering schedules (as a kernel of no operands)
    one = ConstantVariable(type(number)(1))
    return out.call_op(ops.get("multiply"), (ConstantVariable(number), one), {}, weak=True).node


def _python_type(var) -> type:
    """The Python type of the number a Variable holds (an index expression's: int)."""
    return int if isinstance(_number(var), SymInt) else type(_number(var))


def _number(var):
    """A Python bool, int, float or loop-index expression a Variable holds, else None."""
    if not var.is_constant():
        return None
    value = var.as_constant()
    return value if type(value) in _NUMBERS or isinstance(value, SymInt) and value.opaque is None else None


def _operands(out, sides: list) -> list:
    """The values of the enclosing graph both sides read, as the cond's operands, in the order of
    inputs they both take; the sides' symbols bound to those inputs."""
    lifted = []
    for side in sides:
        found = []
        lift_outer(side.graph, found)
        lifted.append(dict(found))
    operands = list(dict.fromkeys(n for found in lifted for n in found))
    used = set()
    for side in sides:
        used |= symbols_of(side.graph.nodes)
    index_symbols = {}
    for k in sorted(used):
        index = out.control.indices.get(f"s{k}")
        if index is not None:
            operands += [index] if index not in operands else []
            index_symbols[k] = index
    env = out.shape_env
    scalars = [k for k in sorted(used) if k not in index_symbols and not any(
        _binds(side.graph, env, k) for side in sides)]
    operands += [SymInt(f"s{k}", env.hints[k]) for k in scalars]
    for side, found in zip(sides, lifted):
        inputs = []
        for op in operands:
            if isinstance(op, SymInt):
                inputs.append(side.graph.input(op.expr, ArrayMeta((), np.dtype(np.int64), True, True)))
            else:
                inputs.append(found.get(op) or side.graph.input(op.name, op.array_meta))
        reorder_inputs(side.graph, inputs)
        fixed = {k: (inputs[operands.index(index_symbols[k])], None) for k in index_symbols}
        fixed |= {k: (inputs[operands.index(next(o for o in operands if isinstance(o, SymInt) and o.expr == f"s{k}"))],
                      None) for k in scalars}
        bind_symbols(side.graph, env, fixed, [])
    return operands


def _binds(graph: Graph, env, k: int) -> bool:
    """Whether symbol k is a dim of one of the graph's inputs or bound by one of its calls."""
    u = env.unbacked.get(k)
    if u is not None and u.node is not None and u.node.graph is graph:
        return True
    return any("shape" in n.meta and any(isinstance(d, SymInt) and d.expr == f"s{k}" for d in n.shape)
               for n in graph.inputs)

