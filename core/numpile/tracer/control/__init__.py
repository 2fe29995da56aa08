"""Captured control flow: `for`, `while` and `if` kept as loop, while_loop and cond nodes, their
bodies traced once into Graphs of their own (ops/control.py says what those nodes are and how
they run). A bug in loop capture is fixed here or there.

The tracer calls in at one place for each construct, and nowhere else:

- `for_iter(tx, inst, it)` at FOR_ITER (flow_handlers.py): the rest of a `for` loop as a loop node
  (fors.py);
- `while_body(tx)` where a while loop's body starts (translator.py's step, at `while_heads`):
  the loop as a while_loop node (whiles.py);
- `conditional_jump(tx, inst, jump_when, keep_on_jump)` at a conditional jump (flow_handlers.py):
  a check node where one side only raises (checks.py), else both sides as a cond node (branches.py); `truth_value` at TO_BOOL and UNARY_NOT (handlers.py)
  keeps `bool(x)` a graph value where such a branch may test it.

Each returns False where it does not capture (the trace is then as it was: the loop unrolls, the
jump is decided or breaks the graph). What capture knows during a trace is `OutputGraph.control`
(`ControlState`, state.py), which also holds the capture rule; `for_backend` is the rule's half the
cache and `numpile.export` apply before a trace (which control flow the backend runs).

The modules: state.py (the state and the rule), fors.py (for loops), whiles.py (while loops),
branches.py (conds), checks.py (asserts), loops.py (one pass over a loop's body: what it carries; the loop node),
passes.py (passes until what a loop carries settles), bodies.py (what a body's graph takes from
the frame), liveness.py (whether a local is read after a loop or branch: the bytecode's control
flow). The iteration protocol a `for` loop asks of its iterator (`remaining`, `at`) is on the
Variables (variables/ranges.py, variables/iterators.py).

It may import `graph.py`, `ops/`, `shapes.py`, `config`, `logs`, `exc`, `dynamic.py`, and of the
tracer `variables/`, `bytecode_compat.py` and `python_scalars.py`; never `translator.py`,
`handlers.py`, `flow_handlers.py` or `output_graph.py` (the frame and its OutputGraph come as `tx`
and `tx.output`), nor `cache.py` or a backend.
"""

from . import branches, checks
from .fors import capture as for_iter
from .state import ControlState, LoopFrame, for_backend
from .whiles import capture as while_body, heads as while_heads


def conditional_jump(tx, inst, jump_when: bool, keep_on_jump: bool) -> bool:
    return checks.capture(tx, inst, jump_when, keep_on_jump) or branches.capture(tx, inst, jump_when, keep_on_jump)


def truth_value(tx, value, negate: bool = False):
    """bool(value) (or `not value`) kept a graph value where a cond or a check tests it next, else None."""
    truth = branches.truth_value(tx, value, negate)
    return truth if truth is not None else checks.truth_value(tx, value, negate)


__all__ = ["ControlState", "LoopFrame", "conditional_jump", "for_backend", "for_iter", "truth_value", "while_body",
           "while_heads"]
