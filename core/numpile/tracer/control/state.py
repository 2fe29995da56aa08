"""What capturing control flow knows during one trace (`OutputGraph.control`): the loops being
traced, their indices as graph values, and the capture rule: which traces get loop, while_loop and
cond nodes, and where a loop or branch is tried as one.

The rule in words: a backend (or exporter) that runs loop nodes (`supports_loops`) gets `for`
loops over ranges and positional iterables as loop nodes, while `config.loop_capture_min` is set;
one that runs cond nodes too (`supports_conditionals`) gets branches on graph values in loop
bodies (anywhere with `config.top_level_conds`) as cond nodes and while loops on graph values as
while_loop nodes. A loop is tried at most PEELS + 1 times at one place (the first iterations
unrolled until its values settle), and a `for` loop of fewer than `config.loop_capture_min`
iterations is unrolled unless its body holds a loop node (loops.py, LoopBody.small).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ... import config, ops
from ...dynamic import DynamicInputs
from ...exc import Unsupported
from ...shapes import loop_dependent, ranges_in_force
from ..python_scalars import COMPARISON_SYMBOLS
from ..variables import ArrayVariable, ConstantVariable, Variable
from .liveness import innermost_for

PEELS = 2   # iterations of a loop unrolled before it is captured, at most (loops.py)


def for_backend(dynamic: DynamicInputs | None, runs) -> DynamicInputs | None:
    """What a trace for `runs` (a Backend or an Exporter) leaves unspecialised, with the control
    flow it runs: loop nodes where it says so, cond and while_loop nodes where it runs those too."""
    if not getattr(runs, "supports_loops", False):
        return dynamic
    return replace(dynamic or DynamicInputs(), loops=True, conditionals=getattr(runs, "supports_conditionals", False))


@dataclass(eq=False)
class LoopFrame:
    """A loop body being traced, as the branches in it see it (branches.py): where an iteration ends."""

    tx: object          # the frame whose code holds the body
    head: int           # the body's first instruction (where control comes back to)
    back: int           # the last instruction of the way back: a for loop's FOR_ITER, a while body's head
    end: int            # the first instruction after the body
    exit: int | None = None   # a while loop's: where control goes when it ends (None: a for loop)
    goes_on: object = None    # a while loop's: whether it goes on, as a branch ending an iteration leaves it

    @property
    def is_while(self) -> bool:
        return self.exit is not None

    def ends_iteration(self, k: int) -> bool:
        """Whether control at instruction k has ended an iteration: back at the head, or for a while
        loop at its exit too (the iteration then says stop)."""
        return self.head <= k <= self.back or self.is_while and k == self.exit


class ControlState:
    """The state of one trace's control-flow capture, shared by the frame traced and every frame
    inlined into it."""

    def __init__(self, output):
        self.output = output
        self.loops = output.dynamic.loops and config.loop_capture_min is not None   # loop nodes are captured
        self.conds = self.loops and output.dynamic.conditionals   # cond and while_loop nodes too
        self.attempts: dict = {}       # (code, loop head offset) -> captures tried there
        self.small: set = set()        # (code, FOR_ITER offset) of loops unrolled as small
        self.whiles_active: set = set()   # (code, head) of the while loops being captured
        self.frames: list[LoopFrame] = []   # the loop bodies being traced, innermost last
        self.iterations: list = []     # the index node of each loop body being traced, outermost first (None: a while loop's)
        self.indices: dict = {}        # loop symbol's name -> the index node of the body being traced
        self.compared: dict = {}       # a weak bool comparing loop indices -> (sym, a, b): `a sym b`

    # -- where capture is tried -----------------------------------------------------------
    def tries_for(self, key: tuple, count: int | None) -> bool:
        """Whether the `for` loop at `key` (code, FOR_ITER offset) with `count` iterations left (None:
        a symbolic number) is tried as a loop node."""
        return self.loops and self.attempts.get(key, 0) <= PEELS \
            and (count is None or count >= 2)   # a shorter loop than loop_capture_min: LoopBody.small decides

    def tries_while(self, key: tuple) -> bool:
        """Whether the while loop whose body starts at `key` (code, offset) is tried as a while_loop node."""
        return self.conds and self.attempts.get(key, 0) <= PEELS and key not in self.whiles_active

    def tries_branch(self, tx) -> bool:
        """Whether a branch on one graph value here is tried as a cond node."""
        return self.conds and (config.top_level_conds or self.in_body(tx))

    def in_body(self, tx) -> bool:
        """Whether the trace is in a loop body being captured, or in an iteration unrolled before the
        rest of its loop is (`peeling`)."""
        return tx.output.graph is not tx.output.root_graph or self.peeling(tx)

    def peeling(self, tx) -> bool:
        """Whether the trace is in an iteration of a `for` loop unrolled before the rest is captured,
        or of one unrolled as small; not in one unrolled because it could not be captured: there
        branches on data break the graph, and element code stays out of it, as in every other
        iteration."""
        found = innermost_for(tx)
        key = None if found is None else (found[0].code, found[1].offset)
        return found is not None and (self.attempts.get(key, 0) <= PEELS or key in self.small)

    def loop_frame(self, tx) -> LoopFrame | None:
        """The innermost loop body being traced, where its body is frame `tx`'s code."""
        return self.frames[-1] if self.frames and self.frames[-1].tx is tx else None

    # -- loop indices as graph values -------------------------------------------------------
    def index_value(self, value) -> Variable:
        """An expression of loop indices (a SymInt) as a graph value: a weak int computed from the
        bodies' index inputs (an enclosing body's is lifted into the one being traced)."""
        if value.opaque is not None or not all(name in self.indices for name, _ in value.terms):
            raise Unsupported(f"{value} (an expression of a loop's index) in arithmetic with a float")
        out = self.output
        total = ConstantVariable(value.const)
        for name, coeff in value.terms:
            term = ArrayVariable(self.indices[name])
            if coeff != 1:
                term = out.call_op(ops.get("multiply"), (term, ConstantVariable(coeff)), {}, weak=True)
            total = out.call_op(ops.get("add"), (total, term), {}, weak=True)
        bound = _bound(value)
        if bound is not None and isinstance(total, ArrayVariable):   # what Python arithmetic on it may reach
            total.node.meta["bound"] = bound
        return total

    def compared_in_graph(self, fn, args: list) -> Variable | None:
        """A comparison of loop-index expressions (`i < j - 1` in a loop nest) whose answer is not the
        same for every index, as a graph value (a weak bool a branch can test), or None where it
        cannot be one."""
        values = [a.as_constant() for a in args]
        if fn not in COMPARISON_SYMBOLS or not self.conds or not any(map(loop_dependent, values)):
            return None
        operands = [self.index_value(v) if loop_dependent(v) else a for a, v in zip(args, values)]
        result = self.output.call_op(ops.lookup_callable(fn), tuple(operands), {}, weak=True)
        self.compared[result.node] = (COMPARISON_SYMBOLS[fn], *values)   # what a branch on it knows on each side
        return result


def _bound(value) -> int | None:
    """The largest magnitude an expression of loop indices takes over the loops' ranges, where they
    are ints (None where one is an expression or not in force)."""
    loops = ranges_in_force()
    ends = [loops[name].low_high() if name in loops else (None, None) for name, _ in value.terms]
    if any(type(e) is not int for pair in ends for e in pair):
        return None
    return abs(value.const) + sum(abs(coeff) * max(map(abs, pair)) for (_, coeff), pair in zip(value.terms, ends))
