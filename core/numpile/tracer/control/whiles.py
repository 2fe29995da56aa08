"""While loops on graph values kept as loops: a `while` whose test is a graph value, traced once
into a while_loop node (ops/control.py).

CPython compiles `while test: body` as the test, then the body followed by the test again, whose
last jump goes back to the start of the body (`while True:` has no test; its `break` jumps past
the loop). So when the trace arrives at the start of such a body (the target of a backward jump
that is not a `for` loop's), the test before it has been taken, and the body with the test after
it is a do-while: the loop node's body runs from there until control is back at the start (go
on) or past the loop (stop). A branch on a graph value there whose paths end the iteration
(branches.py) gives its cond a result saying which: the node's flag.

What the body carries is found as for a `for` loop (fors.py, loops.py), and Python numbers that
change (`k += 1`, `x = 0.0` made a NumPy float by the body) are carried as graph values: ints and
floats as Python's (weak), a Python float the body makes a NumPy float64 as that (the loop runs at
least once, so after it the value is one). A test the trace decides (on Python values) is no
while loop node: the loop is unrolled as before.
"""

from __future__ import annotations

from ... import logs
from ...exc import Unsupported
from ...graph import Graph
from ...ops import ArrayMeta
from ...shapes import SymInt, loop_dependent
from ..variables import ArrayVariable, ConstantVariable
from .bodies import PYTHON_NUMBERS, FrameState, bind_symbols, number_before, reorder_inputs
from .liveness import live_at, successors
from .loops import LoopBody
from .passes import trace_passes
from .state import LoopFrame

_BACKWARD = ("JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "POP_JUMP_BACKWARD_IF_TRUE", "POP_JUMP_BACKWARD_IF_FALSE")


def heads(tx) -> dict[int, tuple]:
    """The while loops of a frame's code: the instruction their body starts at -> (the one after
    the body, where control goes when the loop ends). Control leaves a body one way only (after the
    loop, or where a `break` at its end goes: the enclosing loop's head); one with several ways out
    is not a while loop node. Backward jumps of exception handlers (a `with` block's exit, 3.12)
    are not loops: only jumps reached without an exception count."""
    found, normal, todo = {}, set(), [0]
    while todo:   # the instructions control reaches without raising
        k = todo.pop()
        if k not in normal and k < len(tx.instructions):
            normal.add(k)
            todo += successors(tx, k, tx.instructions[k])
    for k, inst in enumerate(tx.instructions):
        head = tx.index_of.get(inst.argval) if inst.opname in _BACKWARD and k in normal else None
        if head is None or _for_head(tx, head) or head in found:
            continue
        exits = {n for j in range(head, k + 1) for n in successors(tx, j, tx.instructions[j]) if not head <= n <= k}
        if len(exits) == 1:
            found[head] = (k + 1, exits.pop())
    return found


def _for_head(tx, k: int) -> bool:
    while k < len(tx.instructions) and tx.instructions[k].opname == "EXTENDED_ARG":
        k += 1
    return tx.instructions[k].opname == "FOR_ITER"


def capture(tx) -> bool:
    """At the start of a while loop's body (one of `heads`): trace it as a while_loop node and go
    on after the loop; False to run the body as it is (unrolled)."""
    control = tx.output.control
    head = tx.ip
    end, exit_ip = tx.while_heads[head]
    key = (tx.code, head)
    if not control.tries_while(key):
        return False
    control.attempts[key] = control.attempts.get(key, 0) + 1
    state = FrameState(tx)
    control.whiles_active.add(key)
    try:
        loop = trace_passes(tx, key, state, lambda rebound, stale, period: WhileBody(tx, head, end, exit_ip, rebound, stale))
    finally:
        control.whiles_active.discard(key)
    if loop is None:
        return False
    loop.finish(tx)
    del control.attempts[key]
    return True


class WhileBody(LoopBody):
    """One pass over a while loop's body and test (see LoopBody: what it carries, what it refuses)."""

    def __init__(self, tx, head: int, end: int, exit_ip: int, rebound: dict, stale: set):
        """The body is instructions [head, end); control goes to `exit_ip` when the loop ends."""
        self.tx, self.inst, self.it, self.rebound, self.stale, self.period = tx, None, None, rebound, stale, 1
        self.head, self.end, self.exit = head, end, exit_ip
        self.outer = tx.output.graph
        self.body = Graph(self.outer)
        self.count = None

    def _enter(self) -> None:
        self.target = self.index_node = None   # no index: a random draw in it is a break

    def _initial(self, value, meta):
        return number_before(self.tx, self.outer, value, meta)

    def _iterations(self) -> None:
        tx = self.tx
        frames = tx.output.control.frames
        frame = LoopFrame(tx, self.head, self.head, self.end, self.exit)   # a branch ending an iteration sets goes_on
        frames.append(frame)
        try:
            tx.step()
            while tx.ip != self.head and tx.ip != self.exit:
                if not self.head <= tx.ip < self.end or tx.return_value is not None:
                    raise Unsupported("control leaves the while loop from inside its body (a return, or a break "
                                      "past it)")
                tx.step()
        finally:
            frames.pop()
        self.goes_on = frame.goes_on if frame.goes_on is not None else ConstantVariable(tx.ip == self.head)
        if not isinstance(self.goes_on, ArrayVariable):
            raise Unsupported("its test is decided while tracing (on Python values): it is unrolled")

    def _of_index(self, value) -> bool:
        return False

    def _live_after(self, name: str) -> bool:
        return live_at(self.tx, name, self.exit, outside=range(self.head, self.end))

    def _changed(self, name: str, before, var):
        number = before.as_constant() if before.is_constant() else None
        if isinstance(number, SymInt) and loop_dependent(number):
            number = 0   # an expression of an enclosing loop's index: carried as a Python int
        if type(number) not in PYTHON_NUMBERS:
            return super()._changed(name, before, var)
        if var.is_constant() and (type(var.as_constant()) is type(number) or type(number) is int
                                   and isinstance(var.as_constant(), SymInt) and loop_dependent(var.as_constant())):
            return ArrayMeta((), PYTHON_NUMBERS[type(number)], True, True)
        if isinstance(var, ArrayVariable) and var.node.shape == () and var.node.dtype == PYTHON_NUMBERS[type(number)] \
                and (not var.node.meta.get("weak") or var.node.array_meta.python_type is type(number)):
            return var.node.array_meta   # a Python number, or the NumPy scalar the body makes of it
        return super()._changed(name, before, var)

    def finish(self, tx) -> None:
        """Put the while_loop node in the enclosing graph, give the frame the values after it, and
        go on after the loop."""
        body = self.body
        carried = [(v, before, placeholder) for v, (before, placeholder) in self.arrays.items() if v.node is not placeholder]
        renamed = [(name, before, placeholder) for name, (before, placeholder) in self.names.items()]
        body.output([self.goes_on.node] + [v.node for v, _, _ in carried] + [tx.locals[name].node for name, _, _ in renamed])
        body.write_back = [(k + 1, placeholder) for k, (_, _, placeholder) in enumerate(carried)]
        body.write_back_owned = True
        free = [(before, placeholder) for v, (before, placeholder) in self.arrays.items() if v.node is placeholder]
        free_inits = self._lift(free)
        reorder_inputs(body, [p for _, _, p in carried] + [p for _, _, p in renamed] + [p for _, p in free_inits])
        bind_symbols(body, tx.output.shape_env, {}, free_inits)
        inits = [before for _, before, _ in carried] + [before for _, before, _ in renamed]
        node = self.outer.while_loop(body, tuple(inits), tuple(before for before, _ in free_inits), tx.loc)
        self._hand_on(node, carried, renamed)
        for name in set(tx.locals) - set(self.state_locals):
            del tx.locals[name]   # bound in the loop, read nowhere after it
        tx.ip = self.exit
        logs.get("graph").debug("%s: the while loop is captured as %s (body of %d ops)", tx.loc, node.name,
                                len(body.calls))
